"""A generated module of test cases (long module-level tables of constructor calls, groupings
that read each other's names through comprehensions, a module-level `if` that imports and
rebinds a table) costs the screen work in proportion to its size, and the screen parses only
what can hold a finding:

- the place model solves scopes that read each other as one group (synclint/screen/places.py
  `taint`): each binding is evaluated a few times, not once per question that reaches it
  (before, such a module went past `WORK_LIMIT` at eight groupings and was parsed whole);
- a long table is split into its elements (synclint/screen/__init__.py `_table_parts`): the
  elements that can hold a finding are kept, the others blanked;
- what the module binds only as a comprehension's target keeps nothing (Python and the
  analysis bind it in the comprehension), and a unit kept for its imports keeps a table it
  reads as its statement only.

The findings are those of the whole file, with the screen and without."""

from __future__ import annotations

import ast
import dataclasses
import gc
import textwrap

import pytest

from synclint import screen
from synclint.config import Settings
from synclint.engine import enabled_rules, lint_source
from synclint.screen import places
from synclint.violation import Confidence


def table_module(groups: int, rows: int = 60) -> str:
    """Three tables of `rows` entries (one entry of each syncs), `groups` groupings each read
    from the one before, and an `if` that imports and rebinds a table from a grouping."""
    out = [
        "import torch",
        "",
        "",
        "def sample_inputs(op, dtype):",
        '    t = torch.ones(3, device="cuda", dtype=dtype)',
        "    if t.sum() > 0:",
        "        return [t]",
        "    return [t.max().item()]",
        "",
        "",
    ]
    for k in range(3):
        out.append(f"table_{k} = [")
        for i in range(rows):
            out.append(f"    OpInfo('op{k}_{i}',")
            if i == rows // 2:
                out.append('           ref=lambda x: torch.ones(2, device="cuda").sum().item(),')
            else:
                out.append(f"           ref=lambda x: x + {i},")
            out.append("           dtypes=tuple(t for t in (torch.float16, torch.float32) if t is not None),")
            out.append("           sample_inputs_func=sample_inputs),")
        out.append("]")
        out.append("")
    out.append("all_ops = table_0 + table_1 + table_2")
    for i in range(groups):
        source = "all_ops" if i == 0 else f"group_{i - 1}"
        out.append(f"group_{i} = [op for op in {source} if op]")
    out.append("")
    out.append("if ALL:")
    out.append("    import os")
    out.append("    table_0 = [op for op in group_0 if os.environ.get(op)]")
    return "\n".join(out) + "\n"


