"""Shared helpers for the CLI-level tests: write small projects to disk and run synclint on
them, in-process (fast, lets a test simulate a failing write) or as a real subprocess (real
exit codes, real stdin)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from synclint.cli import main

REPO = Path(__file__).resolve().parent.parent

# A file with exactly two findings at default settings: SL101 (fixable) and SL201.
TWO_FINDINGS = textwrap.dedent(
    """\
    import torch


    def step(tokens):
        ids = torch.tensor(tokens, dtype=torch.long, device="cuda")
        total = torch.zeros(4, device="cuda").sum()
        return ids, total.item()
    """
)

# TWO_FINDINGS after `synclint --fix` (the default: an inline pinned copy, no import).
TWO_FINDINGS_FIXED = textwrap.dedent(
    """\
    import torch


    def step(tokens):
        ids = (
            torch.as_tensor(tokens, dtype=torch.long).pin_memory()
            if torch.cuda.is_available()
            else torch.tensor(tokens, dtype=torch.long)
        ).to("cuda", non_blocking=torch.cuda.is_available())
        total = torch.zeros(4, device="cuda").sum()
        return ids, total.item()
    """
)

CLEAN = "import torch\n\n\ndef step(x):\n    return torch.zeros(4, device=x.device) + x\n"


@dataclass
class Result:
    code: int
    out: str
    err: str
    raw_out: bytes = b""  # stdout as bytes, for a subprocess


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files under root (folders as needed); bytes are written as they are."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary folder, made the working directory, with `write` bound to it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SYNCLINT_OUTPUT_FORMAT", raising=False)

    class Project:
        root = tmp_path

        def write(self, files):
            return write(tmp_path, files)

    return Project()


@pytest.fixture
def synclint(capsys):
    """Run `synclint ARGS...` in this process and capture its exit code and output."""

    def run(*args: str) -> Result:
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def run_process(*args: str, cwd: Path, stdin: bytes | None = None) -> Result:
    """Run `python -m synclint ARGS...` as a real process."""
    proc = subprocess.run(
        [sys.executable, "-m", "synclint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"), proc.stdout)


@pytest.fixture(autouse=True, scope="session")
def _repository_index_store(tmp_path_factory):
    """Summaries of the repository index go to a store of the test session, not the user's."""
    import os

    old = os.environ.get("SYNCLINT_INDEX_DIR")
    os.environ["SYNCLINT_INDEX_DIR"] = str(tmp_path_factory.mktemp("index-store"))
    yield
    if old is None:
        os.environ.pop("SYNCLINT_INDEX_DIR", None)
    else:
        os.environ["SYNCLINT_INDEX_DIR"] = old


def unwrapped(code: str) -> str:
    """`code` with the line breaks that a fix's layout puts inside brackets taken out
    (synclint/fix/layout.py): each replacement in its one-line form, for assertions on what a
    fix wrote rather than on how it laid it out."""
    code = re.sub(r"([(\[])[ \t]*\r?\n\s*", r"\1", code)  # `(\n    x` -> `(x`
    code = re.sub(r",?[ \t]*\r?\n\s*([)\]])", r"\1", code)  # `x,\n)` -> `x)`
    code = re.sub(r"[ \t]*\r?\n\s*(if |else )", r" \1", code)  # the `if`/`else` lines
    return re.sub(r",[ \t]*\r?\n[ \t]+(?=\S)", ", ", code)  # one argument a line


@pytest.fixture(autouse=True)
def _no_index_left_installed():
    """Each test starts without the repository index a previous in-process lint installed
    (a fixture linted inside this repository reads the whole repository)."""
    from synclint import repo

    repo.install(repo.EMPTY)
    yield
    repo.install(repo.EMPTY)
