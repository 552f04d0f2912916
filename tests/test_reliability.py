"""The fixer's promises on hostile inputs: one notion of "line", no crash on deep nesting,
no lost edit, no silent loss of a finding, permissions and links kept, bytes kept on stdin,
diffs that apply. Each case is built from a reproducer of a defect once found."""

from __future__ import annotations

import ast
import os
import shutil
import stat
import subprocess
import time

import libcst as cst
import pytest

from conftest import TWO_FINDINGS, TWO_FINDINGS_FIXED, run_process
from synclint import lines
from synclint.config import H2D_HELPER_PRESETS, Settings
from synclint.engine import lint_source
from synclint.fix.apply import _overlaps, _Spans, apply_edits, fix_source
from synclint.fix.write import WriteRefused, write_fixed
from synclint.violation import Edit, Location

FINDING = 'def forward(self, toks):\n    return torch.tensor(toks, dtype=torch.long, device="cuda")\n'
FIXED = 'def forward(self, toks):\n    return async_tensor_h2d(toks, dtype=torch.long, device="cuda")\n'
IMPORT = "from synclint.runtime import async_tensor_h2d\n"
# The tests below fix with synclint's helper (an import added, a name that may clash).
SETTINGS = Settings(h2d_helper=H2D_HELPER_PRESETS["synclint"])
HELPER = ("--h2d-helper", "synclint")

# Every line terminator Python's tokenizer (and libcst) accepts, and characters that
# str.splitlines also splits at but Python does not.
TERMINATORS = ["\n", "\r\n", "\r"]
NOT_TERMINATORS = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _fix(text: str) -> str:
    result = fix_source(text, "x.py", SETTINGS)
    assert result.error is None
    return result.fixed


# --- one notion of "line" ------------------------------------------------------------------


@pytest.mark.parametrize("char", TERMINATORS + NOT_TERMINATORS, ids=repr)
def test_split_lines_counts_rows_as_python_does(char):
    text = f"a = 1\n# x{char}y\nb = 2\n"
    rows = lines.split_lines(text)
    tree = ast.parse(text)
    assert rows[tree.body[-1].lineno - 1] == "b = 2"
    assert len(rows) == tree.body[-1].lineno


# (character, where it stands): in a comment or a string any of them; on a line of its own
# only what Python reads as whitespace there (the terminators and the form feed).
PLACES = [(c, w) for c in TERMINATORS + NOT_TERMINATORS for w in ("comment", "string")] + [
    (c, "blank") for c in TERMINATORS + ["\f"]
]


@pytest.mark.parametrize("char,where", PLACES, ids=repr)
def test_fix_lands_where_the_finding_is_after_any_line_break_character(char, where):
    """A lone CR (libcst's line break), or a form feed, U+2028, U+0085 (not line breaks for
    Python) above a finding and above a suppressed line: the fix rewrites exactly the
    finding, the suppressed line is kept, and a second run changes nothing."""
    above = {"comment": f"# one{char}two\n", "string": f's = "a{char}b"\n', "blank": f"{char}\n"}[where]
    if where == "string" and char in TERMINATORS:
        above = f's = """a{char}b"""\n'
    suppressed = 'def other(toks):\n    return torch.tensor(toks, device="cuda")  # noqa: SL101\n'
    text = "import torch\n" + above + suppressed + FINDING
    compile(text, "x.py", "exec")  # valid Python
    result = lint_source(text, "x.py")
    codes = [(v.code, v.location.row) for v in result.violations]
    finding_row = len(lines.split_lines(text))  # the `return` of FINDING is the last line
    assert codes == [("SL101", finding_row)]
    fixed = _fix(text)
    assert fixed == "import torch\n" + IMPORT + above + suppressed + FIXED
    assert _fix(fixed) == fixed


@pytest.mark.parametrize("newline", TERMINATORS, ids=repr)
def test_a_file_written_with_each_terminator_is_fixed_in_its_own(newline):
    text = ("import torch\n" + FINDING).replace("\n", newline)
    fixed = _fix(text)
    assert fixed == ("import torch\n" + IMPORT + FIXED).replace("\n", newline)


def test_r01b_lone_cr_before_a_finding_does_not_corrupt_the_file():
    text = 'import torch\nx = [1,\r     2]\ndef forward(self, toks):\n    y = torch.tensor(toks, device="cuda")\n    return y\n'
    fixed = _fix(text)
    # (`import torch` goes with its last use)
    assert fixed == IMPORT + 'x = [1,\r     2]\ndef forward(self, toks):\n    y = async_tensor_h2d(toks, device="cuda")\n    return y\n'
    assert _fix(fixed) == fixed


