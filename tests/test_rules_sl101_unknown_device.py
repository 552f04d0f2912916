"""SL101 with a `device=` that nothing in the file places: a low-confidence finding, hidden
at the default `--min-confidence medium`, and nothing at all for `device=None`."""

from __future__ import annotations

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Confidence

SOURCE = """import torch


def build(values, d):
    return torch.tensor(values, device=d)


def build_default(values):
    return torch.tensor(values, device=None)
"""


def test_unknown_device_is_low_confidence():
    found = lint_source(SOURCE, "build.py", Settings(select=("SL101",), min_confidence=Confidence.LOW)).violations
    assert [(v.location.row, v.confidence) for v in found] == [(5, Confidence.LOW)]


def test_hidden_at_default_confidence():
    assert lint_source(SOURCE, "build.py", Settings(select=("SL101",))).violations == []
