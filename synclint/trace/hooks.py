"""The hooks that see synchronizations at run time, installed while any tracer is active.

Three sources, all process-wide (what each sees is then routed per thread):
- PyTorch's sync debug mode set to "warn": each synchronizing op raises a warning, caught
  in `warnings._showwarnmsg` (the function the C warning machinery calls, which
  `catch_warnings` leaves alone) and kept off stderr.
- Wrapped `Tensor.to` / `Tensor.cuda` / `Tensor.copy_`: a `non_blocking` copy whose host
  side is pageable (or a strided view, which PyTorch copies through a pageable temporary)
  waits for the queue, and debug mode does not report it.
- Wrapped `torch.cuda.synchronize`, `Event.synchronize`, `Stream.synchronize`.

Common readback methods (`item`, `tolist`, `__bool__`, indexing, ...) are wrapped too, only
to time them: a debug-mode warning raised inside one is charged with the call's host time.
Debug mode's warning arrives when the op returns, so a sync outside any wrapped call is
recorded with its time unknown.
"""

from __future__ import annotations

import functools
import threading
import time
import warnings

from synclint.trace.events import EXPLICIT_SYNC, PAGEABLE_COPY, SYNC, SyncEvent
from synclint.trace.frames import FrameFilter

SYNC_WARNING_TEXT = "called a synchronizing CUDA operation"

# Tensor methods timed so that a sync inside them gets its host time.
TIMED_TENSOR_METHODS = (
    "item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__float__", "__index__",
    "__getitem__", "__setitem__", "__format__", "__repr__", "nonzero", "masked_select",
    "unique", "repeat_interleave", "bincount", "histc", "masked_fill_", "index_put_",
    "new_tensor",
)
TIMED_TORCH_FUNCTIONS = (
    "tensor", "as_tensor", "nonzero", "where", "masked_select", "unique", "repeat_interleave",
    "bincount", "histc", "allclose", "equal",
)

# A pageable non_blocking H2D copy waits for the queue once ~4 MiB is outstanding; a single
# 1 MiB copy did not (measured on an H200; SL102 in docs/rules.md). Smaller copies are not reported (a fix such as
# `idx.to(dev, non_blocking=True)` of a small index is fine); many of them at the threshold
# are reported as soon as one reaches it. Copies into pageable memory (D2H) wait at any size: always reported.
PAGEABLE_H2D_REPORT_BYTES = 1 << 20
pageable_h2d_report_bytes = PAGEABLE_H2D_REPORT_BYTES  # `synclint trace --min-copy-bytes`

_local = threading.local()
_lock = threading.RLock()


# A wrapped call in progress, as a list (cheaper than an object on every call):
# [warned by debug mode, event kind or None, detail].
WARNED, KIND, DETAIL = 0, 1, 2


def _scopes() -> list[list]:
    stack = getattr(_local, "scopes", None)
    if stack is None:
        stack = _local.scopes = []
    return stack


# --- per-thread allow regions -------------------------------------------------------------


def allowed_depth() -> int:
    return getattr(_local, "allowed", 0)


def enter_allowed() -> None:
    _local.allowed = allowed_depth() + 1


def leave_allowed() -> None:
    _local.allowed = max(allowed_depth() - 1, 0)


# --- sinks: where events go ---------------------------------------------------------------


class Sink:
    """A recorder: `thread` is None to take every thread's events, else one thread's ident."""

    def __init__(self, report, thread: int | None) -> None:
        self.report = report
        self.thread = thread

    def wants(self, ident: int) -> bool:
        return self.thread is None or self.thread == ident


_sinks: list[Sink] = []
_filter: FrameFilter | None = None


