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
# Context managers under which a factory without `device=` builds where the context's device
# says (`with torch.device("cuda"):`). Not `torch.cuda.device(i)`: it selects which GPU
# `"cuda"` means and builds nothing there.
DEVICE_CONTEXTS = frozenset({"torch.device"})
# Calls whose result has the class of their argument (synclint/repo/ reads a field of the
# copy through that class).
COPY_FUNCTIONS = frozenset({"copy", "deepcopy"})


def copies(qualname: str) -> bool:
    """`copy.copy`, `copy.deepcopy` (also reached as `copy.copy.deepcopy` where `copy` is the function)."""
    return qualname.startswith("copy.") and qualname.rpartition(".")[2] in COPY_FUNCTIONS

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
     "is_pinned", "is_contiguous", "is_floating_point", "is_complex", "__len__", "nbytes", "storage_offset",
     # the tensor's metadata, never its values (unlike `is_nonzero()`, which reads the value)
     "is_inference", "is_shared", "is_signed", "is_conj", "is_neg", "is_coalesced", "is_set_to"}
)
SEQUENCE_RESULT_METHODS = frozenset({"tolist", "size", "stride"})
# Tensor methods whose result is no tensor and no Python data: a storage object (its own
# methods, `tensor.untyped_storage()._share_cuda_()`, return handles and offsets, not tensors).
NON_TENSOR_RESULT_METHODS = frozenset({"untyped_storage", "storage", "_typed_storage"})
NUMPY_RESULT_METHODS = frozenset({"numpy"})
# The legacy tensor types (`torch.FloatTensor`, ...): `t.type(torch.BoolTensor)` is a CPU
# tensor (a copy to the host of a device tensor); `torch.cuda.BoolTensor` is a CUDA one.
LEGACY_TENSOR_TYPES = frozenset({
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
})


def legacy_tensor_type(name: str | None) -> str | None:
    """"cpu" for `torch.BoolTensor` (or the string "torch.BoolTensor"), "cuda" for
    `torch.cuda.BoolTensor`, else None (a dtype, anything else)."""
    if not name:
        return None
    if name.startswith("torch.cuda.") and name[11:] in LEGACY_TENSOR_TYPES:
        return "cuda"
    if name.startswith("torch.") and name[6:] in LEGACY_TENSOR_TYPES:
        return "cpu"
    return None


def legacy_constructor(name: str) -> str | None:
    """"cpu" for a call of `torch.Tensor(...)` / `torch.LongTensor(...)` (`name` without its
    `torch.`): the legacy constructors build on the host; "cuda" for `torch.cuda.LongTensor(...)`;
    else None."""
    if name == "Tensor" or name in LEGACY_TENSOR_TYPES:
        return "cpu"
    if name.startswith("cuda.") and name[5:] in LEGACY_TENSOR_TYPES:
        return "cuda"
    return None


# `x.new_*(...)` make a tensor on x's device.
NEW_METHODS = frozenset({"new_tensor", "new_zeros", "new_ones", "new_empty", "new_full"})

# Tensor attributes and what they hold.
SAME_PLACE_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "real", "imag", "grad"})
SEQUENCE_ATTRIBUTES = frozenset({"shape"})
SCALAR_ATTRIBUTES = frozenset({"ndim", "is_cuda", "requires_grad", "itemsize", "nbytes", "is_leaf", "_version"})
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
# Decorators that compile a function into a device kernel (`@triton.jit`, `@cute.kernel`,
# `@triton.autotune(...)`; not `torch.jit`): its body runs on the device, its calls are not
# host calls.
KERNEL_DECORATORS = frozenset({"jit", "kernel", "autotune", "heuristics"})


def kernel_decorator_name(dotted: str) -> bool:
    """`triton.jit`, `cute.kernel`, `jit`: a device-kernel decorator (not `torch.jit.*`)."""
    parts = dotted.split(".")
    return parts[-1] in KERNEL_DECORATORS and "torch" not in parts[:-1]


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

