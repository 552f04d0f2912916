"""The formats code-scanning tools read, as a CI job produces them: SARIF rules with their
documentation, tags and precision, results with fingerprints that follow a line when lines
above it move; GitLab code quality with the keys GitLab reads; GitHub annotation titles."""

from __future__ import annotations

import json

import jsonschema

from conftest import TWO_FINDINGS
from synclint.rules import all_rules
from test_report import _validate_sarif

# The part of the Code Climate format that GitLab's code quality report reads.
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "pattern": "^SL[0-9]{3}$"},
            "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "not": {"pattern": "^/"}},
                    "lines": {"type": "object", "required": ["begin"], "properties": {"begin": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def test_sarif_rules_carry_docs_tags_and_precision(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    log = _validate_sarif(synclint("check", "--output-format", "sarif", "a.py").out)
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver  # no invented repository URL
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) == {"SL001", "SL002", "SL003", *(r.code for r in all_rules())}
    for rule in all_rules():
        entry = rules[rule.code]
        assert "helpUri" not in entry
        assert entry["help"]["markdown"].startswith(rule.doc())
        assert f"`synclint rule {rule.code}`" in entry["help"]["markdown"]
        assert "## Why it stalls" in entry["help"]["markdown"]
        assert "synclint" in entry["properties"]["tags"] and "gpu-sync" in entry["properties"]["tags"]
    assert "host-to-device" in rules["SL101"]["properties"]["tags"]
    assert "device-to-host" in rules["SL201"]["properties"]["tags"]
    # The rule's precision follows the confidence of its findings in this run.
    assert rules["SL101"]["properties"]["precision"] == "medium"
    assert rules["SL201"]["properties"]["precision"] == "high"
    sl101, sl201 = log["runs"][0]["results"]
    assert sl101["properties"]["precision"] == "medium" and sl201["properties"]["precision"] == "high"
    assert sl101["partialFingerprints"].keys() == {"synclint/v1"}
    assert sl101["partialFingerprints"] != sl201["partialFingerprints"]


def _fingerprints(synclint, fmt="sarif"):
    out = synclint("check", "--output-format", fmt, "a.py").out
    if fmt == "sarif":
        return [(r["ruleId"], r["partialFingerprints"]["synclint/v1"]) for r in json.loads(out)["runs"][0]["results"]]
    return [(i["check_name"], i["fingerprint"]) for i in json.loads(out)]


def test_fingerprints_survive_an_edit_above_and_tell_identical_lines_apart(project, synclint):
    project.write({"a.py": TWO_FINDINGS})
    before = _fingerprints(synclint)
    before_gitlab = _fingerprints(synclint, "gitlab")
    assert [f for _, f in before] == [f for _, f in before_gitlab]  # one fingerprint for both tools
    project.write({"a.py": '"""A docstring added above."""\n\nimport os\n' + TWO_FINDINGS})
    assert _fingerprints(synclint) == before
    # A second identical line gets its own fingerprint; the first keeps its own.
    doubled = TWO_FINDINGS.replace("    return ids", "    again = total.item()\n    return ids")
    doubled = doubled.replace("total = torch.zeros(4, device=\"cuda\").sum()", "total = torch.zeros(4, device=\"cuda\").sum()\n    x = total.item()")
    project.write({"a.py": doubled})
    after = _fingerprints(synclint)
    assert len(set(after)) == len(after) == 4
    assert before[0] in after


def test_gitlab_code_quality_report(project, synclint):
    project.write({"a.py": TWO_FINDINGS, "pkg/broken.py": "def f(:\n"})
    result = synclint("check", "--output-format", "gitlab", "-o", "gl-code-quality.json", ".")
    assert result.code == 1
    issues = json.loads((project.root / "gl-code-quality.json").read_text())
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"], i["severity"]) for i in issues] == [
        ("SL101", "a.py", 5, "minor"),
        ("SL201", "a.py", 7, "minor"),
        ("SL001", "pkg/broken.py", 1, "major"),
    ]
    assert issues[0]["description"].startswith("SL101 `torch.tensor(")
    assert issues[0]["description"].endswith("(confidence: medium)")
    assert "confidence" not in issues[2]["description"]  # a syntax error has no placement
    assert len({i["fingerprint"] for i in issues}) == 3


def test_gitlab_schema_is_not_vacuous():
    validator = jsonschema.Draft202012Validator(GITLAB_SCHEMA)
    good = {"description": "d", "check_name": "SL101", "fingerprint": "0" * 64, "severity": "minor", "location": {"path": "a.py", "lines": {"begin": 1}}}
    assert not list(validator.iter_errors([good]))
    for broken in ({**good, "severity": "warning"}, {**good, "location": {"path": "/abs.py", "lines": {"begin": 1}}}, {k: v for k, v in good.items() if k != "fingerprint"}):
        assert list(validator.iter_errors([broken]))


def test_clean_run_gives_an_empty_gitlab_report(project, synclint):
    project.write({"clean.py": "x = 1\n"})
    result = synclint("check", "--output-format", "gitlab", ".")
    assert (result.code, result.out) == (0, "[]\n")
