"""Joining run-time sites with static findings: confirmed, static only, runtime only
(listed first), by file and line, through the Python API and `synclint check --runtime`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.trace.compare import compare_report, join
from synclint.trace.events import SyncEvent, TraceReport

SOURCE = textwrap.dedent(
    """\
    import torch


    def _prepare_inputs(token_ids: list[int], device):
        return torch.tensor(token_ids, dtype=torch.long, device=device)


    def forward(hidden, lm_head, maybe_device_tensor):
        logits = hidden.cuda() @ lm_head
        best = logits[-1].argmax(dim=-1)
        total = maybe_device_tensor.sum()
        if total:
            pass
        return best.item()
    """
)


def _setup(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    violations = lint_source(SOURCE, str(path), Settings()).violations
    rows = {v.code: v.location.row for v in violations}
    assert rows == {"SL101": 5, "SL201": 14}, rows  # the fixture's premise
    report = TraceReport(cuda=True, device="gpu")
    report.add(SyncEvent("sync", "torch.tensor", str(path), 5, "_prepare_inputs", "MainThread", 0.05))
    report.add(SyncEvent("sync", "Tensor.__bool__", str(path), 12, "forward", "MainThread", 0.04))
    report.write(tmp_path / "trace.json")
    return path, violations, report


def test_join_sorts_sites_and_findings_into_three_lists(tmp_path):
    path, violations, report = _setup(tmp_path)
    result = join(violations, report)
    assert [(s.line, s.op) for s in result.runtime_only] == [(12, "Tensor.__bool__")]
    assert [(s.line, [v.code for v in hits]) for s, hits in result.confirmed] == [(5, ["SL101"])]
    assert [v.code for v in result.static_only] == ["SL201"]


def test_a_site_on_any_row_of_a_multiline_finding_confirms_it(tmp_path):
    source = "import torch\n\ndef f(ids, device):\n    return torch.tensor(\n        ids,\n        device=device,\n    )\n"
    path = tmp_path / "multi.py"
    path.write_text(source)
    violations = lint_source(source, str(path), Settings()).violations
    assert [(v.code, v.location.row, v.end_location.row) for v in violations] == [("SL101", 4, 7)]
    report = TraceReport(cuda=True)
    report.add(SyncEvent("sync", "torch.tensor", str(path), 6, "f", "MainThread", 0.01))
    assert len(join(violations, report).confirmed) == 1


def test_compare_report_prints_runtime_only_first(tmp_path):
    _, violations, _ = _setup(tmp_path)
    text = compare_report(violations, tmp_path / "trace.json")
    headers = [line.split(" (")[0] for line in text.splitlines() if not line.startswith(" ")]
    assert headers == ["Runtime only", "Confirmed by both", "Static only"]
    assert "model.py:12: sync Tensor.__bool__ x1, 40.00 ms (in forward)" in text
    assert "[SL101]" in text and "SL201" in text.split("Static only")[1]


def test_check_runtime_option_uses_the_join(tmp_path):
    path, _, _ = _setup(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "synclint", "check", "--no-cache", "--runtime", str(tmp_path / "trace.json"), str(path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("Runtime only (1)")
    assert "Confirmed by both (1)" in run.stdout and "Static only (1)" in run.stdout


LOOP_CASE = Path(__file__).resolve().parent.parent / "fixtures" / "SL207" / "proof.py"


def test_a_loop_finding_is_confirmed_where_its_body_uses_an_element(tmp_path):
    # SL207's proof case: `for n in seq_lens:` (row 9), each element a slice bound on row 10.
    source = LOOP_CASE.read_text()
    path = tmp_path / "loop.py"
    path.write_text(source)
    violations = [v for v in lint_source(source, str(path), Settings()).violations if v.code == "SL207"]
    assert [v.location.row for v in violations] == [9]  # the fixture's premise
    body, after = TraceReport(cuda=True), TraceReport(cuda=True)
    body.add(SyncEvent("sync", "Tensor.__getitem__", str(path), 10, "split_by_length", "MainThread", 0.01))
    after.add(SyncEvent("sync", "Tensor.__bool__", str(path), 12, "split_by_length", "MainThread", 0.01))
    assert [v.code for _, hits in join(violations, body).confirmed for v in hits] == ["SL207"]
    result = join(violations, after)
    assert result.confirmed == [] and [v.code for v in result.static_only] == ["SL207"]


def test_a_loop_finding_reads_the_innermost_loop_over_its_expression():
    from synclint.trace.spans import runtime_rows

    source = "for a in x:\n    for b in y:\n        use(b)\n    other(a)\n"
    assert runtime_rows("SL207", 2, 2, source) == (2, 3)  # the inner loop only
    assert runtime_rows("SL207", 1, 1, source) == (1, 4)
    assert runtime_rows("SL201", 2, 2, source) == (2, 2)  # not a loop rule: its own rows
    assert runtime_rows("SL207", 2, 2, "for (:\n") == (2, 2)  # unparseable: its own rows
    comprehension = "vals = [\n    int(v)\n    for v in lens\n]\n"
    assert runtime_rows("SL207", 3, 3, comprehension) == (1, 4)
