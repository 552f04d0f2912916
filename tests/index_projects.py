"""Multi-file projects for the repository-index tests: a fresh index store per test, and a
project root (marked by `.git`) with the given files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from synclint import repo


# A metadata dataclass built on the device in one file (read in another by the tests).
BATCH_INFO = """\
    from dataclasses import dataclass
    import torch


    @dataclass
    class StepBatch:
        lengths: torch.Tensor
        slots: torch.Tensor


    def build(requests, device):
        lengths = torch.tensor([len(r) for r in requests], dtype=torch.int32).to(device, non_blocking=True)
        slots = torch.zeros(len(requests), dtype=torch.int64, device=device)
        return StepBatch(lengths=lengths, slots=slots)
    """


@pytest.fixture(autouse=True)
def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNCLINT_INDEX_DIR", str(tmp_path / "index-store"))
    yield
    repo.install(repo.EMPTY)


def project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def lint(root: Path, *names: str, **settings):
    """The violations of `names` (paths under `root`), linted with the index of the whole project."""
    from synclint import runner
    from synclint.config import Settings
    from synclint.violation import Confidence

    if "min_confidence" in settings:
        settings["min_confidence"] = Confidence[settings["min_confidence"].upper()]
    return runner.lint_paths([root / n for n in names], Settings(**settings), jobs=1, use_cache=False).violations


def findings(root: Path, *names: str, **settings) -> list[tuple[str, int, str]]:
    """(file name, row, code) of each violation `lint` finds."""
    return [(Path(v.filename).name, v.location.row, v.code) for v in lint(root, *names, **settings)]
