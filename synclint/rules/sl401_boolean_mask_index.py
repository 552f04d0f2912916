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
    comparison, `~m`, `a & b`, `.bool()`, `isnan`, ... or a name bound to one).

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
    device_sites = ("mask",)

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
            if mask.maybe_device:
                confidence = device_confidence(mask)
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


def _last_name(expr: cst.BaseExpression) -> str:
    return (expr.attr.value if isinstance(expr, cst.Attribute) else expr.value).lower()


def _is_len_call(node) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"
