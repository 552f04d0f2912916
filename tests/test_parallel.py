"""`-j N` gives exactly what `-j1` gives, in the same order: on the fixtures folder and on a
sample of real PyTorch code copied from the installed torch package (and from the benchmark
corpus when it has been fetched)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from synclint import runner
from synclint.config import Settings
from synclint.violation import Confidence

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
BENCH_CORPUS = REPO / "bench" / ".corpus" / "src"


def _stride_sample(files: list[Path], count: int) -> list[Path]:
    step = max(1, len(files) // count)
    return files[::step][:count]


def real_code_sample(dest: Path, torch_files: int = 24, corpus_files: int = 12) -> Path:
    """Copy a fixed, spread-out sample of real PyTorch code into `dest` and return it."""
    torch = pytest.importorskip("torch")
    roots = [Path(torch.__file__).parent]
    chosen: list[Path] = []
    for root, count in ((roots[0], torch_files), (BENCH_CORPUS, corpus_files)):
        if not root.is_dir():
            continue
        candidates = sorted(p for p in root.rglob("*.py") if 2_000 <= p.stat().st_size <= 20_000)
        chosen += _stride_sample(candidates, count)
    dest.mkdir(parents=True, exist_ok=True)
    for index, source in enumerate(chosen):
        shutil.copyfile(source, dest / f"f{index:03d}_{source.name}")
    return dest


def comparable(run: runner.RunResult) -> list[tuple]:
    """Everything a report shows, provenance included (Violation equality skips it)."""
    return [
        (o.filename, o.encoding, [(dataclasses.astuple(v), v.provenance) for v in o.violations])
        for o in run.outcomes
    ]


@pytest.fixture
def always_parallel(monkeypatch):
    # Small test trees would otherwise be linted in-process; force the worker pool.
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)


def test_jobs_match_serial_on_fixtures(always_parallel, monkeypatch):
    monkeypatch.chdir(REPO)
    settings = Settings(min_confidence=Confidence.LOW)
    serial = runner.lint_paths([FIXTURES], settings, jobs=1, use_cache=False)
    parallel = runner.lint_paths([FIXTURES], settings, jobs=3, use_cache=False)
    assert serial.jobs == 1 and parallel.jobs == 3
    assert len(serial.outcomes) > 20  # the fixtures really were found
    assert any(o.violations for o in serial.outcomes)
    assert comparable(parallel) == comparable(serial)


def test_jobs_match_serial_on_real_code(always_parallel, tmp_path, monkeypatch):
    sample = real_code_sample(tmp_path / "sample")
    monkeypatch.chdir(tmp_path)
    settings = Settings(min_confidence=Confidence.LOW)
    serial = runner.lint_paths([sample], settings, jobs=1, use_cache=False)
    parallel = runner.lint_paths([sample], settings, jobs=2, use_cache=False)
    assert len(serial.outcomes) >= 24
    assert sum(len(o.violations) for o in serial.outcomes) > 0
    assert comparable(parallel) == comparable(serial)


def test_outcomes_follow_discovery_order_not_size(always_parallel, tmp_path, monkeypatch):
    # Workers take the largest files first; the outcomes must still come back sorted by path.
    monkeypatch.chdir(tmp_path)
    for index in range(12):
        body = 'import torch\n\n\ndef f():\n    return torch.zeros(4, device="cuda").sum().item()\n'
        body += "# pad\n" * (index * 200)
        (tmp_path / f"m{index:02d}.py").write_text(body)
    run = runner.lint_paths([tmp_path], Settings(), jobs=2, use_cache=False)
    names = [Path(o.filename).name for o in run.outcomes]
    assert names == sorted(names)
    assert all(len(o.violations) == 1 for o in run.outcomes)


def test_fix_results_match_serial(always_parallel, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = 'import torch\n\n\ndef step(tokens):\n    return torch.tensor(tokens, device="cuda")\n'
    for index in range(6):
        (tmp_path / f"m{index}.py").write_text(source)
    serial = runner.lint_paths([tmp_path], Settings(), fix=True, jobs=1, use_cache=False)
    parallel = runner.lint_paths([tmp_path], Settings(), fix=True, jobs=2, use_cache=False)
    assert [(o.fixed, o.applied) for o in parallel.outcomes] == [(o.fixed, o.applied) for o in serial.outcomes]
    assert all(o.changed and o.applied == 1 for o in parallel.outcomes)


def test_small_runs_stay_in_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import torch\n")
    (tmp_path / "b.py").write_text("import torch\n")
    run = runner.lint_paths([tmp_path], Settings(), jobs=4, use_cache=False)
    assert run.jobs == 1 and run.linted == 2


def test_default_jobs_is_all_cores():
    assert runner.default_jobs() >= 1
