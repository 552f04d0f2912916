from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import code, device_confidence, method_name, positional, receiver

# Reductions whose value, read back, is typically a size or a count (`int(ids.max()) + 1`).
_SIZE_REDUCTIONS = frozenset({"max", "amax", "sum", "count_nonzero"})
# Calls whose arguments are sizes: a readback there sizes a tensor or a loop.
_SIZE_CALLS = frozenset(
    {
        "range", "zeros", "ones", "empty", "full", "arange", "randn", "rand", "new_zeros",
        "new_ones", "new_empty", "new_full", "view", "reshape", "expand", "split", "narrow",
        "repeat", "zeros_like", "empty_like", "one_hot", "bincount", "repeat_interleave",
    }
)
_SIZE_KEYWORDS = frozenset({"minlength", "num_classes", "output_size", "size", "max_length", "max_len"})


def _is_builtin(func: cst.BaseExpression, names: frozenset[str] | tuple[str, ...], ctx) -> bool:
    return isinstance(func, cst.Name) and func.value in names and func.value not in ctx.imports.aliases


def _is_reduction(expr: cst.BaseExpression, ctx) -> bool:
    """`t.max()`, `t.sum()`, `torch.max(t)`: a whole-tensor reduction (no dim, one result)."""
    if not isinstance(expr, cst.Call):
        return False
    method = method_name(expr)
    qual = ctx.qualname(expr.func) or ""
    if qual.startswith("torch.") and qual[6:] in _SIZE_REDUCTIONS:
        return len(expr.args) == 1
    return method in _SIZE_REDUCTIONS and not expr.args and not qual.startswith("torch.")


def _is_offset_difference(expr: cst.BaseExpression) -> bool:
    """`cu[i + 1] - cu[i]`: a length taken from cumulative offsets (cu_seqlens, query_start_loc)."""
    return (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, cst.Subtract)
        and isinstance(expr.left, cst.Subscript)
        and isinstance(expr.right, cst.Subscript)
        and code(expr.left.value) == code(expr.right.value)
    )


def _used_as_size(node: cst.CSTNode, ctx) -> bool:
    """The readback `node` sizes something: `... + 1`, a size argument, a slice bound."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
        other = parent.right if parent.left is node else parent.left
        return isinstance(other, cst.Integer)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        if not isinstance(call, cst.Call):
            return False
        if parent.keyword is not None:
            return parent.keyword.value in _SIZE_KEYWORDS
        func = call.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        return name in _SIZE_CALLS or name == "int"
    return False


def sizing_readback(node: cst.Call, ctx) -> cst.BaseExpression | None:
    """The device expression that `node` (`int(X)`, `range(X)` or `X.item()`) reads back to
    size something, or None. SL201 and SL203 leave these calls to this rule."""
    if _is_builtin(node.func, ("int", "range"), ctx):
        args = positional(node)
        if len(args) != 1 or len(node.args) != 1:
            return None
        value = args[0].value
        if _is_offset_difference(value) or _is_reduction(value, ctx):
            return value
        if isinstance(value, cst.Call) and method_name(value) == "item" and not value.args:
            inner = receiver(value)
            if _is_offset_difference(inner) or _is_reduction(inner, ctx):
                return inner
        return None
    if method_name(node) == "item" and not node.args:
        value = receiver(node)
        if _is_offset_difference(value):
            return value
        if _is_reduction(value, ctx) and _used_as_size(node, ctx):
            return value
    return None


def _reads_item(node: cst.Call) -> bool:
    """`X.item()` or `int(X.item())`: a tensor (or numpy) readback whatever `X`'s placement;
    SL201 would report it at `low` confidence, so this rule, which takes it over, does too."""
    if method_name(node) == "item":
        return True
    args = positional(node)
    return bool(args) and isinstance(args[0].value, cst.Call) and method_name(args[0].value) == "item"


def _inside_sizing_conversion(node: cst.Call, ctx) -> bool:
    """`X.item()` inside `int(X.item())`: the outer `int()` is the one finding."""
    arg = ctx.parent(node)
    call = ctx.parent(node, 2)
    return isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and _is_builtin(call.func, ("int", "range"), ctx) and sizing_readback(call, ctx) is not None


class SizingReadback(Rule):
    """Flags a reduction or an offset difference read back to the host to size something.

    ## What it does
    Reports `int(t.max()) + 1`, `int(mask.sum())`, `t.max().item() + 1` passed as a size, and
    lengths read back from cumulative offsets (`int(cu[i + 1] - cu[i])`,
    `(cu[i + 1] - cu[i]).item()`, `range(cu[i + 1] - cu[i])`), where the tensor may live on
    the device. Such a call is reported by this rule only, not also as an `.item()` (SL201)
    or an `int()` readback (SL203).

    ## Why it stalls
    The size is computed on the GPU and then read back: the host waits for every queued kernel
    before it can allocate or loop. Inside a loop or a comprehension it waits once per
    element. Measured on an H200: `int(t.max()) + 1` and `[int(cu[i+1] - cu[i]) for i ...]`
    both waited for the whole queue (stall ratio ~1.0). The measured fix was to derive the
    bound on the host from data already there, which removed the stall.

    ## Example
    ```python
    import torch

    def get_rope_index(position_ids: torch.Tensor, device):
        position_ids = position_ids.to(device)
        max_position = int(position_ids.max()) + 1
        return torch.arange(max_position, device=device)
    ```

    ## Use instead
    Derive the size on the host from data that is already there (the scheduler's lengths,
    the grid sizes, the numpy copy of the offsets):
    ```python
    import torch

    def get_rope_index(grid_thw: list[tuple[int, int, int]], device):
        max_position = max(max(h, w) for _, h, w in grid_thw)
        return torch.arange(max_position, device=device)
    ```

    ## Fix safety
    No fix: the host-side source of the size is elsewhere in the program.

    ## Known false positives
    A reduction over a tensor that is in fact on the host at run time (then the readback is
    free). Values whose placement is unknown are not reported: `int(lens.max()) + 1` is just
    as common on numpy arrays and host tensors; with `.item()` (`int(lens.max().item())`)
    they are reported at `low` confidence, as SL201 reports `.item()`.
    """

    code = "SL204"
    name = "sizing-readback"
    summary = "a reduction read back to the host to size something"
    triggers = ("int", "range", "item")
    shape_words = ("int", "range", "item")
    device_only = True
    device_sites = ("sizing",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        value = sizing_readback(node, ctx)
        if value is None or _inside_sizing_conversion(node, ctx):
            return
        placement = ctx.placement(value)
        if not placement.maybe_device and (placement.known or not _reads_item(node)):
            return  # host data (or unknown): reading it is free, or we cannot tell
        in_loop = ctx.hot_path == "in a loop" or any(isinstance(n, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)) for n in ctx.stack)
        where = " once per iteration" if in_loop else ""
        ctx.report(
            self,
            node,
            f"a size read back from the device{where} waits for all queued GPU work; derive it on the host from data already there",
            confidence=device_confidence(placement),
            placement=placement,
        )