def test_r01_lone_cr_in_a_comment_does_not_append_garbage():
    text = "import torch\n# one\r# two\n" + FINDING
    assert _fix(text) == "import torch\n" + IMPORT + "# one\r# two\n" + FIXED


@pytest.mark.parametrize("char", ["\f", "\u2028", "\x85"], ids=repr)
def test_r02_suppression_holds_below_a_form_feed_or_unicode_separator(char, project, synclint):
    blank = f"{char}\n" if char == "\f" else ""  # a form feed may stand alone on a line
    text = f'import torch\ns = "a{char}b"\n# c{char}d\n{blank}def forward(self, toks):\n    return torch.tensor(toks, device="cuda")  # noqa: SL101\n'
    project.write({"x.py": text})
    assert synclint("check", "--no-cache", "--diff", "x.py").out == ""
    result = synclint("check", "--no-cache", "--fix", "x.py")
    assert result.code == 0
    assert (project.root / "x.py").read_bytes().decode("utf-8") == text


def test_line_index_offsets_follow_python_rows():
    text = "a\rb\r\nc\nd"
    index = lines.LineIndex(text)
    assert [index.line(r) for r in range(1, 6)] == ["a", "b", "c", "d", None]
    assert index.offset(4, 1) == text.index("d")
    assert index.offset(9, 1) == len(text)


def test_full_report_snippet_shows_the_finding_line_after_a_form_feed(project, synclint):
    project.write({"x.py": "import torch\n# \f page\n" + FINDING})
    out = synclint("check", "--no-cache", "x.py").out
    assert '4 |     return torch.tensor(toks, dtype=torch.long, device="cuda")' in out


# --- edits: linear, and correct ------------------------------------------------------------


def test_apply_edits_same_place_order_kept():
    text = "x = 1\n"
    edits = [Edit("A\n", Location(1, 1), Location(1, 1)), Edit("B\n", Location(1, 1), Location(1, 1))]
    assert apply_edits(text, edits) == "B\nA\nx = 1\n"


def test_span_index_answers_like_the_pairwise_test():
    import random

    rng = random.Random(7)
    for _ in range(300):
        spans = _Spans()
        taken = []
        for _ in range(20):
            a = (rng.randint(1, 4), rng.randint(1, 6))
            b = a if rng.random() < 0.3 else (a[0] + rng.randint(0, 1), rng.randint(1, 6))
            span = (min(a, b), max(a, b))
            expected = any(_overlaps(span, other) for other in taken)
            assert spans.overlaps(span) == expected, (span, taken)
            if not expected:
                spans.add(span)
                taken.append(span)


def test_many_fixable_findings_in_one_file_fix_in_linear_time():
    """r16: fixes per file used to cost quadratic time and memory (the import table was
    collected once per fix, edits applied by re-slicing the text once per edit)."""
    def source(n):
        body = "".join(f"def f{i}(toks):\n    return torch.tensor(toks, device='cuda')\n\n" for i in range(n))
        return "import torch\n" + body

    timings = []
    for n in (200, 800):
        text = source(n)
        start = time.perf_counter()
        result = fix_source(text, "x.py", SETTINGS)
        timings.append(time.perf_counter() - start)
        assert result.applied == n and result.fixed.count("async_tensor_h2d(") == n
    assert timings[1] < timings[0] * 4 * 2.5  # 4x the findings: about 4x the time, not 16x


# --- deep nesting --------------------------------------------------------------------------


def test_r11_long_elif_chain_is_linted_not_an_internal_error(project, synclint):
    chain = "".join(f"    elif y == {i}: pass\n" for i in range(500))
    project.write({
        "deep.py": 'import torch\ndef forward(self, toks):\n    y = torch.tensor(toks, device="cuda")\n    if y: pass\n' + chain,
        "normal.py": "import torch\n" + FINDING,
    })
    result = synclint("check", "--no-cache", "--output-format", "concise", "deep.py", "normal.py")
    assert result.code == 1, result.err
    assert "internal error" not in result.err
    assert "normal.py:3:12: SL101" in result.out
    assert "deep.py:3:9: SL101" in result.out
    fixed = fix_source((project.root / "deep.py").read_text(), "deep.py", Settings())
    assert fixed.applied == 1 and fixed.error is None


