"""Does a snippet make the host wait for the GPU? The method of docs/gpu-proof.md:

1. warm the snippet up twice, synchronize;
2. calibrate `torch.cuda._sleep` cycles against CUDA events after the warm-up (the SM clock
   ramps up under load);
3. queue a sleep of >= 50 ms (and >= 20x the snippet's idle host time) on the snippet's
   stream, with an event after it;
4. time the snippet on the host, then query the event at once;
5. stall ratio = (busy host time - idle host time) / sleep time; median of 5 trials.
   STALL: ratio >= 0.5 with the event done in >= 4 of 5; CLEAN: ratio <= 0.1 with the
   event pending in 5 of 5; otherwise UNCLEAR, re-run once with a 4x longer backlog.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

STALL, CLEAN, UNCLEAR, ERROR = "STALL", "CLEAN", "UNCLEAR", "ERROR"
TRIALS = 5
MIN_BACKLOG_MS = 50.0
IDLE_FACTOR = 20.0


@dataclass
class Measurement:
    verdict: str
    stall_ratio: float | None = None
    ratios: list[float] = field(default_factory=list)
    event_done: list[bool] = field(default_factory=list)  # the sleep had finished when the snippet returned
    backlog_ms: float | None = None
    idle_ms: float | None = None
    busy_ms: float | None = None  # median host time under the backlog
    sync_debug_mode: bool | None = None  # torch.cuda.set_sync_debug_mode("error") raised
    error: str | None = None

    def to_json(self) -> dict:
        out = {
            "verdict": self.verdict,
            "stall_ratio": None if self.stall_ratio is None else round(self.stall_ratio, 3),
            "sync_debug_mode": self.sync_debug_mode,
            "event_done": self.event_done,
            "backlog_ms": None if self.backlog_ms is None else round(self.backlog_ms, 1),
            "idle_ms": None if self.idle_ms is None else round(self.idle_ms, 3),
            "busy_ms": None if self.busy_ms is None else round(self.busy_ms, 3),
            "ratios": [round(r, 3) for r in self.ratios],
        }
        if self.error:
            out["error"] = self.error
        return out


def verdict_of(ratio: float, done: list[bool]) -> str:
    if ratio >= 0.5 and sum(done) >= len(done) - 1:
        return STALL
    if ratio <= 0.1 and not any(done):
        return CLEAN
    return UNCLEAR


class SleepClock:
    """`torch.cuda._sleep` cycles per millisecond, measured with events."""

    def __init__(self, torch) -> None:
        self.torch = torch
        self.cycles_per_ms = 1.8e6

    def calibrate(self) -> float:
        torch = self.torch
        for _ in range(3):  # the first runs ramp the clock up; keep the last
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            cycles = int(self.cycles_per_ms * 10)
            start.record()
            torch.cuda._sleep(cycles)
            end.record()
            end.synchronize()
            self.cycles_per_ms = cycles / max(start.elapsed_time(end), 1e-3)
        return self.cycles_per_ms

    def cycles(self, ms: float) -> int:
        return int(self.cycles_per_ms * ms)


def _host_ms(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1e3, out


def measure(fn, torch, *, trials: int = TRIALS, min_backlog_ms: float = MIN_BACKLOG_MS) -> Measurement:
    """Measure the zero-argument callable `fn` (which runs the snippet on the current stream)."""
    try:
        for _ in range(2):
            fn()
        torch.cuda.synchronize()
        clock = SleepClock(torch)
        clock.calibrate()
        idle = []
        for _ in range(3):
            torch.cuda.synchronize()
            idle.append(_host_ms(fn)[0])
        torch.cuda.synchronize()
        idle_ms = statistics.median(idle)
        backlog = max(min_backlog_ms, IDLE_FACTOR * idle_ms)
        result = _trials(fn, torch, clock, backlog, idle_ms, trials)
        if result.verdict == UNCLEAR:
            result = _trials(fn, torch, clock, backlog * 4, idle_ms, trials)
        result.sync_debug_mode = debug_mode_fires(fn, torch)
        return result
    except Exception as exc:  # noqa: BLE001 - a broken case is reported, never hidden
        torch.cuda.synchronize()
        return Measurement(ERROR, error=f"{exc.__class__.__name__}: {exc}")


def _trials(fn, torch, clock: SleepClock, backlog_ms: float, idle_ms: float, trials: int) -> Measurement:
    stream = torch.cuda.current_stream()
    ratios, done, busy = [], [], []
    for _ in range(trials):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        torch.cuda._sleep(clock.cycles(backlog_ms))
        end.record(stream)
        busy_ms, _ = _host_ms(fn)
        done.append(bool(end.query()))
        torch.cuda.synchronize()
        sleep_ms = start.elapsed_time(end)
        ratios.append((busy_ms - idle_ms) / sleep_ms)
        busy.append(busy_ms)
    ratio = statistics.median(ratios)
    return Measurement(verdict_of(ratio, done), ratio, ratios, done, backlog_ms, idle_ms, statistics.median(busy))


def debug_mode_fires(fn, torch) -> bool:
    """Whether `set_sync_debug_mode("error")` raises inside the snippet (process-global: set
    and reset around this one call)."""
    torch.cuda.synchronize()
    from synclint.trace.hooks import set_debug_mode_quietly

    previous = torch.cuda.get_sync_debug_mode()
    set_debug_mode_quietly(torch, "error")
    try:
        fn()
        return False
    except RuntimeError as exc:
        if "synchronizing" in str(exc):
            return True
        raise
    finally:
        set_debug_mode_quietly(torch, previous)
        torch.cuda.synchronize()
