"""The repository index built by several workers (repo/store.py) is the one a single process
builds: the files are summarised largest first, in chunks every worker gets a share of, and
come back in the repository's order; the index is built in a forked child that sends its facts
back and then writes the state an edit is solved from while the lint goes on, which is there
when the run ends; where the child fails, the run builds the index itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from index_projects import _store  # noqa: F401 - _store is an autouse fixture
from index_projects import project

from synclint import repo
from synclint.repo import store

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")


def _many_files(root: Path, count: int) -> Path:
    """A project of `count` modules of very different sizes, each calling the next with a
    device tensor (the solve reads them in order: a parameter's place comes from its caller)."""
    files = {}
    for i in range(count):
        padding = "\n".join(f"    unused_{k} = {k}" for k in range((i * 37) % 90))
        files[f"mod_{i:03d}.py"] = (
            "import torch\n"
            f"from mod_{(i + 1) % count:03d} import step_{(i + 1) % count}\n\n\n"
            f"def step_{i}(x: torch.Tensor):\n{padding}\n"
            f"    y = torch.zeros(8, device='cuda') if x is None else x\n"
            f"    return step_{(i + 1) % count}(y)\n"
        )
    return project(root, files)


def test_workers_return_the_summaries_in_the_repository_order(tmp_path):
    root = _many_files(tmp_path / "proj", 80)
    store._CODE = store._index_code()
    jobs = [(path, None, None) for path in store.python_files(root)]
    alone = store._summarize_many(jobs, 1)
    shared = store._summarize_many(jobs, 3)
    assert [path for path, _, _ in shared] == [path for path, *_ in jobs]
    assert shared == alone


def test_the_largest_files_are_handed_out_first(tmp_path):
    root = _many_files(tmp_path / "proj", 80)
    jobs = [(path, None, None) for path in store.python_files(root)]
    handed: list[str] = []

    class Recording:
        def map(self, function, items, chunksize=1):
            items = list(items)
            handed.extend(job[0] for job in items)
            assert chunksize < 32  # 80 files, 3 workers: a share for each, not two chunks of 32
            return [function(job) for job in items]

    store._CODE = store._index_code()
    results = store._largest_first(Recording(), jobs, 3)
    sizes = [os.path.getsize(path) for path in handed]
    assert sizes == sorted(sizes, reverse=True)
    assert [path for path, _, _ in results] == [path for path, *_ in jobs]


def test_a_parallel_build_gives_the_facts_of_a_serial_one(tmp_path, monkeypatch):
    root = _many_files(tmp_path / "proj", 80)
    monkeypatch.setenv("SYNCLINT_INDEX_DIR", str(tmp_path / "serial"))
    serial = repo.build(root, use_cache=True, jobs=1)
    monkeypatch.setenv("SYNCLINT_INDEX_DIR", str(tmp_path / "parallel"))
    parallel = repo.build_aside(root, use_cache=True, jobs=3)
    assert store._INDEX_CHILDREN  # built by a child
    store.wait_for_writes()
    assert parallel.fingerprint == serial.fingerprint
    assert parallel.values == serial.values and parallel.callers == serial.callers
    assert parallel.examples == serial.examples and parallel.classes == serial.classes
    assert ("p", "step_1", "x") in serial.values  # the chain is placed, so the comparison says something


def test_the_state_written_aside_is_complete_when_the_run_ends(tmp_path, monkeypatch):
    from synclint import runner
    from synclint.config import Settings

    root = _many_files(tmp_path / "proj", 80)
    for path in root.glob("*.py"):  # written long before the run: their stats are trusted
        os.utime(path, (path.stat().st_mtime - 60, path.stat().st_mtime - 60))
    folder = tmp_path / "index-store"
    monkeypatch.setenv("SYNCLINT_INDEX_DIR", str(folder))
    runner.lint_paths([root / "mod_000.py"], Settings(), jobs=2, use_cache=True)
    assert store._INDEX_CHILDREN == []  # waited for
    states = list((folder / "state").iterdir())
    assert len(states) == 1
    # ... and an edit is solved from it (not whole): a function appended that passes a device
    # tensor on.
    edited = root / "mod_005.py"
    edited.write_text(edited.read_text() + "\n\ndef added(size):\n    return step_6(torch.ones(size, device='cuda'))\n")
    solved = []
    real = store._incremental
    monkeypatch.setattr(store, "_incremental", lambda *a: solved.append(1) or real(*a))
    facts = repo.build(root, use_cache=True, jobs=2)
    assert solved and facts.values == repo.build(root, use_cache=False, jobs=1).values


def test_a_parent_whose_child_fails_builds_the_index_itself(tmp_path, monkeypatch):
    root = _many_files(tmp_path / "proj", 4)
    parent = os.getpid()
    real = store._Build.solved

    def failing_in_the_child(self, *args, **kwargs):
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(store._Build, "solved", failing_in_the_child)
    facts = repo.build_aside(root, use_cache=False, jobs=2)
    assert store._INDEX_CHILDREN == []
    assert facts.values == repo.build(root, use_cache=False, jobs=1).values
    assert ("p", "step_1", "x") in facts.values


def test_a_warm_run_and_an_edit_read_the_facts_without_a_child(tmp_path, monkeypatch):
    root = _many_files(tmp_path / "proj", 80)
    for path in root.glob("*.py"):  # written long before the run: their stats are trusted
        os.utime(path, (path.stat().st_mtime - 60, path.stat().st_mtime - 60))
    cold = repo.build_aside(root, use_cache=True, jobs=2)
    store.wait_for_writes()
    forks = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or real_fork())
    assert repo.build_aside(root, use_cache=True, jobs=2).values == cold.values
    edited = root / "mod_005.py"
    edited.write_text(edited.read_text() + "\n\ndef added(size):\n    return step_6(torch.ones(size, device='cuda'))\n")
    assert repo.build_aside(root, use_cache=True, jobs=2).values == repo.build(root, use_cache=False).values
    assert forks == []


