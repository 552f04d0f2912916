"""What an edit changed in the index (synclint/repo/delta.py): a cached file none of whose
questions reads a changed fact keeps its findings without asking its questions again, and a
run after any edit still gives what a cold run gives."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

from index_projects import BATCH_INFO, _store  # noqa: F401 - _store is an autouse fixture
from test_incremental import FILES, assert_same_as_cold, lint, project, relinted, settings_for, write

from synclint import repo, runner
from synclint.cache import ResultCache
from synclint.repo.delta import Affected, changed

HELPERS = {
    "lengths.py": """\
        import torch


        def make_lengths(n):
            return torch.arange(n, device="cuda")
        """,
    "planner.py": """\
        from lengths import make_lengths


        def plan(n):
            lengths = make_lengths(n)
            return lengths.max().item()
        """,
}

HOST_LENGTHS = ".to(device, non_blocking=True)"


def _deps(settings, root: Path, name: str) -> set:
    return set(ResultCache(settings).entries[ResultCache.key(str(root / name))].deps)


def _asked(monkeypatch) -> list:
    """The questions the cache asks the index again (`repo.Verifier.answer`)."""
    asked = []
    real = repo.Verifier.answer

    def recording(self, key):
        asked.append(key)
        return real(self, key)

    monkeypatch.setattr(repo.Verifier, "answer", recording)
    return asked


def test_an_edit_that_moves_a_place_asks_only_the_questions_that_read_it(tmp_path, monkeypatch):
    root = project(tmp_path / "proj", {**FILES, **HELPERS})
    settings = settings_for(tmp_path)
    lint(root, settings)
    others = (_deps(settings, root, "planner.py") | _deps(settings, root, "sampler.py")) - _deps(settings, root, "backend.py")
    assert ("r", "make_lengths") in others  # planner.py reads the helper's result
    asked = _asked(monkeypatch)

    # The field becomes host data: backend.py reads it; planner.py and sampler.py do not.
    write(root / "batch_info.py", BATCH_INFO.replace(HOST_LENGTHS, ""))
    moved = lint(root, settings)
    assert relinted(moved) == {"batch_info.py", "backend.py"}
    assert asked and not set(asked) & others
    assert repo.facts.FACTS.delta  # derived from the last facts by places alone
    assert_same_as_cold(root, settings, moved)

    # The helper now returns host data: planner.py, which reads its result, is asked again.
    asked.clear()
    write(root / "lengths.py", HELPERS["lengths.py"].replace(', device="cuda"', ""))
    helper = lint(root, settings)
    assert relinted(helper) == {"lengths.py", "planner.py"}
    assert ("r", "make_lengths") in asked
    assert_same_as_cold(root, settings, helper)


def test_entries_made_a_few_edits_ago_are_kept_without_their_questions(tmp_path, monkeypatch):
    # A pre-commit hook lints only the changed file: the other entries stay at the index of
    # their last run, and the next full run reads them through every delta since.
    root = project(tmp_path / "proj", {**FILES, **HELPERS})
    settings = settings_for(tmp_path)
    lint(root, settings)
    planner = _deps(settings, root, "planner.py") - _deps(settings, root, "backend.py")
    write(root / "batch_info.py", BATCH_INFO.replace(HOST_LENGTHS, ""))
    runner.lint_paths([root / "batch_info.py"], settings, jobs=1, use_cache=True)
    first = repo.facts.FACTS.fingerprint
    write(root / "batch_info.py", "# a first line\n" + textwrap.dedent(BATCH_INFO.replace(HOST_LENGTHS, "")))
    runner.lint_paths([root / "batch_info.py"], settings, jobs=1, use_cache=True)
    assert first in repo.facts.FACTS.delta and len(repo.facts.FACTS.delta) >= 2
    asked = _asked(monkeypatch)
    rest = lint(root, settings)
    assert relinted(rest) == {"backend.py"}
    assert not set(asked) & planner
    assert_same_as_cold(root, settings, rest)


def test_an_edit_of_the_call_graph_has_no_delta(tmp_path):
    root = project(tmp_path / "proj", {**FILES, **HELPERS})
    settings = settings_for(tmp_path)
    lint(root, settings)
    write(root / "util.py", textwrap.dedent(FILES["util.py"]) + "\n\ndef caller(n):\n    return make_lengths(n)\n")
    edited = lint(root, settings)
    assert repo.facts.FACTS.delta == {}
    assert_same_as_cold(root, settings, edited)


def test_what_each_question_reads_decides_whether_it_is_asked_again():
    old = repo.Facts({("a", "lengths"): (1, "device"), ("r", "m.helper"): (1, "device")}, "", {"step": ("run",)})
    repo.facts.fingerprinted(old)
    moved = repo.Facts({("a", "lengths"): (2, "host"), ("r", "m.helper"): (1, "device")}, "", {"step": ("run",)})
    repo.facts.fingerprinted(moved)
    affected = Affected(changed(old, moved))
    assert affected.any([("a", "lengths")]) and affected.any([("F", "StepBatch", "lengths")])
    assert not affected.any([("a", "slots"), ("F", "StepBatch", "slots"), ("r", "m.helper"), ("M", "Runner", "helper"),
                             ("t", "m.helper"), ("C", "StepBatch")])
    # A result that changed: every method result's question (an alias may name it otherwise).
    result_moved = repo.Facts({("a", "lengths"): (1, "device"), ("r", "m.helper"): (2, "host")}, "", {"step": ("run",)})
    repo.facts.fingerprinted(result_moved)
    affected = Affected(changed(old, result_moved))
    assert affected.any([("r", "m.helper")]) and affected.any([("M", "Runner", "other_name")])
    assert not affected.any([("a", "lengths"), ("F", "StepBatch", "lengths")])
    # Another call graph: no delta.
    regraphed = repo.Facts(dict(old.values), "", {"step": ("run", "warmup")})
    repo.facts.fingerprinted(regraphed)
    assert changed(old, regraphed) is None


def test_a_run_of_edits_of_places_gives_what_a_cold_run_gives_at_every_step(tmp_path):
    root = project(tmp_path / "proj", {**FILES, **HELPERS})
    settings = settings_for(tmp_path)
    lint(root, settings)
    texts = {name: textwrap.dedent(text) for name, text in {**FILES, **HELPERS}.items()}
    edits = [
        ("batch_info.py", lambda t: t.replace(HOST_LENGTHS, "") if HOST_LENGTHS in t else t.replace(
            "dtype=torch.int32)", "dtype=torch.int32)" + HOST_LENGTHS)),
        ("batch_info.py", lambda t: "# a line at the top\n" + t),
        ("lengths.py", lambda t: t.replace(', device="cuda"', "") if 'device="cuda"' in t else t.replace("arange(n)", 'arange(n, device="cuda")')),
        ("lengths.py", lambda t: t + "\n\ndef unflagged(x):\n    return x\n"),
        ("backend.py", lambda t: "\n" + t),
    ]
    rng = random.Random(2026)
    for _ in range(12):
        name, edit = rng.choice(edits)
        texts[name] = edit(texts[name])
        (root / name).write_text(texts[name])
        if rng.random() < 0.4:  # a pre-commit run of the changed file first
            runner.lint_paths([root / name], settings, jobs=1, use_cache=True)
        assert_same_as_cold(root, settings, lint(root, settings))
