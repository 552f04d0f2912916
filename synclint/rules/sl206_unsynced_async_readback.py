from __future__ import annotations

import libcst as cst

from synclint.analysis.imports import dotted_name
from synclint.analysis.placement import Place
from synclint.rules.base import Rule
from synclint.rules.helpers import code, device_confidence, is_true, kwarg, method_name, positional, receiver
from synclint.rules.sl205_pageable_async_d2h import host_buffer, non_blocking_copy
from synclint.violation import Confidence, Severity

# Calls that end the race (any receiver: event, stream, torch.cuda). `.synchronize()` makes
# the host wait. `event.wait()` only makes a stream wait, but code that calls it is ordering
# its work on purpose, so it counts as a sync (an error must be sure). `wait_stream` and
# `wait_event` order streams only and do not count.
_SYNC_METHODS = frozenset({"synchronize", "wait"})
# Methods that read a host tensor's data into Python.
_READ_METHODS = frozenset({"tolist", "numpy", "item", "__array__"})
# Builtins that read their argument's data.
_READ_BUILTINS = frozenset({"int", "float", "bool", "complex", "print", "str", "repr", "list", "tuple", "sum", "max", "min"})


def _key(expr: cst.BaseExpression) -> str | None:
    """`y` -> "y", `self.buf` -> "self.buf": names a copy destination across statements."""
    return dotted_name(expr)


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`buf[:n]` -> `buf`; `buf.view(-1)` -> `buf` (the storage that is read)."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and method_name(expr) in ("view", "narrow", "flatten", "reshape", "unsqueeze", "squeeze"):
            expr = receiver(expr)
        else:
            return expr


class _Pending:
    """An async copy whose destination must not be read yet."""

    def __init__(self, what: str, confidence: Confidence) -> None:
        self.what = what  # the copy's source text, for the message
        self.confidence = confidence


