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


def helper_call(settings, data: cst.BaseExpression, *, dtype=None, device=None) -> tuple[cst.Call, tuple[tuple[str, str], ...]]:
    """`async_tensor_h2d(data, dtype=..., device=...)` and the import it needs.

    Keywords only: synclint's helper is `(data, dtype=None, device=None)` and vLLM's
    (`vllm.utils.torch_utils`, 0.33) is `(data, device=None, dtype=None, out=None)`; their
    positional orders differ, their keywords agree, so one spelling calls either."""
    module, name = split_helper_path(settings.h2d_helper)
    args = [cst.Arg(data)]
    if dtype is not None:
        args.append(_keyword("dtype", dtype))
    if device is not None:
        args.append(_keyword("device", device))
    return cst.Call(func=cst.Name(name), args=args), ((module, name),)



def index_on_device(settings, index: cst.BaseExpression, tensor: cst.BaseExpression, ctx):
    """`async_tensor_h2d(index, dtype=torch.long, device=tensor.device)` and its imports: a
    Python list of integers indexes exactly as the int64 tensor of the same values. None
    where the fix could not be written soundly (`tensor` is not a plain reference, or
    `torch` is not imported under its own name)."""
    if not simple_reference(tensor) or ctx.imports.aliases.get("torch") != "torch":
        return None
    return helper_call(
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
    """Qualified names that call an H2D helper: the configured one and both presets."""
    from synclint.config import H2D_HELPER_PRESETS

    return frozenset({settings.h2d_helper, *H2D_HELPER_PRESETS.values(), "vllm.utils.async_tensor_h2d", "synclint.runtime.h2d.async_tensor_h2d"})


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


def host_memory(expr: cst.BaseExpression, ctx):
    """(kind, placement) for the source of a host-to-device copy: PAGEABLE (a pageable host
    tensor), PINNED (pinned memory or a contiguous view of it), STRIDED_PINNED (a strided view
    of a pinned buffer, which PyTorch copies through a pageable temporary), or (None, ...)
    when unknown or not a host tensor. Views are followed to their buffer, because indexing
    `pinned[:n]` keeps the memory pinned while `pinned[:, :n]` is strided."""
    node, strided, walked = expr, False, False
    while True:
        if isinstance(node, cst.Subscript):
            if not _basic_index(node, ctx):
                return None, ctx.placement(expr)  # `buf[tensor]` gathers into new memory
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
    if placement.is_(Place.PINNED):
        return (STRIDED_PINNED if strided else PINNED), placement
    if placement.is_(Place.HOST):
        return PAGEABLE, placement
    return None, placement


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
