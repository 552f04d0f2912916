"""Fine-grained invalidation with the repository index: a changed file re-lints only the
files whose findings depend on what changed (the index facts and call-graph verdicts they
asked for), and a warm run after any change gives what a cold run gives."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from index_projects import BATCH_INFO, _store  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence


def project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write(root / name, text)
    return root


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def result(run) -> list[tuple]:
    """Everything a finding says, --explain included."""
    return [
        (Path(v.filename).name, v.location.row, v.location.column, v.code, v.message, v.confidence.label,
         v.tier, v.tier_reason, tuple(v.provenance), v.hot_path, v.fix, v.end_location, v.noqa_row)
        for v in run.violations
    ]


def lint(root: Path, settings: Settings, *, cache: bool = True):
    return runner.lint_paths([root], settings, jobs=1, use_cache=cache)


def relinted(run) -> set[str]:
    return {Path(name).name for name in run.linted_files}


def assert_same_as_cold(root: Path, settings: Settings, warm) -> None:
    cold = lint(root, settings, cache=False)
    assert result(warm) == result(cold)


FILES = {
    "batch_info.py": BATCH_INFO,
    # Reads a field the index places: depends on batch_info.py.
    "backend.py": """\
        class Backend:
            def plan(self, batch):
                longest = batch.lengths.max().item()
                return longest
        """,
    # Syncs on a tensor it places itself: asks nothing batch_info.py answers.
    "sampler.py": """\
        import torch


        def sample(logits):
            probs = torch.softmax(logits.to("cuda"), dim=-1)
            if probs.max() > 0.5:
                return 1
            return 0
        """,
    "util.py": """\
        def clamp(value, low, high):
            return max(low, min(value, high))
        """,
}


def settings_for(tmp_path: Path, **extra) -> Settings:
    return Settings(cache_dir=str(tmp_path / "cache"), **extra)


def test_a_changed_field_re_lints_its_readers_only(tmp_path):
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    first = lint(root, settings)
    assert relinted(first) == set(FILES)
    assert ("backend.py", 3, "SL201") in [r[:2] + r[3:4] for r in result(first)]
    assert any(r[0] == "sampler.py" for r in result(first))

    unchanged = lint(root, settings)
    assert relinted(unchanged) == set() and result(unchanged) == result(first)

    # The field becomes host data: backend.py's finding goes, sampler.py and util.py are not
    # linted again.
    write(root / "batch_info.py", FILES["batch_info.py"].replace(".to(device, non_blocking=True)", ""))
    changed = lint(root, settings)
    assert relinted(changed) == {"batch_info.py", "backend.py"}
    assert not any(r[0] == "backend.py" for r in result(changed))
    assert_same_as_cold(root, settings, changed)

    # And back: the same two files again.
    write(root / "batch_info.py", FILES["batch_info.py"])
    back = lint(root, settings)
    assert relinted(back) == {"batch_info.py", "backend.py"}
    assert result(back) == result(first)


def test_an_edit_that_changes_no_fact_re_lints_that_file_only(tmp_path):
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    lint(root, settings)
    write(root / "batch_info.py", textwrap.dedent(FILES["batch_info.py"]) + "\n\n# a comment at the end\n")
    changed = lint(root, settings)
    assert relinted(changed) == {"batch_info.py"}
    assert_same_as_cold(root, settings, changed)


def test_a_cited_row_that_moved_is_rewritten_without_linting_again(tmp_path, monkeypatch):
    # `--explain` cites where the repository assigns the field (batch_info.py:<line>): a line
    # inserted above moves it. The answers the reader got differ in that row alone, so its
    # findings are kept with the new row, and the edited file keeps its own (its screened
    # lines are the same, one row down): nothing is linted, and the report is a cold run's.
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    first = lint(root, settings)
    cited = [step for r in result(first) if r[0] == "backend.py" for step in r[8] if "batch_info.py:" in step]
    assert cited, "the fixture's finding must cite the field's assignment"
    write(root / "batch_info.py", "# a new first line\n" + textwrap.dedent(FILES["batch_info.py"]))
    with monkeypatch.context() as patched:
        _no_libcst_parse(patched)
        changed = lint(root, settings)
    assert relinted(changed) == {"batch_info.py"}  # read and screened again, not parsed
    assert_same_as_cold(root, settings, changed)
    assert [step for r in result(changed) if r[0] == "backend.py" for step in r[8] if "batch_info.py:" in step] != cited


def test_a_new_file_that_changes_a_fact_re_lints_the_readers(tmp_path):
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    lint(root, settings)
    # A second place assigns host data to the field: it is no longer only device.
    write(root / "replay.py", """\
        import torch
        from batch_info import StepBatch


        def replay(lengths_list):
            return StepBatch(lengths=torch.tensor(lengths_list), slots=None)
        """)
    changed = lint(root, settings)
    assert relinted(changed) == {"replay.py", "backend.py"}
    assert_same_as_cold(root, settings, changed)


CALL_GRAPH = {
    "model.py": """\
        import torch
        from helpers import fill_table, plan_step


        class Runner:
            def __init__(self, device):
                self.table = torch.zeros(8, device=device)
                fill_table(self.table)

            def execute_model(self, count: int):
                return plan_step(self.table[:count])
        """,
    "helpers.py": """\
        import torch


        def fill_table(table: torch.Tensor):
            return int(table.sum().item())


        def plan_step(lengths: torch.Tensor):
            return _inner(lengths)


        def _inner(lengths: torch.Tensor):
            return int(lengths.max().item())
        """,
    "other.py": """\
        import torch


        def summarise(stats: torch.Tensor):
            return float(stats.mean().item())
        """,
}


def test_a_call_graph_verdict_that_changes_re_lints_the_files_that_used_it(tmp_path):
    root = project(tmp_path / "proj", CALL_GRAPH)
    settings = settings_for(tmp_path, include_cold=True, min_confidence=Confidence.LOW)
    first = lint(root, settings)
    tiers = {(r[0], r[1]): r[6] for r in result(first)}
    assert tiers[("helpers.py", 5)] == "cold"

    # fill_table is now called every step too: helpers.py's verdict for it changes (cold ->
    # hot); other.py asked only about summarise, which nothing calls either way.
    text = textwrap.dedent(CALL_GRAPH["model.py"]).replace(
        "return plan_step(self.table[:count])", "fill_table(self.table)\n        return plan_step(self.table[:count])"
    )
    (root / "model.py").write_text(text)
    changed = lint(root, settings)
    assert relinted(changed) == {"model.py", "helpers.py"}
    tiers = {(r[0], r[1]): r[6] for r in result(changed)}
    assert tiers[("helpers.py", 5)] == "hot"
    assert_same_as_cold(root, settings, changed)


def test_a_run_on_one_file_reuses_entries_checked_by_their_answers(tmp_path):
    # A pre-commit hook passes one file; the index still reads the whole repository and the
    # other files' entries stay valid across index changes that do not concern them.
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    lint(root, settings)
    write(root / "util.py", textwrap.dedent(FILES["util.py"]) + "\n\ndef scale(x):\n    return x * 2\n")
    one = runner.lint_paths([root / "util.py"], settings, jobs=1, use_cache=True)
    assert relinted(one) == {"util.py"}
    rest = lint(root, settings)
    assert relinted(rest) == set()
    assert_same_as_cold(root, settings, rest)


def test_an_old_entry_without_answers_is_linted_again(tmp_path):
    from synclint.cache import ResultCache

    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    lint(root, settings)
    cache = ResultCache(settings)
    key = cache.key(str(root / "sampler.py"))
    import dataclasses

    cache.updates[key] = dataclasses.replace(cache.entries[key], answers="", deps=(), index="another index")
    cache.save()
    again = lint(root, settings)
    assert relinted(again) == {"sampler.py"}
    assert_same_as_cold(root, settings, again)


def _index(root: Path, monkeypatch) -> tuple[repo.Facts, int]:
    """Build the index with the store; returns the facts and how many times it solved."""
    solved = []
    real = repo.solve
    monkeypatch.setattr(repo.store, "solve", lambda summaries, state=None: solved.append(1) or real(summaries, state))
    facts = repo.build(root.resolve(), use_cache=True)
    monkeypatch.setattr(repo.store, "solve", real)
    return facts, len(solved)


def _fresh(root: Path) -> repo.Facts:
    return repo.build(root.resolve(), use_cache=False)


@pytest.mark.parametrize(
    "edit, solves",
    [
        ("touch", 0),  # a new mtime, the same content
        ("comment", 0),  # the summary is the same
        ("moved", 0),  # only line numbers differ: the citations are patched
        ("host", 0),  # a field is given host data now: what reads it is solved again (`_incremental`)
    ],
)
def test_the_index_solves_again_only_when_a_summary_changes_more_than_its_lines(tmp_path, monkeypatch, edit, solves):
    root = project(tmp_path / "proj", FILES)
    first, count = _index(root, monkeypatch)
    assert count == 1
    again, count = _index(root, monkeypatch)
    assert count == 0 and again.values == first.values
    target = root / "batch_info.py"
    text = textwrap.dedent(FILES["batch_info.py"])
    if edit == "touch":
        import os

        os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
    elif edit == "comment":
        target.write_text(text + "\n# a comment at the end\n")
    elif edit == "moved":
        target.write_text("# a first line\n\n" + text)
    else:
        target.write_text(text.replace(".to(device, non_blocking=True)", ""))
    facts, count = _index(root, monkeypatch)
    assert count == solves
    fresh = _fresh(root)
    assert facts.values == fresh.values and facts.fingerprint == fresh.fingerprint
    assert facts.callers == fresh.callers
    if edit == "moved":
        reason = facts.values[("a", "lengths")][1]
        # `StepBatch(lengths=lengths, ...)` was on line 14; two lines were inserted above it.
        assert "batch_info.py:14" in first.values[("a", "lengths")][1]
        assert "batch_info.py:16" in reason and facts.fingerprint != first.fingerprint
    if edit in ("touch", "comment"):
        assert facts.fingerprint == first.fingerprint


def test_digests_do_not_depend_on_how_equal_answers_are_stored():
    # The same answers, once solved in this process and once read back from disk, are equal
    # but shared and interned differently; marshal writes them differently, the digest must not.
    import marshal

    reason = "field `x` is given only device tensors in the repository (e.g. a.py:3)"
    shared = (1, reason)
    solved = {("a", "x"): shared, ("a", "y"): shared, ("t", "step"): None}
    copied = {("a", "x"): (1, "".join(reason)), ("a", "y"): (1, reason[:10] + reason[10:]), ("t", "step"): None}
    assert solved == copied and marshal.dumps(sorted(solved.items())) != marshal.dumps(sorted(copied.items()))
    assert repo.dependency_digest(solved) == repo.dependency_digest(copied)
    assert repo.dependency_digest(marshal.loads(marshal.dumps(solved))) == repo.dependency_digest(solved)
    facts = repo.Facts(dict(solved), "", {"step": ("run",)})
    values, callers = marshal.loads(marshal.dumps((facts.values, facts.callers)))
    again = repo.Facts(values, "", callers)
    assert repo.facts.fingerprinted(facts).fingerprint == repo.facts.fingerprinted(again).fingerprint
    assert facts.structure == again.structure


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: "# a new first line\n\n" + text,
        lambda text: text.replace("\ndef ", "\n# a note on sample()\n# over two lines\ndef ", 1),
        lambda text: text.replace("\n\n\n", "\n\n", 1),
    ],
    ids=["lines-at-the-top", "comment-lines-above", "a-blank-line-removed"],
)
def test_findings_move_with_their_lines_without_a_parse(tmp_path, monkeypatch, edit):
    # sampler.py's screened lines are the same, at other rows: its findings are kept, moved
    # to the rows (and `line N:` citations) of their lines now.
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    first = lint(root, settings)
    assert any(r[0] == "sampler.py" and r[8] for r in result(first))
    text = textwrap.dedent(FILES["sampler.py"])
    assert edit(text) != text
    write(root / "sampler.py", edit(text))
    with monkeypatch.context() as patched:
        _no_libcst_parse(patched)
        changed = lint(root, settings)
    assert relinted(changed) == {"sampler.py"}
    assert_same_as_cold(root, settings, changed)
    again = lint(root, settings)
    assert relinted(again) == set() and result(again) == result(changed)


@pytest.mark.parametrize("comment", ["  # noqa: SL203", "  # gpu-sync-ok: a deliberate read"], ids=["noqa", "gpu-sync-ok"])
def test_a_suppression_comment_moves_with_its_line(tmp_path, monkeypatch, comment):
    # The finding on `if probs.max() > 0.5:` is suppressed; lines inserted above move the
    # comment with its line, and the finding stays suppressed without a parse.
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    text = textwrap.dedent(FILES["sampler.py"]).replace("> 0.5:", "> 0.5:" + comment)
    write(root / "sampler.py", text)
    first = lint(root, settings)
    assert not any(r[0] == "sampler.py" and r[3] == "SL203" for r in result(first))
    write(root / "sampler.py", "# one line\n# and another\n" + text)
    with monkeypatch.context() as patched:
        _no_libcst_parse(patched)
        changed = lint(root, settings)
    assert not any(r[0] == "sampler.py" and r[3] == "SL203" for r in result(changed))
    assert_same_as_cold(root, settings, changed)


def test_an_unused_suppression_and_its_fix_move_with_their_line(tmp_path, monkeypatch):
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    text = textwrap.dedent(FILES["sampler.py"]).replace("return 1", "return 1  # noqa: SL101")
    write(root / "sampler.py", text)
    first = lint(root, settings)
    unused = [v for v in first.violations if v.code == "SL003"]
    assert len(unused) == 1 and unused[0].fix is not None
    write(root / "sampler.py", "# one line\n\n" + text)
    with monkeypatch.context() as patched:
        _no_libcst_parse(patched)
        changed = lint(root, settings)
    moved = [v for v in changed.violations if v.code == "SL003"]
    assert [v.location.row for v in moved] == [unused[0].location.row + 2]
    assert [e.location.row for e in moved[0].fix.edits] == [e.location.row + 2 for e in unused[0].fix.edits]
    assert_same_as_cold(root, settings, changed)
    cold = lint(root, settings, cache=False)
    assert [(v.code, v.location, v.end_location, v.noqa_row, v.fix) for v in changed.violations] == [
        (v.code, v.location, v.end_location, v.noqa_row, v.fix) for v in cold.violations
    ]


# --- an edit outside what the rules see reuses the file's last findings ----------------------


def _no_libcst_parse(monkeypatch):
    """Make any libcst parse fail the test: the findings must come from the cache."""
    from synclint import engine

    def refuse(*args, **kwargs):
        raise AssertionError("the file was parsed with libcst again")

    monkeypatch.setattr(engine, "_parse", refuse)


@pytest.mark.parametrize(
    "edit",
    [
        "\n# a comment after the last statement\n",
        "\n\ndef helper_no_rule_can_flag(x):\n    return x + 1\n",
    ],
    ids=["comment-at-the-end", "function-no-rule-can-flag"],
)
def test_an_edit_outside_the_screened_code_reuses_the_last_findings(tmp_path, monkeypatch, edit):
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    first = lint(root, settings)
    write(root / "sampler.py", textwrap.dedent(FILES["sampler.py"]) + edit)
    with monkeypatch.context() as patched:
        _no_libcst_parse(patched)
        changed = lint(root, settings)
    assert relinted(changed) == {"sampler.py"}  # read and screened again, not parsed
    assert result(changed) == result(first)
    assert_same_as_cold(root, settings, changed)
    # The reused entry is stored for the new content: the next run is a plain hit.
    again = lint(root, settings)
    assert relinted(again) == set() and result(again) == result(first)


def test_an_edit_inside_the_screened_code_is_linted(tmp_path, monkeypatch):
    from synclint import engine

    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    lint(root, settings)
    parses = []
    parse = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda *a: parses.append(1) or parse(*a))
    # A line added inside the flagged function: the findings below it move.
    write(root / "sampler.py", FILES["sampler.py"].replace("    probs = ", "    logits = logits * 2\n    probs = "))
    changed = lint(root, settings)
    assert relinted(changed) == {"sampler.py"} and parses
    assert_same_as_cold(root, settings, changed)


def test_a_suppression_comment_after_the_last_statement_is_not_reused_past(tmp_path):
    root = project(tmp_path / "proj", FILES)
    settings = settings_for(tmp_path)
    first = lint(root, settings)
    assert any(r[0] == "sampler.py" for r in result(first))
    write(root / "sampler.py", textwrap.dedent(FILES["sampler.py"]) + "\n# synclint: skip-file\n")
    changed = lint(root, settings)
    assert not any(r[0] == "sampler.py" for r in result(changed))
    assert_same_as_cold(root, settings, changed)


def test_reused_findings_are_dropped_when_what_they_read_of_the_repository_changed(tmp_path):
    root = project(tmp_path / "proj", CALL_GRAPH)
    settings = settings_for(tmp_path, include_cold=True, min_confidence=Confidence.LOW)
    first = lint(root, settings)
    assert {(r[0], r[1]): r[6] for r in result(first)}[("helpers.py", 5)] == "cold"
    # helpers.py only gets a comment at the end (what its rules see is the same), while
    # model.py now calls fill_table every step: helpers.py's last findings say "cold", and
    # the call graph's answer for them is now "hot", so they are not reused.
    (root / "helpers.py").write_text(textwrap.dedent(CALL_GRAPH["helpers.py"]) + "\n# a comment\n")
    text = textwrap.dedent(CALL_GRAPH["model.py"]).replace(
        "return plan_step(self.table[:count])", "fill_table(self.table)\n        return plan_step(self.table[:count])"
    )
    (root / "model.py").write_text(text)
    changed = lint(root, settings)
    assert {(r[0], r[1]): r[6] for r in result(changed)}[("helpers.py", 5)] == "hot"
    assert_same_as_cold(root, settings, changed)


MOVING = """\
    import torch


    def helper(x):
        return x + 1


    class Runner:
        def step(self, logits, lengths: list[int]):
            lens = torch.tensor(lengths, device="cuda")
            probs = torch.softmax(logits.to("cuda"), dim=-1)
            if probs.max() > 0.5:  # noqa: SL203
                return lens
            top = probs.argmax().item()
            return top


    def other(n):
        total = 0
        for i in range(n):
            total += i
        return total
    """


def test_a_run_of_edits_gives_what_a_cold_run_gives_at_every_step(tmp_path, monkeypatch):
    # Edits that move lines (blank lines, comments, a function no rule can flag) and edits
    # that change the screened code, in a seeded order: after each, the cached run reports
    # exactly what a cold run reports, fixes and `--explain` included.
    import random

    root = project(tmp_path / "proj", {"runner.py": MOVING, "batch_info.py": BATCH_INFO, "backend.py": FILES["backend.py"]})
    settings = settings_for(tmp_path)
    first = lint(root, settings)
    assert {r[3] for r in result(first) if r[0] == "runner.py"} >= {"SL101", "SL201"}
    rng = random.Random(2026)
    edits = [
        lambda lines, at: lines[:at] + [""] + lines[at:],
        lambda lines, at: lines[:at] + ["# a note"] + lines[at:],
        lambda lines, at: lines[:at] + ["", "def unflagged(y):", "    return y * 2", ""] + lines[at:],
        lambda lines, at: [line for i, line in enumerate(lines) if i != at or line.strip()],
        lambda lines, at: [line.replace("argmax()", "argmin()") for line in lines],
        lambda lines, at: [line.replace("argmin()", "argmax()") for line in lines],
    ]
    text = textwrap.dedent(MOVING)
    from synclint import engine

    parses, steps = [], 0
    parse = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda *a: parses.append(1) or parse(*a))
    for _ in range(14):
        lines = text.split("\n")
        # Only at statement boundaries: between top-level definitions or at the top.
        boundaries = [0] + [i for i, line in enumerate(lines) if line.startswith(("def ", "class "))]
        candidate = "\n".join(rng.choice(edits)(lines, rng.choice(boundaries)))
        try:
            compile(candidate, "runner.py", "exec")
        except SyntaxError:
            continue
        text = candidate
        (root / "runner.py").write_text(text)
        parses.clear()
        changed = lint(root, settings)
        steps += not parses  # runner.py kept its findings without a parse
        assert_same_as_cold(root, settings, changed)
    assert steps >= 3  # the sequence moves lines often enough to exercise the reuse


def test_under_a_new_index_with_the_same_call_graph_its_answers_are_not_worked_out_again(tmp_path, monkeypatch):
    # A function appended that nothing calls and that passes its argument through: a new fact
    # (the index's fingerprint changes), the same call graph. The cached files' questions to
    # the call graph (tier verdicts, what callers pass) keep their answers; only the others
    # are asked again. A call added changes the graph: its answers are worked out again.
    root = project(tmp_path / "proj", {**FILES, **CALL_GRAPH})
    settings = settings_for(tmp_path, include_cold=True, min_confidence=Confidence.LOW)
    first = lint(root, settings)
    before = repo.facts.FACTS.fingerprint
    verdicts = []
    real = repo.tiers._CallGraphTiers.verdict

    def counting(self, *args, **kwargs):
        verdicts.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(repo.tiers._CallGraphTiers, "verdict", counting)
    write(root / "util.py", textwrap.dedent(FILES["util.py"]) + "\n\ndef passed_through(x):\n    return x\n")
    # ... and an edit of a file with findings that keeps them (a comment after its code)
    write(root / "helpers.py", textwrap.dedent(CALL_GRAPH["helpers.py"]) + "\n# a comment\n")
    changed = lint(root, settings)
    assert repo.facts.FACTS.fingerprint != before
    assert relinted(changed) == {"util.py", "helpers.py"} and verdicts == []
    assert result(changed) == result(first)
    assert_same_as_cold(root, settings, changed)

    verdicts.clear()
    write(root / "util.py", textwrap.dedent(FILES["util.py"]) + "\n\ndef caller(t):\n    return fill_table(t)\n")
    changed = lint(root, settings)
    assert verdicts  # the call graph changed: its answers are worked out again
    assert_same_as_cold(root, settings, changed)


def test_a_base_modules_field_declaration_that_changes_re_lints_the_models_that_inherit_it(tmp_path):
    from test_repo_index import BASE_VL, MID_VL, PANGU_VL

    files = {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/models/base_vl.py": BASE_VL,
             "pkg/models/mid_vl.py": MID_VL, "pkg/models/pangu_vl.py": PANGU_VL}
    root = project(tmp_path / "proj", files)
    settings = settings_for(tmp_path)
    first = lint(root, settings)
    assert [r[1] for r in result(first) if r[0] == "pangu_vl.py" and r[3] == "SL208"] == []
    # `image_grid_thw` is no longer kept on the host: the model that inherits the declaration
    # is linted again, and its `grid_thw` is read as the forward's device input.
    write(root / "pkg/models/base_vl.py", BASE_VL.replace(', keep_on_cpu=True', ''))
    changed = lint(root, settings)
    assert "pangu_vl.py" in relinted(changed)
    assert [r[1] for r in result(changed) if r[0] == "pangu_vl.py" and r[3] == "SL208"] != []
    assert_same_as_cold(root, settings, changed)


# --- ... and does so without loading the rules ----------------------------------------------

EDITED_RUN = """
import json, sys
from pathlib import Path
from synclint import runner
from synclint.config import Settings
run = runner.lint_paths([Path(sys.argv[1])], Settings(cache_dir=sys.argv[2]), jobs=1)
print(json.dumps({"libcst": "libcst" in sys.modules, "linted": sorted(Path(n).name for n in run.linted_files),
                  "findings": sorted((Path(v.filename).name, v.location.row, v.code) for v in run.violations)}))