def test_too_deep_even_for_the_deep_stack_is_an_sl002_finding(monkeypatch):
    import synclint.limits as limits

    monkeypatch.setattr(limits, "DEEP_RECURSION_LIMIT", 400)
    chain = "".join(f"    elif y == {i}: pass\n" for i in range(800))
    text = 'import torch\ndef forward(self, toks):\n    y = torch.tensor(toks, device="cuda")\n    if y: pass\n' + chain
    result = lint_source(text, "deep.py")
    assert [v.code for v in result.violations] == ["SL002"]
    assert "nesting deeper" in result.violations[0].message


# --- per-file limits -----------------------------------------------------------------------


def test_a_file_over_the_time_limit_is_an_sl002_finding_and_the_run_goes_on(project, synclint, monkeypatch):
    import synclint.engine as engine
    import synclint.limits as limits

    monkeypatch.setattr(limits, "FILE_TIME_LIMIT_S", 0.5)
    real = engine.lint_source

    def slow(source, filename, settings=None):
        if str(filename).endswith("slow.py"):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                pass
        return real(source, filename, settings)

    monkeypatch.setattr(engine, "lint_source", slow)
    project.write({"slow.py": "import torch\n" + FINDING, "ok.py": "import torch\n" + FINDING})
    start = time.monotonic()
    result = synclint("check", "--no-cache", "-j1", "--output-format", "concise", "slow.py", "ok.py")
    assert time.monotonic() - start < 20
    assert "slow.py:1:1: SL002" in result.out and "per-file time limit" in result.out
    assert "ok.py:3:12: SL101" in result.out
    assert result.code == 1


# --- writing -------------------------------------------------------------------------------


def test_r13_a_file_changed_during_the_run_is_not_overwritten(project, synclint, monkeypatch):
    import synclint.fix.write as write

    project.write({"a.py": TWO_FINDINGS})
    real = write.write_fixed

    def edit_then_write(path, data, expected=None):
        with open(path, "a") as handle:
            handle.write("# user edit made during the run\n")
        return real(path, data, expected)

    monkeypatch.setattr(write, "write_fixed", edit_then_write)
    result = synclint("check", "--no-cache", "--fix", "--output-format", "json", "a.py")
    assert result.code == 2
    assert "a.py: cannot write the fixed file: the file changed on disk since it was read" in result.err
    assert (project.root / "a.py").read_text() == TWO_FINDINGS + "# user edit made during the run\n"
    assert sorted(v["code"] for v in __import__("json").loads(result.out)) == ["SL101", "SL201"]


def test_r04_failed_write_keeps_the_findings_in_every_report(project, synclint, monkeypatch):
    real_replace = os.replace

    def replace(src, dst):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", replace)
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "--no-cache", "--fix", "--output-format", "json", "a.py")
    assert result.code == 2
    assert sorted(v["code"] for v in __import__("json").loads(result.out)) == ["SL101", "SL201"]
    result = synclint("check", "--no-cache", "--fix", "a.py")
    assert "Found 2 findings." in result.out and " fixed, " not in result.out
    monkeypatch.setattr(os, "replace", real_replace)
    assert (project.root / "a.py").read_text() == TWO_FINDINGS


