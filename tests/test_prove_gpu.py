"""The proof harness on a real CUDA device. Skipped, with the reason shown, elsewhere."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device: none present here"),
]


def test_measurement_tells_a_stall_from_clean_work():
    from synclint.prove.measure import CLEAN, STALL, measure

    x = torch.randn(4096, device="cuda")
    stall = measure(lambda: (x * 2).sum().item(), torch)
    clean = measure(lambda: (x * 2).sum(), torch)
    assert stall.verdict == STALL and stall.stall_ratio > 0.9 and stall.sync_debug_mode is True
    assert clean.verdict == CLEAN and clean.stall_ratio < 0.1 and clean.sync_debug_mode is False


def test_sl101_before_stalls_and_its_fix_does_not():
    from synclint.prove.cases import prepare
    from synclint.prove.harness import prove_rule

    proof = prove_rule(prepare("SL101"), torch, torch.device("cuda"))
    assert proof.before.verdict == "STALL"
    assert proof.after.verdict == "CLEAN"
    assert proof.results_match is True
    assert proof.proven


def test_cli_writes_json_for_selected_rules(tmp_path):
    out = tmp_path / "proof.json"
    run = subprocess.run(
        [sys.executable, "-m", "synclint", "prove", "--rules", "SL5", "--no-demo", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode in (0, 1), run.stderr
    data = json.loads(out.read_text())
    assert set(data["rules"]) == {"SL501"}
    assert data["device"] and data["torch"] == torch.__version__
