"""The command line on real files: flags, exit codes and exact outputs."""

from __future__ import annotations

import json

import pytest

from conftest import CLEAN, TWO_FINDINGS, TWO_FINDINGS_FIXED, run_process
from synclint.terminal import LEGEND

SL101_LINE = (
    "a.py:5:11: SL101 [*] [medium confidence] `torch.tensor(..., device=...)` copies host data with a blocking copy; "
    "use a pinned, non-blocking copy (in step())"
)
SL201_LINE = "a.py:7:17: SL201 [high confidence] `.item()` copies a device tensor to the host and waits for all queued GPU work (in step())"
SL201_FIXED_LINE = SL201_LINE.replace("a.py:7:", "a.py:11:")  # the fix above it takes 5 lines
# After the findings: the legend of `[*]` and of the confidence, then ruff's summary lines.
SUMMARY = f"{LEGEND}\nFound 2 findings.\n[*] 1 fixable with the `--fix` option.\n"


def test_full_output_has_source_line_caret_span_and_fix_title(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "a.py")
    assert result.code == 1
    assert result.out == (
        f"{SL101_LINE}\n"
        "  |\n"
        '5 |     ids = torch.tensor(tokens, dtype=torch.long, device="cuda")\n'
        "  |           " + "^" * 53 + " SL101\n"
        "  = fix: Use a pinned, non-blocking copy (inline, torch only)\n"
        "\n"
        f"{SL201_LINE}\n"
        "  |\n"
        "7 |     return ids, total.item()\n"
        "  |                 ^^^^^^^^^^^^ SL201\n"
        "\n"
        f"{SUMMARY}"
    )
    assert result.err == ""


def test_concise_and_clean_exit_codes(project, synclint):
    project.write({"a.py": TWO_FINDINGS, "clean.py": CLEAN})
    assert synclint("check", "--output-format", "concise", "a.py").out == f"{SL101_LINE}\n{SL201_LINE}\n{SUMMARY}"
    clean = synclint("check", "clean.py")
    assert (clean.code, clean.out) == (0, "All checks passed!\n")


def test_default_path_is_the_working_directory(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    assert synclint("--output-format", "concise").out == f"{SL101_LINE}\n{SL201_LINE}\n{SUMMARY}"


def test_exit_zero_keeps_the_report(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "--exit-zero", "--output-format", "concise", "a.py")
    assert (result.code, result.out) == (0, f"{SL101_LINE}\n{SL201_LINE}\n{SUMMARY}")


def test_statistics_counts_per_rule_with_fixability(project, synclint):
    project.write({"a.py": TWO_FINDINGS, "b.py": TWO_FINDINGS.replace("total.item()", "total")})
    result = synclint("check", "--statistics", ".")
    assert result.code == 1
    assert result.out == (
        "    2\tSL101\t[*] blocking-tensor-factory\t(2 hot)\n"
        "    1\tSL201\t[ ] item-readback\t(1 hot)\n"
        "Found 3 findings.\n"
        "[*] 2 fixable with the `--fix` option.\n"
    )


def test_output_file_gets_the_report_and_stdout_stays_empty(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "--output-format", "json", "-o", "report.json", "a.py")
    assert (result.code, result.out) == (1, "")
    data = json.loads((project.root / "report.json").read_text())
    assert [(d["code"], d["location"]["row"]) for d in data] == [("SL101", 5), ("SL201", 7)]


@pytest.mark.parametrize(
    "options, codes",
    [
        (["--select", "SL1"], ["SL101"]),
        (["--select", "SL2"], ["SL201"]),
        (["--select", "SL201"], ["SL201"]),
        (["--ignore", "SL1"], ["SL201"]),
        (["--select", "SL1", "--extend-select", "SL201"], ["SL101", "SL201"]),
        (["--select", "SL", "--ignore", "SL101"], ["SL201"]),
        (["--select", "SL1,SL2", "--ignore", "SL2"], ["SL101"]),
        (["--select", "ALL"], ["SL101", "SL201"]),
    ],
)
def test_select_ignore_and_extend_select_take_prefixes(project, synclint, options, codes):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "--output-format", "json", *options, "a.py")
    assert [d["code"] for d in json.loads(result.out)] == codes


def test_unknown_selector_is_a_usage_error(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "--select", "SL9", "a.py")
    assert (result.code, result.out) == (2, "")
    assert result.err == "synclint: error: --select: unknown rule selector `SL9`\n"


def test_unknown_option_and_bad_format_are_usage_errors(project, synclint):
    assert synclint("check", "--bogus").code == 2
    result = synclint("check", "--output-format", "xml", ".")
    assert result.code == 2
    assert result.err.startswith("synclint: error: argument --output-format: invalid choice: 'xml'")


