"""The proof harness without a GPU: every rule has an executable proof case that its rule
flags (and, where the rule fixes it, that the fix clears), verdicts follow docs/gpu-proof.md's
thresholds, reports have the documented shape, and `synclint prove` without CUDA proves
nothing and exits 0."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from synclint.prove import report
from synclint.prove.cases import RULE_CODES, case_files, fixtures_dir, prepare, select
from synclint.prove.harness import RuleProof
from synclint.prove.measure import CLEAN, STALL, UNCLEAR, Measurement, verdict_of
from synclint.rules import rule_by_code


@pytest.mark.parametrize("code", RULE_CODES)
def test_each_rule_has_an_executable_proof_case(code):
    path = fixtures_dir() / code / "proof.py"
    assert path.exists(), f"{code} has no proof case"
    tree = ast.parse(path.read_text())
    case = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "case"]
    assert case and [a.arg for a in case[0].args.args] == ["device"]


@pytest.mark.parametrize("code", RULE_CODES)
def test_the_rule_flags_its_proof_case_and_its_fix_clears_it(code):
    if rule_by_code(code) is None:
        pytest.skip(f"rule {code} is not registered yet")
    case = prepare(code)
    assert case.status == "ready", case.problem
    assert case.flagged
    if case.fixable:
        compile(case.fixed_source, str(case.fixed_path), "exec")
        assert case.fixed_findings == []
        assert case.fixed_source != case.source


def test_unregistered_rule_and_missing_case_are_statuses_not_crashes(tmp_path):
    (tmp_path / "SL999").mkdir()
    (tmp_path / "SL999" / "proof.py").write_text("def case(device):\n    return None\n")
    assert prepare("SL999", tmp_path).status == "rule not registered"
    assert prepare("SL998", tmp_path).status == "no proof case"


def test_a_case_the_rule_does_not_flag_is_reported(tmp_path):
    (tmp_path / "SL201").mkdir()
    (tmp_path / "SL201" / "proof.py").write_text("import torch\n\ndef case(device):\n    return torch.zeros(2, device=device)\n")
    case = prepare("SL201", tmp_path)
    assert case.status == "not flagged" and "does not flag" in case.problem


def test_select_by_prefix():
    assert select(RULE_CODES, ["SL5"]) == ["SL501"]
    assert select(RULE_CODES, ["sl10", "SL404"]) == ["SL101", "SL102", "SL103", "SL104", "SL105", "SL106", "SL404"]


@pytest.mark.parametrize(
    "ratio, done, expected",
    [
        (0.99, [True] * 5, STALL),
        (0.6, [True, True, True, True, False], STALL),
        (0.99, [True, True, True, False, False], UNCLEAR),
        (0.01, [False] * 5, CLEAN),
        (0.01, [False, False, False, False, True], UNCLEAR),
        (0.3, [False] * 5, UNCLEAR),
    ],
)
def test_verdict_thresholds(ratio, done, expected):
    assert verdict_of(ratio, done) == expected


def _proof(code: str, before: str, after: str | None, match: bool | None):
    case = prepare(code)
    proof = RuleProof(case, Measurement(before, 0.97 if before == STALL else 0.0, sync_debug_mode=True))
    if after is not None:
        proof.after = Measurement(after, 0.0, sync_debug_mode=False)
        proof.results_match = match
    return proof


def test_outcomes_follow_the_verdict_rules():
    assert _proof("SL101", STALL, CLEAN, True).outcome() == "proven"
    assert _proof("SL101", STALL, CLEAN, False).outcome() == "FAILED"  # results changed
    assert _proof("SL101", STALL, STALL, True).outcome() == "FAILED"  # fix did not help
    assert _proof("SL201", STALL, None, None).outcome() == "proven"
    assert _proof("SL201", CLEAN, None, None).outcome() == "FAILED"


def test_json_and_markdown_have_the_documented_shape(tmp_path):
    proofs = [_proof("SL101", STALL, CLEAN, True), _proof("SL201", STALL, None, None)]
    env = {"device": "NVIDIA H200", "driver": "580", "torch": "2.11", "cuda": "13.0", "python": "3.12"}
    demo = {"pattern": "p", "fix": "f", "gpu_ms_per_step": 2.0, "layers": 10, "steps": 200,
            "rows": [{"host_ms": 1.0, "unfixed_ms_per_step": 3.0, "fixed_ms_per_step": 2.0, "speedup": 1.5, "results_match": True}]}
    data = report.to_json(env, proofs, demo)
    report.write_json(tmp_path / "p.json", data)
    data = json.loads((tmp_path / "p.json").read_text())
    sl101 = data["rules"]["SL101"]
    assert (data["device"], data["driver"], data["torch"]) == ("NVIDIA H200", "580", "2.11")
    assert sl101["fixable"] is True and sl101["results_match"] is True
    assert sl101["before"]["verdict"] == "STALL" and sl101["before"]["sync_debug_mode"] is True
    assert sl101["after"]["verdict"] == "CLEAN" and sl101["after"]["stall_ratio"] == 0.0
    assert data["rules"]["SL201"]["fixable"] is False and data["rules"]["SL201"]["after"] is None
    assert "pin_memory=torch.cuda.is_available()" in sl101["fix_diff"]
    md = report.render_markdown(data)
    assert "| SL101 | proven | STALL | 0.97 | True | CLEAN | 0.0 | False | yes |" in md
    assert "| SL201 | proven | STALL |" in md and "(no fix)" in md
    assert "| 1.0 ms | 3.0 | 2.0 | 1.5x | yes |" in md


def test_demo_loop_is_fixed_by_the_fixer():
    from synclint.prove.demo import DEMO_SOURCE, fixed_demo_source

    fixed, applied = fixed_demo_source()
    assert applied == 1
    assert "torch.tensor(token_ids" in DEMO_SOURCE and "pin_memory()" in fixed and "import synclint" not in fixed


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(_has_cuda(), reason="checks the no-CUDA path; this machine has a CUDA device")
def test_prove_without_cuda_says_so_and_exits_0(tmp_path):
    run = subprocess.run([sys.executable, "-m", "synclint", "prove", "--json", str(tmp_path / "p.json")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0
    assert "no CUDA device present: nothing proven" in run.stderr
    assert not (tmp_path / "p.json").exists()


def test_prove_rejects_an_unknown_selection():
    run = subprocess.run([sys.executable, "-m", "synclint", "prove", "--rules", "SL9"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "no proof case matches" in run.stderr


def test_synclint_check_flags_every_proof_case_from_the_command_line():
    """As a user would run it, with the repository's own configuration."""
    registered = [c for c in RULE_CODES if rule_by_code(c) is not None]
    paths = [str(fixtures_dir() / c / "proof.py") for c in registered]
    run = subprocess.run([sys.executable, "-m", "synclint", "check", "--no-cache", "--output-format", "json", *paths],
                         capture_output=True, text=True, timeout=120, cwd=fixtures_dir().parent)
    assert run.returncode == 1, run.stderr
    found = {(item["filename"].replace("\\", "/").split("/")[-2], item["code"]) for item in json.loads(run.stdout)}
    missing = [c for c in registered if (c, c) not in found]
    assert missing == []


