"""Tables of PyTorch and numpy APIs: which create tensors where, which read data back.

Data, not logic: the placement analysis and the rules look names up here, so adding an API
is a one-line change with its reason beside it.
"""

from __future__ import annotations

# torch.<name>(...) that create a tensor; `device=` says where, default host.
TENSOR_FACTORIES = frozenset(
    {
        "tensor", "as_tensor", "asarray", "zeros", "ones", "empty", "full", "arange", "range",
        "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm", "empty_strided",
        "normal", "tril_indices", "triu_indices", "scalar_tensor", "from_numpy", "frombuffer",
        "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
        "randint_like",
    }
)

# torch.<name>_like(x, ...) keep x's placement unless device= says otherwise.
LIKE_FACTORIES = frozenset(
    {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like"}
)

# torch.tensor/as_tensor copy their data argument (and keep a tensor argument's device).
DATA_FACTORIES = frozenset({"tensor", "as_tensor", "asarray"})

# torch dtypes: `.to(torch.float16)` changes the dtype, not the placement.
DTYPES = frozenset(
    {
        "float16", "half", "bfloat16", "float32", "float", "float64", "double", "complex64",
        "complex128", "cfloat", "cdouble", "int8", "int16", "short", "int32", "int", "int64",
        "long", "uint8", "uint16", "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e5m2",
        "float8_e4m3fnuz", "float8_e5m2fnuz",
    }
)

# Tensor methods whose result lives on the host as plain Python data.
SCALAR_RESULT_METHODS = frozenset(
    {"item", "dim", "ndimension", "numel", "nelement", "element_size", "data_ptr", "get_device",
     "is_pinned", "is_contiguous", "is_floating_point", "is_complex", "__len__"}
)
SEQUENCE_RESULT_METHODS = frozenset({"tolist", "size", "stride"})
NUMPY_RESULT_METHODS = frozenset({"numpy"})
# `x.new_*(...)` make a tensor on x's device.
NEW_METHODS = frozenset({"new_tensor", "new_zeros", "new_ones", "new_empty", "new_full"})

# Tensor attributes and what they hold.
SAME_PLACE_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "real", "imag", "grad"})
SEQUENCE_ATTRIBUTES = frozenset({"shape"})
SCALAR_ATTRIBUTES = frozenset({"ndim", "is_cuda", "requires_grad", "itemsize", "nbytes", "is_leaf"})
OTHER_ATTRIBUTES = frozenset({"dtype", "layout"})

# numpy functions that build arrays (numpy.<name>).
NUMPY_CONSTRUCTORS = frozenset(
    {
        "array", "asarray", "ascontiguousarray", "zeros", "ones", "empty", "full", "arange",
        "linspace", "concatenate", "stack", "cumsum", "frombuffer", "fromiter", "repeat", "tile",
        "zeros_like", "ones_like", "empty_like", "full_like", "where", "nonzero", "unique",
        "argsort", "sort", "random.rand", "random.randn", "random.randint", "random.random",
    }
)

# torch.<name>(...) that return a Python value (bool/int/dtype), not a tensor, whatever
# their inputs (`torch.equal` and `torch.allclose` read device data back to do so).
HOST_RESULT_FUNCTIONS = frozenset(
    {"equal", "allclose", "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel",
     "is_grad_enabled", "is_inference_mode_enabled", "are_deterministic_algorithms_enabled"}
)
# torch.<name>(...) that return a dtype: `.to(torch.get_default_dtype())` changes the dtype only.
DTYPE_RESULT_FUNCTIONS = frozenset({"get_default_dtype", "result_type", "promote_types"})

# Builtins whose result is a host scalar or a host sequence whatever they are given.
SCALAR_BUILTINS = frozenset({"int", "float", "bool", "len", "round", "abs", "hash", "ord", "id"})
SEQUENCE_BUILTINS = frozenset({"list", "tuple", "sorted", "range", "reversed", "enumerate", "zip", "set"})
# Python max/min/sum on tensors return a tensor (and compare on the host, which syncs).
TENSOR_PRESERVING_BUILTINS = frozenset({"max", "min", "sum"})

# Names that, unbound in the scope, conventionally hold an accelerator device in GPU code.
DEVICE_LIKE_NAMES = frozenset({"device", "dev", "cuda_device", "gpu_device", "target_device", "torch_device"})

# Device strings that name an accelerator (the text before ":"): "cuda:0", "xpu", "meta".
ACCELERATOR_PREFIXES = frozenset({"cuda", "xpu", "mps", "hpu", "npu", "mlu", "meta"})
# Attributes of an nn.Module that are its parameters (they move with `module.to(device)`).
PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})
# Calls whose result is a parameter: it lives where its module is moved.
MODULE_MEMBER_CALLS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"})
# torch namespaces whose calls return neither a tensor of their inputs nor a module:
# configuration queries, initialisers that fill a tensor in place, utilities.
NOT_TENSOR_NAMESPACES = ("cuda.", "distributed.", "nn.init.", "nn.utils.", "backends.", "compiler.", "_dynamo.", "utils.")
# Words in a name that make an integer a device index (`.to(local_rank)`).
DEVICE_INDEX_WORDS = ("rank", "device", "gpu", "cuda", "dev_id")

# The H2D helpers the fixes call (the `h2d-helper` presets): the result is a tensor where
# their `device=` says, as for `torch.tensor(..., device=...)`. Known to the analysis so that
# a fixed file keeps the findings that follow the copy (`if ids.sum() > 0:` after it).
H2D_HELPERS = frozenset({"synclint.runtime.async_tensor_h2d", "vllm.utils.torch_utils.async_tensor_h2d"})
