"""The placement values (`Placement`, `join`, provenance) and the laziness of the analysis."""

from __future__ import annotations

import textwrap

import libcst as cst

from synclint.analysis.imports import ImportTable
from synclint.analysis.placement import UNKNOWN, Evidence, Place, Placement, join, placed
from synclint.config import Settings
from synclint.context import LintContext
from synclint.engine import BatchedVisitor, enabled_rules
from synclint.violation import Confidence

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


def _call(code: str) -> cst.Call:
    node = cst.parse_expression(code)
    assert isinstance(node, cst.Call)
    return node


def test_predicates():
    device = placed(Place.DEVICE, HIGH, None, "x")
    host = placed(Place.HOST, HIGH, None, "x")
    both = join(device, host)
    assert device.on_device and device.maybe_device and device.is_tensor and device.known
    assert not host.maybe_device and host.is_host_data and host.is_tensor
    assert both.maybe_device and not both.on_device and both.is_tensor and not both.is_host_data
    assert not UNKNOWN.known and not UNKNOWN.is_tensor and not UNKNOWN.maybe_device
    assert placed(Place.SEQUENCE, HIGH, None, "x").is_host_data
    assert not placed(Place.ACCEL_DEVICE, HIGH, None, "x").is_host_data
    assert both.describe() == "device tensor or host tensor (pageable)"


def test_join_takes_the_weakest_confidence_and_every_place():
    a = placed(Place.DEVICE, HIGH, None, "a")
    b = placed(Place.DEVICE, MEDIUM, None, "b")
    c = join(a, b, UNKNOWN)
    assert c.places == {Place.DEVICE, Place.UNKNOWN}
    assert c.confidence is LOW
    assert [e.note for e in c.evidence] == ["a", "b"]
    assert join() is UNKNOWN
    assert join(a) is a


def test_evidence_renders_code_only_when_asked():
    call = _call('torch.zeros(4,\n    device="cuda")')
    step = placed(Place.DEVICE, HIGH, call, "a factory").evidence[0]
    assert step.reason == '`torch.zeros(4, device="cuda")` -> device tensor (a factory)'
    long_call = _call("torch.tensor(" + ", ".join(f"value_{i}" for i in range(30)) + ")")
    rendered = Evidence(long_call, "long", "host tensor (pageable)").reason
    assert rendered.startswith("`torch.tensor(value_0, value_1") and "...` -> host tensor (pageable) (long)" in rendered
    assert Evidence(None, "no node").reason == "no node"


def test_a_long_chain_keeps_its_origin_and_its_end():
    value = placed(Place.DEVICE, HIGH, None, "origin")
    for i in range(20):
        value = value.because(None, f"step {i}")
    notes = [e.note for e in value.evidence]
    assert notes == ["origin", "step 0", "step 1", "step 15", "step 16", "step 17", "step 18", "step 19"]


def test_at_most_caps_confidence():
    value = placed(Place.DEVICE, HIGH, None, "x")
    assert value.at_most(MEDIUM).confidence is MEDIUM
    assert placed(Place.DEVICE, LOW, None, "x").at_most(MEDIUM).confidence is LOW


class _AskInside:
    """Asks for a placement only inside functions named `wanted`."""

    def __init__(self, wanted: str) -> None:
        self.wanted = wanted

    @staticmethod
    def handlers():
        return {"Return": "visit_Return"}

    def visit_Return(self, node: cst.Return, ctx) -> None:
        if ctx.function is not None and ctx.function.name.value == self.wanted and node.value is not None:
            ctx.placement(node.value)


def _run(source: str, rules) -> LintContext:
    module = cst.parse_module(textwrap.dedent(source))
    imports = ImportTable()
    imports.collect_top_level(module)
    ctx = LintContext(module, Settings(), imports)
    module.visit(BatchedVisitor(ctx, tuple(rules)))
    return ctx


SOURCE = """
import torch

def asked(x):
    y = x.cuda()
    return y

def never_asked(x):
    for i in range(10):
        x = x + i
    return x

class Model:
    def forward(self, x):
        return x * 2
"""


def test_only_the_scopes_asked_about_are_analysed():
    ctx = _run(SOURCE, [_AskInside("asked")])
    # The module (for the names a function sees) and the one function asked about.
    assert ctx._placements is not None and ctx._placements.scopes_analysed == 2


def test_rules_that_never_ask_cost_no_analysis():
    ctx = _run("import torch\n\ndef f(x):\n    return x + 1\n", enabled_rules(Settings()))
    assert ctx._placements is None
