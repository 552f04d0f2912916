"""A baseline that survives edits around the findings it holds, and `--diff-base` on a real
git repository (with a file deleted since the base revision), run as a user runs them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import REPO, TWO_FINDINGS, run_process, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _concise(result) -> list[str]:
    return [line.split(" [")[0] for line in result.out.splitlines() if ": SL" in line]


def test_baseline_is_written_then_hides_known_findings_even_after_lines_move(tmp_path):
    write(tmp_path, {"m.py": TWO_FINDINGS, "pkg/n.py": TWO_FINDINGS})
    first = run_process("check", "--baseline", "synclint-baseline.json", ".", cwd=tmp_path)
    assert (first.code, first.err) == (0, "Wrote 4 findings to the baseline synclint-baseline.json.\n")
    data = json.loads((tmp_path / "synclint-baseline.json").read_text())
    assert sorted((e["file"], e["code"]) for e in data["findings"]) == [
        ("m.py", "SL101"), ("m.py", "SL201"), ("pkg/n.py", "SL101"), ("pkg/n.py", "SL201"),
    ]
    clean = run_process("check", "--baseline", "synclint-baseline.json", ".", cwd=tmp_path)
    assert clean.code == 0 and clean.out == "All checks passed!\n"
    assert clean.err == "synclint: 4 findings in the baseline synclint-baseline.json not shown.\n"

    # An unrelated edit above the findings (an import, a blank line, a comment) and a
    # re-indent of nothing that matters: still in the baseline.
    edited = TWO_FINDINGS.replace("import torch\n", "import os\nimport torch\n\n# setup\nCONST = 3\n", 1)
    (tmp_path / "m.py").write_text(edited)
    moved = run_process("check", "--baseline", "synclint-baseline.json", "--output-format", "concise", ".", cwd=tmp_path)
    assert moved.code == 0, moved.out

    # A new copy of a known line is a new finding; so is an edited flagged line.
    grown = edited.replace("    return ids, total.item()\n", "    extra = total.item()\n    return ids, total.item()\n")
    (tmp_path / "m.py").write_text(grown)
    new = run_process("check", "--baseline", "synclint-baseline.json", "--output-format", "concise", ".", cwd=tmp_path)
    assert new.code == 1
    assert _concise(new) == ["m.py:11:13: SL201"]

    # Run from another folder: paths in the baseline are relative to the baseline file.
    (tmp_path / "m.py").write_text(edited)
    sub = run_process("check", "--baseline", "../synclint-baseline.json", ".", cwd=tmp_path / "pkg")
    assert sub.code == 0, sub.out

    # --update-baseline rewrites it with what is there now.
    (tmp_path / "m.py").write_text(grown)
    update = run_process("check", "--baseline", "synclint-baseline.json", "--update-baseline", ".", cwd=tmp_path)
    assert update.err == "Wrote 5 findings to the baseline synclint-baseline.json.\n"
    assert run_process("check", "--baseline", "synclint-baseline.json", ".", cwd=tmp_path).code == 0


def test_a_broken_baseline_is_an_error_that_names_it(tmp_path):
    write(tmp_path, {"m.py": TWO_FINDINGS, "b.json": "{not json", "other.json": '{"a": 1}'})
    broken = run_process("check", "--baseline", "b.json", ".", cwd=tmp_path)
    assert broken.code == 2 and "b.json: not a synclint baseline" in broken.err
    other = run_process("check", "--baseline", "other.json", ".", cwd=tmp_path)
    assert other.code == 2 and "--update-baseline" in other.err
    assert run_process("check", "--update-baseline", ".", cwd=tmp_path).code == 2


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.email", "dev@example.com")
    _git(tmp_path, "config", "user.name", "dev")
    write(tmp_path, {"old.py": TWO_FINDINGS, "gone.py": TWO_FINDINGS, "same.py": TWO_FINDINGS, ".gitignore": "ignored.py\n"})
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


# Unlike any other file of the repository (git would take a copy of one for a rename, and a
# renamed file's unchanged lines are not new).
NEW = "import torch\n\n\ndef forward(batch):\n    return torch.ones(3, device='cuda').sum().item()\n"


def test_diff_base_reports_only_changed_lines_and_skips_deleted_files(repo):
    # A new finding in an old file, a file deleted since the base, an untracked new file, an
    # ignored file, and an unchanged file with findings.
    text = TWO_FINDINGS.replace("    return ids, total.item()\n", "    again = total.item()\n    return ids, total.item()\n")
    (repo / "old.py").write_text("# edited\n" + text)
    (repo / "gone.py").unlink()
    write(repo, {"new.py": NEW, "ignored.py": TWO_FINDINGS})
    result = run_process("check", "--diff-base", "HEAD", "--output-format", "concise", cwd=repo)
    assert result.code == 1, result.err
    assert _concise(result) == ["new.py:5:12: SL201", "old.py:8:13: SL201"]

    # The files named by `git diff --name-only` (the deleted one included) give the same.
    names = subprocess.run(["git", "diff", "--name-only", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.split()
    assert "gone.py" in names
    named = run_process("check", "--diff-base", "HEAD", "--output-format", "concise", *names, "new.py", cwd=repo)
    assert _concise(named) == _concise(result) and named.code == 1
    assert "gone.py" not in named.out + named.err

    # Committed: nothing has changed since HEAD any more.
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change")
    assert run_process("check", "--diff-base", "HEAD", cwd=repo).out == "All checks passed!\n"
    # A file moved without a change brings no finding back.
    _git(repo, "mv", "same.py", "moved.py")
    assert run_process("check", "--diff-base", "HEAD", cwd=repo).out == "All checks passed!\n"
    # ...but since the first commit, the same findings.
    since = run_process("check", "--diff-base", "HEAD~1", "--output-format", "concise", cwd=repo)
    assert _concise(since) == ["new.py:5:12: SL201", "old.py:8:13: SL201"]


def test_a_missing_path_without_diff_base_is_a_clear_finding(repo):
    (repo / "gone.py").unlink()
    result = run_process("check", "--output-format", "concise", "gone.py", "same.py", cwd=repo)
    assert result.code == 1
    assert "gone.py:1:1: SL002 no such file or directory" in result.out


def test_diff_base_errors(repo, tmp_path_factory):
    bad = run_process("check", "--diff-base", "no-such-rev", cwd=repo)
    assert bad.code == 2 and "`no-such-rev` is not a commit" in bad.err
    outside = tmp_path_factory.mktemp("nogit")
    not_git = run_process("check", "--diff-base", "HEAD", cwd=outside)
    assert not_git.code == 2 and "needs a git repository" in not_git.err
    assert run_process("check", "--diff-base", "HEAD", "--fix", cwd=repo).code == 2


def test_readme_adoption_commands_are_options_that_exist(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for option in ("--baseline", "--update-baseline", "--diff-base", "--add-noqa", "--show-files", "--show-settings"):
        assert f"`{option}" in readme, option
    # The baseline's first run prints what the README quotes (on the bundled example).
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    first = run_process("check", "--baseline", "synclint-baseline.json", "examples/", cwd=tmp_path)
    assert first.code == 0 and f"(`{first.err.strip()}`, exit 0)" in " ".join(readme.split())
