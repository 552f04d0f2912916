"""Where does a value live? Placement inference for the rules.

Each expression gets a `Placement`: the set of places it may live in (a Python scalar, a
Python list, a numpy array, a pageable or pinned host tensor, a device tensor, or unknown),
how sure we are, and the evidence (the line and the reason) behind it.

The analysis is a forward abstract interpretation over one scope at a time (a function, a
class body or the module), run lazily the first time a rule asks about an expression in that
scope, and cached. Files whose rules never ask pay nothing for it.

Rules do not use this module directly: they ask `ctx.placement(expr)` and
`ctx.device_target(expr)` (see docs/placement.md).
"""

from __future__ import annotations

import libcst as cst

from synclint.analysis import evidence, flow, sources
from synclint.analysis.scopeenv import overlay
from synclint.analysis.imports import ImportTable

# The value types are defined in `values`; re-exported here because rules import them from
# this module (`from synclint.analysis.placement import Place`).
from synclint.analysis.values import (
    HOST_DATA_PLACES,
    PAGEABLE_HOST_PLACES,
    TENSOR_PLACES,
    UNKNOWN,
    Env,
    Evidence,
    Place,
    Placement,
    join,
    placed,
)

__all__ = [
    "HOST_DATA_PLACES",
    "PAGEABLE_HOST_PLACES",
    "TENSOR_PLACES",
    "UNKNOWN",
    "Env",
    "Evidence",
    "Place",
    "Placement",
    "PlacementAnalysis",
    "join",
    "placed",
]


class ScopeFacts:
    """What one analysed scope knows: the environment before each statement."""

    def __init__(self) -> None:
        self.env_before: dict[int, Env] = {}  # id(statement) -> env (a scopeenv.Snapshot)
        self.returns: list[Placement] = []
        # Per `return`: the placements of the elements of a tuple literal it returns
        # (`return emb, mask, ids`), None for any other return; read by `a, b, c = f(...)`.
        self.return_parts: list[tuple[Placement, ...] | None] = []
        # The environment after the parameters are bound: the answer for a statement the walk
        # did not reach (a construct it does not model), better than forgetting the parameters.
        self.entry_env: Env | None = None