def test_the_index_is_built_here_from_a_process_with_threads(tmp_path, monkeypatch):
    import threading

    root = _many_files(tmp_path / "proj", 4)
    monkeypatch.setenv("SYNCLINT_INDEX_DIR", str(tmp_path / "store"))
    forked = []
    monkeypatch.setattr(os, "fork", lambda: forked.append(1) or -1)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        repo.build_aside(root, use_cache=True, jobs=4)
    finally:
        stop.set()
        other.join()
    assert forked == [] and store._INDEX_CHILDREN == []
    assert len(list((tmp_path / "store" / "state").iterdir())) == 1


def test_the_parent_does_its_own_work_while_the_child_builds(tmp_path):
    root = _many_files(tmp_path / "proj", 4)
    ran: list[int] = []
    facts = repo.build_aside(root, use_cache=False, jobs=2, meanwhile=lambda: ran.append(os.getpid()))
    store.wait_for_writes()
    assert ran == [os.getpid()]
    assert ("p", "step_1", "x") in facts.values


def test_a_run_with_workers_imports_the_lint_before_forking_them(tmp_path, monkeypatch):
    from synclint import runner
    from synclint.config import Settings

    root = _many_files(tmp_path / "proj", 4)
    imported = []
    monkeypatch.setattr(runner, "_import_the_lint", lambda: imported.append(1))
    runner.lint_paths([root / "mod_000.py"], Settings(), jobs=2, use_cache=False)
    assert imported == [1]


def test_a_worker_that_dies_leaves_the_summaries_to_this_process(tmp_path, monkeypatch):
    root = _many_files(tmp_path / "proj", 80)
    store._CODE = store._index_code()
    jobs = [(path, None, None) for path in store.python_files(root)]
    alone = store._summarize_many(jobs, 1)
    monkeypatch.setattr(sys.modules[__name__], "_PARENT", os.getpid())
    monkeypatch.setattr(store, "_summarize_file", _dying_in_a_worker)
    assert store._summarize_many(jobs, 3) == alone


_PARENT = 0
_SUMMARIZE_FILE = store._summarize_file


def _dying_in_a_worker(job):
    # (a module-level function: the pool sends it to its workers by name)
    if os.getpid() != _PARENT and job[0].endswith("mod_007.py"):
        os._exit(1)  # as a worker the kernel kills for its memory
    return _SUMMARIZE_FILE(job)


def test_an_error_of_the_parent_is_not_hidden_by_the_serial_fallback(tmp_path, monkeypatch):
    root = _many_files(tmp_path / "proj", 80)
    store._CODE = store._index_code()
    jobs = [(path, None, None) for path in store.python_files(root)]

    def broken(pool, paths, jobs):
        raise NameError("a bug of the parent's own code")

    monkeypatch.setattr(store, "_largest_first", broken)
    with pytest.raises(NameError):
        store._summarize_many(jobs, 3)