EXTRA_CASES = [(code, name) for code in RULE_CODES for name in case_files(code)[1:]]


@pytest.mark.parametrize("code, name", EXTRA_CASES, ids=[f"{c}/{n}" for c, n in EXTRA_CASES])
def test_each_further_fix_kind_has_a_ready_case_that_the_fixer_fixes(code, name):
    """`fixtures/<CODE>/proof_<kind>.py`: one case per further kind of fix, flagged by its
    rule, fixed by the fixer, nothing of the rule left; reported under its own label. A rule
    that offers no fix has further cases for further stalling shapes: flagged, proven by the
    stall alone."""
    case = prepare(code, name=name)
    assert case.status == "ready", case.problem
    assert case.flagged
    if not case.rule_fixable:
        assert not case.fixable and case.label == f"{code}/{name[:-3]}"
        return
    assert case.fixable and not case.fixed_findings
    assert case.label == f"{code}/{name[:-3]}"
    assert "pin_memory" not in case.fixed_source or code in ("SL301",)


def test_further_cases_exist_for_each_copy_free_fix_kind():
    labels = {f"{c}/{n[:-3]}" for c, n in EXTRA_CASES}
    assert {"SL101/proof_scalar", "SL101/proof_range", "SL103/proof_arange_cast", "SL104/proof_move"} <= labels
