from __future__ import annotations

import libcst as cst

from synclint.rules.base import Rule
from synclint.rules.helpers import code, method_name, receiver
from synclint.screen.sync_wrappers import SYNC_WORDS
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
    `@torch.compile`, or a loop body. A call of a function or method of the same file whose
    body only synchronizes (`def _wait(self): self.done_event.synchronize()`) is a
    synchronization too. A device-wide sync elsewhere is reported, at `medium` confidence,
    only where the repository's call graph reaches its function from a hot root
    (`execute_model -> zero_blocks`) and it is not beside a clock read
    (`start = time.perf_counter()`: it times the work); set-up, tests and benchmarks are not
    reported. An event or stream wait off the hot path (`maybe_wait_verify_done()`) is, at
    `medium` confidence, unless the function is set-up by its name (`__init__`, `load*`,
    `*capture*`, `*warm*`, `*benchmark*`, `*profile*`, `test_*`).

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
    allow-context (`extend-allow-contexts`, for example vLLM's `gpu_sync_allowed`) or an
    allow-function.

    ## Known false positives
    A `.synchronize()` method of an object that is not a CUDA event or stream: `high`
    confidence only for the torch calls and objects built by them (also `self.<attr>` set
    from one), `medium` for names that say event, stream, done or ready, `low` otherwise.
    An event wait off the hot path in code that runs once, under a name that does not say so. A loop that runs once per process (CUDA graph
    capture, a benchmark) in a function that is not hot: such findings are `medium` at
    most; name the function in `allow-functions`.
    """

    code = "SL501"
    name = "explicit-sync-hot-path"
    summary = "an explicit device/event/stream synchronization on a hot path"
    triggers = ("synchronize",)
    shape_words = SYNC_WORDS
    words_of = "synclint.screen.sync_wrappers:wrapper_words"  # and the file's own sync wrappers

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func) or ""
        if qual in _DEVICE_SYNCS:
            confidence, what, device_wide = Confidence.HIGH, f"`{qual}()` waits for all work on the device", True
        elif method_name(node) == "synchronize" and not node.args:
            confidence, device_wide = self._receiver_confidence(receiver(node), ctx), False
            what = "`.synchronize()` waits for all work queued before it"
        else:
            wrapped = _sync_wrapper(node, ctx)
            if wrapped is None:
                return
            confidence, device_wide = wrapped
            what = f"`{code(node.func)}()` only synchronizes (its body is a sync), so it waits for queued GPU work"
        if ctx.hot_path is None:
            # Off the hot path, an event or stream wait is still a wait in the serving loop
            # (`maybe_wait_done()`), unless the function is set-up. A device-wide sync there
            # is mostly deliberate (load, capture, benchmarks): reported only below, where the
            # call graph reaches its function every step.
            if confidence < Confidence.MEDIUM or _cold_function(ctx) or _called_wrapper(ctx):
                return
            if device_wide:
                # ... unless the repository's call graph reaches the function from a hot root
                # and the sync is not a timer's bracket (a measurement, deliberate).
                reached = _reached_every_step(ctx)
                if reached is None or _beside_timer_read(ctx):
                    return
                what = f"{what}, in `{ctx.function.name.value}()`, which {reached}"
            else:
                what = f"{what}, in `{ctx.function.name.value}()`"
            ctx.report(self, node, what, confidence=Confidence.MEDIUM)
            return
        if ctx.hot_path == "in a loop":
            # A loop outside a hot function may run once (graph capture, a benchmark).
            confidence = min(confidence, Confidence.MEDIUM)
        ctx.report(self, node, f"{what}, {ctx.hot_path}", confidence=confidence)

    @staticmethod
    def _receiver_confidence(target: cst.BaseExpression, ctx) -> Confidence:
        return _receiver_confidence(target, ctx)


def _receiver_confidence(target: cst.BaseExpression, ctx) -> Confidence:
    from synclint.rules.helpers import bound_value, self_attribute_values

    if isinstance(target, cst.Name):
        built = bound_value(target.value, ctx)
        if isinstance(built, cst.Call) and (ctx.qualname(built.func) or "") in _STREAM_FACTORIES:
            return Confidence.HIGH
    if isinstance(target, cst.Call) and (ctx.qualname(target.func) or "") in _STREAM_FACTORIES:
        return Confidence.HIGH
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        built = self_attribute_values(target.attr.value, ctx)
        if built and all(isinstance(b, cst.Call) and (ctx.qualname(b.func) or "") in _STREAM_FACTORIES for b in built):
            return Confidence.HIGH
    last = target.attr.value if isinstance(target, cst.Attribute) else getattr(target, "value", "")
    if isinstance(last, str) and any(word in last.lower() for word in _WAITABLE_WORDS):
        return Confidence.MEDIUM
    return Confidence.LOW


# Words in a receiver's name that make `.synchronize()` an event or stream wait.
_WAITABLE_WORDS = ("event", "stream", "done", "ready")
# Functions that run once (set-up, capture, benchmarks): an event wait there costs nothing per step.
_COLD_NAMES = ("__init__", "*init*", "load*", "*_load*", "*capture*", "*warm*", "*benchmark*", "bench_*", "test_*", "setup*", "*profile*")


def _cold_function(ctx) -> bool:
    from fnmatch import fnmatchcase

    function = ctx.function
    return function is None or any(fnmatchcase(function.name.value, pattern) for pattern in _COLD_NAMES)


def _reached_every_step(ctx) -> str | None:
    """Why the function being visited runs every step, where the tier analysis says it is
    `hot` (the repository's call graph reaches it from a hot root), else None."""
    from synclint.analysis.tier import Tier

    verdict = ctx.tier_verdict()
    return verdict.reason if verdict.tier is Tier.HOT else None


_TIMERS = frozenset({"time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns",
                     "time.monotonic", "time.monotonic_ns"})


def _beside_timer_read(ctx) -> bool:
    """The statement being visited is next to one that reads a host clock
    (`torch.cuda.synchronize(); start = time.perf_counter()`): the sync times the work."""
    statement = ctx.statement
    block = ctx.parent(statement) if statement is not None else None
    siblings = list(getattr(block, "body", ()))
    index = next((i for i, s in enumerate(siblings) if s is statement), None)
    if index is None:
        return False
    neighbours = siblings[max(index - 1, 0): index] + siblings[index + 1: index + 2]
    found = []

    class Timers(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if (ctx.qualname(node.func) or "") in _TIMERS:
                found.append(node)

    for neighbour in neighbours:
        if isinstance(neighbour, cst.SimpleStatementLine):
            neighbour.visit(Timers())
    return bool(found)


def _sync_wrapper(node: cst.Call, ctx):
    """`self._wait()` / `_wait()` where the method or module function of that name does
    nothing but synchronize (`def _wait(self): self.done.synchronize()`): (confidence, device
    wide) of the sync inside, else None. Found within the module."""
    func = node.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        name, where = func.attr.value, "method"
    elif isinstance(func, cst.Name):
        name, where = func.value, "function"
    else:
        return None
    if where == "method":
        class_def = next((scope for scope in reversed(ctx.chain) if isinstance(scope, cst.ClassDef)), None)
        members = getattr(getattr(class_def, "body", None), "body", ())
        method = next((m for m in members if isinstance(m, cst.FunctionDef) and m.name.value == name), None)
        # Read in the caller's class, so that `self.<attr>` in its body resolves there.
        return _only_syncs(method, ctx) if method is not None else None
    functions = ctx.__dict__.get("_module_functions")
    if functions is None:
        functions = ctx.__dict__["_module_functions"] = {
            f.name.value: f for f in ctx.module.body if isinstance(f, cst.FunctionDef)
        }
    function = functions.get(name)
    return _only_syncs(function, ctx) if function is not None else None


def _called_wrapper(ctx) -> bool:
    """The function being visited is a sync wrapper that the module calls: its callers carry
    the finding (where they are hot), not its body."""
    function = ctx.function
    if function is None or _only_syncs(function, ctx) is None:
        return False
    name = function.name.value
    wrappers = ctx.__dict__.get("_sync_wrapper_calls")
    if wrappers is None:
        wrappers = ctx.__dict__["_sync_wrapper_calls"] = _called_names(ctx.module)
    return name in wrappers


def _called_names(module: cst.Module) -> frozenset[str]:
    names = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Name):
                names.add(func.value)
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                names.add(func.attr.value)

    module.visit(Calls())
    return frozenset(names)


def _only_syncs(function: cst.FunctionDef, ctx):
    """(confidence, device wide) when every statement of the body (a docstring aside) is a
    synchronize call, else None."""
    statements = list(getattr(function.body, "body", ()))
    if statements and _is_docstring(statements[0]):
        statements = statements[1:]
    result = None
    for stmt in statements:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        call = small.value if isinstance(small, (cst.Expr, cst.Return)) else None
        if not isinstance(call, cst.Call):
            return None
        qual = ctx.qualname(call.func) or ""
        if call.args:
            return None
        if qual in _DEVICE_SYNCS:
            this = (Confidence.HIGH, True)
        elif method_name(call) == "synchronize":
            target = receiver(call)
            if isinstance(target, cst.Name):
                # a local of the wrapper: only its name speaks (the caller's scope is not its own)
                named = target.value
                waitable = any(word in named.lower() for word in _WAITABLE_WORDS)
                this = (Confidence.MEDIUM if waitable else Confidence.LOW, False)
            else:
                this = (_receiver_confidence(target, ctx), False)
        else:
            return None
        result = this if result is None else (min(result[0], this[0]), result[1] or this[1])
    return result


def _is_docstring(stmt) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