def _reduce(text: str, monkeypatch) -> tuple[str | None, int]:
    """The screen's text and the bindings its place model evaluated."""
    models = []

    class Recording(places.PlaceModel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            models.append(self)

    monkeypatch.setattr(places, "PlaceModel", Recording)
    reduced = screen.reduce(text, enabled_rules(Settings()), Confidence.MEDIUM)
    return reduced, sum(m.work for m in models)


def _kept_rows(reduced: str) -> set[int]:
    return {row for row, line in enumerate(reduced.splitlines(), 1) if line.strip()}


def _report(text: str, settings: Settings) -> list[tuple]:
    return [(dataclasses.astuple(v), v.provenance) for v in lint_source(text, "pkg/ops.py", settings).violations]


def test_the_work_grows_with_the_module_not_with_its_cycles(monkeypatch):
    work = {groups: _reduce(table_module(groups), monkeypatch)[1] for groups in (8, 16, 32)}
    # Each grouping adds its own few bindings: linear, far below the limit.
    assert work[32] - work[16] <= 2 * (work[16] - work[8]) + 10
    assert work[32] < 5_000 < places.WORK_LIMIT


def test_the_work_does_not_grow_with_the_length_of_the_tables(monkeypatch):
    short, long = (_reduce(table_module(8, rows), monkeypatch)[1] for rows in (60, 240))
    assert long <= 4 * short  # the tables' own bindings (lambdas, comprehensions), once each


def test_only_the_elements_that_can_hold_a_finding_are_parsed(monkeypatch):
    text = table_module(16)
    reduced, _ = _reduce(text, monkeypatch)
    assert reduced is not None and reduced != screen.NOTHING
    assert len(reduced.splitlines()) == len(text.splitlines())  # rows keep their numbers
    ast.parse(reduced)
    lines = text.splitlines()
    kept = [lines[row - 1].strip() for row in sorted(_kept_rows(reduced))]
    # the function that syncs, each table's syncing entry and the table's brackets
    assert "def sample_inputs(op, dtype):" in kept
    assert sum(".sum().item()" in line for line in kept) == 3
    assert {"table_0 = [", "table_1 = [", "table_2 = ["} <= set(kept)
    assert not any("lambda x: x + " in line for line in kept)
    # The groupings bind `op` only in their comprehensions: `sample_inputs(op, ...)` reads
    # its own parameter, not them. The `if` is kept for its import, with what it reads
    # (`group_0`, then `all_ops`); the tables these read are bound still (their statements),
    # not parsed whole.
    assert "import os" in kept
    assert [line for line in kept if line.startswith("group_")] == ["group_0 = [op for op in all_ops if op]"]
    assert "all_ops = table_0 + table_1 + table_2" in kept
    # The same parse, however long the tables are.
    assert len(_kept_rows(_reduce(table_module(16, rows=240), monkeypatch)[0])) == len(_kept_rows(reduced))


@pytest.mark.parametrize("settings", [Settings(), Settings(include_cold=True), Settings(min_confidence=Confidence.LOW)], ids=["default", "cold", "low"])
def test_the_findings_are_those_of_the_whole_file(settings):
    text = table_module(16)
    findings = _report(text, settings)
    assert findings == _report(text, settings.replace(screen=False))
    assert len(findings) >= 2


def test_a_table_a_function_reads_is_parsed_whole(monkeypatch):
    # `for op in table_1` reads every entry of the table (where each may live matters).
    text = table_module(4) + textwrap.dedent(
        """

        def walk():
            total = torch.zeros(1, device="cuda")
            for op in table_1:
                total += op.ref(total)
            return total.item()
        """
    )
    reduced, _ = _reduce(text, monkeypatch)
    lines = text.splitlines()
    kept = [lines[row - 1] for row in _kept_rows(reduced)]
    assert sum("OpInfo('op1_" in line for line in kept) == 60
    assert sum("OpInfo('op0_" in line for line in kept) == 1  # the other tables: their syncing entry
    assert _report(text, Settings(include_cold=True)) == _report(text, Settings(include_cold=True, screen=False))


TABLE_LAYOUTS = '''\
import torch

rows = [
    Case("a", lambda x: torch.ones(1, device="cuda").item()),  # a comment after the comma
    Case("b"), Case("c", lambda x: torch.ones(1, device="cuda").item()),
    (
        Case("d", lambda x: x)
    ),
    Case("e",
         lambda x: x),
    # a comment between entries
    Case("f", lambda x: x)
    ,
    Case("g", lambda x: torch.ones(1, device="cuda").item()), Case("h")]
''' + "\n" * 200 + "pad = 0\n"


def test_entries_that_share_a_line_or_stand_in_parentheses_stay_with_the_table(monkeypatch):
    stmt = ast.parse(TABLE_LAYOUTS).body[1]
    lines = TABLE_LAYOUTS.splitlines(keepends=True)
    spans = {ast.literal_eval(e.args[0]): (first, last) for e, first, last in screen._separable(stmt.value, lines)}
    # "b", "c" share a line; "d" is parenthesised (and so "e", after its parenthesis, is
    # not split either); "g", "h" share the bracket's line. "f" owns its comma's line.
    assert spans == {"a": (4, 4), "f": (12, 13)}
    # A table of fewer than SPLIT_LINES lines is one unit: padded, this one is still short.
    assert stmt.end_lineno - stmt.lineno + 1 < screen.SPLIT_LINES
    long_table = TABLE_LAYOUTS.replace("rows = [\n", "rows = [\n" + "    Case('pad'),\n" * screen.SPLIT_LINES)
    reduced, _ = _reduce(long_table, monkeypatch)
    ast.parse(reduced)
    kept = [long_table.splitlines()[row - 1] for row in _kept_rows(reduced)]
    assert not any("Case('pad')" in line for line in kept)
    assert any('Case("b"), Case("c"' in line for line in kept)  # with the statement
    for settings in (Settings(include_cold=True), Settings(min_confidence=Confidence.LOW)):
        assert _report(long_table, settings) == _report(long_table, settings.replace(screen=False))


def test_a_run_restores_the_collectors_thresholds(tmp_path):
    from synclint.runner import lint_paths

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "ops.py").write_text(table_module(2))
    before = gc.get_threshold()
    lint_paths([tmp_path], Settings(), use_cache=False, jobs=1)
    assert gc.get_threshold() == before
