from __future__ import annotations

import libcst as cst

from synclint.apis.torch_api import HOST_READ_ARGUMENT_FUNCTIONS
from synclint.rules.base import Rule
from synclint.rules.helpers import device_confidence, kwarg, method_name, positional, receiver
from synclint.violation import Confidence

_FUNCTIONS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"})


class DataDependentOutput(Rule):
    """Flags `nonzero`, one-argument `torch.where`, `masked_select` and `unique` on device
    tensors, and ops that read a tensor argument on the host (`grouped_mm(..., offs=)`).

    ## What it does
    Reports `torch.nonzero(x)` / `x.nonzero()`, `torch.argwhere`, `torch.where(cond)` with
    one argument, `torch.masked_select` / `x.masked_select(m)` and `torch.unique` /
    `x.unique()` / `unique_consecutive` when the input may live on the device; and
    `torch.nn.functional.grouped_mm(a, b, offs=offs)` / `torch._grouped_mm(a, b, offs)`
    unless `offs` is host data (the table `HOST_READ_ARGUMENT_FUNCTIONS` in
    `synclint/apis/torch_api.py`).

    ## Why it stalls
    Each returns a tensor whose size depends on the data: PyTorch reads the size back to
    the host before it can allocate the output, so the host waits for every queued kernel.
    Measured on an H200: `torch.nonzero`, one-argument `torch.where(m)`, `masked_select` and
    `unique` each waited for the whole GPU queue (stall ratio ~1.0). Three-argument
    `torch.where(m, x, 0)` and `nonzero_static` did not stall and are not flagged.
    `grouped_mm` with `offs` runs PyTorch's fallback unless its inputs are bfloat16 on an
    SM90/SM100 GPU: the fallback copies `offs` to the host and loops over the group ends
    there. Traced on an H200 (float32 MoE experts): one sync per `grouped_mm` call, 36 per
    decode step of a small Qwen3-MoE.

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
    confidence (hidden by default); numpy and host tensors are not reported. `grouped_mm`
    is reported at `medium` at most: with bfloat16 inputs on an SM90/SM100 GPU it takes
    the fast path, which does not copy `offs`.
    """

    code = "SL402"
    name = "data-dependent-output"
    summary = "an op whose output size depends on device data reads the size back"
    triggers = ("nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "where", "grouped_mm", "_grouped_mm")
    shape_words = ("nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "where", "grouped_mm", "_grouped_mm")
    device_only = True
    device_sites = ("data", "host_read")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func) or ""
        data = None
        if qual.startswith("torch.") and qual[6:] in HOST_READ_ARGUMENT_FUNCTIONS:
            self._host_read(node, qual[6:], ctx)
            return
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

    def _host_read(self, node: cst.Call, name: str, ctx) -> None:
        keywords, positions = HOST_READ_ARGUMENT_FUNCTIONS[name]
        args = positional(node)
        read = next((kwarg(node, k).value for k in keywords if kwarg(node, k) is not None), None)
        if read is None:
            read = next((args[i].value for i in positions if i < len(args)), None)
        if read is None or (isinstance(read, cst.Name) and read.value == "None"):
            return  # no offsets: a plain batched matmul
        value = ctx.placement(read)
        if value.known and not value.maybe_device:
            return  # host offsets: the op runs on the host
        # The op runs where its matrices are: on a GPU its offsets are there too, so an
        # unplaced `offs` is as likely on the device as its matrices (never above medium:
        # bfloat16 on SM90/SM100 takes the fast path, which does not copy).
        ctx.report(
            self,
            node,
            f"`{name.rpartition('.')[2]}(..., offs=...)` copies `offs` to the host and loops over it "
            "(PyTorch's fallback: any dtype but bfloat16 on SM90/SM100)",
            confidence=Confidence.MEDIUM,
            placement=value,
        )