def emit(kind: str, op: str, blocked_s: float | None, detail: str = "", frame=None) -> None:
    """Record one event for every sink that wants this thread, blamed on the innermost user
    frame above `frame` (default: the caller). Public so that tests can feed events in."""
    ident = threading.get_ident()
    sinks = [s for s in tuple(_sinks) if s.wants(ident)]
    if not sinks:
        return
    if allowed_depth():
        for sink in sinks:
            sink.report.allowed += 1
        return
    import sys

    start = frame if frame is not None else sys._getframe(1)
    user = (_filter or FrameFilter()).user_frame(start)
    if user is None:
        filename, line, function = "<unknown>", 0, "<unknown>"
    else:
        filename, line, function = user.f_code.co_filename, user.f_lineno, user.f_code.co_name
    event = SyncEvent(kind, op, filename, line, function, threading.current_thread().name, blocked_s, detail)
    with _lock:
        for sink in sinks:
            sink.report.add(event)


# --- the warning hook ---------------------------------------------------------------------


def _is_sync_warning(msg) -> bool:
    return SYNC_WARNING_TEXT in str(getattr(msg, "message", ""))


def _make_showwarnmsg(original):
    def _showwarnmsg(msg):
        if not _is_sync_warning(msg):
            return original(msg)
        scopes = _scopes()
        if scopes:
            scopes[-1][WARNED] = True  # the wrapped call records it, with its time
        else:
            import sys

            emit(SYNC, "sync_debug_mode", None, frame=sys._getframe(1))
        return None  # never printed: the program's stderr stays as it was

    _showwarnmsg._synclint_hook = True
    return _showwarnmsg


# --- wrappers -----------------------------------------------------------------------------


def _timed(op: str, original, classify=None):
    perf_counter, local = time.perf_counter, _local  # bound once: this runs on every call

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        try:
            scopes = local.scopes
        except AttributeError:
            scopes = local.scopes = []
        scope = [False, None, ""]
        scopes.append(scope)
        start = perf_counter()
        try:
            result = original(*args, **kwargs)
        finally:
            blocked = perf_counter() - start
            scopes.pop()
        if classify is None and not scope[WARNED]:
            return result  # the common case: nothing synced
        if classify is not None and scope[KIND] is None:
            scope[KIND], scope[DETAIL] = classify(args, kwargs, result)
        if scopes:  # nested inside another wrapped call: the outermost one records
            outer = scopes[-1]
            outer[WARNED] = outer[WARNED] or scope[WARNED]
            if outer[KIND] is None and scope[KIND] is not None:
                outer[KIND], outer[DETAIL] = scope[KIND], scope[DETAIL]
            return result
        kind = scope[KIND] or (SYNC if scope[WARNED] else None)
        if kind is not None:
            import sys

            emit(kind, op, blocked, scope[DETAIL], frame=sys._getframe(1))
        return result

    wrapper._synclint_original = original
    return wrapper


def _mib(t) -> str:
    return f"{t.numel() * t.element_size() / 2**20:.1f} MiB"


def _nbytes(t) -> int:
    return t.numel() * t.element_size()


def _host_side_pageable(t) -> bool:
    # A strided view of pinned memory is copied through a pageable contiguous temporary.
    return not t.is_pinned() or not t.is_contiguous()


def _non_blocking(args, kwargs, bool_from: int) -> bool:
    if kwargs.get("non_blocking"):
        return True
    return any(a is True for a in args[bool_from:])


def classify_to(args, kwargs, result):
    """Tensor.to / Tensor.cuda: a non_blocking H2D copy from pageable memory."""
    src = args[0] if args else None
    if src is None or not hasattr(result, "device") or result is src:
        return None, ""
    if not _non_blocking(args, kwargs, 1):
        return None, ""
    if src.device.type == "cpu" and result.device.type != "cpu" and _host_side_pageable(src) and _nbytes(src) >= pageable_h2d_report_bytes:
        return PAGEABLE_COPY, f"H2D {_mib(src)} from pageable memory with non_blocking=True"
    return None, ""


def classify_copy(args, kwargs, result):
    """Tensor.copy_(src, non_blocking=True) between pageable host memory and the device."""
    if len(args) < 2 or not _non_blocking(args, kwargs, 2):
        return None, ""
    dst, src = args[0], args[1]
    if not hasattr(src, "device"):
        return None, ""
    if dst.device.type == "cpu" and src.device.type != "cpu" and _host_side_pageable(dst):
        return PAGEABLE_COPY, f"D2H {_mib(src)} into pageable memory with non_blocking=True"
    if dst.device.type != "cpu" and src.device.type == "cpu" and _host_side_pageable(src) and _nbytes(src) >= pageable_h2d_report_bytes:
        return PAGEABLE_COPY, f"H2D {_mib(src)} from pageable memory with non_blocking=True"
    return None, ""


