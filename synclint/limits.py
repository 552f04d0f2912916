"""Bounds on what one file may cost: stack depth, time and memory.

One pathological file must never take the run down with it. libcst generates code and
visits trees recursively, so a deeply nested but valid file (an `if` with 500 `elif`s) needs
a deeper stack than Python's default: such a file is analysed again in a thread with a large
stack and a raised recursion limit (`run_deep`), up to a fixed depth. Time and memory are
watched by a timer while a file is linted or fixed (`guard`); going over turns into an SL002
finding naming the file (the runner's job), never an internal error.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

# The stack and recursion limit for the second try of a file too deep for the default stack.
DEEP_STACK_BYTES = 512 * 1024 * 1024  # address space, touched only as deep as the file needs
DEEP_RECURSION_LIMIT = 200_000
# Per file, lint and fix together (seconds, and bytes of resident memory above the start).
FILE_TIME_LIMIT_S = float(os.environ.get("SYNCLINT_FILE_TIME_LIMIT", 300))
FILE_MEMORY_LIMIT = int(float(os.environ.get("SYNCLINT_FILE_MEMORY_LIMIT_MB", 4096)) * 1024 * 1024)
_TICK_S = 0.2


class FileLimitExceeded(BaseException):
    """A file went over its time or memory allowance. A BaseException, as KeyboardInterrupt
    is, so that no `except Exception` on the way swallows it."""


class TooDeep(Exception):
    """A file nests deeper than even the deep stack allows."""


_deep_lock = threading.Lock()


def run_deep(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` in a thread with a large stack and a raised recursion limit.
    RecursionError there becomes TooDeep. Waits in short slices, so that the timer of `guard`
    can still interrupt the caller."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except RecursionError:
            box["error"] = TooDeep(f"nesting deeper than {DEEP_RECURSION_LIMIT:,} frames")
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    with _deep_lock:  # the stack size and the recursion limit are process-wide settings
        old_limit = sys.getrecursionlimit()
        old_size = threading.stack_size()
        try:
            threading.stack_size(DEEP_STACK_BYTES)
            thread = threading.Thread(target=target, name="synclint-deep", daemon=True)
            sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
            thread.start()
        finally:
            threading.stack_size(old_size)
        try:
            while thread.is_alive():
                thread.join(0.05)
        finally:
            sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


@contextmanager
def guard(what: str, seconds: float | None = None, memory: int | None = None):
    """Raise FileLimitExceeded in the calling (main) thread when the block runs longer than
    `seconds` or grows the resident memory by more than `memory` bytes. A no-op outside the
    main thread or where there is no interval timer."""
    seconds = FILE_TIME_LIMIT_S if seconds is None else seconds
    memory = FILE_MEMORY_LIMIT if memory is None else memory
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    start = time.monotonic()
    base = _resident_bytes()
    fired = []

    def on_tick(signum, frame) -> None:
        if fired:
            return
        elapsed = time.monotonic() - start
        if seconds and elapsed > seconds:
            fired.append(1)
            raise FileLimitExceeded(f"{what} took over {seconds:g} s (the per-file time limit); skipped")
        if memory and base and _resident_bytes() - base > memory:
            fired.append(1)
            raise FileLimitExceeded(f"{what} needed over {memory // (1024 * 1024):,} MiB (the per-file memory limit); skipped")

    previous = signal.signal(signal.SIGALRM, on_tick)
    signal.setitimer(signal.ITIMER_REAL, _TICK_S, _TICK_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
