from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import device_confidence, method_name, receiver
from synclint.rules.sl204_sizing_readback import sizing_readback


class ItemReadback(Rule):
    """Flags `.item()` on a tensor that lives on the device.

    ## What it does
    Reports `t.item()` where `t` is (or may be) a device tensor.

    ## Why it stalls
    `.item()` copies one element to the host and returns a Python number, so the host must
    wait until every kernel already queued on the stream has run: the GPU queue drains, then
    the GPU idles while the host queues more work. Measured on an H200: `.item()` waited for
    the whole queue (stall ratio ~1.0), and `torch.cuda.set_sync_debug_mode` reports it.

    ## Example
    ```python
    import torch

    def forward(self, logits):
        best = logits.argmax(dim=-1)
        return best.item()
    ```

    ## Use instead
    Keep the value on the device and consume it there, or read back once per step, late,
    after the next step's work is queued:
    ```python
    import torch

    def forward(self, logits):
        return logits.argmax(dim=-1)
    ```

    ## Fix safety
    No fix: where the value is needed on the host is a design decision.

    ## Known false positives
    `.item()` on a host tensor whose placement the analysis cannot see, at `low` confidence
    (hidden by default). A size read back with `.item()` (`t.max().item() + 1`) is reported
    as SL204 instead, once.
    """

    code = "SL201"
    name = "item-readback"
    summary = "`.item()` reads a device tensor back to the host"
    triggers = ("item",)
    shape_words = ("item",)
    device_only = True
    device_sites = ("receiver",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if method_name(node) != "item" or node.args:
            return
        if sizing_readback(node, ctx) is not None or _converted_for_sizing(node, ctx):
            return  # a size read back (`t.max().item() + 1`): SL204's one finding
        value = ctx.placement(receiver(node))
        if value.known and not value.maybe_device:
            return  # host data: `.item()` is free
        ctx.report(
            self,
            node,
            "`.item()` copies a device tensor to the host and waits for all queued GPU work",
            confidence=device_confidence(value),
            placement=value,
        )


def _converted_for_sizing(node: cst.Call, ctx) -> bool:
    """`int(t.max().item())`: the enclosing `int()` is SL204's finding."""
    arg, call = ctx.parent(node), ctx.parent(node, 2)
    return isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and sizing_readback(call, ctx) is not None
