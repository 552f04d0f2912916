"""The real pre-commit, with this checkout as the hook repository: the `synclint` hook fails
on a file with a finding, `synclint-fix` fixes it, and the check then passes.

pre-commit installs hooks from a git revision, so the test commits a copy of the working
tree (uncommitted work included) to a temporary repository and points `rev:` at it. Needs
only PyPI (for the hook's virtualenv); marked slow, and run in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow

FINDING = 'import torch\n\n\ndef step(tokens):\n    return torch.tensor(tokens, device="cuda")\n'
FIXED = (
    'import torch\n\n\ndef step(tokens):\n    return (\n        torch.as_tensor(tokens).pin_memory()\n        if torch.cuda.is_available()\n'
    '        else torch.tensor(tokens)\n    ).to("cuda", non_blocking=torch.cuda.is_available())\n'
)


def _git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "synclint tests",
        "GIT_AUTHOR_EMAIL": "tests@synclint.invalid",
        "GIT_COMMITTER_NAME": "synclint tests",
        "GIT_COMMITTER_EMAIL": "tests@synclint.invalid",
    }
    proc = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _snapshot_of_checkout(dest: Path) -> str:
    """Copy the files git would see (tracked and untracked, not ignored) and commit them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    _git("init", "-q", cwd=dest)
    _git("add", "-A", cwd=dest)
    _git("commit", "-q", "-m", "snapshot", cwd=dest)
    return _git("rev-parse", "HEAD", cwd=dest)


def _pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("SYNCLINT_OUTPUT_FORMAT", None)
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    pytest.importorskip("pre_commit", reason="pre-commit is in the `test` extra: pip install -e '.[test]'")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    dest = tmp_path_factory.mktemp("hook-repo")
    return dest, _snapshot_of_checkout(dest)


def test_hook_fails_on_a_finding_fixes_it_and_then_passes(tmp_path, hook_repo):
    repo_path, rev = hook_repo
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    (work / ".pre-commit-config.yaml").write_text(
        textwrap.dedent(
            f"""\
            repos:
              - repo: {repo_path}
                rev: {rev}
                hooks:
                  - id: synclint
                  - id: synclint-fix
                    stages: [manual]
            """
        )
    )
    (work / "model.py").write_text(FINDING)
    (work / "notes.txt").write_text("torch.tensor(x, device='cuda')\n")  # not Python: never passed
    _git("add", "-A", cwd=work)
    home = tmp_path / "pre-commit-home"

    check = _pre_commit("run", "synclint", "--all-files", cwd=work, home=home)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "model.py:5:12: SL101" in check.stdout
    assert "notes.txt" not in check.stdout

    fix = _pre_commit("run", "synclint-fix", "--hook-stage", "manual", "--all-files", cwd=work, home=home)
    assert fix.returncode == 1, fix.stdout + fix.stderr  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in fix.stdout
    assert (work / "model.py").read_text() == FIXED

    _git("add", "-A", cwd=work)
    again = _pre_commit("run", "synclint", "--all-files", cwd=work, home=home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout


def test_readme_local_hook_runs_the_installed_synclint(tmp_path):
    """The README's `repo: local` snippet, as written, with the real pre-commit: it needs no
    `rev:` and runs the `synclint` on PATH."""
    import re

    pytest.importorskip("pre_commit", reason="pre-commit is in the `test` extra: pip install -e '.[test]'")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    [snippet] = [b for b in re.findall(r"```yaml\n(.*?)```", readme, flags=re.S) if "repo: local" in b]
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    (work / ".pre-commit-config.yaml").write_text(snippet)
    (work / "model.py").write_text(FINDING)
    _git("add", "-A", cwd=work)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "synclint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m synclint "$@"\n')
    (bin_dir / "synclint").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO),
           "PRE_COMMIT_HOME": str(tmp_path / "home"), "PRE_COMMIT_COLOR": "never"}
    env.pop("SYNCLINT_OUTPUT_FORMAT", None)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "model.py:5:12: SL101" in proc.stdout
    (work / "model.py").write_text(FIXED)
    _git("add", "-A", cwd=work)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
