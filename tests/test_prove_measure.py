"""The stall measurement, run against a simulated CUDA queue on the CPU: a queue that a
`_sleep` fills for real wall-clock time, events that complete when the queue reaches them,
and a `synchronize` that waits for the queue to drain. Checks the method end to end (ratio,
event query, verdict, debug-mode label) without a GPU; tests/test_prove_gpu.py checks it on
one."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from synclint.prove.measure import CLEAN, ERROR, STALL, UNCLEAR, measure


class FakeCuda:
    CYCLES_PER_MS = 1.9e6

    def __init__(self) -> None:
        self.queue_end = time.perf_counter()
        self.mode = 0
        cuda = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.at = None

            def record(self, stream=None) -> None:
                self.at = max(time.perf_counter(), cuda.queue_end)

            def query(self) -> bool:
                return time.perf_counter() >= self.at

            def synchronize(self) -> None:
                time.sleep(max(0.0, self.at - time.perf_counter()))

            def elapsed_time(self, end) -> float:
                return (end.at - self.at) * 1e3

        self.Event = Event

    def _sleep(self, cycles: int) -> None:
        self.queue_end = max(time.perf_counter(), self.queue_end) + cycles / self.CYCLES_PER_MS / 1e3

    def synchronize(self) -> None:
        time.sleep(max(0.0, self.queue_end - time.perf_counter()))

    def current_stream(self):
        return None

    def get_sync_debug_mode(self):
        return self.mode

    def set_sync_debug_mode(self, mode) -> None:
        self.mode = mode

    def readback(self) -> int:
        """What `.item()` does: PyTorch's debug mode check, then wait for the queue."""
        if self.mode == "error":
            raise RuntimeError("called a synchronizing CUDA operation")
        self.synchronize()
        return 1


@pytest.fixture
def cuda():
    return FakeCuda()


def test_a_readback_is_a_stall(cuda):
    m = measure(cuda.readback, SimpleNamespace(cuda=cuda), trials=3, min_backlog_ms=150)
    assert m.verdict == STALL
    assert 0.9 < m.stall_ratio < 1.1 and m.event_done == [True] * 3
    assert m.backlog_ms == max(150.0, 20 * m.idle_ms) and m.sync_debug_mode is True


def test_work_that_only_queues_is_clean(cuda):
    m = measure(lambda: cuda._sleep(1000), SimpleNamespace(cuda=cuda), trials=3, min_backlog_ms=150)
    assert m.verdict == CLEAN
    assert abs(m.stall_ratio) < 0.1 and m.event_done == [False] * 3
    assert m.sync_debug_mode is False


def test_backlog_grows_with_the_snippets_host_time(cuda):
    m = measure(lambda: time.sleep(0.004), SimpleNamespace(cuda=cuda), trials=3)
    assert m.verdict == CLEAN
    assert m.backlog_ms >= 20 * m.idle_ms >= 80


def test_a_half_wait_is_unclear_even_on_a_longer_backlog(cuda):
    def waits_for_a_fixed_time():  # neither idle-fast nor queue-bound: 30 ms whatever the queue
        time.sleep(0.03 if time.perf_counter() < cuda.queue_end else 0.0)

    m = measure(waits_for_a_fixed_time, SimpleNamespace(cuda=cuda), trials=3)
    assert m.verdict == UNCLEAR
    assert m.backlog_ms == 4 * max(50.0, 20 * m.idle_ms)  # re-run once with 4x the backlog


def test_a_failing_snippet_is_an_error_not_a_crash(cuda):
    def broken():
        raise ValueError("shape mismatch")

    m = measure(broken, SimpleNamespace(cuda=cuda))
    assert m.verdict == ERROR and "ValueError: shape mismatch" in m.error
