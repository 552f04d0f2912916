"""The Python API: `watch()` records the syncs of the calling thread, `allowed()` marks
intentional ones. Both are per thread: another thread's syncs are neither recorded by this
thread's `watch()` nor silenced by this thread's `allowed()`."""

from __future__ import annotations

import importlib.util
import threading
from contextlib import contextmanager
from typing import Iterator

from synclint.trace import hooks
from synclint.trace.events import TraceReport


def cuda_device_name() -> str | None:
    """The current CUDA device's name, or None where there is none (or no torch)."""
    try:
        import torch
    except ImportError:
        return None
    try:
        if not torch.cuda.is_available():
            return None
        return torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001 - a broken CUDA install is no device
        return None


@contextmanager
def watch(all_threads: bool = False, debug_mode: bool = True) -> Iterator[TraceReport]:
    """Record synchronizing calls made inside the block by this thread (every thread with
    `all_threads=True`). Yields the `TraceReport`, filled in as the block runs.

    The hooks are installed even without a CUDA device (so the API behaves the same in
    tests); without one, nothing real can sync and the report stays empty.
    """
    device = cuda_device_name()
    report = TraceReport(cuda=device is not None, device=device)
    if importlib.util.find_spec("torch") is None:  # nothing can sync without torch
        yield report
        return
    sink = hooks.Sink(report, None if all_threads else threading.get_ident())
    hooks.install(debug_mode=debug_mode)
    hooks.add_sink(sink)
    try:
        yield report
    finally:
        hooks.remove_sink(sink)
        hooks.uninstall()


@contextmanager
def allowed() -> Iterator[None]:
    """Syncs in this block, on this thread, are intentional: counted, not reported. The
    static rules honour `with synclint.trace.allowed():` too."""
    hooks.enter_allowed()
    try:
        yield
    finally:
        hooks.leave_allowed()
