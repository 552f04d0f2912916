from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import DEVICE_ORIGIN_TRIGGERS, device_confidence, dtype_kind
from synclint.violation import Confidence


class BooleanMaskIndex(Rule):
    """Flags boolean-mask indexing of a device tensor: `t[mask]`, `len(t[mask])`,
    `x[mask] = y_gpu`.

    ## What it does
    Reports `t[mask]` where `mask` is a bool tensor that may live on the device (a
    comparison, `~m`, `a & b`, `.bool()`, `isnan`, ... or a name bound to one). In
    `x[mask] = y` with a device value `y`, `x` is on the device (only a device tensor takes a
    device value), and so is a mask built from `x` itself (`m = x < 0`): reported at
    `medium` confidence even when where `x` comes from is not visible.

    ## Why it stalls
    The result's size is the number of `True` elements, which only the GPU knows: PyTorch
    runs `nonzero` and reads the count back to the host before it can allocate the result,
    so the host waits until every queued kernel has run. Measured on an H200: `t[gpu_mask]`,
    `len(t[m])` and `x[mask] = y_gpu` each waited for the whole GPU queue (stall ratio
    ~1.0). `x[mask] = 1.0` (a Python scalar: a masked fill) and `x[cpu_bool_mask]` did not
    stall and are not flagged.

    ## Example
    ```python
    import torch

    def forward(self, hidden):
        scores = hidden.cuda().sum(dim=-1)
        keep = scores > 0
        return hidden[keep]
    ```

    ## Use instead
    Keep the shape fixed and mask the values:
    ```python
    import torch

    def forward(self, hidden):
        scores = hidden.cuda().sum(dim=-1)
        keep = scores > 0
        return torch.where(keep.unsqueeze(-1), hidden, 0)
    ```

    ## Fix safety
    No fix: a fixed-shape form (`torch.where(mask, y, 0)`, `masked_fill`) changes the
    result's shape, which only the code's author can tell is acceptable.

    ## Known false positives
    A mask whose dtype is not visible in the code is not reported (`x[gpu_idx]` with an
    integer index does not stall); a name ending in `mask` is taken as a bool mask at
    `medium` confidence.
    """

    code = "SL401"
    name = "boolean-mask-index"
    summary = "boolean-mask indexing of a device tensor reads the mask's count back"
    triggers = DEVICE_ORIGIN_TRIGGERS
    device_only = True
    device_sites = ("mask", "stored")

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        if self._is_masked_fill(node, ctx):
            return
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                continue
            index = element.slice.value
            kind = dtype_kind(index, ctx)
            named_mask = isinstance(index, (cst.Name, cst.Attribute)) and _last_name(index).endswith("mask")
            if kind != "bool" and not (kind is None and named_mask):
                continue
            mask = ctx.placement(index)
            stored = self._stored_device_value(node, ctx)
            if mask.maybe_device:
                confidence = device_confidence(mask)
            elif not mask.known and stored is not None:
                # `x[mask] = y_gpu`: only a device `x` takes a device value, and a mask built
                # from `x` (`m = x < 0`) lives with it; a CPU mask is still possible.
                confidence = min(device_confidence(stored), Confidence.MEDIUM) if _built_from(index, node.value, ctx) else Confidence.LOW
            elif not mask.known and ctx.placement(node.value).maybe_device:
                confidence = Confidence.LOW  # a mask of a device tensor, unless it is a CPU mask
            else:
                continue  # measured: a CPU bool mask does not stall
            if kind is None:
                confidence = min(confidence, Confidence.MEDIUM)
            parent = ctx.parent(node)
            in_len = isinstance(parent, cst.Arg) and _is_len_call(ctx.parent(node, 2))
            what = "`len(t[mask])`" if in_len else "boolean-mask indexing"
            ctx.report(
                self,
                node,
                f"{what} of a device tensor reads the number of selected elements back to the host",
                confidence=confidence,
                placement=mask,
            )
            return

    @staticmethod
    def _stored_device_value(node: cst.Subscript, ctx):
        """The placement of `v` in `x[mask] = v` when `v` may be a device tensor, else None."""
        target = ctx.parent(node)
        assign = ctx.parent(node, 2)
        if isinstance(target, cst.AssignTarget) and isinstance(assign, cst.Assign):
            value = ctx.placement(assign.value)
            return value if value.maybe_device else None
        return None

    @staticmethod
    def _is_masked_fill(node: cst.Subscript, ctx) -> bool:
        """`x[mask] = <Python scalar>` is a masked fill: measured not to stall. Only a value
        that may be a device tensor (`x[mask] = y_gpu`, measured to stall) is a finding:
        `ids[ids == -1] = self.unk_token_id` writes a number."""
        target = ctx.parent(node)
        assign = ctx.parent(node, 2)
        return (
            isinstance(target, cst.AssignTarget)
            and isinstance(assign, cst.Assign)
            and not ctx.placement(assign.value).maybe_device
        )


def _built_from(mask: cst.BaseExpression, tensor: cst.BaseExpression, ctx) -> bool:
    """`mask` is (a name bound to) a comparison or test of `tensor` itself (`ids < 0`)."""
    from synclint.rules.helpers import bound_value, code

    if isinstance(mask, cst.Name):
        mask = bound_value(mask.value, ctx) or mask
    text = code(tensor)
    if isinstance(mask, cst.Comparison):
        return code(mask.left) == text or any(code(c.comparator) == text for c in mask.comparisons)
    if isinstance(mask, cst.Call) and isinstance(mask.func, cst.Attribute):
        return code(mask.func.value) == text
    return False


def _last_name(expr: cst.BaseExpression) -> str:
    return (expr.attr.value if isinstance(expr, cst.Attribute) else expr.value).lower()


def _is_len_call(node) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"
