from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import kwarg, positional, split_helper_path
from synclint.violation import Applicability, Confidence

# Keyword arguments the helper accepts; any other (requires_grad=, pin_memory=) means no fix.
_HELPER_KEYWORDS = frozenset({"dtype", "device"})


class BlockingTensorFactory(Rule):
    """Flags `torch.tensor(data, device=...)` / `torch.as_tensor(data, device=...)` that build
    a device tensor from host data.

    ## What it does
    Reports a tensor factory that takes host data (a Python list or scalar, a numpy array, a
    CPU tensor) and an accelerator `device=`.

    ## Why it stalls
    PyTorch stages the data in pageable host memory and copies it with a blocking copy: the
    host waits until every kernel already queued on the stream has finished. Measured on an
    H200: stall ratio ~1.0 (the call returned only after a 50 ms queued kernel), and one such
    call per step made a pipelined step 1.26x-1.54x slower.

    ## Example
    ```python
    import torch

    def _prepare_inputs(self, token_ids: list[int], device):
        return torch.tensor(token_ids, dtype=torch.long, device=device)
    ```

    ## Use instead
    ```python
    import torch
    from synclint.runtime import async_tensor_h2d

    def _prepare_inputs(self, token_ids: list[int], device):
        return async_tensor_h2d(token_ids, dtype=torch.long, device=device)
    ```

    ## Fix safety
    Safe: the helper copies the data into pinned memory on the host (so later changes to the
    list cannot leak into the copy) and queues a `non_blocking` copy; the result has the same
    values, dtype and device. Not offered when other keyword arguments are present
    (`requires_grad=`, `pin_memory=`) or when the data may already be a device tensor.

    ## Known false positives
    A `device` that is in fact the CPU at run time (the copy is then free): the finding has
    `medium` confidence when the device is only named like one.
    """

    code = "SL101"
    name = "blocking-tensor-factory"
    summary = "host data copied to the device with a blocking copy"
    fix_availability = FixAvailability.SOMETIMES
    triggers = ("tensor", "as_tensor", "asarray")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func)
        if qual not in ("torch.tensor", "torch.as_tensor", "torch.asarray"):
            return
        device_arg = kwarg(node, "device")
        args = positional(node)
        if device_arg is None or not args:
            return
        target = ctx.placements.evaluator._device_of(device_arg.value, ctx.placements.env_at(ctx.statement, tuple(ctx.chain)))
        if target is None or not target.may_be(Place.DEVICE):
            return
        data = ctx.placement(args[0].value)
        if data.may_be(Place.DEVICE) or data.may_be(Place.PINNED):
            return  # a device-to-device copy, or an already pinned source: no host wait
        if data.known:
            confidence = min(data.confidence, target.confidence)
        elif qual == "torch.tensor":
            # torch.tensor() of a tensor warns ("use sourceTensor.clone().detach()"), so its
            # data is host data in practice: an inference, not a proof.
            confidence = min(Confidence.MEDIUM, target.confidence)
        else:
            confidence = Confidence.LOW  # as_tensor(x) is a no-op for device tensors
        if not target.on_device:
            confidence = min(confidence, Confidence.MEDIUM)
        func = qual.split(".")[-1]
        ctx.report(
            self,
            node,
            f"`torch.{func}(..., device=...)` copies host data with a blocking copy; use a pinned, non-blocking copy",
            confidence=confidence,
            placement=data,
            fix=self._fix(node, data, qual),
        )

    def _fix(self, node: cst.Call, data, qual: str) -> FixSpec | None:
        if any(a.keyword is not None and a.keyword.value not in _HELPER_KEYWORDS for a in node.args):
            return None
        if len(positional(node)) != 1 or any(a.star for a in node.args):
            return None
        if qual != "torch.tensor" and not data.known:
            return None
        module, name = split_helper_path(self.settings.h2d_helper)
        new = node.with_changes(func=cst.Name(name))
        return FixSpec(
            message=f"Use `{name}` (pinned, non-blocking copy)",
            replacements=((node, new),),
            applicability=Applicability.SAFE,
            imports=((module, name),),
        )
