"""The engine's own tree walk finds exactly what libcst's generic visit finds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from synclint import engine
from synclint.config import Settings
from synclint.violation import Confidence

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))
SETTINGS = Settings(min_confidence=Confidence.LOW)


def _with_libcst_visit(module, rules, settings, filename="", workers=frozenset(), function_tiers=None, host_fields=frozenset(),
                       device_fields=frozenset()):
    imports = engine.ImportTable()
    imports.collect_top_level(module)
    ctx = engine.LintContext(
        module, settings, imports, filename=filename, workers=workers, function_tiers=function_tiers, host_fields=host_fields,
        device_fields=device_fields,
    )
    module.visit(engine.BatchedVisitor(ctx, rules))
    return ctx.findings


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_walk_and_visit_report_the_same(path, monkeypatch):
    text = path.read_bytes()
    walked = engine.lint_source(text, str(path), SETTINGS).violations
    monkeypatch.setattr(engine, "run_rules", _with_libcst_visit)
    visited = engine.lint_source(text, str(path), SETTINGS).violations
    assert [dataclasses.astuple(v) for v in walked] == [dataclasses.astuple(v) for v in visited]


def test_walk_counts_loop_bodies_only():
    # The iterable of a `for` runs once; its body once per iteration (hot "in a loop").
    text = "import torch\nx = torch.zeros(3, device='cuda')\nfor v in [x.sum().item()]:\n    v = x.sum().item()\n"
    found = engine.lint_source(text, "loop.py", Settings(select=("SL201",))).violations
    assert [(v.location.row, v.hot_path) for v in found] == [(3, None), (4, "in a loop")]


@pytest.mark.parametrize("path", FILES[::7], ids=lambda p: str(p.relative_to(ROOT)))
def test_children_are_libcsts_children(path):
    # The analysis' walks (synclint/analysis/nodes.py) see every child in libcst's order.
    import libcst as cst

    from synclint.analysis.nodes import children

    pending = [cst.parse_module(path.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        expected = list(node.children)
        found = children(node)
        assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected)), type(node).__name__
        pending.extend(expected)


@pytest.mark.parametrize("path", FILES[::7], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_read_only_visit_is_libcsts_visit(path):
    # Same nodes, same order, the same children skipped where `visit_*` returns False.
    import libcst as cst

    from synclint.analysis.nodes import visit

    class Recorder(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list = []

        def on_visit(self, node) -> bool:
            self.seen.append(("visit", id(node)))
            return not isinstance(node, (cst.ClassDef, cst.Lambda))

        def on_leave(self, original_node) -> None:
            self.seen.append(("leave", id(original_node)))

    module = cst.parse_module(path.read_text(encoding="utf-8"))
    by_libcst, ours = Recorder(), Recorder()
    module.visit(by_libcst)
    visit(module, ours)
    assert ours.seen == by_libcst.seen