def test_r05_read_only_file_is_refused(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    path = project.root / "a.py"
    os.chmod(path, 0o444)
    inode = path.stat().st_ino
    result = synclint("check", "--no-cache", "--fix", "a.py")
    assert "a.py: cannot write the fixed file: the file is read-only" in result.err
    assert path.read_text() == TWO_FINDINGS and path.stat().st_ino == inode
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_r06_hard_links_and_inode_are_kept(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    os.link(project.root / "a.py", project.root / "hard.py")
    inode = (project.root / "a.py").stat().st_ino
    synclint("check", "--no-cache", "--fix", "a.py")
    assert (project.root / "a.py").read_text() == TWO_FINDINGS_FIXED
    assert (project.root / "hard.py").read_text() == TWO_FINDINGS_FIXED
    assert (project.root / "a.py").stat().st_ino == inode


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to own a file as another user")
def test_r06_owner_kept_when_root_fixes_another_users_file(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    path = project.root / "a.py"
    os.chown(path, 65534, 65534)
    os.chmod(path, 0o640)
    synclint("check", "--no-cache", "--fix", "a.py")
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 65534, 0o640)
    assert path.read_text() == TWO_FINDINGS_FIXED


def test_write_fixed_refuses_changed_content(tmp_path):
    path = tmp_path / "x.py"
    path.write_bytes(b"new content\n")
    with pytest.raises(WriteRefused, match="changed on disk"):
        write_fixed(path, b"fixed\n", expected=b"old content\n")
    assert path.read_bytes() == b"new content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.py"]


def test_r03_unreadable_path_is_an_sl002_finding(project, synclint, monkeypatch):
    import synclint.discover as discover

    project.write({"noperm/inside.py": "x = 1\n"})
    real_lstat = os.lstat

    def lstat(path, *args, **kwargs):
        if "noperm" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(discover.os, "lstat", lstat)
    result = synclint("check", "--no-cache", "--output-format", "concise", "noperm/inside.py")
    assert result.code == 1, result.err
    assert "noperm/inside.py:1:1: SL002" in result.out and "cannot read: Permission denied" in result.out


@pytest.mark.skipif(shutil.which("setpriv") is None or not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root and setpriv")
def test_r03_unreadable_folder_as_another_user(tmp_path):
    (tmp_path / "noperm").mkdir()
    (tmp_path / "noperm" / "inside.py").write_text("x = 1\n")
    os.chmod(tmp_path / "noperm", 0)
    os.chmod(tmp_path, 0o755)
    import sys

    env = {**os.environ, "PYTHONPATH": str(__import__("conftest").REPO)}
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*drop, sys.executable, "-c", "import libcst, synclint.cli"], cwd=tmp_path,
                           capture_output=True, text=True, env=env, timeout=120)
    if probe.returncode != 0:  # a virtualenv or checkout that only root may read
        pytest.skip(f"the unprivileged user cannot import synclint here: {probe.stderr.strip()[-200:]}")
    for arg in ("noperm", "noperm/inside.py"):
        proc = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "synclint", "check", "--no-cache", arg],
            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120,
        )
        assert proc.returncode == 1, proc.stderr
        assert "SL002" in proc.stdout and "internal error" not in proc.stderr


# --- stdin -----------------------------------------------------------------------------------


def test_r07_stdin_latin1_with_nothing_to_fix_comes_back_unchanged(tmp_path):
    data = b'# -*- coding: latin-1 -*-\ns = "caf\xe9"\n'
    result = run_process("check", "--fix", *HELPER, "-", "--stdin-filename", "x.py", cwd=tmp_path, stdin=data)
    assert result.raw_out == data


def test_r07_stdin_latin1_fixed_comes_back_in_latin1(tmp_path):
    data = b'# -*- coding: latin-1 -*-\nimport torch\ns = "caf\xe9"\n' + FINDING.encode()
    result = run_process("check", "--fix", *HELPER, "-", "--stdin-filename", "x.py", cwd=tmp_path, stdin=data)
    assert result.raw_out == b'# -*- coding: latin-1 -*-\nimport torch\n' + IMPORT.encode() + b's = "caf\xe9"\n' + FIXED.encode()


def test_r08_stdin_bom_kept(tmp_path):
    data = b"\xef\xbb\xbfimport torch\n" + FINDING.encode()
    result = run_process("check", "--fix", *HELPER, "-", "--stdin-filename", "x.py", cwd=tmp_path, stdin=data)
    assert result.raw_out == b"\xef\xbb\xbfimport torch\n" + IMPORT.encode() + FIXED.encode()


