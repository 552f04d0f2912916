"""The terminal as a user meets it: colour by NO_COLOR / FORCE_COLOR / TTY, a progress bar on
a terminal's stderr for long runs only, ruff's summary lines, `[*]` only where `--fix` would
apply, the confidence legend, commands that are not paths, and `synclint rules` listing every
code a run can report."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, TWO_FINDINGS
from synclint.terminal import LEGEND, Progress, colour_enabled

ESC = "\x1b["
# SL101 with an unsafe-only fix (`as_tensor` of an array, device not proven) and SL501.
UNSAFE_ONLY = textwrap.dedent(
    """\
    import numpy as np
    import torch


    def forward(arr, device):
        a = np.asarray(arr)
        x = torch.as_tensor(a, device=device)
        torch.cuda.synchronize()
        return x
    """
)


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "SYNCLINT_OUTPUT_FORMAT", "TERM")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def _run(*args, cwd, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synclint", *args], cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=120)


def _run_on_tty(*args, cwd, tty: str = "stdout", **env) -> tuple[int, str, str]:
    """Run with stdout (or stderr) on a pseudo-terminal; returns (code, stdout, stderr)."""
    master, slave = pty.openpty()
    kwargs = {"stdout": slave, "stderr": subprocess.PIPE} if tty == "stdout" else {"stdout": subprocess.PIPE, "stderr": slave}
    proc = subprocess.Popen([sys.executable, "-m", "synclint", *args], cwd=cwd, env=_env(TERM="xterm", **env), **kwargs)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    piped = (proc.stderr if tty == "stdout" else proc.stdout).read().decode()
    code = proc.wait(timeout=120)
    os.close(master)
    on_tty = b"".join(chunks).decode("utf-8", "replace")
    return (code, on_tty, piped) if tty == "stdout" else (code, piped, on_tty)


# --- colour -----------------------------------------------------------------------------------


def test_colour_follows_force_color_no_color_and_the_terminal(tmp_path):
    (tmp_path / "a.py").write_text(TWO_FINDINGS)
    piped = _run("check", "a.py", cwd=tmp_path)
    assert piped.returncode == 1 and ESC not in piped.stdout  # a pipe: plain
    forced = _run("check", "a.py", cwd=tmp_path, FORCE_COLOR="1")
    assert f"{ESC}1;31mSL101{ESC}0m" in forced.stdout and f"{ESC}36m[*]{ESC}0m" in forced.stdout
    assert _strip(forced.stdout) == piped.stdout  # colour changes nothing else
    both = _run("check", "a.py", cwd=tmp_path, FORCE_COLOR="1", NO_COLOR="1")
    assert ESC not in both.stdout  # NO_COLOR wins
    code, out, _ = _run_on_tty("check", "a.py", cwd=tmp_path)
    assert code == 1 and ESC in out  # a terminal: coloured
    code, out, _ = _run_on_tty("check", "a.py", cwd=tmp_path, NO_COLOR="1")
    assert code == 1 and ESC not in out and "SL101 [*]" in out
    # Machine formats are never coloured.
    assert ESC not in _run("check", "--output-format", "json", "a.py", cwd=tmp_path, FORCE_COLOR="1").stdout


def _strip(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_colour_enabled_rules(monkeypatch):
    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    for var in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(var, raising=False)
    assert colour_enabled(Stream(True)) and not colour_enabled(Stream(False))
    monkeypatch.setenv("FORCE_COLOR", "0")
    assert not colour_enabled(Stream(False))
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert colour_enabled(Stream(False))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_enabled(Stream(True))
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not colour_enabled(Stream(True))


# --- progress ----------------------------------------------------------------------------------


class _Tty:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_waits_for_the_delay_then_draws_and_erases():
    now = [0.0]
    stream = _Tty()
    bar = Progress(10, stream=stream, delay=2.0, clock=lambda: now[0])
    now[0] = 1.0
    bar.advance(5)
    assert stream.text == ""  # a short run prints nothing
    now[0] = 2.5
    bar.advance(1)
    assert "\r[" in stream.text and "6/10 files" in stream.text
    bar.close()
    assert stream.text.endswith("\r\x1b[2K")


def test_progress_is_off_when_stderr_is_not_a_terminal():
    class Pipe(_Tty):
        def isatty(self):
            return False

    stream = Pipe()
    bar = Progress(3, stream=stream, delay=0.0)
    bar.advance(3)
    bar.close()
    assert stream.text == ""


def test_progress_bar_on_a_terminal_during_a_real_run(tmp_path):
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text(TWO_FINDINGS)
    # SYNCLINT_PROGRESS_DELAY=0: show it at once (the default waits 2 seconds).
    code, out, err = _run_on_tty("check", "--no-cache", "-j1", "--output-format", "concise", ".", cwd=tmp_path, tty="stderr", SYNCLINT_PROGRESS_DELAY="0")
    assert code == 1
    assert "\r[" in err and "/6 files" in err and err.endswith("\r\x1b[2K")
    assert "\r" not in out  # the report is untouched
    piped = _run("check", "--no-cache", "-j1", ".", cwd=tmp_path, SYNCLINT_PROGRESS_DELAY="0")
    assert "\r" not in piped.stderr  # stderr is a pipe: no bar
    quiet = _run_on_tty("check", "--no-cache", "-q", ".", cwd=tmp_path, tty="stderr", SYNCLINT_PROGRESS_DELAY="0")
    assert "\r[" not in quiet[2]


# --- summary, markers, legend ------------------------------------------------------------------


def test_summary_counts_safe_fixes_and_hidden_unsafe_ones(tmp_path):
    (tmp_path / "u.py").write_text(UNSAFE_ONLY)
    (tmp_path / "a.py").write_text(TWO_FINDINGS)
    result = _run("check", "--output-format", "concise", ".", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[-3:] == [
        LEGEND,
        "Found 4 findings.",
        "[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]
    # `[*]` only on the finding that `--fix` fixes: SL101 in a.py, not the unsafe one in u.py.
    marked = [line.split(" ")[0] for line in lines if " [*] [" in line]
    assert marked == ["a.py:5:11:"]
    only_unsafe = _run("check", "u.py", cwd=tmp_path)
    assert only_unsafe.stdout.splitlines()[-1] == "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    assert " [*]" not in only_unsafe.stdout.replace(LEGEND, "")
    unsafe = _run("check", "--unsafe-fixes", "--output-format", "concise", "u.py", cwd=tmp_path)
    assert "u.py:7:9: SL101 [*] [medium confidence]" in unsafe.stdout
    assert unsafe.stdout.splitlines()[-1] == "[*] 1 fixable with the `--fix` option."
    stats = _run("check", "--statistics", "u.py", cwd=tmp_path)
    assert "\tSL101\t[ ] blocking-tensor-factory" in stats.stdout  # its only fix is unsafe


def test_fixing_reports_what_was_fixed_and_what_is_hidden(tmp_path):
    (tmp_path / "a.py").write_text(TWO_FINDINGS)
    (tmp_path / "u.py").write_text(UNSAFE_ONLY)
    result = _run("check", "--fix", ".", cwd=tmp_path)
    assert result.stdout.splitlines()[-2:] == [
        "Found 4 findings (1 fixed, 3 remaining).",
        "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]


def test_hot_path_said_once(tmp_path):
    (tmp_path / "u.py").write_text(UNSAFE_ONLY)
    out = _run("check", "--output-format", "concise", "u.py", cwd=tmp_path).stdout
    [line] = [l for l in out.splitlines() if "SL501" in l]
    assert line.count("forward()") == 1, line


def test_clean_run_has_no_legend_and_input_problems_no_confidence(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert _run("check", "ok.py", cwd=tmp_path).stdout == "All checks passed!\n"
    (tmp_path / "bad.py").write_text("def f(:\n")
    out = _run("check", "--output-format", "concise", "bad.py", cwd=tmp_path).stdout
    assert out.splitlines()[0].startswith("bad.py:1:7: SL001 SyntaxError")
    assert LEGEND not in out


def test_warns_when_no_python_file_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("torch.tensor(x, device='cuda')\n")
    result = _run("check", "docs", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr == "synclint: warning: no Python files or notebooks found under docs\n"
    assert result.stdout == "All checks passed!\n"


# --- commands ------------------------------------------------------------------------------------


def test_help_version_and_unknown_words(tmp_path):
    help_ = _run("help", cwd=tmp_path)
    assert help_.returncode == 0 and help_.stdout.startswith("usage: synclint") and "SL002" not in help_.stdout
    version = _run("version", cwd=tmp_path)
    from synclint import __version__

    assert (version.returncode, version.stdout) == (0, f"synclint {__version__}\n")
    unknown = _run("chek", "src", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.startswith("synclint: error: unknown command or path `chek`")
    assert "synclint check chek" in unknown.stderr  # the hint
    # An existing folder with such a name is a path, as before.
    (tmp_path / "chek").mkdir()
    (tmp_path / "chek" / "a.py").write_text(TWO_FINDINGS)
    assert _run("chek", cwd=tmp_path).returncode == 1
    # Something shaped like a file is a path too: a missing one is an SL002 finding.
    missing = _run("--output-format", "concise", "gone.py", cwd=tmp_path)
    assert missing.returncode == 1 and "gone.py:1:1: SL002" in missing.stdout


def test_check_help_has_groups_exit_codes_and_examples(tmp_path):
    for args in (("check", "--help"), ("help", "check")):
        result = _run(*args, cwd=tmp_path)
        assert result.returncode == 0
        for heading in ("fixes:", "rule selection:", "output:", "files and configuration:", "performance:", "exit codes:", "examples:"):
            assert f"\n{heading}\n" in result.stdout, heading
        assert "  2  a usage, configuration or internal error" in result.stdout
        assert "synclint check --fix src/" in result.stdout
    assert _run("help", "nope", cwd=tmp_path).returncode == 2


def test_rules_lists_every_code_a_run_reports(tmp_path):
    listed = json.loads(_run("rules", "--output-format", "json", cwd=tmp_path).stdout)
    codes = [r["code"] for r in listed]
    assert codes[:2] == ["SL001", "SL002"]
    text = _run("rules", cwd=tmp_path).stdout
    assert text.startswith("SL001  syntax-error")
    # Every code that any fixture, a broken file or a missing path produces is listed.
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")
    import shutil

    shutil.copytree(REPO / "fixtures", tmp_path / "fx")
    run = _run("check", "--output-format", "json", "--select", "ALL", "--min-confidence", "low", "--no-cache",
               "fx", "bad.py", "latin.py", "missing.py", cwd=tmp_path)
    emitted = {f["code"] for f in json.loads(run.stdout)}
    assert {"SL001", "SL002"} <= emitted and len(emitted) > 10
    assert emitted <= set(codes)
    for code in ("SL001", "SL002"):
        doc = _run("rule", code, cwd=tmp_path)
        assert doc.returncode == 0 and doc.stdout.startswith(f"# {code} ")


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "gitlab"])
def test_machine_formats_have_no_summary_or_legend(tmp_path, fmt):
    (tmp_path / "a.py").write_text(TWO_FINDINGS)
    out = _run("check", "--output-format", fmt, "a.py", cwd=tmp_path).stdout
    assert LEGEND not in out and "Found" not in out
