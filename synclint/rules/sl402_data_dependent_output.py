from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import device_confidence, method_name, positional, receiver

_FUNCTIONS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"})


class DataDependentOutput(Rule):
    """Flags `nonzero`, one-argument `torch.where`, `masked_select` and `unique` on device
    tensors.

    ## What it does
    Reports `torch.nonzero(x)` / `x.nonzero()`, `torch.argwhere`, `torch.where(cond)` with
    one argument, `torch.masked_select` / `x.masked_select(m)` and `torch.unique` /
    `x.unique()` / `unique_consecutive` when the input may live on the device.

    ## Why it stalls
    Each returns a tensor whose size depends on the data: PyTorch reads the size back to
    the host before it can allocate the output, so the host waits for every queued kernel.
    Measured on an H200: `torch.nonzero`, one-argument `torch.where(m)`, `masked_select` and
    `unique` each waited for the whole GPU queue (stall ratio ~1.0). Three-argument
    `torch.where(m, x, 0)` and `nonzero_static` did not stall and are not flagged.

    ## Example
    ```python
    import torch

    def forward(self, input_ids):
        ids = input_ids.cuda()
        return torch.nonzero(ids == self.image_token_id)
    ```

    ## Use instead
    A fixed-size form (`nonzero_static` with a host-known bound, or a mask kept as a mask):
    ```python
    import torch

    def forward(self, input_ids):
        ids = input_ids.cuda()
        return torch.nonzero_static(ids == self.image_token_id, size=ids.numel(), fill_value=-1)
    ```

    ## Fix safety
    No fix: a fixed-size replacement needs an upper bound and a fill value that only the
    code's author knows.

    ## Known false positives
    A method call (`x.unique()`) on an object whose placement is unknown is `low`
    confidence (hidden by default); numpy and host tensors are not reported.
    """

    code = "SL402"
    name = "data-dependent-output"
    summary = "an op whose output size depends on device data reads the size back"
    triggers = ("nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "where")
    shape_words = ("nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "where")
    device_only = True
    device_sites = ("data",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func) or ""
        data = None
        if qual.startswith("torch.") and qual[6:] in _FUNCTIONS | {"where"}:
            name = qual[6:]
            args = positional(node)
            if name == "where" and (len(node.args) != 1 or not args):
                return  # three-argument `where` keeps the shape
            data = args[0].value if args else None
        else:
            name = method_name(node)
            if name not in _FUNCTIONS or qual.startswith(("numpy.", "pandas.")):
                return
            data = receiver(node)
        if data is None:
            return
        value = ctx.placement(data)
        if value.known and not value.maybe_device:
            return  # host data: the size is known without a wait
        shown = "torch.where(cond)" if name == "where" else f"{name}()"
        ctx.report(
            self,
            node,
            f"`{shown}` of a device tensor has a data-dependent size, read back to the host",
            confidence=device_confidence(value),
            placement=value,
        )