# Arguments PyTorch reads as Python numbers: ints (sizes, counts, indices) or scalars. A
# tensor passed there is read with `aten._local_scalar_dense`, the op behind `.item()`: for a
# device tensor, a copy to the host that waits for every queued kernel. name -> (positions,
# keywords); "*" reads every positional argument (and the elements of a size tuple or list).
# tests/test_rules_sl208.py checks each entry on the CPU with a dispatch trace.
NUMBER_ARGUMENT_FUNCTIONS = {  # torch.<name>(...)
    "zeros": ("*", ("size",)),
    "ones": ("*", ("size",)),
    "empty": ("*", ("size",)),
    "rand": ("*", ("size",)),
    "randn": ("*", ("size",)),
    "full": ((0, 1), ("size", "fill_value")),
    "arange": ("*", ("start", "end", "step")),
    "randint": ("*", ("low", "high", "size")),
    "randperm": ((0,), ("n",)),
    "eye": ("*", ("n", "m")),
    "narrow": ((2, 3), ("start", "length")),
    "nn.functional.interpolate": ((1,), ("size",)),
    "nn.functional.pad": ((1,), ("pad",)),
}
NUMBER_ARGUMENT_METHODS = {  # tensor.<name>(...)
    "reshape": ("*", ()),
    "view": ("*", ()),
    "repeat": ("*", ()),
    "expand": ("*", ()),
    "new_zeros": ("*", ("size",)),
    "new_ones": ("*", ("size",)),
    "new_empty": ("*", ("size",)),
    "new_full": ((0, 1), ("size", "fill_value")),
    "narrow": ((1, 2), ("start", "length")),
    "topk": ((0,), ("k",)),
    "roll": ((0,), ("shifts",)),
    "select": ((1,), ("index",)),
}
# The parameters of the NUMBER_ARGUMENT_METHODS whose signature is fixed (the others take
# sizes as `*args`): a call on an object of unknown type that does not fit this signature
# (more positional arguments, a keyword it lacks, a tensor where it takes a dimension or a
# flag) is some other object's method, e.g. a kernel launcher's `.topk(input, values, ...)`
# or a submodule's `moe.topk(hidden_states, router_logits)`.
TENSOR_METHOD_PARAMETERS = {
    "topk": ("k", "dim", "largest", "sorted"),
    "roll": ("shifts", "dims"),
    "select": ("dim", "index"),
    "narrow": ("dim", "start", "length"),
    "new_full": ("size", "fill_value"),
}
TENSOR_METHOD_KEYWORDS = ("out", "dtype", "device", "requires_grad", "layout", "pin_memory")
# torch.<name>(...) that copy a tensor argument to the host inside the op and loop over its
# values there: name -> the keywords (and positions) of that argument. PyTorch's CUDA
# `_grouped_mm` (behind `torch.nn.functional.grouped_mm`) runs a fallback unless the inputs
# are bfloat16 on an SM90/SM100 GPU: it copies `offs` to the host (`offs.cpu()`) and reads
# each group's end there. Traced on an H200 (float32 Qwen3-MoE experts, torch 2.11):
# 36 syncs a decode step, one per grouped_mm. `torch._scaled_grouped_mm` does not copy.
HOST_READ_ARGUMENT_FUNCTIONS = {
    "nn.functional.grouped_mm": (("offs",), ()),
    "_grouped_mm": (("offs",), (2,)),
}

