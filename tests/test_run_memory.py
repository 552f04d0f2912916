"""A run's garbage: the cycles each file's lint leaves are collected every `COLLECT_EVERY`
files, the index is frozen out of those collections while the run lints, and the collector is
left as it was found."""

from __future__ import annotations

import gc

from synclint import runner
from synclint.config import Settings

SOURCE = """import torch

def step(n):
    t = torch.zeros(n, device="cuda")
    return t.sum().item()
"""


def _tree(tmp_path, files: int):
    (tmp_path / "pyproject.toml").write_text("[tool.synclint]\n")
    for i in range(files):
        (tmp_path / f"m{i:02d}.py").write_text(SOURCE)
    return tmp_path


def test_a_full_collection_every_few_files(tmp_path, monkeypatch):
    calls: list[tuple] = []
    real_collect = gc.collect
    monkeypatch.setattr(runner.gc, "collect", lambda *a: calls.append(a) or real_collect(*a))
    monkeypatch.setattr(runner, "COLLECT_EVERY", 4)
    monkeypatch.setattr(runner, "_linted_since_collect", 0)
    root = _tree(tmp_path, 10)
    result = runner.lint_paths([root], Settings(), jobs=1, use_cache=False)
    assert sum(len(o.violations) for o in result.outcomes) == 10  # every file linted, one finding each
    assert calls == [(), ()]  # after the 4th and the 8th file


def test_the_collector_is_left_as_it_was(tmp_path):
    thresholds = gc.get_threshold()
    runner.lint_paths([_tree(tmp_path, 2)], Settings(), jobs=1, use_cache=False)
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds


def test_the_index_is_frozen_while_the_run_lints(tmp_path, monkeypatch):
    seen: list[int] = []
    real = runner._lint_one
    monkeypatch.setattr(runner, "_lint_one", lambda *a, **k: seen.append(gc.get_freeze_count()) or real(*a, **k))
    runner.lint_paths([_tree(tmp_path, 2)], Settings(), jobs=1, use_cache=False)
    assert seen and all(count > 0 for count in seen)
