"""`# noqa`, `# noqa: CODE`, `# synclint: ignore[CODE]` on the flagged line or the first line
of its statement, and `# synclint: skip-file`."""

from __future__ import annotations

import json

import pytest

from conftest import TWO_FINDINGS

HEADER = "import torch\n\n\ndef step(tokens, total):\n"
SL101_CALL = 'torch.tensor(tokens, device="cuda")'
SL201_CALL = 'torch.zeros(2, device="cuda").sum().item()'


def _found(project, synclint, body: str) -> list[str]:
    project.write({"s.py": HEADER + body})
    result = synclint("check", "--output-format", "json", "s.py")
    return [f"{d['location']['row']}:{d['code']}" for d in json.loads(result.out)]


@pytest.mark.parametrize(
    "comment, remaining",
    [
        ("", ["5:SL101", "5:SL201"]),
        ("  # noqa", []),
        ("  # NOQA", []),
        ("  # noqa: SL101", ["5:SL201"]),
        ("  # noqa:SL201", ["5:SL101"]),
        ("  # noqa: SL101, SL201", []),
        ("  # noqa: SL101 SL201", []),
        ("  # noqa: E501", ["5:SL101", "5:SL201"]),
        ("  # synclint: ignore[SL101]", ["5:SL201"]),
        ("  # synclint: ignore[SL101,SL201]", []),
        ("  # synclint: ignore", []),
        ("  # type: ignore  # noqa: SL201", ["5:SL101"]),
    ],
)
def test_comment_on_the_flagged_line(project, synclint, comment, remaining):
    assert _found(project, synclint, f"    return {SL101_CALL}, {SL201_CALL}{comment}\n") == remaining


@pytest.mark.parametrize(
    "first, inner, last, remaining",
    [
        ("", "", "", ["6:SL101", "7:SL201"]),
        ("  # noqa: SL101", "", "", ["7:SL201"]),  # first line of the statement
        ("  # synclint: ignore[SL201]", "", "", ["6:SL101"]),
        ("  # noqa", "", "", []),
        ("", "  # noqa: SL101", "", ["7:SL201"]),  # the flagged line itself, inside the brackets
        ("", "", "  # noqa", ["6:SL101", "7:SL201"]),  # the closing line is neither
    ],
)
def test_multiline_statement(project, synclint, first, inner, last, remaining):
    body = f"    result = dict({first}\n        ids={SL101_CALL},{inner}\n        total={SL201_CALL},\n    ){last}\n"
    assert _found(project, synclint, body) == remaining


def test_a_comment_on_another_statement_does_not_suppress(project, synclint):
    body = f"    x = 1  # noqa\n    return {SL101_CALL}\n"
    assert _found(project, synclint, body) == ["6:SL101"]


def test_noqa_inside_a_string_is_not_a_comment(project, synclint):
    body = f'    return {SL101_CALL}, "# noqa"\n'
    assert _found(project, synclint, body) == ["5:SL101"]


def test_statement_in_a_block_uses_its_own_first_line(project, synclint):
    body = f"    if tokens:  # noqa\n        return {SL101_CALL}\n"
    assert _found(project, synclint, body) == ["6:SL101"]


@pytest.mark.parametrize(
    "text, skipped",
    [
        ("# synclint: skip-file\n" + TWO_FINDINGS, True),
        (TWO_FINDINGS + "\n# synclint: skip-file\n", True),
        ("#synclint:skip-file\n" + TWO_FINDINGS, True),
        ("x = 1  # synclint: skip-file\n" + TWO_FINDINGS, False),  # only a comment line of its own
        ('"""# synclint: skip-file"""\n' + TWO_FINDINGS, False),
    ],
)
def test_skip_file(project, synclint, text, skipped):
    project.write({"a.py": text})
    result = synclint("check", "--output-format", "json", "a.py")
    assert (json.loads(result.out) == []) is skipped
    assert result.code == (0 if skipped else 1)


def test_skip_file_also_skips_fixing(project, synclint):
    text = "# synclint: skip-file\n" + TWO_FINDINGS
    project.write({"a.py": text})
    assert synclint("check", "--fix", "a.py").code == 0
    assert (project.root / "a.py").read_text() == text


def test_suppressed_finding_is_not_fixed(project, synclint):
    text = TWO_FINDINGS.replace('device="cuda")\n', 'device="cuda")  # noqa: SL101\n', 1)
    project.write({"a.py": text})
    synclint("check", "--fix", "a.py")
    assert (project.root / "a.py").read_text() == text


def test_syntax_errors_cannot_be_suppressed(project, synclint):
    project.write({"a.py": "def f(:  # noqa\n"})
    assert synclint("check", "a.py").code == 1
