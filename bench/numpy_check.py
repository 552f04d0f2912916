"""Does `Tensor.numpy()` on a CUDA tensor copy (and wait), or refuse? And `numpy(force=True)`?

    python bench/numpy_check.py            # on a CUDA machine; prints one JSON object

Queues a ~100 ms sleep kernel, then times the call on the host: a stall waits for the
kernel (ratio near 1), a refusal returns at once with the error PyTorch raises.
"""

from __future__ import annotations

import json
import time

import torch


def _cycles_per_ms() -> float:
    torch.cuda._sleep(1_000_000)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(20_000_000)
    end.record()
    torch.cuda.synchronize()
    return 20_000_000 / start.elapsed_time(end)


def _timed(snippet, cycles: int) -> dict:
    torch.cuda.synchronize()
    torch.cuda._sleep(cycles)
    done = torch.cuda.Event()
    done.record()
    t0 = time.perf_counter()
    error = None
    try:
        snippet()
    except Exception as exc:  # noqa: BLE001 - the refusal is the measurement
        error = f"{type(exc).__name__}: {exc}"
    host_ms = (time.perf_counter() - t0) * 1000
    finished = done.query()
    torch.cuda.synchronize()
    return {"host_ms": round(host_ms, 2), "kernel_done_when_returned": finished, "error": error}


def main() -> None:
    x = torch.arange(1024, device="cuda", dtype=torch.float32)
    for _ in range(2):  # warm-up
        x.cpu().numpy()
        x.numpy(force=True)
    per_ms = _cycles_per_ms()
    cycles = int(100 * per_ms)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "sleep_ms": 100}
    out["numpy"] = _timed(lambda: x.numpy(), cycles)
    out["numpy_force"] = _timed(lambda: x.numpy(force=True), cycles)
    out["cpu_numpy"] = _timed(lambda: x.cpu().numpy(), cycles)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