class PlacementAnalysis:
    """Lazily analyses scopes and answers `placement_of(expr, statement, chain)`.

    `chain` is the tuple of enclosing scopes, outermost first: (Module, ClassDef?, FunctionDef...).
    """

    def __init__(self, module: cst.Module, imports: ImportTable, host_fields: frozenset[str] = frozenset(), h2d_helpers: dict | None = None,
                 function_tiers=None, device_fields: frozenset[str] = frozenset(), filename: str = "") -> None:
        from synclint.apis.torch_api import H2D_HELPERS

        # The repository's call graph (synclint/repo/tiers.py `_CallGraphTiers`), where an index is
        # installed: what the callers of a function pass for a parameter that says where a
        # tensor goes (synclint/analysis/flow.py `_given_only_the_cpu`).
        self.function_tiers = function_tiers
        self.module = module
        self.filename = filename  # the file's path: what the index keeps for its module alone (`repo.file_relay_fact`)
        # Fields the framework keeps on the host (`keep_on_cpu=True`): synclint/analysis/host_fields.py.
        self.host_fields = host_fields
        # Multimodal fields vLLM's model runner moves to the device (`**kwargs` of the model).
        self.device_fields = device_fields
        self.submodule_fields: dict[int, frozenset[str]] = {}  # id(ClassDef) -> evidence.submodule_fields
        self.imports = imports
        # Host-to-device helpers (qualified name -> device keyword, position): their result
        # is a tensor on that device, so a fix that calls one keeps later findings.
        self.h2d_helpers = H2D_HELPERS if h2d_helpers is None else h2d_helpers
        self._scopes: dict[int, ScopeFacts] = {}
        self._outer_env: dict[int, Env] = {}  # id(function or class) -> env where it was defined
        self._class_attrs: dict[int, Env] = {}  # id(ClassDef) -> joined `self.<attr>` placements
        self._class_attr_values: dict[int, dict[str, list[Placement]]] = {}
        self._class_attr_built: dict[int, dict[str, list[Placement]]] = {}  # without self-moves
        self._classes_walked: set[int] = set()
        self._pending: dict[int, list] = {}  # id(ClassDef) being walked -> methods to promote
        self.evaluator = sources.Evaluator(self)
        self.scopes_analysed = 0  # for the cost benchmark: how much work the laziness saved

    # --- public API ----------------------------------------------------------------------
    def placement_of(
        self,
        expr: cst.BaseExpression,
        statement: cst.CSTNode | None,
        chain: tuple[cst.CSTNode, ...] = (),
        extra_env: Env | None = None,
    ) -> Placement:
        """Placement of `expr`, which sits in `statement` of the innermost scope of `chain`."""
        chain = chain or (self.module,)
        env = self._env_for(statement, chain, extra_env)
        return self.evaluator.eval(expr, env, chain)

    def device_target_of(
        self,
        expr: cst.BaseExpression,
        statement: cst.CSTNode | None,
        chain: tuple[cst.CSTNode, ...] = (),
        extra_env: Env | None = None,
    ) -> Placement | None:
        """Where a tensor goes when `expr` is its `device=` / `.to()` target: {DEVICE}, {HOST},
        both (a device that may be the CPU), a tensor's placement (`.to(other_tensor)`), or
        None when `expr` is not known to be a device at all."""
        chain = chain or (self.module,)
        env = self._env_for(statement, chain, extra_env)
        return self.evaluator.device_target(expr, env, chain)

    def env_at(self, statement: cst.CSTNode | None, chain: tuple[cst.CSTNode, ...]) -> Env:
        chain = chain or (self.module,)
        facts = self._facts(chain)
        env = facts.env_before.get(id(statement)) if statement is not None else None
        if env is None:
            env = facts.entry_env if facts.entry_env is not None else self._outer_env.get(id(chain[-1]), {})
        return env

    def class_attributes(self, chain: tuple[cst.CSTNode, ...]) -> Env:
        """`self.<attr>` placements: the join of every `self.<attr> = value` in the class's
        methods, each evaluated in its own method. `chain` ends with the ClassDef.

        Every method is walked once (the walks record the assignments they meet); a method
        still being walked (the question came from inside it) contributes what it has met."""
        class_def = chain[-1]
        key = id(class_def)
        if key not in self._classes_walked:
            self._classes_walked.add(key)
            self._pending[key] = []
            for stmt in getattr(class_def.body, "body", ()):
                if isinstance(stmt, cst.FunctionDef):
                    self._facts((*chain, stmt))
            # Device-only uses read `self.<attr>`: judged once every method has been walked.
            pending = self._pending.pop(key)
            for _ in range(3):  # a promotion may show a caller's argument on the device
                left = [p for p in pending if self._promote(*p) is p[1]]
                if len(left) == len(pending):
                    break
                pending = left
        return self._class_attrs.get(key, {})

    def record_class_attribute(self, class_def: cst.ClassDef, name: str, value: Placement, moved: bool = False) -> None:
        """`moved`: the write is `self.x = self.x.to(...)` (the field moved where it is)."""
        values = self._class_attr_values.setdefault(id(class_def), {}).setdefault(name, [])
        values.append(value)
        self._class_attrs.setdefault(id(class_def), {})[name] = join(*values)
        if not moved:
            self._class_attr_built.setdefault(id(class_def), {}).setdefault(name, []).append(value)

    def attribute_as_built(self, chain: tuple[cst.CSTNode, ...], name: str) -> Placement | None:
        """`self.<name>` as the class builds it, before any `self.x = self.x.to(...)` moves
        it: the join of its other writes (None when there are none). `chain` ends with the
        ClassDef."""
        self.class_attributes(chain)
        values = self._class_attr_built.get(id(chain[-1]), {}).get(name)
        return join(*values) if values else None

    def return_parts_of(self, func: cst.FunctionDef, chain: tuple[cst.CSTNode, ...] | None, count: int) -> tuple[Placement, ...] | None:
        """What `a, b, ... = func(...)` binds each of its `count` names to, where every
        `return` of `func` is a tuple literal of `count` elements: element by element, the join
        of that position of each `return`; None otherwise."""
        facts = self._facts((*(chain or (self.module,)), func))
        parts = facts.return_parts
        if not parts or any(p is None or len(p) != count for p in parts):
            return None
        name = func.name.value
        return tuple(
            join(*(p[i] for p in parts)).because(func, f"element {i} of the tuple `{name}()` returns")
            for i in range(count)
        )

    def returns_of(self, func: cst.FunctionDef, chain: tuple[cst.CSTNode, ...] | None = None) -> Placement:
        """Join of what `func` returns; `chain` is the scopes enclosing `func` (default: the module)."""
        facts = self._facts((*(chain or (self.module,)), func))
        if not facts.returns:
            return UNKNOWN
        return join(*facts.returns).because(func, f"returned by `{func.name.value}()`")

    # --- machinery -----------------------------------------------------------------------
    def _env_for(self, statement, chain, extra_env) -> Env:
        env = self.env_at(statement, chain)
        return overlay(env, extra_env)

    def _facts(self, chain: tuple[cst.CSTNode, ...]) -> ScopeFacts:
        scope = chain[-1]
        key = id(scope)
        facts = self._scopes.get(key)
        if facts is None:
            if len(chain) > 1 and id(scope) not in self._outer_env:
                self._facts(chain[:-1])  # the enclosing scope records the env at our `def`
            if len(chain) > 1 and isinstance(chain[-2], cst.ClassDef) and id(chain[-2]) not in self._classes_walked:
                # A method: walk its class's methods first, in the order they are written,
                # so that what each sees of `self.<attr>` does not depend on which method a
                # rule happened to ask about first.
                self.class_attributes(chain[:-1])
                facts = self._scopes.get(key)
                if facts is not None:
                    return facts
            facts = ScopeFacts()
            self._scopes[key] = facts  # registered first: recursive calls see a partial scope
            self.scopes_analysed += 1
            walker = flow.FlowWalker(self, chain, facts)
            walker.run(self._outer_env.get(key, {}))
            if walker.candidates:
                pending = self._pending.get(id(chain[-2])) if len(chain) > 1 else None
                if pending is not None:
                    pending.append((chain, facts, walker.candidates))  # its class is being walked
                else:
                    facts = self._promote(chain, facts, walker.candidates)
        return facts

    def _promote(self, chain, facts: ScopeFacts, candidates) -> ScopeFacts:
        """Parameters whose place nothing states: where their uses show device tensors, the
        scope is walked again with them placed (synclint/analysis/evidence.py)."""
        promoted = evidence.device_uses(self, chain, facts, candidates)
        if not promoted:
            return facts
        again = ScopeFacts()
        self._scopes[id(chain[-1])] = again
        # Locals are promoted where they are bound to the value of their origin.
        origins = {name: node for name, node in candidates.items() if name in promoted and not isinstance(node, cst.Param)}
        flow.FlowWalker(self, chain, again, promoted, origins).run(self._outer_env.get(id(chain[-1]), {}))
        return again

    def remember_outer_env(self, scope: cst.CSTNode, env: Env) -> None:
        if id(scope) not in self._outer_env:
            self._outer_env[id(scope)] = env.snapshot() if hasattr(env, "snapshot") else dict(env)
