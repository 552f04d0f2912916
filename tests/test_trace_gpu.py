"""The runtime tracer on a real CUDA device: each kind of sync is recorded at the right
line with its host time; exit code and output pass through; regions are per thread.
Skipped, with the reason shown, where there is no CUDA device."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device: none present here"),
]

PROGRAM = textwrap.dedent(
    """\
    import sys
    import numpy as np
    import torch

    x = torch.randn(1024, device="cuda")
    print("value", type(x.sum().item()).__name__)
    host = torch.from_numpy(np.zeros(4 * 1024 * 1024, dtype=np.float32))
    dev = host.to("cuda", non_blocking=True)
    out = torch.empty(1024)
    out.copy_(x, non_blocking=True)
    torch.cuda.synchronize()
    small = torch.arange(16).to("cuda", non_blocking=True)
    print("done", file=sys.stderr)
    sys.exit(5)
    """
)


def test_cli_records_each_kind_at_its_line_and_passes_the_program_through(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    report_file = tmp_path / "trace.json"
    run = subprocess.run(
        [sys.executable, "-m", "synclint.trace", "--json", str(report_file), "--", "python", str(script)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 5
    assert run.stdout == "value float\n"
    assert run.stderr.startswith("done\n")
    report = json.loads(report_file.read_text())
    sites = {(s["line"], s["kind"]) for s in report["sites"] if s["file"] == str(script)}
    assert (6, "sync") in sites  # .item()
    assert (8, "pageable-copy") in sites  # 16 MiB H2D from pageable memory, non_blocking
    assert (10, "pageable-copy") in sites  # D2H into pageable memory, non_blocking
    assert (11, "explicit-sync") in sites
    assert not any(line == 12 for line, _ in sites)  # 64 bytes: below the reporting threshold
    item_site = next(s for s in report["sites"] if s["line"] == 6)
    assert item_site["op"] == "Tensor.item" and item_site["untimed"] == 0


def test_blocked_host_time_is_measured():
    from synclint.trace import watch

    x = torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    with watch() as report:
        torch.cuda._sleep(int(2e8))  # ~100 ms at ~2 GHz
        x.item()
    site = next(s for s in report.sites if s.op == "Tensor.item")
    assert site.count == 1 and site.blocked_s > 0.02


def test_regions_are_per_thread():
    from synclint.trace import allowed, watch

    x = torch.ones(4, device="cuda")
    ready, go = threading.Event(), threading.Event()

    def background():
        ready.set()
        go.wait(10)
        x.sum().item()  # another thread's sync: not this watch's business

    thread = threading.Thread(target=background)
    thread.start()
    with watch() as report:
        ready.wait(10)
        go.set()
        thread.join(10)
        with allowed():
            x.max().item()  # intentional: counted, not reported
        x.min().item()
    assert report.allowed == 1
    assert [s.op for s in report.sites] == ["Tensor.item"]
    assert report.sites[0].count == 1 and report.sites[0].threads == ["MainThread"]


def test_fixed_pattern_reports_nothing():
    from synclint.runtime import async_tensor_h2d
    from synclint.trace import watch

    ids = list(range(100000))
    async_tensor_h2d(ids, device="cuda")
    torch.cuda.synchronize()
    with watch() as report:
        async_tensor_h2d(ids, device="cuda")
    torch.cuda.synchronize()
    assert report.sites == []


def test_compare_confirms_a_flagged_line_and_lists_an_unflagged_sync_first(tmp_path):
    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent(
        """\
        import torch


        def _prepare_inputs(token_ids, device):
            return torch.tensor(token_ids, dtype=torch.long, device=device)


        def step(values):
            return bool(values.sum() > 0)


        ids = _prepare_inputs(list(range(1024)), "cuda")
        step(ids)
        """
    ))
    run = subprocess.run([sys.executable, "-m", "synclint.trace", "--compare", "--", "python", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    runtime_only, rest = run.stderr.split("Confirmed by both", 1)
    assert "serve.py:9: sync Tensor.__bool__" in runtime_only  # `values` is a parameter: placement unknown
    assert "serve.py:5: sync torch.tensor" in rest and "[SL101]" in rest
