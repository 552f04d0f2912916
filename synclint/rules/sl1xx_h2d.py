"""Matchers and fix builders that the host-to-device rules (SL101-SL106) share.

This module holds no rule: it reads a `.to(...)` / `.cuda(...)` call into its parts, asks
where a device argument sends a tensor, and builds the call of the H2D helper that the
`h2d-helper` setting names.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from synclint.analysis.placement import TENSOR_PLACES, Place
from synclint.rules.helpers import kwarg, positional, simple_reference, split_helper_path

# `.to()` keywords a fix can carry over; any other (copy=, memory_format=) means no fix.
_MOVE_KEYWORDS = frozenset({"device", "dtype", "non_blocking"})


def device_target(ctx, expr: cst.BaseExpression):
    """Where a tensor goes when `expr` is its device argument ({DEVICE}, {HOST}, both, a
    tensor's placement for `.to(other)`), or None when `expr` is not known to be a device."""
    return ctx.device_target(expr)


def goes_to_device(target) -> bool:
    return target is not None and target.may_be(Place.DEVICE) and target.is_(Place.DEVICE, Place.HOST)


def explained(placement, target):
    """The placement a finding cites, with the destination's evidence where the destination
    is what hides the finding: a device that may be the CPU at low confidence (its callers
    give it only the CPU, or nothing here says what it is), so `--explain` says why the
    finding is not shown by default."""
    from dataclasses import replace

    from synclint.violation import Confidence

    if target is None or target.on_device or target.confidence > Confidence.LOW or not target.evidence:
        return placement
    if placement is None:
        return target  # a finding that cites no data placement (SL106): the destination's reasons
    return replace(placement, evidence=(*placement.evidence, *target.evidence))


@dataclass(frozen=True)
class Move:
    """A `.to(...)` or `.cuda(...)` call read into its parts."""

    call: cst.Call
    source: cst.BaseExpression  # the tensor being moved
    device: cst.BaseExpression | None  # None for `.cuda()` (the current device)
    dtype: cst.BaseExpression | None
    non_blocking: cst.Arg | None  # the `non_blocking=` argument, if given
    method: str  # "to" or "cuda"
    simple: bool  # only arguments a fix can carry over (device, dtype, non_blocking)

    @property
    def is_non_blocking(self) -> bool:
        arg = self.non_blocking
        return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "True"


def read_move(call: cst.Call, ctx) -> Move | None:
    """`x.to(device[, dtype], non_blocking=...)`, `x.to(device=...)`, `x.cuda([device])`.

    None for calls that are not a move to a device: `.to(torch.float16)` (a dtype change),
    `.to(other_tensor)`, an unknown single argument that names no device."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
        return None
    if any(a.star for a in call.args):
        return None
    method = func.attr.value
    args = positional(call)
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    non_blocking = kwarg(call, "non_blocking")
    if method == "cuda":
        device_arg = kwarg(call, "device") or (args[0] if args else None)
        simple = len(args) == 0 and keywords <= {"non_blocking"}
        return Move(call, func.value, device_arg.value if device_arg else None, None, non_blocking, method, simple)
    device_kw = kwarg(call, "device")
    device = device_kw.value if device_kw is not None else (args[0].value if args else None)
    if device is None:
        return None
    if device_kw is None and _is_dtype(ctx, device):
        return None
    dtype_kw = kwarg(call, "dtype")
    dtype = dtype_kw.value if dtype_kw is not None else (args[1].value if len(args) >= 2 and device_kw is None else None)
    if len(args) >= 3 or (device_kw is not None and args):
        return None  # `.to(device, dtype, non_blocking, copy)` spelled positionally: leave it
    simple = keywords <= _MOVE_KEYWORDS
    if ctx.placement(device).places & TENSOR_PLACES:
        simple = False  # `.to(other_tensor)` also takes its dtype, and is no device to pass on
    return Move(call, func.value, device, dtype, non_blocking, method, simple)


def move_target(move: Move, ctx):
    """Where the move sends the tensor (see `device_target`); `.cuda()` always to the device."""
    if move.device is None:
        from synclint.analysis.placement import placed
        from synclint.violation import Confidence

        return placed(Place.DEVICE, Confidence.HIGH, move.call, "`.cuda()`")
    return device_target(ctx, move.device)


def _is_dtype(ctx, expr: cst.BaseExpression) -> bool:
    qual = ctx.qualname(expr)
    if qual is not None and qual.startswith("torch."):
        from synclint.apis.torch_api import DTYPES

        return qual[6:] in DTYPES
    return isinstance(expr, cst.Attribute) and expr.attr.value == "dtype"


def device_expr(move: Move) -> cst.BaseExpression:
    """The device a fix passes on: the move's own, or `"cuda"` for a bare `.cuda()`."""
    return move.device if move.device is not None else cst.SimpleString('"cuda"')


@dataclass(frozen=True)
class H2DCall:
    """A pinned, non-blocking host-to-device copy as a fix writes it."""

    node: cst.BaseExpression
    imports: tuple[tuple[str, str], ...]
    label: str  # what the fix's title says it uses

    @property
    def message(self) -> str:
        return f"Use {self.label}"


# Helpers whose keywords are `dtype=` and `device=` (their positional orders differ).
_DTYPE_DEVICE_KEYWORDS = frozenset({"synclint.runtime.async_tensor_h2d", "synclint.runtime.h2d.async_tensor_h2d", "vllm.utils.torch_utils.async_tensor_h2d"})


def chosen_helper(ctx, settings) -> tuple[str, str] | None:
    """(local name, qualified name) of the helper an H2D fix calls, or None for the inline
    form: a known helper (or the configured one) that the file already imports, else the
    configured `h2d-helper`, else None. A file that imports a helper never gets a second one."""
    from synclint.apis.torch_api import H2D_HELPERS
    from synclint.config import INLINE_H2D

    for local, qual in ctx.imports.aliases.items():
        if qual in H2D_HELPERS or (qual == settings.h2d_helper and settings.h2d_helper != INLINE_H2D):
            return local, qual
    if settings.h2d_helper == INLINE_H2D:
        return None
    return split_helper_path(settings.h2d_helper)[1], settings.h2d_helper


def torch_name(ctx) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The name `torch` is bound to in the file, and the import to add when it is not."""
    aliases = ctx.imports.aliases
    if aliases.get("torch") == "torch":
        return "torch", ()
    for local, qual in aliases.items():
        if qual == "torch":
            return local, ()
    return "torch", (("", "torch"),)


def helper_call(ctx, settings, data: cst.BaseExpression, *, dtype=None, device=None, tensor_data: bool = False) -> H2DCall | None:
    """A pinned, non-blocking copy of `data` (host data; a host tensor when `tensor_data`)
    to `device`, with the values and dtype of `torch.tensor(data, dtype=dtype, device=device)`.

    The helper the file imports or `h2d-helper` names, called with the signature it has
    (see `H2D_HELPERS`), or by default the inline form, which needs nothing but torch:
    `torch.tensor(data, dtype=..., pin_memory=torch.cuda.is_available()).to(device,
    non_blocking=torch.cuda.is_available())`. Pinned only where CUDA is, where the copy is
    then queued without a wait; elsewhere it is the plain blocking copy it replaces. The
    pinned temporary may be dropped at once: it comes from PyTorch's caching host allocator,
    which records the copy's stream and reuses the block only after the copy has run.
    None where no correct call can be written (a tensor expression the inline form would
    have to spell twice, or a helper that only takes Python data)."""
    chosen = chosen_helper(ctx, settings)
    if chosen is not None:
        local, qual = chosen
        module = split_helper_path(qual)[0]
        imports = () if ctx.imports.aliases.get(local) == qual else ((module, local),)
        label = f"`{local}` from `{module}` (pinned, non-blocking copy)"
        if qual == "vllm.utils.async_tensor_h2d" or qual.startswith("sglang."):
            if tensor_data:
                return None  # both call torch.tensor(data): a tensor argument warns and copies
            torch, torch_import = torch_name(ctx)
            args = [cst.Arg(data), _keyword("dtype", dtype if dtype is not None else cst.Name("None"))]
            if qual.startswith("sglang."):
                args.append(_keyword("device", device))
            else:
                args += [_keyword("target_device", device), _keyword("pin_memory", _cuda_available(torch))]
                imports += torch_import
            return H2DCall(cst.Call(func=cst.Name(local), args=args), imports, label)
        args = [cst.Arg(data)]
        if dtype is not None:
            args.append(_keyword("dtype", dtype))
        if device is not None:
            args.append(_keyword("device", device))
        return H2DCall(cst.Call(func=cst.Name(local), args=args), imports, label)
    torch, imports = torch_name(ctx)
    moved_args = [cst.Arg(device), _keyword("non_blocking", _cuda_available(torch))]
    if tensor_data:
        if not simple_reference(data):
            return None
        # `(x.pin_memory() if torch.cuda.is_available() else x).to(device, ...)`
        pinned = cst.IfExp(
            test=_cuda_available(torch),
            body=cst.Call(func=cst.Attribute(value=data, attr=cst.Name("pin_memory"))),
            orelse=data,
            lpar=[cst.LeftParen()],
            rpar=[cst.RightParen()],
        )
        if dtype is not None:
            moved_args.insert(1, _keyword("dtype", dtype))
        node = cst.Call(func=cst.Attribute(value=pinned, attr=cst.Name("to")), args=moved_args)
        return H2DCall(node, imports, "`.pin_memory()` and a non-blocking copy (inline, torch only)")
    if python_data(ctx, data):
        args = [cst.Arg(data)]
        if dtype is not None:
            args.append(_keyword("dtype", dtype))
        args.append(_keyword("pin_memory", _cuda_available(torch)))
        built = cst.Call(func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("tensor")), args=args)
        node = cst.Call(func=cst.Attribute(value=built, attr=cst.Name("to")), args=moved_args)
        return H2DCall(node, imports, "a pinned, non-blocking copy (inline, torch only)")
    # A numpy array (or data that may be one): `torch.tensor(array, pin_memory=True)` raises
    # ("Can't pin tensor constructed from numpy"), so pin a tensor of it instead:
    # `(torch.as_tensor(a).pin_memory() if torch.cuda.is_available() else torch.tensor(a)).to(...)`.
    # Both branches copy (pin_memory() copies), as torch.tensor(a) does; `a` is evaluated once.
    if not simple_reference(data):
        return None
    typed = [_keyword("dtype", dtype)] if dtype is not None else []
    as_tensor = cst.Call(func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("as_tensor")), args=[cst.Arg(data), *typed])
    copied = cst.Call(func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("tensor")), args=[cst.Arg(data), *typed])
    pinned = cst.IfExp(
        test=_cuda_available(torch),
        body=cst.Call(func=cst.Attribute(value=as_tensor, attr=cst.Name("pin_memory"))),
        orelse=copied,
        lpar=[cst.LeftParen()],
        rpar=[cst.RightParen()],
    )
    node = cst.Call(func=cst.Attribute(value=pinned, attr=cst.Name("to")), args=moved_args)
    return H2DCall(node, imports, "a pinned, non-blocking copy (inline, torch only)")


def python_data(ctx, data: cst.BaseExpression) -> bool:
    """Data that `torch.tensor(data, pin_memory=True)` accepts: a list/tuple or number
    literal, or a value the analysis proves a Python sequence or scalar. (A numpy array
    cannot be pinned that way: PyTorch raises "Can't pin tensor constructed from numpy".)"""
    if isinstance(data, (cst.List, cst.Tuple, cst.Integer, cst.Float, cst.ListComp)):
        return True
    placement = ctx.placement(data)
    return placement.is_(Place.SEQUENCE, Place.SCALAR)


def inline_factory(ctx, settings, call: cst.Call, func_name: str = "tensor") -> H2DCall | None:
    """`torch.tensor(data, dtype=..., device=d)` rewritten in place: the data and dtype
    arguments stay as written (comments too); `device=` moves to the `.to()`. For a
    helper with `dtype=`/`device=` keywords only the callee changes. None for the helpers
    that need their arguments rebuilt (the caller then uses `helper_call`)."""
    device = kwarg(call, "device")
    if device is None:
        return None
    from synclint.apis.torch_api import H2D_HELPERS

    chosen = chosen_helper(ctx, settings)
    if chosen is not None:
        local, qual = chosen
        if qual in H2D_HELPERS and qual not in _DTYPE_DEVICE_KEYWORDS:
            return None  # older vLLM's and SGLang's take other arguments: rebuilt by helper_call
        module = split_helper_path(qual)[0]
        imports = () if ctx.imports.aliases.get(local) == qual else ((module, local),)
        return H2DCall(call.with_changes(func=cst.Name(local)), imports, f"`{local}` from `{module}` (pinned, non-blocking copy)")
    if not python_data(ctx, positional(call)[0].value):
        return None  # possibly a numpy array: helper_call writes the form that pins it
    torch, imports = torch_name(ctx)
    # `device=d` becomes `pin_memory=...` in the same place: the layout stays as written.
    pin = device.with_changes(keyword=cst.Name("pin_memory"), value=_cuda_available(torch))
    args = [pin if a is device else a for a in call.args]
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value != func_name:
        func = func.with_changes(attr=cst.Name(func_name))
    built = call.with_changes(func=func, args=args)
    moved = [cst.Arg(device.value), _keyword("non_blocking", _cuda_available(torch))]
    node = cst.Call(func=cst.Attribute(value=built, attr=cst.Name("to")), args=moved)
    return H2DCall(node, imports, "a pinned, non-blocking copy (inline, torch only)")


def _cuda_available(torch: str) -> cst.Call:
    return cst.Call(func=cst.parse_expression(f"{torch}.cuda.is_available"))


def index_on_device(ctx, settings, index: cst.BaseExpression, tensor: cst.BaseExpression) -> H2DCall | None:
    """An int64 copy of the Python list `index` on `tensor`'s device, pinned and
    non-blocking (see `helper_call`): a list of integers indexes exactly as the int64
    tensor of the same values. None where the fix could not be written soundly (`tensor`
    is not a plain reference, or `torch` is not imported under its own name)."""
    if not simple_reference(tensor) or ctx.imports.aliases.get("torch") != "torch":
        return None
    return helper_call(
        ctx,
        settings,
        index,
        dtype=cst.parse_expression("torch.long"),
        device=cst.Attribute(value=tensor, attr=cst.Name("device")),
    )


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def helper_names(settings) -> frozenset[str]:
    """Qualified names that call an H2D helper: the configured one and the known ones."""
    from synclint.apis.torch_api import H2D_HELPERS

    return frozenset({settings.h2d_helper, *H2D_HELPERS})


def plain_factory_data(call: cst.Call, ctx, names=("torch.tensor",)) -> tuple[cst.BaseExpression, cst.BaseExpression | None] | None:
    """For `torch.tensor(data[, dtype=...])` (no device, no other keyword): (data, dtype)."""
    if ctx.qualname(call.func) not in names:
        return None
    args = positional(call)
    if len(args) != 1 or any(a.star for a in call.args):
        return None
    if any(a.keyword is not None and a.keyword.value != "dtype" for a in call.args):
        return None
    dtype = kwarg(call, "dtype")
    return args[0].value, dtype.value if dtype is not None else None


def from_numpy_array(expr: cst.BaseExpression, ctx) -> cst.BaseExpression | None:
    """The array of `torch.from_numpy(array)`, else None."""
    if isinstance(expr, cst.Call) and ctx.qualname(expr.func) == "torch.from_numpy":
        args = positional(expr)
        if len(args) == 1 and len(expr.args) == 1:
            return args[0].value
    return None


# --- what kind of host memory a copy reads -------------------------------------------------

# Methods and attributes that return a strided (non-contiguous) view of their tensor.
STRIDED_VIEW_METHODS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims", "movedim", "diagonal", "unfold"})
STRIDED_VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH"})
# Methods that return a view sharing their tensor's memory (pinned stays pinned) when the
# tensor is contiguous, as the buffers that vLLM-style code pins are.
SAME_MEMORY_METHODS = frozenset({"view", "reshape", "flatten", "squeeze", "unsqueeze", "view_as", "narrow", "contiguous", "detach"})

PAGEABLE = "pageable"
PINNED = "pinned"
STRIDED_PINNED = "strided view of pinned"
# Host memory that may be pinned or pageable (a host tensor another file returns): a
# blocking copy of either waits for the GPU; whether `non_blocking` helps is unknown.
HOST_EITHER = "host, pinned or pageable"


def host_memory(expr: cst.BaseExpression, ctx):
    """(kind, placement) for the source of a host-to-device copy: PAGEABLE (a pageable host
    tensor), PINNED (pinned memory or a contiguous view of it), STRIDED_PINNED (a strided view
    of a pinned buffer, which PyTorch copies through a pageable temporary), HOST_EITHER (host
    memory that may be either, such as a host tensor another file returns), or (None, ...)
    when unknown or not a host tensor. Views are followed to their buffer, because indexing
    `pinned[:n]` keeps the memory pinned while `pinned[:, :n]` is strided."""
    node, strided, walked = expr, False, False
    while True:
        if isinstance(node, cst.Subscript):
            if not _basic_index(node, ctx):
                # `buf[tensor]` gathers into new memory: pageable where `buf` is a host
                # tensor (pinned or not), unknown otherwise.
                buffer = ctx.placement(node.value)
                if buffer.is_(Place.HOST, Place.PINNED) and not _keyed(node):
                    return PAGEABLE, buffer
                return None, ctx.placement(expr)
            strided = strided or strided_index(node)
            node = node.value
        elif isinstance(node, cst.Attribute) and node.attr.value in STRIDED_VIEW_ATTRIBUTES:
            strided, node = True, node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in STRIDED_VIEW_METHODS:
            strided, node = True, node.func.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in SAME_MEMORY_METHODS:
            node = node.func.value
        else:
            break
        walked = True
    placement = ctx.placement(node if walked else expr)
    if not placement.known:
        from synclint.rules.helpers import concatenated_host_tensor

        host = concatenated_host_tensor(node, ctx)
        if host is not None:
            return PAGEABLE, host  # a concatenation makes new (pageable) memory
    if placement.is_(Place.PINNED):
        return (STRIDED_PINNED if strided else PINNED), placement
    if placement.is_(Place.HOST):
        return PAGEABLE, placement
    if placement.is_(Place.HOST, Place.PINNED) and placement.evidence and isinstance(placement.evidence[0].node, cst.Call):
        # A helper's result (`positions(grid).to(d)`, or a name bound to it): what the
        # function builds. A parameter or field the repository gives host data stays
        # unreported: the index reads some of those as host by convention (the fields of
        # request objects), and the move is then often of data already on the device.
        return HOST_EITHER, placement
    return None, placement


def _keyed(expr: cst.Subscript) -> bool:
    """`d["swa_mask"]`: a look-up by a string key (a dict's value, whatever it holds), not
    an index into a tensor."""
    return any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.ConcatenatedString,
                                                                            cst.FormattedString))
               for e in expr.slice)


def _basic_index(expr: cst.Subscript, ctx) -> bool:
    """Only slices, literals and Python integers: a view, not a gather."""
    for element in expr.slice:
        item = element.slice
        if isinstance(item, cst.Slice):
            continue
        value = item.value
        if isinstance(value, (cst.Integer, cst.Ellipsis)) or (isinstance(value, cst.Name) and value.value == "None"):
            continue
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
            continue
        if not ctx.placement(value).is_(Place.SCALAR):
            return False
    return True


def strided_index(expr: cst.Subscript) -> bool:
    """Whether `buf[...]` is a strided view of a contiguous `buf`: a step, or anything but a
    full `:` after the first slice (`buf[:, :n]`, `buf[:, 0]`). `buf[:n]`, `buf[i, :n]` and
    `buf[:n, :]` are contiguous."""
    seen_slice = False
    for element in expr.slice:
        item = element.slice
        if isinstance(item, cst.Slice):
            if item.step is not None and not (isinstance(item.step, cst.Integer) and item.step.value == "1"):
                return True
            full = item.lower is None and item.upper is None
            if seen_slice and not full:
                return True
            seen_slice = True
        else:
            value = item.value
            if isinstance(value, cst.Name) and value.value == "None":
                continue
            if isinstance(value, cst.Ellipsis) or seen_slice:
                return True
    return False
