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


# Code each memo of one file's nodes reads: a loop's class, a platform branch in `__init__`,
# a module that imports a platform's package, a function's local bindings.
MEMOIZED = """import torch
from torch import nn


class Runner(nn.Module):
    def __init__(self, on_xpu: bool):
        super().__init__()
        if torch.xpu.is_available():
            self.impl = None
        self.lens = torch.zeros(8, device="cuda")

    def forward(self, ids):
        out = []
        for n in self.lens:
            size = ids.shape[0]
            out.append(ids[:size] * n)
        return torch.stack(out).sum().item()
"""


def _libcst_alive(kind: str) -> int:
    """How many libcst nodes of class `kind` the collector tracks now."""
    return sum(1 for o in gc.get_objects() if type(o).__name__ == kind and type(o).__module__.startswith("libcst"))


def _functions_alive() -> int:
    gc.collect()
    return _libcst_alive("FunctionDef")


def test_a_file_s_trees_do_not_outlive_its_lint(tmp_path):
    # A worker lints hundreds of files; the memos of one file's nodes (keyed by the node, which
    # they keep alive) are emptied once it is linted, or each worker would keep the trees of
    # the files it linted before (hundreds of MiB on a large repository).
    (tmp_path / "pyproject.toml").write_text("[tool.synclint]\n")
    for i in range(6):
        (tmp_path / f"runner{i}.py").write_text(MEMOIZED)
    before = _functions_alive()
    result = runner.lint_paths([tmp_path], Settings(), jobs=1, use_cache=False)
    assert sum(len(o.violations) for o in result.outcomes) >= 6  # each file linted and found
    del result
    assert _functions_alive() == before


def test_a_file_s_tree_is_freed_without_the_collector(tmp_path):
    # The file's placement analysis and its evaluator refer to each other; they are parted
    # once the walk is done, so the tree goes as soon as the lint returns, not at the
    # collector's next full pass (every `COLLECT_EVERY` files, with the thresholds raised).
    from synclint.engine import lint_source

    gc.collect()
    gc.disable()
    try:
        before = _libcst_alive("Module")
        found = lint_source(MEMOIZED, "runner.py", Settings())
        after = _libcst_alive("Module")
    finally:
        gc.enable()
    assert found.violations and after == before
