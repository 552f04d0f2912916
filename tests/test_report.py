"""Each output format on a known file: JSON with ruff's keys and 1-based positions, SARIF
valid against the official 2.1.0 schema, GitHub workflow commands escaped."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from conftest import TWO_FINDINGS, TWO_FINDINGS_FIXED
from synclint.fix.apply import apply_edits
from synclint.violation import Edit, Location

SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
RUFF_KEYS = {"cell", "code", "end_location", "filename", "fix", "location", "message", "noqa_row", "url"}


def test_json_has_ruffs_keys_and_one_based_positions(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    result = synclint("check", "--output-format", "json", "a.py")
    assert result.code == 1
    sl101, sl201 = json.loads(result.out)
    for finding in (sl101, sl201):
        assert RUFF_KEYS | {"severity", "confidence"} <= finding.keys()
        assert finding["filename"] == str(project.root / "a.py")
        assert finding["severity"] == "warning"
    # `ids = torch.tensor(...)` on line 5: the call starts at column 11 (1-based) and ends
    # after its closing parenthesis, column 64 (end exclusive, as in ruff).
    line5 = TWO_FINDINGS.splitlines()[4]
    assert line5.index("torch.tensor") + 1 == 11 and len(line5) + 1 == 64
    assert sl101["code"] == "SL101"
    assert sl101["location"] == {"row": 5, "column": 11}
    assert sl101["end_location"] == {"row": 5, "column": 64}
    assert sl101["noqa_row"] == 5
    assert sl101["confidence"] == "medium"
    assert sl101["url"] is None  # no published rule URL: `synclint rule SL101` prints the docs
    fix = sl101["fix"]
    assert (fix["applicability"], fix["message"]) == ("safe", "Use a pinned, non-blocking copy (inline, torch only)")
    for edit in fix["edits"]:
        assert edit.keys() == {"content", "location", "end_location"}
        assert edit["location"]["row"] >= 1 and edit["location"]["column"] >= 1
    # The edits, read as ruff's 1-based, end-exclusive ranges, give exactly the fixed file.
    edits = [Edit(e["content"], Location(**e["location"]), Location(**e["end_location"])) for e in fix["edits"]]
    assert apply_edits(TWO_FINDINGS, edits) == TWO_FINDINGS_FIXED
    assert sl201["code"] == "SL201"
    assert (sl201["location"], sl201["end_location"]) == ({"row": 7, "column": 17}, {"row": 7, "column": 29})
    assert sl201["fix"] is None
    assert sl201["confidence"] == "high"


def test_json_of_a_clean_run_is_an_empty_list(project, synclint):
    project.write({"clean.py": "x = 1\n"})
    result = synclint("check", "--output-format", "json", "clean.py")
    assert (result.code, result.out) == (0, "[]\n")


def test_json_positions_of_a_multiline_statement_and_noqa_row(project, synclint):
    project.write(
        {
            "m.py": (
                "import torch\n"
                "\n"
                "out = dict(\n"
                "    a=1,\n"
                "    b=torch.zeros(3, device='cuda').sum().item(),\n"
                ")\n"
            )
        }
    )
    [finding] = json.loads(synclint("check", "--output-format", "json", "m.py").out)
    assert finding["code"] == "SL201"
    assert finding["location"] == {"row": 5, "column": 7}
    assert finding["noqa_row"] == 3  # the statement's first line can carry `# noqa`


def _validate_sarif(text: str) -> dict:
    log = json.loads(text)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = sorted(validator_class(schema).iter_errors(log), key=lambda e: list(e.path))
    assert [f"{list(e.path)}: {e.message}" for e in errors] == []
    return log


def test_sarif_is_valid_against_the_official_schema(project, synclint):
    project.write({"a.py": TWO_FINDINGS, "broken.py": "def f(:\n", "pkg/b.py": TWO_FINDINGS})
    result = synclint("check", "--output-format", "sarif", ".", "missing.py")
    assert result.code == 1
    log = _validate_sarif(result.out)
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "synclint"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert {"SL001", "SL002", "SL101", "SL201"} <= set(rule_ids)
    got = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in run["results"]
    ]
    assert got == [
        ("SL101", "a.py", 5, 11),
        ("SL201", "a.py", 7, 17),
        ("SL001", "broken.py", 1, 7),
        ("SL002", "missing.py", 1, 1),
        ("SL101", "pkg/b.py", 5, 11),
        ("SL201", "pkg/b.py", 7, 17),
    ]
    for r in run["results"]:
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.root.resolve().as_uri() + "/"
    [change] = run["results"][0]["fixes"][0]["artifactChanges"]
    edits = [
        Edit(
            r["insertedContent"]["text"],
            Location(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
            Location(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
        )
        for r in change["replacements"]
    ]
    assert apply_edits(TWO_FINDINGS, edits) == TWO_FINDINGS_FIXED


def test_sarif_of_a_clean_run_is_valid(project, synclint):
    project.write({"clean.py": "x = 1\n"})
    log = _validate_sarif(synclint("check", "--output-format", "sarif", ".").out)
    assert log["runs"][0]["results"] == []


def test_sarif_validation_catches_a_broken_log():
    """The schema check is not vacuous: a log missing `version` fails it."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    assert list(validator_class(schema).iter_errors({"runs": []}))


def test_github_annotations_relative_paths_and_escaping(project, synclint):
    project.write({"odd,name:1.py": TWO_FINDINGS, "sub/a.py": "import torch\nx = torch.zeros(2, device='cuda')\nprint(f'{x.item()}% done')\n"})
    result = synclint("check", "--output-format", "github", ".")
    assert result.code == 1
    assert result.out.splitlines() == [
        "::warning file=odd%2Cname%3A1.py,line=5,col=11,endLine=5,endColumn=64,title=synclint (SL101)::"
        "`torch.tensor(..., device=...)` copies host data with a blocking copy; use a pinned, non-blocking copy"
        " (confidence: medium)",
        "::warning file=odd%2Cname%3A1.py,line=7,col=17,endLine=7,endColumn=29,title=synclint (SL201)::"
        "`.item()` copies a device tensor to the host and waits for all queued GPU work (confidence: high)",
        "::warning file=sub/a.py,line=3,col=10,endLine=3,endColumn=18,title=synclint (SL201)::"
        "`.item()` copies a device tensor to the host and waits for all queued GPU work (confidence: high)",
    ]


def test_github_escapes_percent_and_newlines_in_messages():
    from synclint.report import github
    from synclint.violation import Location, Severity, Violation

    v = Violation("SL001", "50% bad\nsecond line", "/abs/elsewhere/x.py", Location(1, 2), Location(1, 3), severity=Severity.ERROR)
    assert github.render([v]) == (
        "::error file=/abs/elsewhere/x.py,line=1,col=2,endLine=1,endColumn=3,title=synclint (SL001)::50%25 bad%0Asecond line\n"
    )


def test_github_paths_are_relative_to_the_working_directory(project, synclint, monkeypatch):
    project.write({"pkg/deep/a.py": TWO_FINDINGS})
    monkeypatch.chdir(project.root / "pkg")
    out = synclint("check", "--output-format", "github", str(project.root / "pkg" / "deep")).out
    assert out.splitlines()[0].startswith("::warning file=deep/a.py,line=5,col=11,")
