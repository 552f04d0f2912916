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