def test_diff_prints_the_fix_and_writes_nothing(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "--diff", "a.py")
    assert result.code == 1
    assert result.out == (
        "--- a/a.py\n"
        "+++ b/a.py\n"
        "@@ -2,6 +2,10 @@\n"
        " \n"
        " \n"
        " def step(tokens):\n"
        '-    ids = torch.tensor(tokens, dtype=torch.long, device="cuda")\n'
        "+    ids = (\n"
        "+        torch.as_tensor(tokens, dtype=torch.long).pin_memory()\n"
        "+        if torch.cuda.is_available()\n"
        "+        else torch.tensor(tokens, dtype=torch.long)\n"
        '+    ).to("cuda", non_blocking=torch.cuda.is_available())\n'
        '     total = torch.zeros(4, device="cuda").sum()\n'
        "     return ids, total.item()\n"
    )
    assert result.err == "Would fix 1 finding in 1 file.\n"
    assert (project.root / "a.py").read_text() == TWO_FINDINGS


def test_diff_headers_of_absolute_paths(project, synclint, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "a.py"
    elsewhere.write_text(TWO_FINDINGS)
    inside = project.root / "sub" / "a.py"
    inside.parent.mkdir()
    inside.write_text(TWO_FINDINGS)
    out = synclint("check", "--diff", str(elsewhere), str(inside)).out
    headers = [line for line in out.splitlines() if line.startswith(("---", "+++"))]
    assert headers == [f"--- {elsewhere}", f"+++ {elsewhere}", "--- a/sub/a.py", "+++ b/sub/a.py"]


def test_diff_of_a_clean_file_is_empty_and_exit_zero(project, synclint):
    project.write({"clean.py": CLEAN})
    result = synclint("check", "--diff", "clean.py")
    assert (result.code, result.out, result.err) == (0, "", "Would fix 0 findings in 0 files.\n")


def test_fix_with_and_without_the_check_subcommand(project, synclint):
    project.write({"a.py": TWO_FINDINGS, "b.py": TWO_FINDINGS})
    first = synclint("--fix", "--output-format", "concise", "a.py")
    assert first.code == 1  # the SL201 readback has no fix and remains
    assert first.out == SL201_FIXED_LINE + f"\n{LEGEND}\nFound 2 findings (1 fixed, 1 remaining).\n"
    assert (project.root / "a.py").read_text() == TWO_FINDINGS_FIXED
    second = synclint("check", "--fix", "b.py")
    assert (project.root / "b.py").read_text() == TWO_FINDINGS_FIXED
    assert second.code == 1
    again = synclint("check", "--fix", "a.py", "b.py")
    assert (project.root / "a.py").read_text() == TWO_FINDINGS_FIXED  # idempotent
    assert again.out.endswith("Found 2 findings.\n")


def test_fix_to_nothing_left_exits_zero(project, synclint):
    project.write({"a.py": TWO_FINDINGS.replace("total.item()", "total")})
    result = synclint("check", "--fix", "a.py")
    assert (result.code, result.out) == (0, "Found 1 finding (1 fixed, 0 remaining).\n")


def test_stdin_lint_uses_the_stdin_filename(project):
    result = run_process("check", "--output-format", "concise", "--stdin-filename", "a.py", "-", cwd=project.root, stdin=TWO_FINDINGS.encode())
    assert (result.code, result.out, result.err) == (1, f"{SL101_LINE}\n{SL201_LINE}\n{SUMMARY}", "")


def test_stdin_full_output_shows_the_source_line(project):
    result = run_process("check", "--stdin-filename", "a.py", "-", cwd=project.root, stdin=TWO_FINDINGS.encode())
    assert "7 |     return ids, total.item()\n" in result.out


def test_stdin_fix_prints_the_fixed_source_and_reports_on_stderr(project):
    result = run_process("check", "--fix", "--output-format", "concise", "--stdin-filename", "a.py", "-", cwd=project.root, stdin=TWO_FINDINGS.encode())
    assert result.code == 1
    assert result.out == TWO_FINDINGS_FIXED
    assert result.err == SL201_FIXED_LINE + f"\n{LEGEND}\nFound 2 findings (1 fixed, 1 remaining).\n"
    assert list(project.root.iterdir()) == []  # nothing written for `-`


def test_stdin_fix_of_undecodable_input_echoes_it_unchanged(project):
    data = b"x = '\xe9'\n"
    result = run_process("check", "--fix", "--stdin-filename", "x.py", "-", cwd=project.root, stdin=data)
    assert result.code == 1
    assert result.raw_out == data
    assert result.err.startswith("x.py:1:1: SL002 cannot decode")  # about the file: no confidence


def test_stdin_with_other_paths_is_a_usage_error(project, synclint):
    result = synclint("check", "-", "a.py")
    assert (result.code, result.err) == (2, "synclint: error: `-` (stdin) cannot be combined with other paths\n")


def test_config_option_points_at_another_file(project, synclint):
    project.write({"a.py": TWO_FINDINGS, "cfg/synclint.toml": 'select = ["SL2"]\n', "cfg/pyproject.toml": '[tool.synclint]\nignore = ["SL2"]\n'})
    only_sl2 = synclint("check", "--output-format", "json", "--config", "cfg/synclint.toml", "a.py")
    assert [d["code"] for d in json.loads(only_sl2.out)] == ["SL201"]
    no_sl2 = synclint("check", "--output-format", "json", "--config", "cfg/pyproject.toml", "a.py")
    assert [d["code"] for d in json.loads(no_sl2.out)] == ["SL101"]
    missing = synclint("check", "--config", "cfg/none.toml", "a.py")
    assert (missing.code, missing.err) == (2, "synclint: configuration error: cfg/none.toml: configuration file not found\n")


def test_output_format_from_the_environment(project, synclint, monkeypatch):
    project.write({"a.py": TWO_FINDINGS})
    monkeypatch.setenv("SYNCLINT_OUTPUT_FORMAT", "concise")
    assert synclint("check", "a.py").out == f"{SL101_LINE}\n{SL201_LINE}\n{SUMMARY}"


def test_no_cache_is_accepted(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    assert synclint("check", "--no-cache", "--output-format", "concise", "a.py").out.count(": SL") == 2


def test_version_rules_and_rule(synclint):
    from synclint import __version__

    assert synclint("--version").out == f"synclint {__version__}\n"
    assert synclint("check", "--version").out == f"synclint {__version__}\n"
    rules = synclint("rules")
    assert rules.code == 0
    lines = rules.out.splitlines()
    assert any(line.startswith("SL101  blocking-tensor-factory") and "fix: sometimes" in line for line in lines)
    assert any(line.startswith("SL201  item-readback") and "fix: never" in line for line in lines)
    listed = json.loads(synclint("rules", "--output-format", "json").out)
    assert {"code": "SL201", "fix": "never"}.items() <= next(r for r in listed if r["code"] == "SL201").items()
    doc = synclint("rule", "SL101")
    assert doc.code == 0
    assert doc.out.startswith("# SL101 blocking-tensor-factory\n\nFix: sometimes. Severity: warning.\n")
    for section in ("## What it does", "## Why it stalls", "## Example", "## Use instead", "## Fix safety"):
        assert section in doc.out
    unknown = synclint("rule", "SL999")
    assert (unknown.code, unknown.err) == (2, "synclint: error: unknown rule `SL999` (see `synclint rules`)\n")


def test_python_dash_m_and_the_console_script(project):
    project.write({"a.py": TWO_FINDINGS})
    module = run_process("check", "--output-format", "concise", "a.py", cwd=project.root)
    assert (module.code, module.out) == (1, f"{SL101_LINE}\n{SL201_LINE}\n{SUMMARY}")
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    script = shutil.which("synclint", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the console script is not installed next to this interpreter")
    proc = subprocess.run([script, "check", "--output-format", "concise", "a.py"], cwd=project.root, capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (1, module.out)


def test_internal_error_is_exit_2_with_one_line(project, synclint, monkeypatch):
    import synclint.runner as runner

    project.write({"a.py": TWO_FINDINGS})

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "lint_paths", explode)
    result = synclint("check", "a.py")
    assert (result.code, result.out) == (2, "")
    assert result.err == "synclint: internal error: RuntimeError: boom (set SYNCLINT_DEBUG=1 for the traceback)\n"


def test_stdin_diff_names_the_stdin_filename(project):
    source = b'import torch\nx = torch.tensor([1, 2], device="cuda")\n'
    result = run_process("check", "--diff", "--stdin-filename", "pkg/m.py", "-", cwd=project.root, stdin=source)
    assert result.code == 1
    assert result.out == (
        "--- a/pkg/m.py\n"
        "+++ b/pkg/m.py\n"
        "@@ -1,2 +1,4 @@\n"
        " import torch\n"
        '-x = torch.tensor([1, 2], device="cuda")\n'
        "+x = torch.tensor(\n"
        "+    [1, 2], pin_memory=torch.cuda.is_available()\n"
        '+).to("cuda", non_blocking=torch.cuda.is_available())\n'
    )
    assert result.err == "Would fix 1 finding in 1 file.\n"


def test_output_file_that_cannot_be_written_is_exit_2(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "-o", "no/such/folder/report.txt", "a.py")
    assert (result.code, result.out) == (2, "")
    assert result.err == "synclint: error: no/such/folder/report.txt: cannot write the report: No such file or directory\n"


def test_a_reader_that_stops_early_is_not_an_internal_error(project):
    import subprocess
    import sys

    lines = "".join(f"    t{i} = torch.zeros(1, device='cuda').item()\n" for i in range(1000))  # > 64 KiB of output: more than a pipe holds
    project.write({"many.py": f"import torch\n\n\ndef step():\n{lines}"})
    proc = subprocess.run(
        f"{sys.executable} -m synclint check --output-format concise many.py | head -c 10",
        shell=True,
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.stdout == "many.py:5:"
    assert proc.stderr == ""


def test_python_s_warnings_about_the_parsed_code_are_not_printed(tmp_path):
    # `"\("` is an invalid escape: Python warns while parsing (SyntaxWarning from 3.12, a
    # DeprecationWarning before, shown here with -W always), with no file name. The run
    # prints only its findings and its own messages.
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text('import re\n\nPATTERN = re.compile("\\(x\\)")\n')
    proc = subprocess.run([sys.executable, "-W", "always", "-m", "synclint", "check", "--no-cache", "a.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "invalid escape sequence" not in proc.stderr + proc.stdout