# --- diff ------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("ending", ["", "\r\n", "\r"], ids=repr)
def test_r10_diff_without_final_newline_applies_with_git_apply(project, synclint, ending):
    first = "import torch\n" + FINDING.rstrip("\n") + ending
    second = "import torch\n# a\rb\n" + FINDING
    project.write({"a.py": first.encode(), "b.py": second.encode()})
    diff = synclint("check", "--no-cache", "--diff", *HELPER, "a.py", "b.py").out
    if not ending:
        assert lines.NO_NEWLINE_MARKER in diff
    fixed_a, fixed_b = _fix(first), _fix(second)
    subprocess.run(["git", "init", "-q", "."], check=True)
    proc = subprocess.run(["git", "apply", "-"], input=diff.encode(), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert (project.root / "a.py").read_bytes() == fixed_a.encode()
    assert (project.root / "b.py").read_bytes() == fixed_b.encode()


# A fix in one file that changes what the repository index says about another: fixing
# `forward` adds a call of `.pin_memory()`, so `Batch.pin_memory` (called before only from a
# loading function, so cold) becomes reachable from a hot root, and its finding is reported.
_INDEX_CHANGING_TREE = {
    # The fix of `batch.new_tensor([0])` writes `batch.new_zeros(1)`: a call by name (the class
    # of `batch` is not said, its name says `Batch`) that reaches `Batch.new_zeros`, which only
    # weight loading called before.
    "pyproject.toml": "",
    "runner.py": (
        "import torch\n\n\nclass Runner:\n    def forward(self, batch):\n"
        "        return batch.new_tensor([0])\n\n\n"
        "def load_weights(batch):\n    return batch.new_zeros(1)\n"
    ),
    "batch.py": (
        "import torch\n\n\nclass Batch:\n    def new_zeros(self, n):\n"
        '        self.ids = torch.tensor(self.values, device="cuda")\n        return self\n'
    ),
}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_diff_applied_is_what_fix_writes_when_a_fix_changes_the_index_of_another_file(tmp_path):
    """`--fix` and `--diff` both lint every file against the repository index of the tree as
    it was when the run started; a fix written during the run does not change what another
    file's lint reads. (A `--diff` run over a copy of only the files `--fix` changed reads an
    index of those files alone: that, not the fixer, made the two differ on vLLM and SGLang.)"""
    fixed_tree, patched_tree = tmp_path / "fixed", tmp_path / "patched"
    for tree in (fixed_tree, patched_tree):
        tree.mkdir()
        for name, text in _INDEX_CHANGING_TREE.items():
            (tree / name).write_text(text)
    args = ("check", "--no-cache", "--unsafe-fixes", "--exit-zero")
    diff = run_process(*args, "--diff", ".", cwd=patched_tree)
    run_process(*args, "--fix", ".", cwd=fixed_tree)
    subprocess.run(["git", "init", "-q", "."], cwd=patched_tree, check=True)
    proc = subprocess.run(["git", "apply", "-"], cwd=patched_tree, input=diff.raw_out, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    for name in _INDEX_CHANGING_TREE:
        assert (patched_tree / name).read_text() == (fixed_tree / name).read_text(), name
    assert (fixed_tree / "runner.py").read_text() != _INDEX_CHANGING_TREE["runner.py"]
    assert (fixed_tree / "batch.py").read_text() == _INDEX_CHANGING_TREE["batch.py"]
    # The fixture does what it says: the index of the fixed tree makes batch.py's finding show.
    again = run_process(*args, "--output-format", "concise", ".", cwd=fixed_tree)
    assert "batch.py:6" in again.out and "runner.py" not in again.out


# --- small ones ------------------------------------------------------------------------------


def test_r12_skip_file_inside_a_string_does_not_skip(project, synclint):
    text = 'import torch\nDOC = """\n# synclint: skip-file\n"""\n' + FINDING
    assert [v.code for v in lint_source(text, "x.py").violations] == ["SL101"]
    assert lint_source("# synclint: skip-file\nimport torch\n" + FINDING, "x.py").violations == []


def test_r17_backslash_crlf_at_end_of_file_is_not_a_syntax_error():
    text = "import torch\n" + FINDING + "\\\r\n"
    compile(text, "x.py", "exec")
    assert [v.code for v in lint_source(text, "x.py").violations] == ["SL101"]
    fixed = fix_source(text, "x.py", SETTINGS)
    assert fixed.error is None and fixed.fixed == "import torch\n" + IMPORT + FIXED + "\\\r\n"


def test_r09_no_second_binding_of_a_name_the_module_has(project):
    text = (
        "import torch\nfrom vllm.utils.torch_utils import async_tensor_h2d\n\n\n"
        "def prep(x, dev):\n    return async_tensor_h2d(x, dev)\n\n\n" + FINDING
    )
    result = fix_source(text, "x.py", SETTINGS)
    # the module's own helper is called (with its own signature), never shadowed by ours
    assert "from synclint.runtime" not in result.fixed
    assert result.fixed.count("import async_tensor_h2d") == 1
    compile(result.fixed, "x.py", "exec")
    for binding in ("def async_tensor_h2d(x):\n    return x\n", "async_tensor_h2d = None\n"):
        assert fix_source("import torch\n" + binding + FINDING, "x.py", SETTINGS).applied == 0


# --- "safe" fixes keep values, dtype and aliasing -----------------------------------------


def _applicability(text: str, code: str, **settings) -> str | None:
    found = [v for v in lint_source(text, "x.py", Settings(**settings)).violations if v.code == code]
    assert len(found) == 1, found
    return found[0].fix.applicability.value if found[0].fix else None


def test_r14_arange_fix_of_a_possibly_empty_range_is_unsafe():
    """torch.tensor(range(0)) is float32 (an empty list), torch.arange(0) int64."""
    head = "import torch\n\n\ndef f(self, n, device):\n    return "
    assert _applicability(head + "torch.tensor(range(n), device=device)\n", "SL101") == "unsafe"
    assert _applicability(head + "torch.tensor(range(0, 4), device=device)\n", "SL101") == "safe"
    assert _applicability(head + "torch.tensor(range(4, 4), device=device)\n", "SL101") == "unsafe"
    assert _applicability(head + "torch.tensor(range(n), dtype=torch.long, device=device)\n", "SL101") == "safe"


def test_r14_the_reasons_for_the_claims_hold_in_torch():
    torch = pytest.importorskip("torch")
    assert torch.tensor(range(0)).dtype == torch.float32 and torch.arange(0).dtype == torch.int64
    assert torch.equal(torch.tensor(range(0, 4)), torch.arange(0, 4))
    assert torch.tensor(range(0), dtype=torch.long).dtype == torch.arange(0, dtype=torch.long).dtype


def test_r15_negative_zero_is_not_filled_with_zeros():
    head = "import torch\n\n\ndef forward(self, x):\n    y = x.cuda()\n    return "
    low = dict(min_confidence=__import__("synclint.violation", fromlist=["Confidence"]).Confidence.LOW)
    assert _applicability(head + "y.new_tensor([-0.0, -0.0])\n", "SL105", **low) is None
    assert _applicability(head + "y.new_tensor([0.0, -0.0])\n", "SL105", **low) is None
    assert _applicability(head + "y.new_tensor([0.0, 0.0])\n", "SL105", **low) == "safe"
    torch = pytest.importorskip("torch")
    x = torch.zeros(1)
    assert torch.signbit(x.new_tensor([-0.0])).all() and not torch.signbit(x.new_zeros(1)).any()


def test_from_numpy_to_a_device_that_may_be_the_cpu_is_unsafe():
    """`torch.from_numpy(a).to(d)` shares `a`'s memory when d is the CPU; the helper copies."""
    text = "import numpy as np\nimport torch\n\n\ndef forward(self, a: np.ndarray, device):\n    return torch.from_numpy(a).to(device)\n"
    assert _applicability(text, "SL103") == "unsafe"
    cuda = text.replace(".to(device)", ".cuda()")
    assert _applicability(cuda, "SL103") == "safe"
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    a = np.zeros(2, dtype=np.float32)
    moved = torch.from_numpy(a).to("cpu")
    a[0] = 5
    assert moved[0].item() == 5  # aliasing on the CPU: what the helper's copy would not show


# --- minor items ---------------------------------------------------------------------------


def test_a_fix_that_took_the_last_use_of_torch_removes_its_import():
    text = "import os\nimport torch\n\ndef f(toks):\n    return torch.tensor(toks, device='cuda')\n"
    result = fix_source(text, "x.py", SETTINGS)
    assert result.fixed == "import os\n" + IMPORT + "\ndef f(toks):\n    return async_tensor_h2d(toks, device='cuda')\n"
    assert fix_source(result.fixed, "x.py", SETTINGS).fixed == result.fixed
    alias = fix_source(text.replace("import torch", "import torch as th").replace("torch.tensor", "th.tensor"), "x.py", SETTINGS)
    assert "import torch" not in alias.fixed and "th" not in alias.fixed.replace("async_tensor_h2d", "").split()
    named = fix_source(text.replace("import torch", "from torch import tensor").replace("torch.tensor", "tensor"), "x.py", SETTINGS)
    assert "from torch" not in named.fixed


@pytest.mark.parametrize(
    "change",
    [
        ("def f(toks):", "def f(toks) -> 'torch.Tensor':"),  # a string annotation
        ("def f(toks):", "# torch is loaded here for its CUDA init\ndef f(toks):"),  # a comment
        ("import os\n", "import os\n__all__ = ['torch', 'f']\n"),  # exported
        ("import torch\n", "import torch  # noqa: F401\n"),  # a comment on the import
        ("import torch\n", "import os, torch\n"),  # one of several names
        ("import torch\n", "try:\n    import torch\nexcept ImportError:\n    pass\n"),  # not at the top level
        ("\ndef f(toks):", "\ny = torch.float16\n\ndef f(toks):"),  # another use
    ],
    ids=["string-annotation", "comment", "__all__", "noqa", "several-names", "in-try", "other-use"],
)
def test_an_import_something_else_may_use_is_kept(change):
    text = "import os\nimport torch\n\ndef f(toks):\n    return torch.tensor(toks, device='cuda')\n".replace(*change)
    result = fix_source(text, "x.py", SETTINGS)
    assert result.applied == 1
    assert [line for line in text.splitlines() if "torch" in line and "tensor(" not in line] == [
        line for line in result.fixed.splitlines() if "torch" in line and "h2d" not in line
    ]


def test_an_import_unused_before_the_fix_or_in_a_package_init_is_kept():
    unused = "import torch\nimport numpy\n\ndef f(toks):\n    return torch.tensor(toks, device='cuda')\n"
    assert "import numpy\n" in fix_source(unused, "x.py", SETTINGS).fixed  # not the fix's doing
    text = "import torch\n\ndef f(toks):\n    return torch.tensor(toks, device='cuda')\n"
    assert fix_source(text, "pkg/__init__.py", SETTINGS).fixed.startswith("import torch\n")  # may be re-exported


def test_crafted_cache_entry_with_a_valid_checksum_is_a_miss(tmp_path):
    from synclint import cache

    path = tmp_path / "a.py"
    path.write_text(TWO_FINDINGS)
    st = os.stat(path)
    index = cache.ResultCache(Settings(cache_dir=str(tmp_path / "cache")))
    for bad in ((("SL101",),), ("not a tuple",), ((None,) * 13,)):
        index.entries[index.key(str(path))] = cache.Entry(st.st_size, st.st_mtime_ns, b"x", "utf-8", bad)
        assert index.lookup(str(path), st) is None
    index.entries[index.key(str(path))] = cache.Entry("big", None, b"x", 3, ())
    assert index.lookup(str(path), st) is None


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.parametrize("files", [24, 80], ids=["lint-workers", "index-workers"])
def test_workers_end_when_the_run_is_killed(tmp_path, files):
    """The workers that lint (over a size) and those that read the repository index (over 64
    files, first) end with a run killed with SIGKILL; the index's were left waiting."""
    import signal
    import sys

    body = "".join(f"def f{i}(toks):\n    return torch.tensor(toks, device='cuda')\n\n" for i in range(300))
    (tmp_path / "pyproject.toml").write_text("")
    for i in range(files):  # over the size where the run uses worker processes
        (tmp_path / f"m{i}.py").write_text("import torch\n" + body)
    env = {**os.environ, "PYTHONPATH": str(__import__("conftest").REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "synclint", "check", "--no-cache", "-j2", "."], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(children) < 2 and proc.poll() is None:
        for task in os.listdir(f"/proc/{proc.pid}/task"):
            try:
                with open(f"/proc/{proc.pid}/task/{task}/children") as handle:
                    children.update(int(c) for c in handle.read().split())
            except OSError:
                pass
        time.sleep(0.05)
    if proc.poll() is not None or len(children) < 2:
        pytest.skip("the run ended before its workers could be seen")
    time.sleep(0.5)  # the workers have run their initializer
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 20
    alive = set(children)
    while alive and time.monotonic() < deadline:
        alive = {pid for pid in alive if os.path.exists(f"/proc/{pid}") and "Z" not in open(f"/proc/{pid}/stat").read().split()[2]}
        time.sleep(0.1)
    assert not alive


@pytest.mark.parametrize("seed", range(20))
def test_split_lines_without_a_carriage_return_matches_the_physical_lines(seed):
    # The fast path (no `\r` in the text) gives what the physical-line reading gives.
    import random

    rng = random.Random(seed)
    alphabet = ["a", " ", "\n", "\n", "\r", "\r\n"] + NOT_TERMINATORS
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        expected = [lines._strip_end(line) for line in lines._PHYSICAL_LINE.findall(text)]
        assert lines.split_lines(text) == expected, repr(text)
        assert [lines._strip_end(line) for line in lines.split_lines(text, keepends=True)] == expected
