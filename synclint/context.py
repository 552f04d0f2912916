"""What a rule sees while the batched pass walks the tree: where it is, what names mean,
where values live, whether the code is hot or allowed to sync, and how to report."""

from __future__ import annotations

from fnmatch import fnmatchcase

import libcst as cst

from synclint.analysis import hotpath, platforms, tier, type_branches
from synclint.analysis.evidence import kernel_decorator
from synclint.analysis.flow import loop_bindings
from synclint.analysis.sources import resolve_by_method
from synclint.analysis.imports import ImportTable, dotted_name
from synclint.analysis.placement import UNKNOWN, Place, Placement, PlacementAnalysis, placed
from synclint.rules.base import Finding, FixSpec
from synclint.violation import Confidence, Severity



# Contexts that mark the syncs a project's own runtime check lets pass (vLLM's
# `gpu_sync_allowed()`): not allow-contexts by default (synclint/config.py), so their syncs
# are reported, with the context named in the message.
TOLERATED_CONTEXTS = frozenset({"gpu_sync_allowed"})


class LintContext:
    def __init__(
        self,
        module: cst.Module,
        settings,
        imports: ImportTable,
        *,
        filename: str = "",
        workers: frozenset[str] = frozenset(),
        function_tiers: tier.FunctionTiers | None = None,
        host_fields: frozenset[str] = frozenset(),
        device_fields: frozenset[str] = frozenset(),
    ) -> None:
        self.module = module
        self.host_fields = host_fields
        self.device_fields = device_fields
        self.filename = filename
        self.workers = workers
        if function_tiers is None:  # the repository's call graph, where an index is installed
            from synclint import repo

            function_tiers = repo.tiers_hook(settings)
        self.function_tiers = function_tiers
        self.settings = settings
        self.imports = imports
        self.stack: list[cst.CSTNode] = []  # every node from the Module down to the current one
        self.statements: list[cst.CSTNode] = []
        self.chain: list[cst.CSTNode] = [module]  # enclosing scopes: Module, ClassDef, FunctionDef
        self.loop_depth = 0
        self._hot: list[str | None] = [None]
        self._allowed: list[bool] = [False]
        self.findings: list[Finding] = []
        self._placements: PlacementAnalysis | None = None
        self._saved_loop_depth: list[int] = []
        self._compiled: frozenset[str] | None = None  # names passed to torch.compile(...)

    # --- where we are --------------------------------------------------------------------
    @property
    def statement(self) -> cst.CSTNode | None:
        return self.statements[-1] if self.statements else None

    @property
    def function(self) -> cst.FunctionDef | None:
        for scope in reversed(self.chain):
            if isinstance(scope, cst.FunctionDef):
                return scope
        return None

    def parent(self, node: cst.CSTNode | None = None, levels: int = 1) -> cst.CSTNode | None:
        """The node `levels` above `node` (default: the node being visited)."""
        if node is None:
            index = len(self.stack) - 1
        else:
            index = next((i for i in range(len(self.stack) - 1, -1, -1) if self.stack[i] is node), -1)
            if index < 0:
                return None
        index -= levels
        return self.stack[index] if index >= 0 else None

    @property
    def hot_path(self) -> str | None:
        """Why the current code runs every step ("in forward()", "under @torch.compile",
        "in a loop", "in a comprehension loop", "under CUDA graph capture"), or None. The one
        way rules ask; see synclint/analysis/hotpath.py for what counts."""
        if self._hot[-1]:
            return self._hot[-1]
        if self.loop_depth:
            return "in a loop"
        if hotpath.in_comprehension_loop(self.stack):
            return "in a comprehension loop"
        return None

    @property
    def allowed(self) -> bool:
        """Inside a region where syncing is intended (allow-contexts / allow-functions)."""
        return self._allowed[-1]

    # --- names and placements ------------------------------------------------------------
    def qualname(self, node: cst.BaseExpression) -> str | None:
        return self.imports.qualname(node)

    def release(self) -> None:
        """Break the file's analysis and its evaluator apart once the walk is done: they refer
        to each other, and the cycle would keep the file's tree alive until the collector's
        next full pass."""
        if self._placements is not None:
            self._placements.evaluator = None
            self._placements = None

    @property
    def placements(self) -> PlacementAnalysis:
        """The file's analysis itself (created on first use), for a rule that needs the
        placement of an expression at another statement than the one being visited:
        `ctx.placements.placement_of(expr, statement, tuple(ctx.chain))`. Prefer
        `ctx.placement` / `ctx.device_target`."""
        if self._placements is None:
            from synclint.apis.torch_api import h2d_helpers

            self._placements = PlacementAnalysis(
                self.module, self.imports, self.host_fields, h2d_helpers(getattr(self.settings, "h2d_helper", None)),
                function_tiers=self.function_tiers, device_fields=self.device_fields, filename=self.filename,
            )
        return self._placements

    def placement(self, expr: cst.BaseExpression) -> Placement:
        """Where `expr` (a node inside the statement being visited) lives, how sure we are,
        and why (see docs/placement.md)."""
        value = self.placements.placement_of(expr, self.statement, tuple(self.chain), self._comprehension_env())
        visiting = self.stack[-1] if self.stack else None
        if isinstance(visiting, cst.Call) and isinstance(visiting.func, cst.Attribute) and visiting.func.value is expr:
            # The receiver of the method call being visited (`x.tolist()`): the method may say
            # which of its possible values a name holds.
            value = resolve_by_method(value, visiting.func.attr.value, visiting)
        return value

    def device_target(self, expr: cst.BaseExpression) -> Placement | None:
        """Where a tensor goes when `expr` is its `device=` or `.to()` target: `on_device`
        ({DEVICE}), `is_(Place.HOST)`, both (a device that may be the CPU: `maybe_device`), a
        tensor's placement for `.to(other_tensor)`, or None when `expr` is not a device."""
        return self.placements.device_target_of(expr, self.statement, tuple(self.chain), self._comprehension_env())

    def _comprehension_env(self):
        """Names bound by the comprehensions around the node being visited: the element and
        the conditions see every `for` target; an iterable sees only the targets before it."""
        extra = None
        on_stack = None
        for node in self.stack:
            if type(node) not in hotpath.COMPREHENSIONS:
                continue
            on_stack = on_stack or {id(n) for n in self.stack}
            comp_for = node.for_in
            while comp_for is not None:
                if id(comp_for.iter) in on_stack:
                    break  # inside this iterable: its own target is not bound yet
                extra = extra if extra is not None else {}
                pairs = loop_bindings(comp_for.target, comp_for.iter, extra, lambda e, x=extra: self._element_placement(e, x))
                if pairs is not None:
                    for target, value in pairs:
                        _bind(target, value, extra)
                else:
                    _bind(comp_for.target, self._element_placement(comp_for.iter, extra), extra)
                comp_for = comp_for.inner_for_in
        return extra

    def _element_placement(self, iterable, extra) -> Placement:
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range":
            return placed(Place.SCALAR, Confidence.HIGH, iterable, "a `range()` index")
        value = self.placements.placement_of(iterable, self.statement, tuple(self.chain), extra)
        return value if value.is_tensor else UNKNOWN

    # --- scope bookkeeping (called by the engine's visitor) --------------------------------
    def enter_function(self, node: cst.FunctionDef) -> None:
        enclosing = self.chain[-1]
        class_name = enclosing.name.value if isinstance(enclosing, cst.ClassDef) else None
        self.chain.append(node)
        name = node.name.value
        self.imports.collect_function_level(node)
        if self._compiled is None:
            self._compiled = hotpath.compiled_names(self.module, self.imports)
        hot = self._hot[-1] or hotpath.function_reason(
            node, class_name, self.settings.hot_functions, self.imports, self._compiled
        )
        self._hot.append(hot)
        allowed = self._allowed[-1] or any(fnmatchcase(name, p) for p in self.settings.allow_functions)
        self._allowed.append(allowed)
        self._saved_loop_depth.append(self.loop_depth)
        self.loop_depth = 0  # a loop around a `def` does not run the body each iteration

    def leave_function(self) -> None:
        self.chain.pop()
        self._hot.pop()
        self._allowed.pop()
        self.loop_depth = self._saved_loop_depth.pop()

    def enter_with(self, node: cst.With) -> None:
        allowed = self._allowed[-1]
        for text in self._context_names(node):
            last = text.split(".")[-1]
            if any(text == c or last == c.split(".")[-1] for c in self.settings.allow_contexts):
                allowed = True
        self._allowed.append(allowed)
        # The body of `with torch.cuda.graph(g):` is captured and replayed every step.
        captured = self._hot[-1] is None and hotpath.is_graph_capture(node, self.imports)
        self._hot.append("under CUDA graph capture" if captured else self._hot[-1])

    def leave_with(self) -> None:
        self._allowed.pop()
        self._hot.pop()

    # --- reporting -----------------------------------------------------------------------
    def report(
        self,
        rule,
        node: cst.CSTNode,
        message: str,
        *,
        confidence: Confidence = Confidence.HIGH,
        fix: FixSpec | None = None,
        placement: Placement | None = None,
        severity: Severity | None = None,
    ) -> None:
        if self.allowed:
            return
        if _in_assert_message(self.stack):
            return  # an assert's message is evaluated only when the assert fails
        if _unreachable(self.stack):
            return  # after an unconditional `raise`, `return`, `continue` or `break` of its block
        if not platforms.runs_on(platforms.code_platforms(self.filename, self.chain, self.stack), self.settings.target_platforms):
            return  # code for another platform than the targets
        if _in_device_kernel(self.chain):
            return  # the body of a `@triton.jit` / `@cute.jit` kernel runs on the device: no host to wait
        verdict = self.tier_verdict()
        tolerated = self._tolerated_by()
        if tolerated:
            message = f"{message} (inside `{tolerated}()`: a sync the runtime check tolerates, and one still)"
        self.findings.append(
            Finding(
                code=rule.code,
                node=node,
                message=message,
                severity=severity or rule.severity,
                confidence=confidence,
                statement=self.statement,
                fix=fix,
                evidence=placement.evidence if placement is not None else (),
                hot_path=self.hot_path,
                tier=verdict.tier.value,
                tier_reason=verdict.reason,
                indents=self._indents() if fix is not None else (),
            )
        )

    def _tolerated_by(self) -> str | None:
        """The context around the node that marks syncs a project's runtime check lets pass
        (vLLM's `with gpu_sync_allowed():`, not an allow-context here): named in the message,
        so that the finding says why it is reported although the code marks it."""
        for node in self.stack:
            if isinstance(node, cst.With):
                for text in self._context_names(node):
                    last = text.rpartition(".")[2]
                    if last in TOLERATED_CONTEXTS:
                        return last
        return None

    def _context_names(self, node: cst.With) -> list[str]:
        """The dotted names of the contexts a `with` enters (`with gpu_sync_allowed():`)."""
        names = []
        for item in node.items:
            target = item.item.func if isinstance(item.item, cst.Call) else item.item
            names.append(self.qualname(target) or dotted_name(target) or "")
        return names

    def tier_verdict(self) -> tier.TierVerdict:
        """How often the code being visited runs (synclint/analysis/tier.py)."""
        if self._compiled is None:
            self._compiled = hotpath.compiled_names(self.module, self.imports)
        chain = tuple(self.chain)
        dead = type_branches.dead_type_branch(self.stack, self.imports, lambda stmt: self.placements.env_at(stmt, chain))
        if dead is not None:
            return tier.TierVerdict(tier.Tier.COLD, dead)
        return tier.local_tier(
            self.filename,
            self.chain,
            self.stack,
            self.settings,
            self.imports,
            compiled=self._compiled,
            workers=self.workers,
            graph_capture=self._hot[-1] == "under CUDA graph capture",
            function_tiers=self.function_tiers,
        )

    def _indents(self) -> tuple[str, ...]:
        default = self.module.default_indent
        return tuple(
            default if block.indent is None else block.indent for block in self.stack if isinstance(block, cst.IndentedBlock)
        )


_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _unreachable(stack) -> bool:
    """Whether the code at the end of `stack` follows, in some block around it, a statement
    that always leaves that block (`raise NotImplementedError(...)`, then the rest of the
    function): it never runs."""
    for i in range(len(stack) - 1):
        block = stack[i]
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            continue
        child = stack[i + 1]
        for statement in block.body:
            if statement is child:
                break
            if isinstance(statement, cst.SimpleStatementLine) and statement.body and isinstance(statement.body[-1], _EXITS):
                return True
    return False


def _in_assert_message(stack) -> bool:
    for i in range(len(stack) - 1):
        node = stack[i]
        if isinstance(node, cst.Assert) and node.msg is not None and stack[i + 1] is node.msg:
            return True
    return False


def _bind(target, value: Placement, env) -> None:
    if isinstance(target, cst.Name):
        env[target.value] = value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind(element.value, value if value.is_tensor else UNKNOWN, env)



def _in_device_kernel(chain) -> bool:
    """Inside a function compiled into a device kernel (`evidence.kernel_decorator`)."""
    return any(isinstance(node, cst.FunctionDef) and any(map(kernel_decorator, node.decorators)) for node in chain)
