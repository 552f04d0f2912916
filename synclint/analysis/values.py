"""The values of placement inference: where a value may live (`Place`), how sure we are
(`Confidence`), and why (`Evidence`), bundled as an immutable `Placement`."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

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
    """One step of a provenance chain: the node that decided (resolved to a line only when a
    finding is reported), why, and the placement it led to.

    `reason` renders as "`<code>` -> <placement> (<why>)", e.g.
    "`torch.zeros(4, device='cuda')` -> device tensor (a factory with an accelerator device=)".
    The code text is produced only when a finding is reported: it costs a code generation.
    """

    node: cst.CSTNode | None
    note: str
    result: str | None = None

    @property
    def reason(self) -> str:
        if self.node is None or self.result is None:
            return self.note
        return f"`{snippet(self.node)}` -> {self.result} ({self.note})"


def snippet(node: cst.CSTNode, limit: int = 60) -> str:
    """A node's source on one line, shortened to `limit` characters."""
    if isinstance(node, cst.Param):
        if node.annotation is None:
            return node.name.value
        return f"{node.name.value}: {snippet(node.annotation.annotation, limit)}"
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return f"def {node.name.value}" if isinstance(node, cst.FunctionDef) else f"class {node.name.value}"
    try:
        text = cst.Module(body=[]).code_for_node(node)
    except Exception:  # noqa: BLE001 - a node that cannot stand alone: describe its type
        return type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        """The same placement, with one more step in its provenance."""
        step = Evidence(node, reason, self.describe())
        return Placement(self.places, self.confidence, _trim((*self.evidence, step)))

    def at_most(self, confidence: Confidence) -> Placement:
        return Placement(self.places, min(self.confidence, confidence), self.evidence)


def placed(place: Place, confidence: Confidence, node: cst.CSTNode | None, reason: str) -> Placement:
    return Placement(frozenset({place}), confidence, (Evidence(node, reason, place.value),))


# A provenance chain keeps where the value came from (the first steps) and how it got here
# (the last steps); the middle of a long chain explains little.
_KEEP_FIRST, _KEEP_LAST = 3, 5


def _trim(evidence: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
    if len(evidence) <= _KEEP_FIRST + _KEEP_LAST:
        return evidence
    return evidence[:_KEEP_FIRST] + evidence[-_KEEP_LAST:]


UNKNOWN = Placement(frozenset({Place.UNKNOWN}), Confidence.LOW)
_OTHER_ONLY = frozenset({Place.OTHER})


# The reason `None` is placed with (sources.py): a value that is no data. Joined with known
# data (`lens = None`, then `lens = torch.zeros(n, device=d)` on a branch), it drops out:
# where the value is used as a tensor, it is one of the others.
NONE_REASON = "None"


def none_value(node: cst.CSTNode | None) -> Placement:
    return placed(Place.OTHER, Confidence.HIGH, node, NONE_REASON)


def _is_none_value(item: Placement) -> bool:
    return item.places == _OTHER_ONLY and bool(item.evidence) and item.evidence[0].note == NONE_REASON


def join(*items: Placement) -> Placement:
    """The placement of a value that may come from any of `items` (branches, loop paths);
    a `None` among known data drops out (`none_value`)."""
    items = tuple(i for i in items if i is not None)
    if not items:
        return UNKNOWN
    if len(items) > 1 and any(_is_none_value(i) for i in items):
        data = tuple(i for i in items if not _is_none_value(i))
        if data and all(i.known for i in data):
            items = data
    if len(items) == 1:
        return items[0]
    places = frozenset().union(*(i.places for i in items))
    confidence = min(i.confidence for i in items)
    evidence: list[Evidence] = []
    for item in items:
        for ev in item.evidence:
            if ev not in evidence:
                evidence.append(ev)
    return Placement(places, confidence, _trim(tuple(evidence)))


Env = dict  # name -> Placement
