from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.analysis.sources import legacy_type
from synclint.apis.torch_api import LEGACY_TENSOR_TYPES
from synclint.rules.base import Rule
from synclint.rules.helpers import device_confidence, is_true, kwarg, method_name, positional, receiver

# Methods that copy a whole tensor to the host and wait for it.
_READBACK_METHODS = {
    "tolist": "`.tolist()` copies a device tensor to the host as Python data",
    "numpy": "`.numpy(force=True)` copies a device tensor to the host with a blocking copy",
    "cpu": "`.cpu()` copies a device tensor to the host with a blocking copy",
}


class HostCopyReadback(Rule):
    """Flags `.tolist()`, `.numpy()`, `.cpu()` and blocking `.to("cpu")` of device tensors.

    ## What it does
    Reports a copy of a (possibly) device tensor to host memory that the host waits for:
    `t.tolist()`, `t.cpu()`, `t.numpy(force=True)`, `t.to("cpu")` without
    `non_blocking=True`, and `t.type(torch.BoolTensor)` (a legacy tensor type names a CPU
    tensor: `torch.BoolTensor` is the CPU one, `torch.cuda.BoolTensor` the CUDA one).
    In a chain such as `t.cpu().numpy()` only the copy (`.cpu()`) is reported. A plain
    `t.numpy()` is not: PyTorch converts only a tensor on the CPU and raises on a device
    tensor (`Tensor.numpy`: "If force is False (the default), the conversion is performed
    only if the tensor is on the CPU"), so code that runs calls it on host tensors. Measured
    behind a queued 100 ms kernel (`bench/numpy_check.py`, docs/numpy-check.json, an H100,
    torch 2.11): `t.numpy()` of a CUDA tensor raised `TypeError` in 0.2 ms without waiting;
    `t.numpy(force=True)` and `t.cpu().numpy()` waited for the kernel (~100 ms).

    ## Why it stalls
    The copy is queued behind every kernel already on the stream, and the call returns only
    when the data has arrived: the host waits for the whole GPU queue to drain. Measured on
    an H200: `.tolist()` and `.cpu()` each waited for a queued 40 ms kernel (stall ratio
    ~1.0); `torch.cuda.set_sync_debug_mode` reports them. `.numpy(force=True)`, the copy it
    makes, waited too (an H100, below).

    ## Example
    ```python
    import torch

    def sample(logits: torch.Tensor):
        logits = logits.cuda()
        next_tokens = logits.argmax(dim=-1)
        return next_tokens.tolist()
    ```

    ## Use instead
    Start the copy early without waiting, record an event, and read the pinned result only
    after the event has completed (ideally after the next step's work is queued):
    ```python
    import torch

    def sample(logits: torch.Tensor, done: torch.cuda.Event):
        logits = logits.cuda()
        next_tokens = logits.argmax(dim=-1)
        host_tokens = next_tokens.to("cpu", non_blocking=True)
        done.record()
        done.synchronize()
        return host_tokens.tolist()
    ```

    ## Fix safety
    No fix: moving the wait later needs an event and a place to read the result, which is a
    design decision. A `non_blocking` copy read before a sync returns stale data (SL206).

    ## Known false positives
    A tensor that is on the host at run time although the analysis saw a device placement
    (e.g. `device` is `"cpu"` in a CPU-only configuration); a receiver whose placement is
    unknown is reported at `low` confidence (hidden by default), since numpy arrays also have
    `.tolist()`.
    """

    code = "SL202"
    name = "host-copy-readback"
    summary = "a device tensor copied to the host with a blocking copy"
    triggers = ("tolist", "numpy", "cpu", *sorted(LEGACY_TENSOR_TYPES))
    shape_words = ("tolist", "numpy", "cpu", "to", "type")
    device_only = True
    device_sites = ("receiver",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        method = method_name(node)
        if method in _READBACK_METHODS:
            if method == "tolist" and node.args:
                return  # not torch's tolist()
            if method == "numpy" and not _forced(node):
                return  # converts a CPU tensor only: on a device tensor it raises, it never copies
            message = _READBACK_METHODS[method]
        elif method == "to" and _is_blocking_to_cpu(node, ctx):
            message = '`.to("cpu")` without `non_blocking=True` copies a device tensor to the host with a blocking copy'
        elif method == "type" and legacy_type(node, ctx.qualname) == "cpu":
            message = "`.type(torch.<T>Tensor)` converts to a CPU tensor type: a blocking copy of a device tensor to the host"
        else:
            return
        value = ctx.placement(receiver(node))
        if value.known and not value.maybe_device:
            return  # already host data: the call copies nothing across the bus
        if not value.known and method in ("to", "type"):
            return  # `.to("cpu")` of an unknown value is too common on host objects to guess
        ctx.report(
            self,
            node,
            f"{message} and waits for all queued GPU work",
            confidence=device_confidence(value),
            placement=value,
        )


def _forced(call: cst.Call) -> bool:
    """`t.numpy(force=True)` (or a `force=` that may be true): the one `.numpy()` that copies."""
    force = kwarg(call, "force")
    return force is not None and not (isinstance(force.value, cst.Name) and force.value.value in ("False", "None"))


def _is_blocking_to_cpu(call: cst.Call, ctx) -> bool:
    """`x.to("cpu")`, `x.to(device="cpu")`, `x.to(torch.device("cpu"))` without non_blocking=True."""
    non_blocking = kwarg(call, "non_blocking")
    if non_blocking is not None and is_true(non_blocking.value):
        return False
    args = positional(call)
    if len(args) >= 3 and is_true(args[2].value):
        return False  # .to(device, dtype, non_blocking)
    device = kwarg(call, "device")
    target = device.value if device is not None else (args[0].value if args else None)
    if target is None:
        return False
    return ctx.placement(target).is_(Place.CPU_DEVICE)
