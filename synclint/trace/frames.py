"""Which frame to blame: the innermost one in the user's code, skipping PyTorch, synclint
itself and the standard library's plumbing (warnings, runpy, threading, contextlib)."""

from __future__ import annotations

import os
import sys
import sysconfig
from types import FrameType


def _package_dir(name: str) -> str | None:
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) + os.sep if path else None


def _stdlib_dirs() -> tuple[str, ...]:
    dirs = set()
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path) + os.sep)
    # site-packages lives under stdlib on some layouts: it is not the standard library.
    return tuple(dirs)


class FrameFilter:
    """Decides, per code file, whether a frame belongs to the user's code (cached)."""

    def __init__(self, extra_skip: tuple[str, ...] = ()) -> None:
        import synclint

        skip = [os.path.dirname(os.path.abspath(synclint.__file__)) + os.sep]
        torch_dir = _package_dir("torch")
        if torch_dir:
            skip.append(torch_dir)
        skip.extend(extra_skip)
        self.skip = tuple(skip)
        self.stdlib = _stdlib_dirs()
        self._cache: dict[str, bool] = {}

    def is_user(self, filename: str) -> bool:
        known = self._cache.get(filename)
        if known is not None:
            return known
        path = os.path.abspath(filename) if not filename.startswith("<") else filename
        if filename.startswith("<frozen") or path.startswith(self.skip):
            user = False
        elif path.startswith(self.stdlib) and "-packages" + os.sep not in path:
            user = False
        else:
            user = True
        self._cache[filename] = user
        return user

    def user_frame(self, frame: FrameType | None) -> FrameType | None:
        while frame is not None:
            if self.is_user(frame.f_code.co_filename):
                return frame
            frame = frame.f_back
        return None
