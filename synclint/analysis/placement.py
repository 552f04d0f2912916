"""Where does a value live? Placement inference for the rules.

Each expression gets a `Placement`: the set of places it may live in (a Python scalar, a
Python list, a numpy array, a pageable or pinned host tensor, a device tensor, or unknown),
how sure we are, and the evidence (the line and the reason) behind it.

The analysis is a forward abstract interpretation over one scope at a time (a function, a
class body or the module), run lazily the first time a rule asks about an expression in that
scope, and cached. Files whose rules never ask pay nothing for it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from synclint.analysis import sources
from synclint.analysis.imports import ImportTable
from synclint.violation import Confidence


class Place(enum.Enum):
    SCALAR = "Python scalar"
    SEQUENCE = "Python list/tuple"
    NUMPY = "numpy array"
    HOST = "host tensor (pageable)"
    PINNED = "host tensor (pinned)"
    DEVICE = "device tensor"
    # Values that are not data but decide where data goes.
    ACCEL_DEVICE = "accelerator device"
    CPU_DEVICE = "cpu device"
    OTHER = "other value"
    UNKNOWN = "unknown"


TENSOR_PLACES = frozenset({Place.HOST, Place.PINNED, Place.DEVICE})
HOST_DATA_PLACES = frozenset({Place.SCALAR, Place.SEQUENCE, Place.NUMPY, Place.HOST, Place.PINNED})
PAGEABLE_HOST_PLACES = frozenset({Place.SEQUENCE, Place.NUMPY, Place.HOST, Place.SCALAR})


@dataclass(frozen=True)
class Evidence:
    node: cst.CSTNode | None  # resolved to a line only when a finding is reported
    reason: str


@dataclass(frozen=True)
class Placement:
    places: frozenset[Place]
    confidence: Confidence
    evidence: tuple[Evidence, ...] = ()

    # --- questions rules ask -------------------------------------------------------------
    def is_(self, *places: Place) -> bool:
        """Every possibility is one of `places` (and nothing is unknown)."""
        return bool(self.places) and self.places <= frozenset(places)

    def may_be(self, place: Place) -> bool:
        return place in self.places

    @property
    def on_device(self) -> bool:
        return self.places == {Place.DEVICE}

    @property
    def maybe_device(self) -> bool:
        return Place.DEVICE in self.places

    @property
    def is_host_data(self) -> bool:
        return self.is_(*HOST_DATA_PLACES)

    @property
    def is_tensor(self) -> bool:
        return self.is_(*TENSOR_PLACES)

    @property
    def known(self) -> bool:
        return Place.UNKNOWN not in self.places

    def describe(self) -> str:
        return " or ".join(sorted(p.value for p in self.places))

    # --- building ------------------------------------------------------------------------
    def because(self, node: cst.CSTNode | None, reason: str) -> Placement:
        return Placement(self.places, self.confidence, (*self.evidence, Evidence(node, reason))[-8:])

    def at_most(self, confidence: Confidence) -> Placement:
        return Placement(self.places, min(self.confidence, confidence), self.evidence)


def placed(place: Place, confidence: Confidence, node: cst.CSTNode | None, reason: str) -> Placement:
    return Placement(frozenset({place}), confidence, (Evidence(node, reason),))


UNKNOWN = Placement(frozenset({Place.UNKNOWN}), Confidence.LOW)


def join(*items: Placement) -> Placement:
    """The placement of a value that may come from any of `items` (branches, loop paths)."""
    items = tuple(i for i in items if i is not None)
    if not items:
        return UNKNOWN
    if len(items) == 1:
        return items[0]
    places = frozenset().union(*(i.places for i in items))
    confidence = min(i.confidence for i in items)
    evidence: list[Evidence] = []
    for item in items:
        for ev in item.evidence:
            if ev not in evidence:
                evidence.append(ev)
    return Placement(places, confidence, tuple(evidence[-8:]))


Env = dict  # name -> Placement


class ScopeFacts:
    """What one analysed scope knows: the environment before each statement."""

    def __init__(self) -> None:
        self.env_before: dict[int, Env] = {}  # id(statement) -> env
        self.returns: list[Placement] = []


class PlacementAnalysis:
    """Lazily analyses scopes and answers `placement_of(expr, statement, chain)`.

    `chain` is the tuple of enclosing scopes, outermost first: (Module, ClassDef?, FunctionDef...).
    """

    def __init__(self, module: cst.Module, imports: ImportTable) -> None:
        self.module = module
        self.imports = imports
        self._scopes: dict[int, ScopeFacts] = {}
        self._outer_env: dict[int, Env] = {}  # id(function or class) -> env where it was defined
        self._class_attrs: dict[int, Env] = {}
        self.evaluator = sources.Evaluator(self)

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
        env = self.env_at(statement, chain)
        if extra_env:
            env = {**env, **extra_env}
        return self.evaluator.eval(expr, env, chain)

    def env_at(self, statement: cst.CSTNode | None, chain: tuple[cst.CSTNode, ...]) -> Env:
        chain = chain or (self.module,)
        facts = self._facts(chain)
        env = facts.env_before.get(id(statement)) if statement is not None else None
        if env is None:
            env = self._outer_env.get(id(chain[-1]), {})
        return env

    def class_attributes(self, chain: tuple[cst.CSTNode, ...]) -> Env:
        """`self.<attr>` placements assigned anywhere in the class's methods (joined).

        `chain` ends with the ClassDef."""
        key = id(chain[-1])
        if key not in self._class_attrs:
            self._class_attrs[key] = {}  # guard against recursion while computing
            self._class_attrs[key] = sources.class_attribute_env(self, chain)
        return self._class_attrs[key]

    def returns_of(self, func: cst.FunctionDef) -> Placement:
        facts = self._facts((self.module, func))
        return join(*facts.returns) if facts.returns else UNKNOWN

    # --- machinery -----------------------------------------------------------------------
    def _facts(self, chain: tuple[cst.CSTNode, ...]) -> ScopeFacts:
        scope = chain[-1]
        key = id(scope)
        facts = self._scopes.get(key)
        if facts is None:
            if len(chain) > 1 and id(scope) not in self._outer_env:
                self._facts(chain[:-1])  # the enclosing scope records the env at our `def`
            facts = ScopeFacts()
            self._scopes[key] = facts  # registered first: recursive calls see a partial scope
            sources.FlowWalker(self, chain, facts).run(self._outer_env.get(key, {}))
        return facts

    def remember_outer_env(self, scope: cst.CSTNode, env: Env) -> None:
        self._outer_env.setdefault(id(scope), dict(env))
