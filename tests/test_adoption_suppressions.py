"""Gradual adoption, as a user meets it on the command line: prefix codes in `# noqa`,
reasons kept and listed, `# gpu-sync-ok`, the unused-suppression rule SL003 and its fix,
and `--add-noqa` (idempotent, merging with an existing comment)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO, run_process

HEADER = "import torch\n\n\ndef step(tokens, total):\n"
SL101 = 'torch.tensor(tokens, device="cuda")'
SL201 = 'torch.zeros(2, device="cuda").sum().item()'


def _codes(result) -> list[str]:
    return [f"{d['location']['row']}:{d['code']}" for d in json.loads(result.out)]


def _check(project, synclint, body: str, *options: str) -> list[str]:
    project.write({"s.py": HEADER + body})
    return _codes(synclint("check", "--no-cache", "--output-format", "json", *options, "s.py"))


@pytest.mark.parametrize(
    "comment, remaining",
    [
        ("  # noqa: SL2", ["5:SL101"]),  # a prefix: the whole SL2 family
        ("  # noqa: SL1", ["5:SL201"]),
        ("  # noqa: SL", []),  # no digit: not a code, so a blanket noqa
        ("  # synclint: ignore[SL2]", ["5:SL101"]),
        ("  # synclint: ignore[SL1, SL2]  warm-up only", []),
        ("  # noqa: SL101, SL2 -- warm-up only", []),
        ("  # gpu-sync-ok: the count sizes the output", []),
        ("  # gpu-sync-ok", []),
        ("  # noqa: SL20", ["5:SL101"]),
        ("  # noqa: SL3", ["5:SL101", "5:SL201", "5:SL003"]),  # SL3 rules enabled, none found here
    ],
)
def test_prefixes_reasons_and_gpu_sync_ok(project, synclint, comment, remaining):
    assert sorted(_check(project, synclint, f"    return {SL101}, {SL201}{comment}\n")) == sorted(remaining)


def test_reasons_are_listed_with_the_suppressed_findings(project, synclint):
    body = (
        f"    a = {SL101}  # synclint: ignore[SL101]  inputs are tiny, measured 3 us\n"
        f"    b = {SL201}  # gpu-sync-ok: the scheduler needs the count\n"
        f"    return a, b  # noqa: SL201\n"
    )
    project.write({"s.py": HEADER + body})
    result = synclint("check", "--show-suppressions", "s.py")
    assert result.code == 0
    assert result.out.splitlines() == [
        "s.py:5:9: SL101 suppressed by `# synclint: ignore[SL101]` on line 5: inputs are tiny, measured 3 us",
        "s.py:6:9: SL201 suppressed by `# gpu-sync-ok` on line 6: the scheduler needs the count",
        "2 suppressed findings.",
    ]


def test_unused_suppressions_are_reported_with_the_codes_that_are_dead(project, synclint):
    body = (
        f"    a = {SL101}  # noqa: SL101, SL201\n"  # SL201 unused on this line
        "    b = 1  # synclint: ignore[SL101]  legacy\n"  # nothing to suppress
        "    c = 2  # noqa: E501, SL999\n"  # another linter's code is left alone; SL999 is unknown
        "    d = 3  # noqa\n"  # a blanket noqa may serve other linters: never reported
        "    e = 4  # synclint: ignore\n"  # ours: reported
        "    # Write `# synclint: ignore[CODE]` to silence one rule.\n"  # prose: CODE is no code
        "    return a, b, c, d, e  # gpu-sync-ok: not ours to judge\n"
    )
    project.write({"s.py": HEADER + body})
    result = synclint("check", "--no-cache", "--output-format", "json", "s.py")
    found = [(d["location"]["row"], d["code"], d["message"]) for d in json.loads(result.out)]
    assert found == [
        (5, "SL003", "Unused suppression `# noqa: SL101, SL201` (unused: SL201)"),
        (6, "SL003", "Unused suppression `# synclint: ignore[SL101]` (unused: SL101)"),
        (7, "SL003", "Unused suppression `# noqa: E501, SL999` (unknown: SL999)"),
        (9, "SL003", "Unused suppression `# synclint: ignore`"),
    ]
    assert all(d["fix"]["applicability"] == "safe" for d in json.loads(result.out))


def test_a_suppression_of_a_rule_that_is_not_selected_is_not_unused(project, synclint):
    body = f"    a = {SL101}  # noqa: SL101\n    return a, {SL201}  # noqa: SL201\n"
    # SL201 is not selected: its comment is not dead, another configuration enables the rule.
    assert _check(project, synclint, body, "--select", "SL1,SL003") == []
    # Ignored for the file by per-file-ignores: the same.
    project.write({"pyproject.toml": '[tool.synclint.per-file-ignores]\n"s.py" = ["SL2"]\n'})
    assert _check(project, synclint, body) == []
    # SL003 itself not selected: nothing reported.
    assert _check(project, synclint, f"    return 1  # noqa: SL101\n", "--ignore", "SL003") == []
    # A finding hidden by --min-confidence still uses its comment (a setting hides it).
    assert _check(project, synclint, f"    return {SL101}  # noqa: SL101\n", "--min-confidence", "high") == []
    # `# noqa: SL003` on the line keeps a dead comment.
    assert _check(project, synclint, f"    return 1  # noqa: SL101, SL003\n") == []


def test_the_fix_removes_dead_codes_or_whole_comments_and_keeps_the_rest(project, synclint):
    body = (
        f"    a = {SL101}  # noqa: SL101, SL201\n"
        "    b = 1  # type: ignore  # noqa: SL201\n"
        "    c = 2  # noqa: SL201  # a real comment\n"
        "    d = 3  # synclint: ignore[SL201]  reason that no longer holds\n"
        "    # noqa: SL101\n"
        "    return a, b, c, d\n"
    )
    project.write({"s.py": HEADER + body})
    result = synclint("check", "--fix", "s.py")
    assert result.code == 0, result.out
    assert (project.root / "s.py").read_text() == HEADER + (
        f"    a = {SL101}  # noqa: SL101\n"
        "    b = 1  # type: ignore\n"
        "    c = 2  # a real comment\n"
        "    d = 3\n"
        "    return a, b, c, d\n"
    )
    again = synclint("check", "--fix", "s.py")
    assert again.code == 0 and "All checks passed!" in again.out


def test_a_file_that_does_not_parse_reports_no_unused_suppression(project, synclint):
    project.write({"s.py": "def f(:\n    pass  # noqa: SL101\n"})
    result = synclint("check", "--no-cache", "--output-format", "json", "s.py")
    assert [d["code"] for d in json.loads(result.out)] == ["SL001"]


def test_the_bundled_example_has_no_dead_suppression():
    result = run_process("check", "--no-cache", "--output-format", "json", "examples/", cwd=REPO)
    codes = [d["code"] for d in json.loads(result.out)]
    assert codes == ["SL101", "SL201"]


def test_a_directive_quoted_in_a_docstring_is_not_reported_or_removed(project, synclint):
    text = HEADER + '    """Silence it with\n    `# noqa: SL101` on the line.\n    """\n    return total  # noqa: SL201\n'
    project.write({"s.py": text})
    result = synclint("check", "--no-cache", "--output-format", "json", "s.py")
    assert [(d["location"]["row"], d["code"]) for d in json.loads(result.out)] == [(8, "SL003")]
    synclint("check", "--fix", "s.py")
    assert (project.root / "s.py").read_text() == text.replace("  # noqa: SL201", "")


def test_rules_lists_every_code_that_can_be_emitted(synclint):
    from synclint.rules import known_codes

    listed = [line.split()[0] for line in synclint("rules").out.splitlines()]
    assert listed == list(known_codes()) and "SL003" in listed
    assert "unused-suppression" in synclint("rule", "SL003").out


# --- --add-noqa --------------------------------------------------------------------------


def test_add_noqa_suppresses_every_finding_and_is_idempotent(project, synclint, tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "ex")
    before = (tmp_path / "ex" / "decode_loop.py").read_text()
    result = run_process("check", "--add-noqa", "ex/", cwd=tmp_path)
    assert (result.code, result.err) == (0, "Added 2 noqa directives.\n")
    after = (tmp_path / "ex" / "decode_loop.py").read_text()
    assert '        ids = torch.tensor(token_ids, dtype=torch.long, device="cuda")  # noqa: SL101\n' in after
    assert "        tokens.append(scores.argmax().item())  # noqa: SL201\n" in after
    assert len(after.splitlines()) == len(before.splitlines())
    assert run_process("check", "ex/", cwd=tmp_path).code == 0
    again = run_process("check", "--add-noqa", "ex/", cwd=tmp_path)
    assert again.err == "Added 0 noqa directives.\n"
    assert (tmp_path / "ex" / "decode_loop.py").read_text() == after


def test_add_noqa_merges_with_an_existing_noqa_and_writes_the_reason(project, synclint):
    body = (
        f"    a = {SL101}  # noqa: E501 too long\n"  # merged, the reason kept after the codes
        f"    b = {SL201}  # see issue 12\n"  # appended after the comment
        "    c = dict(\n"
        f"        x={SL101},\n"  # on the statement's first line
        "    )\n"
        "    return a, b, c\n"
    )
    project.write({"s.py": HEADER + body})
    result = synclint("check", "--add-noqa=legacy, tracked", "s.py")
    assert (result.code, result.err) == (0, "Added 3 noqa directives.\n")
    assert (project.root / "s.py").read_text() == HEADER + (
        f"    a = {SL101}  # noqa: E501, SL101 too long\n"
        f"    b = {SL201}  # see issue 12  # noqa: SL201 legacy, tracked\n"
        "    c = dict(  # noqa: SL101 legacy, tracked\n"
        f"        x={SL101},\n"
        "    )\n"
        "    return a, b, c\n"
    )
    assert synclint("check", "--no-cache", "s.py").code == 0
    assert synclint("check", "--add-noqa", "--add-noqa-reason", "x", "s.py").err == "Added 0 noqa directives.\n"


def test_add_noqa_keeps_crlf_and_skips_lines_ending_inside_a_string(project, synclint):
    text = (HEADER + f"    a = {SL101}\n" + f'    b = f({SL101}, """\n    doc""")\n' + "    return a, b\n").replace("\n", "\r\n")
    project.write({"s.py": text.encode()})
    result = synclint("check", "--add-noqa", "s.py")
    assert result.err.startswith("synclint: 1 finding left without a comment")
    assert result.err.endswith("Added 1 noqa directive.\n")
    data = (project.root / "s.py").read_bytes()
    assert f"    a = {SL101}  # noqa: SL101\r\n".encode() in data
    assert data.count(b"\r\n") == text.count("\r\n") and data.count(b"\n") == text.count("\n")
    compile(data, "s.py", "exec")


def test_add_noqa_refuses_stdin_and_fix(synclint):
    assert synclint("check", "--add-noqa", "--fix", ".").code == 2
    assert synclint("check", "--add-noqa", "-").code == 2


def _readme_example(marker: str) -> tuple[list[list[str]], str]:
    """The ```bash commands and the ```text output that follow `marker` in the README."""
    import re
    import shlex

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    tail = readme[readme.index(marker) :]
    commands = re.search(r"```bash\n(.*?)```", tail, re.S).group(1)
    shown = re.search(r"```text\n(.*?)```", tail, re.S).group(1)
    return [shlex.split(line)[1:] for line in commands.splitlines() if line.strip()], shown


def test_readme_add_noqa_example_prints_what_it_shows(tmp_path):
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    commands, shown = _readme_example("**`--add-noqa`**")
    printed = ""
    for args in commands:
        result = run_process(*args, cwd=tmp_path)
        assert result.code == 0, result.err
        printed += result.err + result.out
    assert printed == shown


def test_a_form_feed_or_line_separator_in_a_comment_does_not_move_suppressions(project, synclint):
    # Rows are the parser's: only \r\n, \r and \n end a line, not the form feed or U+2028
    # that str.splitlines would also split at.
    body = f"    # section\x0c break \u2028 here\n    return {SL101}  # noqa: SL101\n"
    assert _check(project, synclint, body) == []
