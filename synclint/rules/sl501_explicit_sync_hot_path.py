from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import method_name, receiver
from synclint.violation import Confidence

_DEVICE_SYNCS = frozenset({"torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.xpu.synchronize"})
_STREAM_FACTORIES = frozenset(
    {"torch.cuda.current_stream", "torch.cuda.default_stream", "torch.cuda.Stream", "torch.cuda.Event",
     "torch.Event", "torch.Stream", "torch.accelerator.current_stream"}
)


class ExplicitSyncHotPath(Rule):
    """Flags `torch.cuda.synchronize()`, `Event.synchronize()` and `Stream.synchronize()` on
    a hot path.

    ## What it does
    Reports an explicit synchronization in code that runs every step: a function that the
    `hot-functions` setting names (`forward`, `execute_model`, ...), a function under
    `@torch.compile`, or a loop body. The same call elsewhere (set-up, tests, benchmarks) is
    not reported.

    ## Why it stalls
    `torch.cuda.synchronize()` waits for every kernel on the device; `event.synchronize()`
    and `stream.synchronize()` wait for everything queued before the event or on the
    stream. Measured on an H200: all three waited for the whole GPU queue (stall ratio
    ~1.0), and `torch.cuda.set_sync_debug_mode` did not report the first two.

    ## Example
    ```python
    import torch

    def execute_model(self, scheduler_output):
        hidden = self.model(scheduler_output.input_ids)
        torch.cuda.synchronize()
        return hidden
    ```

    ## Use instead
    Wait only where the host needs a result, on an event recorded after the work it needs
    (or make a consumer stream wait on it, which does not block the host):
    ```python
    import torch

    def execute_model(self, scheduler_output):
        hidden = self.model(scheduler_output.input_ids)
        self.output_ready = torch.cuda.Event()
        self.output_ready.record()
        return hidden
    ```

    ## Fix safety
    No fix: an explicit synchronization is often intended (timing, a hand-off to another
    process); where to wait instead is a design decision. Intended ones belong in an
    allow-context (for example vLLM's convention, `with gpu_sync_allowed():`, which is in the
    default `allow-contexts`) or an allow-function.

    ## Known false positives
    A `.synchronize()` method of an object that is not a CUDA event or stream: `high`
    confidence only for the torch calls and objects built by them, `medium` for names that
    say event or stream, `low` otherwise. A loop that runs once per process (CUDA graph
    capture, a benchmark) in a function that is not hot: such findings are `medium` at
    most; name the function in `allow-functions`.
    """

    code = "SL501"
    name = "explicit-sync-hot-path"
    summary = "an explicit device/event/stream synchronization on a hot path"
    triggers = ("synchronize",)
    shape_words = ("synchronize",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.hot_path is None:
            return
        qual = ctx.qualname(node.func) or ""
        if qual in _DEVICE_SYNCS:
            confidence, what = Confidence.HIGH, f"`{qual}()` waits for all work on the device"
        elif method_name(node) == "synchronize" and not node.args:
            confidence = self._receiver_confidence(receiver(node), ctx)
            what = "`.synchronize()` waits for all work queued before it"
        else:
            return
        if ctx.hot_path == "in a loop":
            # A loop outside a hot function may run once (graph capture, a benchmark).
            confidence = min(confidence, Confidence.MEDIUM)
        ctx.report(self, node, f"{what}, {ctx.hot_path}", confidence=confidence)

    @staticmethod
    def _receiver_confidence(target: cst.BaseExpression, ctx) -> Confidence:
        from synclint.rules.helpers import bound_value

        if isinstance(target, cst.Name):
            built = bound_value(target.value, ctx)
            if isinstance(built, cst.Call) and (ctx.qualname(built.func) or "") in _STREAM_FACTORIES:
                return Confidence.HIGH
        if isinstance(target, cst.Call) and (ctx.qualname(target.func) or "") in _STREAM_FACTORIES:
            return Confidence.HIGH
        last = target.attr.value if isinstance(target, cst.Attribute) else getattr(target, "value", "")
        if isinstance(last, str) and ("event" in last.lower() or "stream" in last.lower()):
            return Confidence.MEDIUM
        return Confidence.LOW
