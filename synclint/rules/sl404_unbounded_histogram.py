from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import device_confidence, kwarg, method_name, positional, receiver


def _is_zero(expr: cst.BaseExpression | None) -> bool:
    return expr is None or (isinstance(expr, (cst.Integer, cst.Float)) and float(expr.value) == 0.0)


def _is_minus_one(expr: cst.BaseExpression | None) -> bool:
    return (
        expr is None
        or isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
        and expr.expression.value == "1"
    )


class UnboundedHistogram(Rule):
    """Flags `bincount`, `histc` without bounds and `one_hot` without `num_classes` on
    device tensors.

    ## What it does
    Reports `torch.bincount(x)` / `x.bincount()` (with or without `minlength`),
    `torch.histc(x)` / `x.histc()` without `min`/`max`, and `F.one_hot(x)` without
    `num_classes` (or with `num_classes=-1`) when the input may live on the device.

    ## Why it stalls
    The output size (or the bin range) depends on the data: `bincount` needs `x.max()`
    (even with `minlength`, which is only a lower bound), `histc` with `min == max == 0`
    uses the data's range, and `one_hot` needs `x.max() + 1`. PyTorch reads that value back
    to the host, so the host waits for every queued kernel. Measured on an H200: `bincount`
    (even with `minlength`), `histc` without min/max and `one_hot` without `num_classes`
    each waited for the whole GPU queue (stall ratio ~1.0).

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    def forward(self, topk_ids, num_experts: int):
        ids = topk_ids.cuda()
        return F.one_hot(ids)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    def forward(self, topk_ids, num_experts: int):
        ids = topk_ids.cuda()
        return F.one_hot(ids, num_classes=num_experts)
    ```
    For `bincount`, count into a tensor of host-known size:
    `torch.zeros(n, dtype=torch.long, device=d).scatter_add_(0, x, torch.ones_like(x))`.

    ## Fix safety
    No fix: the number of classes or bins is a fact about the data that only the code's
    author knows.

    ## Known false positives
    Inputs whose placement is unknown are `low` confidence (hidden by default); numpy and
    host tensors are not reported.
    """

    code = "SL404"
    name = "unbounded-histogram"
    summary = "an op whose output size is the data's maximum reads it back"
    triggers = ("bincount", "histc", "one_hot")
    shape_words = ("bincount", "histc", "one_hot")
    device_only = True
    device_sites = ("data",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func) or ""
        if qual.startswith("numpy."):
            return
        short = qual.rsplit(".", 1)[-1] if qual.startswith("torch.") else None
        args = positional(node)
        if short in ("bincount", "histc", "one_hot"):
            data = args[0].value if args else getattr(kwarg(node, "input"), "value", None)
            rest = args[1:]
            name = short
        elif method_name(node) in ("bincount", "histc") and not qual:
            data, rest, name = receiver(node), args, method_name(node)
        else:
            return
        if data is None or not self._unbounded(name, node, rest):
            return
        value = ctx.placement(data)
        if value.known and not value.maybe_device:
            return
        ctx.report(
            self,
            node,
            self._message(name),
            confidence=device_confidence(value),
            placement=value,
        )

    @staticmethod
    def _unbounded(name: str, node: cst.Call, rest) -> bool:
        if name == "bincount":
            return True
        if name == "histc":
            low = kwarg(node, "min")
            high = kwarg(node, "max")
            low = low.value if low is not None else (rest[1].value if len(rest) >= 2 else None)
            high = high.value if high is not None else (rest[2].value if len(rest) >= 3 else None)
            return _is_zero(low) and _is_zero(high)
        classes = kwarg(node, "num_classes")
        classes = classes.value if classes is not None else (rest[0].value if rest else None)
        return _is_minus_one(classes)

    @staticmethod
    def _message(name: str) -> str:
        if name == "bincount":
            return "`bincount` of a device tensor reads `max()` back to size its output (even with `minlength`)"
        if name == "histc":
            return "`histc` without `min`/`max` reads the data's range back from the device"
        return "`one_hot` without `num_classes` reads `max() + 1` back from the device"
