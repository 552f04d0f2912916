"""`synclint check --explain` prints each finding's provenance chain (the lines and reasons
behind the placement), and `--min-confidence` decides what is shown in every output format."""

from __future__ import annotations

import json
import textwrap

import pytest

RUNNER = textwrap.dedent(
    """\
    import torch


    class Runner:
        def __init__(self, device):
            self.device = device
            self.counts = torch.zeros(8, dtype=torch.int64, device=self.device)

        def execute_model(self, token_ids):
            n = self.counts.sum()
            return n.item()


    def helper(values):
        x = torch.zeros(4, device="cuda")
        y = x * 2
        return y.item(), values.item()
    """
)

# One finding per confidence level: proven (line 17), inferred (line 11), unknown (line 17, `values`).
HIGH = ("helper.py", 17, 12)
MEDIUM = ("helper.py", 11, 16)
LOW = ("helper.py", 17, 22)


def _json(result):
    return [(d["location"]["row"], d["location"]["column"], d["confidence"], d["provenance"]) for d in json.loads(result.out) if d["code"] == "SL201"]


def test_explain_prints_the_provenance_chain_in_full_output(project, synclint):
    project.write({"helper.py": RUNNER})
    result = synclint("check", "--explain", "--select", "SL201", "helper.py")
    assert result.code == 1
    assert (
        "  = because line 15: `torch.zeros(4, device=\"cuda\")` -> device tensor "
        "(`torch.zeros(..., device=...)` builds where `device=` says)\n"
        "  = because line 16: `y = x * 2` -> device tensor (assigned to `y`)\n"
    ) in result.out
    # The inferred finding says why it is only inferred: a parameter named like a device.
    assert "  = because line 5: `device` -> accelerator device (parameter `device` is named like a device (inferred))\n" in result.out
    assert "  = because line 6: `self.device = device` -> accelerator device (`self.device` assigned in `__init__()`)\n" in result.out
    assert "  = because line 10: `n = self.counts.sum()` -> device tensor (assigned to `n`)\n" in result.out


def test_without_explain_no_provenance_is_printed(project, synclint):
    project.write({"helper.py": RUNNER})
    result = synclint("check", "--select", "SL201", "helper.py")
    assert "because" not in result.out


def test_concise_explain_lists_each_step_under_its_finding(project, synclint):
    project.write({"helper.py": RUNNER})
    result = synclint("check", "--explain", "--output-format", "concise", "--select", "SL201", "helper.py")
    lines = result.out.splitlines()
    start = lines.index(next(l for l in lines if l.startswith("helper.py:17:12: SL201 [high confidence]")))
    assert lines[start + 1 : start + 4] == [
        '    because line 15: `"cuda"` -> accelerator device (a device string)',
        "    because line 15: `torch.zeros(4, device=\"cuda\")` -> device tensor (`torch.zeros(..., device=...)` builds where `device=` says)",
        "    because line 16: `y = x * 2` -> device tensor (assigned to `y`)",
    ]


def test_json_has_confidence_and_provenance_and_default_hides_low(project, synclint):
    project.write({"helper.py": RUNNER})
    shown = _json(synclint("check", "--output-format", "json", "--select", "SL201", "helper.py"))
    assert [(row, col, conf) for row, col, conf, _ in shown] == [(11, 16, "medium"), (17, 12, "high")]
    assert all(provenance for *_, provenance in shown)

    everything = _json(synclint("check", "--output-format", "json", "--min-confidence", "low", "--select", "SL201", "helper.py"))
    assert [(row, col, conf) for row, col, conf, _ in everything] == [(11, 16, "medium"), (17, 12, "high"), (17, 22, "low")]
    low_provenance = everything[-1][3]
    assert low_provenance == ["line 14: `values` -> unknown (parameter `values` has no annotation or default that places it)"]

    only_high = _json(synclint("check", "--output-format", "json", "--min-confidence", "high", "--select", "SL201", "helper.py"))
    assert [(row, col) for row, col, *_ in only_high] == [(17, 12)]


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "github"])
def test_min_confidence_filters_every_output_format(project, synclint, fmt):
    project.write({"helper.py": RUNNER})
    default = synclint("check", "--output-format", fmt, "--select", "SL201", "helper.py").out
    low = synclint("check", "--output-format", fmt, "--min-confidence", "low", "--select", "SL201", "helper.py").out
    high = synclint("check", "--output-format", fmt, "--min-confidence", "high", "--select", "SL201", "helper.py").out

    def rows(text):
        found = set()
        for row in (11, 17):
            for marker in (f":{row}:", f'"startLine": {row}', f"line={row},", f'"row": {row}'):
                if marker in text:
                    found.add(row)
        return found

    assert rows(high) == {17}
    assert rows(default) == {11, 17}
    assert rows(low) == {11, 17}
    # The low finding (column 22 of line 17) shows only at --min-confidence low.
    for text, expected in ((default, False), (high, False), (low, True)):
        assert _mentions_low_finding(text, fmt) is expected


def _mentions_low_finding(text: str, fmt: str) -> bool:
    if fmt == "json":
        return any(d["location"] == {"row": 17, "column": 22} for d in json.loads(text))
    if fmt == "sarif":
        results = json.loads(text)["runs"][0]["results"]
        return any(r["locations"][0]["physicalLocation"]["region"].get("startColumn") == 22 for r in results)
    if fmt == "github":
        return "line=17,col=22" in text or "line=17,endLine=17,col=22" in text
    return "17:22" in text