class _FunctionScan(cst.CSTVisitor):
    """Walks one function in source order: async copies start, syncs clear, reads of a
    pending copy's result are recorded (anchor node -> node to report, message)."""

    def __init__(self, ctx, function: cst.FunctionDef) -> None:
        super().__init__()
        self.ctx = ctx
        self.function = function
        self.pending: dict[str, _Pending] = {}
        self.statements: list[cst.CSTNode] = []
        self.views: dict[str, cst.BaseExpression] = {}  # name -> the view expression it was bound to
        # id(anchor) -> (anchor, node to report at, the copy's text, confidence)
        self.reads: dict[int, tuple] = {}

    # the statement being scanned: placements are asked for in its environment
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.BaseStatement, cst.SimpleStatementSuite)):
            self.statements.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if isinstance(original_node, (cst.BaseStatement, cst.SimpleStatementSuite)):
            self.statements.pop()

    # nested scopes are their own functions
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    # --- bindings: the value first, then the target ----------------------------------------
    def visit_Assign(self, node: cst.Assign) -> bool:
        self._bind([target.target for target in node.targets], node.value)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            self._bind([node.target], node.value)
        return False

    def _bind(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        value.visit(self)
        started = self._async_to_cpu(value)
        for target in targets:
            key = _key(target)
            if key is None:
                continue
            self.views[key] = value
            if started is not None:
                self.pending[key] = _Pending(f"`{code(started)}`", self._source_confidence(receiver(started)))
            else:
                self._forget(key)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        key = _key(node.target)
        if key is not None:
            self._forget(key)  # `y += 1` on a pending result waits for nothing, but rebinds

    def visit_For_body(self, node: cst.For) -> None:
        # `for y in ...:` rebinds the loop target before the body runs
        key = _key(node.target)
        if key is not None:
            self._forget(key)

    def _forget(self, key: str) -> None:
        for name in [k for k in self.pending if k == key or k.startswith(key + ".")]:
            del self.pending[name]

    # --- copies, syncs and reads ---------------------------------------------------------
    def leave_Call(self, node: cst.Call) -> None:
        # leave_: the arguments are visited first, so `y.copy_(...)` does not read `y`.
        method = method_name(node)
        if method in _SYNC_METHODS:
            self.pending.clear()
            return
        copy = non_blocking_copy(node)
        if copy is not None:
            destination, source = copy
            if self._at(source).maybe_device and host_buffer(destination, self._at, self.views.get)[0] == "pinned":
                for expr in {destination, _root(destination)}:
                    key = _key(expr)
                    if key is not None:
                        self.pending[key] = _Pending(f"`{code(node)}`", self._source_confidence(source))
            return
        if method in _READ_METHODS:
            self._read(node, receiver(node), node)
            return
        func = node.func
        if isinstance(func, cst.Name) and func.value in _READ_BUILTINS and func.value not in self.ctx.imports.aliases:
            for arg in node.args:
                if arg.keyword is None and self._read(node, arg.value, arg.value):
                    return

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self._read(node, node.expression, node.expression)

    def leave_If(self, node: cst.If) -> None:
        self._test(node, node.test)

    def leave_While(self, node: cst.While) -> None:
        self._test(node, node.test)

    def leave_Assert(self, node: cst.Assert) -> None:
        self._test(node, node.test)

    def _test(self, anchor: cst.CSTNode, test: cst.BaseExpression) -> None:
        # A comparison of a pending result (`if host_ids[0] == eos:`) reads it too.
        for part in _operands(test):
            if self._read(anchor, part, part):
                return

    def _read(self, anchor: cst.CSTNode, expr: cst.BaseExpression | None, report_at: cst.CSTNode) -> bool:
        if expr is None:
            return False
        key = _key(_root(expr))
        pending = self.pending.get(key) if key is not None else None
        if pending is None or id(anchor) in self.reads:
            return False
        self.reads[id(anchor)] = (anchor, report_at, pending.what, pending.confidence)
        return True

    # --- helpers -------------------------------------------------------------------------
    def _at(self, expr: cst.BaseExpression):
        statement = self.statements[-1] if self.statements else None
        return self.ctx.placements.placement_of(expr, statement, tuple(self.ctx.chain))

    def _source_confidence(self, source: cst.BaseExpression) -> Confidence:
        return device_confidence(self._at(source))

    def _async_to_cpu(self, value: cst.BaseExpression) -> cst.Call | None:
        """`g.to("cpu", non_blocking=True)` (also `device="cpu"`) of a (maybe) device tensor."""
        if not isinstance(value, cst.Call) or method_name(value) != "to":
            return None
        flag = kwarg(value, "non_blocking")
        if flag is None or not is_true(flag.value):
            return None
        target = kwarg(value, "device")
        args = positional(value)
        target_expr = target.value if target is not None else (args[0].value if args else None)
        if target_expr is None:
            return None
        if not self._at(target_expr).is_(Place.CPU_DEVICE):
            return None
        return value if self._at(receiver(value)).maybe_device else None


def _operands(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation):
        return [*_operands(test.left), *_operands(test.right)]
    if isinstance(test, cst.UnaryOperation):
        return _operands(test.expression)
    if isinstance(test, cst.Comparison):
        return [test.left, *(c.comparator for c in test.comparisons)]
    return [test]


class UnsyncedAsyncReadback(Rule):
    """Flags reading the result of a `non_blocking` device-to-host copy before any sync.

    ## What it does
    Within one function, tracks the results of asynchronous device-to-host copies,
    `y = g.to("cpu", non_blocking=True)` and `pinned.copy_(g, non_blocking=True)` into a
    pinned buffer, and reports a read of that result (`.tolist()`, `.numpy()`, `.item()`,
    `int()`/`float()`/`print()`, an f-string, a truth test or comparison in `if`/`while`/
    `assert`, also through indexing such as `y[0].item()`) that comes before any
    `event.synchronize()`, `stream.synchronize()`, `torch.cuda.synchronize()` or
    `event.wait()`.

    ## Why it stalls
    It does not stall: it is worse. The copy only starts once the kernels queued before it
    have run; `non_blocking=True` returns at once, and PyTorch hands back pinned memory that
    the GPU fills later. Measured on an H200: `g.to("cpu", non_blocking=True)` did not wait
    for a queued 40 ms kernel, so reading the result right away reads memory that has not
    been written yet: stale or uninitialised data, silently. Hence severity `error`.

    ## Example
    ```python
    import torch

    def _to_list(self, sampled_token_ids, device):
        sampled_token_ids = sampled_token_ids.to(device)
        host_ids = sampled_token_ids.to("cpu", non_blocking=True)
        return host_ids.tolist()
    ```

    ## Use instead
    Record an event after the copy and wait on it before the read:
    ```python
    import torch

    def _to_list(self, sampled_token_ids, device):
        sampled_token_ids = sampled_token_ids.to(device)
        host_ids = sampled_token_ids.to("cpu", non_blocking=True)
        self.transfer_event.record()
        self.transfer_event.synchronize()
        return host_ids.tolist()
    ```

    ## Fix safety
    No fix: where to wait (and on which event or stream) is a design decision.

    ## Known false positives
    A sync the analysis does not see: one inside a called helper, or a wait in another
    function between the copy and the read. The scan is in source order within a function
    and treats a sync in any branch as a sync on every path, so it errs towards silence.
    """

    code = "SL206"
    name = "unsynced-async-readback"
    summary = "the result of a non_blocking device-to-host copy read before any sync"
    severity = Severity.ERROR
    triggers = ("non_blocking",)
    shape_words = ("non_blocking",)

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        scan = _FunctionScan(ctx, node)
        node.visit(scan)
        if scan.reads:
            ctx.__dict__.setdefault("_sl206_reads", {}).update(scan.reads)

    def _report(self, anchor: cst.CSTNode, ctx) -> None:
        reads = ctx.__dict__.get("_sl206_reads")
        entry = reads.get(id(anchor)) if reads else None
        if entry is None or entry[0] is not anchor:
            return
        _, report_at, what, confidence = entry
        ctx.report(
            self,
            report_at,
            f"reads the result of {what} before any event or stream sync: the copy may not have finished, so the data may be stale",
            confidence=confidence,
        )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        self._report(node, ctx)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression, ctx) -> None:
        self._report(node, ctx)

    def visit_If(self, node: cst.If, ctx) -> None:
        self._report(node, ctx)

    def visit_While(self, node: cst.While, ctx) -> None:
        self._report(node, ctx)

    def visit_Assert(self, node: cst.Assert, ctx) -> None:
        self._report(node, ctx)
