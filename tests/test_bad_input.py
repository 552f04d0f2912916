"""Bad input never crashes the run: each problem is one line naming the file (an SL001/SL002
finding, so exit 1), the other files are still linted, and `--fix` never writes a file it
could not parse."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import CLEAN, TWO_FINDINGS, TWO_FINDINGS_FIXED, run_process

GOOD_FINDINGS = [
    "good.py:5:11: SL101",
    "good.py:7:17: SL201",
]


def _rows(out: str) -> list[str]:
    """`path:row:col: CODE` of each concise line, the message dropped."""
    return [" ".join(line.split(" ")[:2]) for line in out.splitlines() if ": SL" in line]


def test_each_bad_input_is_one_finding_and_the_good_file_is_still_linted(project, synclint):
    project.write(
        {
            "good.py": TWO_FINDINGS,
            "syntax.py": "import torch\n\ndef f(:\n    pass\n",
            "latin.py": b"x = '\xe9t\xe9'\n",  # not UTF-8 and no coding cookie
            "empty.py": "",
            "dir.py/inner.py": CLEAN,  # a folder named like a file: walked as a folder
        }
    )
    os.symlink("does-not-exist.py", "broken.py")
    os.symlink("loop_b.py", "loop_a.py")
    os.symlink("loop_a.py", "loop_b.py")
    os.symlink("..", "dir.py/up")  # a folder cycle: a note, not a finding

    result = synclint("check", "--output-format", "concise", ".", "missing.py")

    assert result.code == 1
    assert _rows(result.out) == [
        "broken.py:1:1: SL002",
        *GOOD_FINDINGS,
        "latin.py:1:1: SL002",
        "loop_a.py:1:1: SL002",
        "loop_b.py:1:1: SL002",
        "missing.py:1:1: SL002",
        "syntax.py:3:7: SL001",
    ]
    lines = {" ".join(line.split(" ")[:2]): line for line in result.out.splitlines()}
    assert "broken symbolic link" in lines["broken.py:1:1: SL002"]
    assert "symlink loop" in lines["loop_a.py:1:1: SL002"]
    assert "no such file or directory" in lines["missing.py:1:1: SL002"]
    assert "cannot decode" in lines["latin.py:1:1: SL002"]
    assert "SyntaxError" in lines["syntax.py:3:7: SL001"]
    assert result.err == "synclint: note: dir.py/up: symlink loop: folder already visited, skipped\n"
    assert "Traceback" not in result.out + result.err


@pytest.mark.parametrize(
    "source, row, column, message",
    [
        # Python's own message and location, whether or not a rule trigger made libcst parse it
        ("x = (1,\ny = 2\n", 1, 5, "SyntaxError: '(' was never closed"),
        ("import torch\nx = torch.tensor([1], device='cuda'\ny = 2\n", 2, 17, "SyntaxError: '(' was never closed"),
        ("def f(:\n    pass\n", 1, 7, "SyntaxError: invalid syntax"),
    ],
)
def test_syntax_error_carries_the_parsers_location(project, synclint, source, row, column, message):
    project.write({"broken.py": source})
    result = synclint("check", "--output-format", "json", "broken.py")
    assert result.code == 1
    [finding] = json.loads(result.out)
    assert finding["code"] == "SL001"
    assert finding["message"].startswith(message)
    assert (finding["location"]["row"], finding["location"]["column"]) == (row, column)


def test_unreadable_file_is_sl002_and_the_next_file_is_linted(project, synclint, monkeypatch):
    project.write({"a_secret.py": TWO_FINDINGS, "good.py": TWO_FINDINGS})
    if os.geteuid() != 0:
        os.chmod("a_secret.py", 0)
    else:  # root reads any file: make the read itself fail as a permission error would
        import synclint.runner as runner

        real = runner.read_source

        def read_source(path):
            if path.name == "a_secret.py":
                raise PermissionError(13, "Permission denied", str(path))
            return real(path)

        monkeypatch.setattr(runner, "read_source", read_source)
    result = synclint("check", "--output-format", "concise", ".")
    assert result.code == 1
    assert _rows(result.out) == ["a_secret.py:1:1: SL002", *GOOD_FINDINGS]
    assert "cannot read: Permission denied" in result.out


@pytest.mark.parametrize("fix", [False, True])
def test_a_defect_of_synclint_on_one_file_is_sl002_and_the_run_goes_on(project, synclint, monkeypatch, fix):
    """An unexpected exception while linting one file (a defect of synclint, not of the input)
    is an SL002 finding naming the file and the exception; the other files are linted (and
    fixed) as usual, and the file it happened on is left as it was."""
    import synclint.api as api

    project.write({"a_broken.py": TWO_FINDINGS, "good.py": TWO_FINDINGS})
    for name in ("lint_source", "fix_source"):
        real = getattr(api, name)

        def failing(source, filename="<stdin>", *args, _real=real, **kwargs):
            if str(filename).endswith("a_broken.py"):
                raise TypeError("'IndentedBlock' object is not iterable")
            return _real(source, filename, *args, **kwargs)

        monkeypatch.setattr(api, name, failing)
    result = synclint("check", "--output-format", "concise", *(["--fix"] if fix else []), ".")
    assert result.code == 1
    assert (project.root / "a_broken.py").read_text() == TWO_FINDINGS
    assert "a_broken.py:1:1: SL002 internal error while linting this file (TypeError: 'IndentedBlock' object is not iterable)" in result.out
    if fix:
        assert (project.root / "good.py").read_text() == TWO_FINDINGS_FIXED
    else:
        assert _rows(result.out) == ["a_broken.py:1:1: SL002", *GOOD_FINDINGS]


def test_a_folder_named_on_the_command_line_like_a_file_is_walked(project, synclint):
    project.write({"pkg.py/mod.py": TWO_FINDINGS})
    result = synclint("check", "--output-format", "concise", "pkg.py")
    assert result.code == 1
    assert _rows(result.out) == ["pkg.py/mod.py:5:11: SL101", "pkg.py/mod.py:7:17: SL201"]


def test_empty_file_and_clean_file_exit_zero(project, synclint):
    project.write({"empty.py": "", "clean.py": CLEAN})
    result = synclint("check", ".")
    assert (result.code, result.out, result.err) == (0, "All checks passed!\n", "")


def test_huge_file_is_skipped_with_sl002(project, synclint):
    project.write({"pyproject.toml": "[tool.synclint]\nmax-file-size = 1000\n", "huge.py": "x = 1\n" * 1000, "good.py": TWO_FINDINGS})
    result = synclint("check", "--output-format", "concise", ".")
    assert result.code == 1
    assert _rows(result.out) == [*GOOD_FINDINGS, "huge.py:1:1: SL002"]
    assert "file is 6,000 bytes, over max-file-size (1,000); skipped" in result.out


def test_null_bytes_are_a_finding_not_a_crash(project, synclint):
    project.write({"nul.py": b"x = 1\x00\n"})
    result = synclint("check", "--output-format", "concise", "nul.py")
    assert result.code == 1
    assert _rows(result.out)[0].startswith("nul.py:1:")


def test_real_process_reports_bad_input_without_traceback(tmp_path):
    (tmp_path / "syntax.py").write_text("def f(:\n")
    (tmp_path / "good.py").write_text(TWO_FINDINGS)
    result = run_process("check", "--output-format", "concise", "syntax.py", "good.py", "nope.py", cwd=tmp_path)
    assert result.code == 1
    assert _rows(result.out) == [*GOOD_FINDINGS, "nope.py:1:1: SL002", "syntax.py:1:7: SL001"]
    assert "Traceback" not in result.err


def test_fix_never_writes_a_file_it_could_not_parse(project, synclint):
    broken = "import torch\nx = torch.tensor([1], device='cuda')\ndef f(:\n"
    project.write({"broken.py": broken, "good.py": TWO_FINDINGS})
    result = synclint("check", "--fix", ".")
    assert result.code == 1
    assert (project.root / "broken.py").read_text() == broken
    assert (project.root / "good.py").read_text() == TWO_FINDINGS_FIXED


def test_fix_that_breaks_the_code_is_refused_and_the_file_left_alone(project, synclint, monkeypatch):
    """A fix whose result does not parse is dropped: the file stays as it was."""
    import synclint.fix.apply as apply

    project.write({"good.py": TWO_FINDINGS})
    monkeypatch.setattr(apply, "apply_fixes", lambda text, violations, unsafe: (text + "def (:\n", 1))
    result = synclint("check", "--fix", "good.py")
    assert (project.root / "good.py").read_text() == TWO_FINDINGS
    assert "good.py: a fix produced code that does not parse" in result.err
    assert result.code == 1


def test_failing_write_leaves_the_original_and_no_temp_file(project, synclint, monkeypatch):
    project.write({"a.py": TWO_FINDINGS, "b.py": TWO_FINDINGS})
    real_replace = os.replace

    def replace(src, dst):
        if os.path.basename(dst) == "a.py":
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    result = synclint("check", "--fix", ".")
    assert result.code == 2
    assert "synclint: a.py: cannot write the fixed file: No space left on device" in result.err
    assert (project.root / "a.py").read_text() == TWO_FINDINGS
    assert (project.root / "b.py").read_text() == TWO_FINDINGS_FIXED  # the other file still fixed
    assert sorted(p.name for p in project.root.iterdir()) == ["a.py", "b.py"]


def test_fix_keeps_the_file_mode_and_writes_through_a_symlink(project, synclint):
    project.write({"real/tool.py": TWO_FINDINGS})
    target = project.root / "real" / "tool.py"
    os.chmod(target, 0o751)
    os.symlink("real/tool.py", "link.py")
    result = synclint("check", "--fix", "link.py")
    assert result.code == 1  # SL201 remains
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.read_text() == TWO_FINDINGS_FIXED
    assert os.path.islink("link.py")


@pytest.mark.parametrize("body", ["[tool.synclint\n", "[tool.synclint]\nselect = 'SL1'\n"])
def test_broken_pyproject_is_exit_2_naming_the_file(project, synclint, body):
    project.write({"pyproject.toml": body, "good.py": TWO_FINDINGS})
    result = synclint("check", ".")
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith(f"synclint: configuration error: {project.root / 'pyproject.toml'}: ")
    assert result.err.count("\n") == 1
