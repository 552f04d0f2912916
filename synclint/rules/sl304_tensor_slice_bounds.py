from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import DEVICE_ORIGIN_TRIGGERS, device_confidence


class TensorSliceBounds(Rule):
    """Flags a slice whose start, stop or step is a device tensor: `x[t0:t1]`.

    ## What it does
    Reports `x[start:stop]` (any object sliced) where a bound may be a tensor on the
    device, typically an element of a device tensor such as `cu_seqlens[i]`.

    ## Why it stalls
    A slice bound must be a Python integer, so PyTorch calls `__index__` on the tensor,
    which reads it back to the host like `.item()`: the host waits until every queued
    kernel has run. Measured on an H200: slicing with tensor bounds `x[t0:t1]` waited for
    the whole GPU queue (stall ratio ~1.0).

    ## Example
    ```python
    import torch

    def split_by_request(hidden, query_lens: list[int], device):
        cu_seqlens = torch.zeros(len(query_lens) + 1, dtype=torch.int32, device=device)
        out = []
        for i in range(len(query_lens)):
            out.append(hidden[cu_seqlens[i]:cu_seqlens[i + 1]])
        return out
    ```

    ## Use instead
    Keep the bounds on the host, where they were computed (or split once with sizes known
    on the host):
    ```python
    import itertools

    def split_by_request(hidden, query_lens: list[int], device):
        cu = [0, *itertools.accumulate(query_lens)]
        return [hidden[cu[i]:cu[i + 1]] for i in range(len(query_lens))]
    ```

    ## Fix safety
    No fix: the bound has to come from host data the code already has, which only its
    author knows.

    ## Known false positives
    A bound that is a host tensor whose placement the analysis cannot see: reported only
    when the bound may be on the device, at `medium` confidence when that is inferred.
    """

    code = "SL304"
    name = "tensor-slice-bounds"
    summary = "a slice with device-tensor bounds reads them back to the host"
    triggers = DEVICE_ORIGIN_TRIGGERS
    device_only = True
    device_sites = ("bound",)

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        best = None
        for element in node.slice:
            if not isinstance(element.slice, cst.Slice):
                continue
            for bound in (element.slice.lower, element.slice.upper, element.slice.step):
                if bound is None or isinstance(bound, (cst.Integer, cst.UnaryOperation)):
                    continue
                value = ctx.placement(bound)
                if value.maybe_device and (best is None or device_confidence(value) > device_confidence(best)):
                    best = value
        if best is None:
            return
        ctx.report(
            self,
            node,
            "a slice bound that is a device tensor is read back to the host (like `.item()`)",
            confidence=device_confidence(best),
            placement=best,
        )
