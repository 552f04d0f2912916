from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import Rule
from synclint.rules.helpers import bound_value, device_confidence, is_true, kwarg, method_name, positional, receiver

# Methods that return a view of the same storage (pinned stays pinned).
_VIEW_METHODS = frozenset({"view", "narrow", "unsqueeze", "squeeze", "select", "as_strided", "view_as"})


def non_blocking_copy(call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(destination, source) of `dst.copy_(src, non_blocking=True)` (or `copy_(src, True)`)."""
    if method_name(call) != "copy_":
        return None
    args = positional(call)
    src = args[0].value if args else getattr(kwarg(call, "src"), "value", None)
    flag = getattr(kwarg(call, "non_blocking"), "value", None)
    if flag is None and len(args) >= 2:
        flag = args[1].value
    if src is None or not is_true(flag):
        return None
    return receiver(call), src


def _view_base(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`buf[:n]`, `buf[i]`, `buf.view(...)`: the tensor whose storage the view shares."""
    if isinstance(expr, cst.Subscript):
        for element in expr.slice:
            index = element.slice
            if isinstance(index, cst.Index) and isinstance(index.value, (cst.List, cst.ListComp)):
                return None  # advanced indexing copies
        return expr.value
    if isinstance(expr, cst.Call) and method_name(expr) in _VIEW_METHODS:
        return receiver(expr)
    return None


def host_buffer(destination: cst.BaseExpression, placement, bound) -> tuple[str | None, object]:
    """("pinned" | "pageable" | None, placement) for the destination of a device-to-host copy.

    `placement(expr)` gives where an expression lives; `bound(name)` the expression a name was
    last assigned (or None). A view of a pinned buffer (`pinned[:n]`, also through a name
    bound to one) writes into pinned storage, so it counts as pinned here even where the
    placement analysis, which cares about host-to-device staging, calls an indexed pinned
    tensor pageable."""
    expr = destination
    for _ in range(6):
        if isinstance(expr, cst.Name):
            value = bound(expr.value)
            if value is None or _view_base(value) is None:
                break
            expr = value
        base = _view_base(expr)
        if base is None:
            break
        expr = base
    if expr is not destination and placement(expr).is_(Place.PINNED):
        return "pinned", placement(expr)
    value = placement(destination)
    if value.is_(Place.PINNED):
        return "pinned", value
    if value.is_(Place.HOST):
        return "pageable", value
    return None, value


class PageableAsyncDeviceToHost(Rule):
    """Flags `cpu_buf.copy_(gpu_t, non_blocking=True)` into pageable (not pinned) host memory.

    ## What it does
    Reports a `non_blocking=True` copy from a (possibly) device tensor into a host tensor that
    was allocated without `pin_memory=True`.

    ## Why it stalls
    A device-to-host copy can only run asynchronously into pinned memory. Into pageable
    memory the CUDA copy is synchronous, so `non_blocking=True` is silently ignored and the
    host waits for every queued kernel. Measured on an H200: `cpu_buf.copy_(gpu_t,
    non_blocking=True)` into a pageable CPU tensor waited for the whole queue at every size
    tried, and `torch.cuda.set_sync_debug_mode("error")` did **not** report it.

    ## Example
    ```python
    import torch

    class OutputBuffers:
        def __init__(self, max_num_reqs: int, device):
            self.sampled_gpu = torch.zeros(max_num_reqs, dtype=torch.int64, device=device)
            self.sampled_cpu = torch.zeros(max_num_reqs, dtype=torch.int64, device="cpu")

        def copy_out(self):
            self.sampled_cpu.copy_(self.sampled_gpu, non_blocking=True)
    ```

    ## Use instead
    ```python
    import torch

    class OutputBuffers:
        def __init__(self, max_num_reqs: int, device):
            self.sampled_gpu = torch.zeros(max_num_reqs, dtype=torch.int64, device=device)
            self.sampled_cpu = torch.zeros(max_num_reqs, dtype=torch.int64, device="cpu", pin_memory=True)

        def copy_out(self):
            self.sampled_cpu.copy_(self.sampled_gpu, non_blocking=True)
    ```
    Then record an event after the copy and synchronize on it before reading the buffer
    (see SL206).

    ## Fix safety
    No fix: pinning belongs where the buffer is allocated, often far from the copy, and
    pinned memory is a limited resource.

    ## Known false positives
    A destination that is pinned in a way the analysis does not see (allocated by a helper
    that pins); the destination must be known to be a pageable host tensor to be reported.
    Not reported (a possible miss): a copy into a strided view of a pinned buffer, which is
    treated as pinned like any basic-indexing view.
    """

    code = "SL205"
    name = "pageable-async-device-to-host"
    summary = "a non_blocking device-to-host copy into pageable memory blocks anyway"
    triggers = ("copy_",)
    shape_words = ("copy_",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        copy = non_blocking_copy(node)
        if copy is None:
            return
        destination, source = copy
        kind, dst = host_buffer(destination, ctx.placement, lambda name: bound_value(name, ctx))
        if kind != "pageable":
            return  # pinned, device or unknown destination: no claim to make
        src = ctx.placement(source)
        if not src.maybe_device:
            return
        ctx.report(
            self,
            node,
            "`copy_(..., non_blocking=True)` into pageable host memory is synchronous: it waits for all queued GPU work; allocate the buffer with `pin_memory=True`",
            confidence=min(device_confidence(src), dst.confidence),
            placement=src,
        )
