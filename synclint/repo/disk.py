"""The index store's files: where the store lives (shared by every checkout of a project), a
file written atomically, and read back as nothing when it is missing or damaged.
"""

from __future__ import annotations

import marshal
import os
import tempfile
from pathlib import Path


def store_folder() -> Path:
    """Summaries are stored by content hash, shared by every checkout of a project on this
    machine (a branch switch or a second worktree reads them back)."""
    explicit = os.environ.get("SYNCLINT_INDEX_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "synclint" / "index"


def _write(path: str, blob: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass


def _read(path: str):
    try:
        with open(path, "rb") as handle:
            return marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None