"""


def _edited_run(root: Path, tmp_path: Path) -> dict:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "SYNCLINT_INDEX_DIR": str(tmp_path / "index-store")}
    done = subprocess.run([sys.executable, "-c", EDITED_RUN, str(root), str(tmp_path / "cache")], capture_output=True,
                          text=True, timeout=300, env=env, check=True)
    return json.loads(done.stdout)


def test_an_edit_outside_what_the_rules_see_loads_no_rules(tmp_path):
    # A run that finds an edited file's screened input unchanged (a comment, a function no
    # rule can flag) keeps its findings with the rules as the cache describes them: libcst
    # and the analysis are never imported. A run that must lint does import them.
    root = project(tmp_path / "proj", FILES)
    first = _edited_run(root, tmp_path)
    assert first["libcst"] and len(first["linted"]) == len(FILES)
    assert list((tmp_path / "cache").glob("rules-*.cat"))
    text = textwrap.dedent(FILES["sampler.py"])
    write(root / "sampler.py", text + "\n\ndef added(x):\n    return x\n\n# and a comment\n")
    edited = _edited_run(root, tmp_path)
    assert edited["linted"] == ["sampler.py"] and not edited["libcst"]
    assert edited["findings"] == first["findings"]
    # An edit the rules see is linted, with the rules loaded.
    write(root / "sampler.py", text.replace("> 0.5", "> 0.25"))
    relinted_run = _edited_run(root, tmp_path)
    assert relinted_run["linted"] == ["sampler.py"] and relinted_run["libcst"]
    assert relinted_run["findings"] == first["findings"]


def test_the_catalog_describes_the_rules(tmp_path):
    import ast

    from synclint import rule_catalog
    from synclint.rules import all_rules

    catalog = rule_catalog.from_plain(rule_catalog.describe(all_rules()))
    assert [info.code for info in catalog] == [rule.code for rule in all_rules()]
    tree = ast.parse("class Runner:\n    def _wait(self):\n        self.event.synchronize()\n")
    for info, rule in zip(catalog, all_rules()):
        assert (info.triggers, info.shape_words, info.device_only, info.device_sites) == (
            tuple(rule.triggers), None if rule.shape_words is None else tuple(rule.shape_words), rule.device_only,
            None if rule.device_sites is None else tuple(rule.device_sites))
        assert info.screen_words(tree) == rule.screen_words(tree)
    assert "_wait" in next(info for info in catalog if info.code == "SL501").screen_words(tree)