# torch.<name>(...) linear-algebra functions that, on CUDA inputs, copy LAPACK's `info` back to
# the host to raise on a singular or non-definite input (PyTorch's documentation of each:
# "When inputs are on a CUDA device, this function synchronizes that device with the CPU"):
# name -> the variant that does not check (`check_errors=False` is its default) and the field
# of its named result that the checked function returns, or None where there is no such
# variant. Traced on an H100 (diffusers' UniPC scheduler, torch 2.11): one sync per
# `torch.linalg.solve` of two device tensors. The `_ex` variants synchronize only with
# `check_errors=True` (CHECKED_ON_REQUEST).
CHECKED_LINALG_FUNCTIONS = {
    "linalg.solve": ("linalg.solve_ex", "result"),
    "linalg.inv": ("linalg.inv_ex", "inverse"),
    "inverse": ("linalg.inv_ex", "inverse"),
    "linalg.cholesky": ("linalg.cholesky_ex", "L"),
    "linalg.lu_factor": None,
    "linalg.ldl_factor": None,
    "linalg.eig": None,
    "linalg.eigvals": None,
    "linalg.eigh": None,
    "linalg.eigvalsh": None,
    "linalg.svdvals": None,
    "linalg.matrix_rank": None,
    "linalg.pinv": None,
}
CHECKED_ON_REQUEST = frozenset({"linalg.solve_ex", "linalg.inv_ex", "linalg.cholesky_ex", "linalg.lu_factor_ex",
                                "linalg.ldl_factor_ex"})
# Tensor methods with the same check: `A.inverse()`, `A.cholesky()`.
CHECKED_LINALG_METHODS = frozenset({"inverse", "cholesky"})

# torch.<name>(...) that check a boolean tensor's values on the host: name -> the position
# of the condition (also the keyword `cond`). `torch._check_tensor_all_with(error_type,
# cond, msg)` runs `cond._is_all_true().item()` whether the check passes or not (traced on
# an H200: one `.item()` sync per call in transformers' `torch_compilable_check`).
TENSOR_CHECK_FUNCTIONS = {"_check_tensor_all": 0, "_check_tensor_all_with": 1}

# clamp/clip take tensor bounds too (no readback); a Python number for one bound and a
# tensor for the other selects the Scalar overload, which reads the tensor.
CLAMP_FUNCTIONS = frozenset({"clamp", "clip", "clamp_", "clip_"})

# Host-to-device helpers that the H2D fixes may call and that return a device tensor:
# qualified name -> (the keyword naming the target device, its positional index). The
# signatures, as each project defines them:
#   synclint.runtime.async_tensor_h2d(data, dtype=None, device=None)
#   vllm.utils.torch_utils.async_tensor_h2d(data, device=None, dtype=None, out=None)  (vLLM 0.33)
#   vllm.utils.async_tensor_h2d(data, dtype, target_device, pin_memory)  (older vLLM: all required)
#   sglang.srt.utils.common.async_h2d(args, *, dtype, device)  (SGLang 0.5; also re-exported
#   by sglang.srt.utils)
H2D_HELPERS = {
    "synclint.runtime.async_tensor_h2d": ("device", 2),
    "synclint.runtime.h2d.async_tensor_h2d": ("device", 2),
    "vllm.utils.torch_utils.async_tensor_h2d": ("device", 1),
    "vllm.utils.async_tensor_h2d": ("target_device", 2),
    "sglang.srt.utils.common.async_h2d": ("device", None),
    "sglang.srt.utils.async_h2d": ("device", None),
}
H2D_HELPER_NAMES = frozenset(q.rpartition(".")[2] for q in H2D_HELPERS)


def h2d_helpers(configured: str | None = None) -> dict[str, tuple[str, int | None]]:
    """The known helpers and the configured `h2d-helper` (a dotted path other than the
    "inline" default; assumed to take `(data, dtype=None, device=None)` like synclint's)."""
    if configured is None or configured == "inline" or configured in H2D_HELPERS:
        return H2D_HELPERS
    return {**H2D_HELPERS, configured: ("device", 2)}

# --- structural evidence that a value is a device tensor (synclint/analysis/evidence.py) -----
# A parameter `x` beside `x_cpu` (...) is the device copy of data also kept on the host.
HOST_MIRROR_SUFFIXES = ("_cpu", "_host", "_np", "_cpu_tensor", "_numpy")
# A readback bound to a name that says it holds the host copy (`x_cpu = x.tolist()`) shows
# that its source is the device copy. Not `_np`/`_list`: they say what type, not where from.
HOST_COPY_SUFFIXES = ("_cpu", "_host", "_cpu_tensor")
HOST_COPY_PREFIXES = ("cpu_", "host_")


