"""Write a fixed file: never over an edit made since it was read, never over a read-only file,
and so that a crash or a full disk leaves either the old or the new content."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class WriteRefused(OSError):
    """The file is not written, on purpose (read-only, or changed since it was read)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.strerror = reason


def write_fixed(path: Path, data: bytes, expected: bytes | None = None) -> None:
    """Write `data` over `path`, which held `expected` when it was read (None: do not check).

    Refused (WriteRefused) when the file is read-only (no write permission for us, or no
    write bit at all, which root would otherwise ignore: ruff and black refuse too) or when
    its content is no longer `expected` (an edit made during the run is never lost).
    A file of ours with one link is replaced atomically (temp file, fsync, rename); a file
    with hard links or owned by someone else is rewritten in place, so that its links, owner
    and group stay as they are."""
    target = Path(path).resolve()  # write through a symlink to the file it names, keep the link
    st = os.stat(target)
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise WriteRefused("the file is read-only; not changed (make it writable to fix it)")

    def unchanged() -> None:
        if expected is not None and target.read_bytes() != expected:
            raise WriteRefused("the file changed on disk since it was read; not overwritten (run again)")

    if st.st_nlink > 1 or (hasattr(os, "geteuid") and st.st_uid != os.geteuid()):
        unchanged()
        _write_in_place(target, data)
        return
    atomic_write(target, data, before_replace=unchanged)


def _write_in_place(target: Path, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, before_replace=None) -> None:
    """Temp file in the same folder, fsync, keep the mode (and group), then rename over the
    original. `before_replace()` runs last before the rename; raising there keeps the file."""
    path = Path(path)
    target = path.resolve()  # write through a symlink to the file it names, keep the link
    st = target.stat() if target.exists() else None
    mode = stat.S_IMODE(st.st_mode) if st else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".synclint-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if st is not None and hasattr(os, "chown"):
            try:
                os.chown(tmp, -1, st.st_gid)
            except OSError:
                pass  # not a member of the group: the folder's default group it is
        if before_replace is not None:
            before_replace()
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