def classify_explicit(args, kwargs, result):
    return EXPLICIT_SYNC, ""


# --- install / uninstall ------------------------------------------------------------------

_installed = 0
_patches: list[tuple[object, str, object]] = []  # (owner, attribute, original)
_saved: dict = {}


_MISSING = object()


def _patch(owner, name: str, op: str, classify=None) -> None:
    current = getattr(owner, name, None)
    if current is None or getattr(current, "_synclint_original", None) is not None:
        return  # absent in this torch version, or already wrapped
    # On a class, remember only what the class itself defined (Tensor.to lives on its C
    # base): uninstall then deletes the shadowing attribute instead of copying it down.
    own = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else current
    setattr(owner, name, _timed(op, current, classify))
    _patches.append((owner, name, own))


def set_debug_mode_quietly(torch, mode) -> None:
    """`set_sync_debug_mode` warns once that it is a prototype; that warning would land on
    the traced program's stderr, which must stay as the program wrote it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*debug mode is a prototype")
        torch.cuda.set_sync_debug_mode(mode)


def install(debug_mode: bool = True) -> None:
    """Install the hooks (reference counted: nested tracers share them)."""
    global _installed, _filter
    with _lock:
        _installed += 1
        if _installed > 1:
            return
        import torch

        _filter = FrameFilter()
        _saved["showwarnmsg"] = warnings._showwarnmsg
        warnings._showwarnmsg = _make_showwarnmsg(warnings._showwarnmsg)
        warnings.filterwarnings("always", message=SYNC_WARNING_TEXT)
        _saved["filter"] = warnings.filters[0]
        tensor = torch.Tensor
        _patch(tensor, "to", "Tensor.to", classify_to)
        _patch(tensor, "cuda", "Tensor.cuda", classify_to)
        _patch(tensor, "copy_", "Tensor.copy_", classify_copy)
        for name in TIMED_TENSOR_METHODS:
            _patch(tensor, name, f"Tensor.{name}")
        for name in TIMED_TORCH_FUNCTIONS:
            _patch(torch, name, f"torch.{name}")
        import torch.nn.functional as F

        _patch(F, "one_hot", "torch.nn.functional.one_hot")
        _patch(torch.cuda, "synchronize", "torch.cuda.synchronize", classify_explicit)
        _patch(torch.cuda.Event, "synchronize", "Event.synchronize", classify_explicit)
        _patch(torch.cuda.Stream, "synchronize", "Stream.synchronize", classify_explicit)
        accelerator = getattr(torch, "accelerator", None)  # torch >= 2.6
        if accelerator is not None and hasattr(accelerator, "synchronize"):
            _patch(accelerator, "synchronize", "torch.accelerator.synchronize", classify_explicit)
        _saved["debug_mode"] = None
        if debug_mode and torch.cuda.is_available():
            _saved["debug_mode"] = torch.cuda.get_sync_debug_mode()
            set_debug_mode_quietly(torch, "warn")


def uninstall() -> None:
    global _installed
    with _lock:
        if _installed == 0:
            return
        _installed -= 1
        if _installed:
            return
        import torch

        if _saved.get("debug_mode") is not None:
            set_debug_mode_quietly(torch, _saved["debug_mode"])
        for owner, name, original in reversed(_patches):
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        _patches.clear()
        warnings._showwarnmsg = _saved.pop("showwarnmsg")
        entry = _saved.pop("filter", None)
        if entry in warnings.filters:
            warnings.filters.remove(entry)
            mutated = getattr(warnings, "_filters_mutated", None) or getattr(warnings, "_filters_mutated_lock_held", None)
            if mutated is not None:
                mutated()


def add_sink(sink: Sink) -> None:
    with _lock:
        _sinks.append(sink)


def remove_sink(sink: Sink) -> None:
    with _lock:
        if sink in _sinks:
            _sinks.remove(sink)