def host_copy_name(name: str) -> bool:
    """`x_cpu`, `x_host`, `x_cpu_tensor`, `cpu_x`, `host_x`: a name that says it holds the host
    copy (not `is_cpu`, `use_host_...`, `num_cpu_...`: flags and counts)."""
    lower = name.lower()
    if lower in ("cpu", "host") or lower.startswith(("is_", "use_", "num_", "n_")):
        return False
    return lower.endswith(HOST_COPY_SUFFIXES) or lower.startswith(HOST_COPY_PREFIXES)


def names_a_configuration(name: str) -> bool:
    """`config`, `hf_config`, `model_config`, `cfg`: an object named as a configuration, whose
    fields are Python values (`config.logit_scale`), whatever a same-named field of a module
    holds elsewhere."""
    lower = name.lower()
    return lower in ("config", "cfg", "conf") or lower.endswith(("_config", "_cfg"))


# `x.<method>()` with no argument that copies x to the host (for `.to("cpu")` see evidence.py).
READBACK_EVIDENCE_METHODS = frozenset({"cpu", "tolist", "item"})
# Methods that copy a tensor to the host (or a host tensor type) before a value is moved to a
# device: what `x.type(torch.BoolTensor).to(d)` moves is a host copy, whatever `x` is.
HOST_COPY_METHODS = frozenset({"cpu", "numpy", "tolist", "item", "type"})
# Reads of a tensor's metadata, not of its data (`y.to(h.device)` moves no data of `h`).
METADATA_ATTRIBUTES = frozenset({"device", "dtype", "shape", "ndim", "is_cuda", "size", "dim"})
# Decorators that make a method read as an attribute (`self.table`), computed by its getter.
PROPERTY_DECORATORS = frozenset({"property", "cached_property"})
# torch.<name>(...) whose tensor operands must be on one device (a CPU tensor of more than
# zero dimensions beside a CUDA tensor raises): a device operand places the others.
SAME_DEVICE_FUNCTIONS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "minimum", "maximum", "where"})

# Tests that an accelerator is there (`torch.cuda.is_available()`, `t.is_cuda`,
# `torch.cuda.device_count() > 0`): `"cuda" if torch.cuda.is_available() else "cpu"` is the
# accelerator wherever the code runs on one, not a choice to run on the CPU.
ACCELERATOR_AVAILABILITY_TESTS = frozenset({"is_available", "device_count", "is_cuda"})

# `nn.Module` methods that return the module itself (`Resampler(...).to(device, dtype)`,
# `model.eval()`): what a factory returns through them is the module it built.
MODULE_SELF_RETURNING_METHODS = frozenset(
    {"to", "cuda", "cpu", "eval", "train", "half", "float", "bfloat16", "requires_grad_", "to_empty"}
)

# PyTorch base classes and the methods of a subclass they call themselves (`torch.nn.Module`
# calls `forward`, `extra_repr`, its state-dict hooks; `autograd.Function` its `forward`,
# `backward`, `setup_context`, `jvp`, `vmap`): a subclass's method of another name runs only
# where the repository calls it. By last name, as the repository's class table keeps bases.
FRAMEWORK_CALLED_METHODS = {
    base: frozenset({
        "forward", "extra_repr", "_load_from_state_dict", "_save_to_state_dict", "_apply", "_get_name",
        "get_extra_state", "set_extra_state", "train", "eval", "to", "cuda", "cpu", "half", "float", "double",
        "bfloat16", "state_dict", "load_state_dict", "parameters", "named_parameters", "buffers", "named_buffers",
        "children", "named_children", "modules", "named_modules", "apply", "zero_grad", "requires_grad_",
        "reset_parameters", "_conv_forward",
    })
    for base in ("Module", "ModuleList", "ModuleDict", "Sequential", "ParameterList", "ParameterDict")
}
FRAMEWORK_CALLED_METHODS["Function"] = frozenset(
    {"forward", "backward", "setup_context", "jvp", "vjp", "vmap", "generate_vmap_rule", "apply"})
