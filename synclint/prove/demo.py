"""The throughput demo: a pipelined loop (about 2 ms of GPU work and 0.5-2 ms of host work
per step, the shape of a decode step measured on an H200) run as written and as synclint's fixer rewrites it."""

from __future__ import annotations

import statistics
import time
import types

# The loop as an inference engine writes it: each step copies its input ids to the device,
# builds the rest of its metadata on the host, then queues the model's work. Unfixed, the
# blocking copy waits until the previous step's GPU work has drained, and the GPU then sits
# idle during the host work: a step costs host + GPU time. Fixed, the copy is queued, the
# host work overlaps the previous step's GPU work, and a step costs the larger of the two.
DEMO_SOURCE = '''\
import time

import torch


def _prepare_inputs(token_ids, device):
    return torch.tensor(token_ids, dtype=torch.long, device=device)


def run(x, weight, layers, steps, host_ms, device):
    for step in range(steps):
        ids = _prepare_inputs(list(range(step, step + 512)), device)
        deadline = time.perf_counter() + host_ms / 1e3
        while time.perf_counter() < deadline:
            pass
        bias = ids.sum().to(x.dtype) * 1e-6
        for _ in range(layers):
            x = torch.tanh(x @ weight + bias)
    return x
'''

HOST_MS = (0.5, 1.0, 2.0)
STEPS = 200
GPU_MS_PER_STEP = 2.0


def fixed_demo_source() -> tuple[str, int]:
    from synclint.config import Settings
    from synclint.api import fix_source

    result = fix_source(DEMO_SOURCE, "demo.py", Settings(), unsafe=True)
    return result.fixed, result.applied


def _module(source: str, name: str):
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def _layers_for(torch, x, weight, target_ms: float) -> tuple[int, float]:
    bias = x[0, 0] * 0
    for _ in range(5):
        torch.tanh(x @ weight + bias)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        torch.tanh(x @ weight + bias)
    end.record()
    end.synchronize()
    per_layer = start.elapsed_time(end) / 20
    return max(1, round(target_ms / per_layer)), per_layer


def run_demo(torch, device) -> dict:
    fixed_source, applied = fixed_demo_source()
    if not applied:
        return {"error": "the fixer changed nothing in the demo loop"}
    unfixed, fixed = _module(DEMO_SOURCE, "demo_unfixed"), _module(fixed_source, "demo_fixed")
    gen = torch.Generator(device="cpu").manual_seed(0)
    x0 = (torch.randn(4096, 4096, generator=gen) * 0.01).to(device, torch.bfloat16)
    weight = (torch.randn(4096, 4096, generator=gen) * 0.01).to(device, torch.bfloat16)
    layers, per_layer_ms = _layers_for(torch, x0, weight, GPU_MS_PER_STEP)
    rows = []
    for host_ms in HOST_MS:
        row = {"host_ms": host_ms}
        for label, module in (("unfixed", unfixed), ("fixed", fixed)):
            module.run(x0, weight, layers, 10, host_ms, device)  # warm-up
            torch.cuda.synchronize()
            times = []
            for _ in range(3):
                torch.cuda.synchronize()
                start = time.perf_counter()
                out = module.run(x0, weight, layers, STEPS, host_ms, device)
                torch.cuda.synchronize()
                times.append((time.perf_counter() - start) * 1e3 / STEPS)
            row[f"{label}_ms_per_step"] = round(statistics.median(times), 3)
            row[f"{label}_result"] = out
        row["speedup"] = round(row["unfixed_ms_per_step"] / row["fixed_ms_per_step"], 3)
        try:
            torch.testing.assert_close(row.pop("fixed_result"), row.pop("unfixed_result"))
            row["results_match"] = True
        except AssertionError:
            row["results_match"] = False
        rows.append(row)
    return {
        "pattern": "torch.tensor(token_ids, dtype=torch.long, device=device) once per step (SL101)",
        "fix": "as synclint --fix rewrites it: a pinned, non_blocking copy written with torch alone",
        "gpu_ms_per_step": round(layers * per_layer_ms, 3),
        "layers": layers,
        "steps": STEPS,
        "rows": rows,
    }
