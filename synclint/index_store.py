"""Keeping the repository index store (synclint/repo/disk.py, `store_folder()`) bounded.

The store holds, per tag (a hash of the index version, the code of the modules a summary
depends on, and the project root), `roots/<tag>` (each file's stat and content digest),
`facts/<tag>` (the solved facts) and `state/<tag>` (the state of the last full solve), and,
shared by every tag, the summary of each file content under `<2 hex>/<62 hex>`. A content
digest covers the code version too, so every upgrade of synclint (and every project root)
starts a new tag and new summaries, and nothing would ever delete the old ones.

After a run has saved (or reused) its tag, `keep_bounded` prunes:

- tags, at most once every `TAG_EVERY` (a marker file's mtime): the `KEEP_TAGS` most recently
  used tags are kept, less those not used for `TAG_MAX_AGE`; a tag's use is the mtime of its
  `roots/` file, which a run refreshes when it reuses the tag without writing it. The tag of
  the current run is never removed. `facts/` and `state/` files without a `roots/` file (no
  run can read them) go once they are older than `GRACE`;
- summaries, right after a tag prune that removed a tag, or else every `SWEEP_EVERY` (another
  marker): a summary named by no `roots/` file left and by no `state/` file left (the full
  solve's digests, which `_incremental` reads back) is removed once it is older than `GRACE`
  (a run that is summarising now has not written its `roots/` file yet), and so is a
  temporary file of an interrupted write. So is every `graph/<fingerprint>` file (the call
  graph's fingerprint of an index, a memo `repo.graph_fingerprint` works out again when
  it is gone).

Another process may read, write or prune the store at the same time: every filesystem error is
ignored (a summary that is gone is summarised again; facts that are gone are solved again),
nothing is followed through a symbolic link, and only files named as the store names them are
removed.
"""

from __future__ import annotations

import marshal
import os
import re
import struct
import time

KEEP_TAGS = 8
TAG_MAX_AGE = 30 * 86400.0
TAG_EVERY = 3600.0
SWEEP_EVERY = 7 * 86400.0
GRACE = 3600.0

TAG_MARKER = ".tags-pruned"
SWEEP_MARKER = ".summaries-swept"
TAG_FOLDERS = ("roots", "facts", "state")

_TAG = re.compile(r"[0-9a-f]{24}\Z")
_BUCKET = re.compile(r"[0-9a-f]{2}\Z")
_BLOB = re.compile(r"[0-9a-f]{62}\Z")
_TEMPORARY = re.compile(r"tmp[a-z0-9_]{8}\.tmp\Z")  # tempfile.mkstemp(suffix=".tmp"), repo._write
_GRAPH_MEMO = re.compile(r"[0-9a-f]{16}\Z")  # `graph/<facts fingerprint>` (repo.graph_fingerprint)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def keep_bounded(folder: str, tag: str, now: float | None = None) -> None:
    """Mark `tag` used and prune the store when its markers say it is time; never raises."""
    try:
        now = time.time() if now is None else now
        touch(folder, tag)
        removed: list[str] = []
        if _due(folder, TAG_MARKER, TAG_EVERY, now):
            removed = prune_tags(folder, tag, now=now)
        if (removed and _claim(folder, SWEEP_MARKER, now)) or _due(folder, SWEEP_MARKER, SWEEP_EVERY, now):
            sweep_summaries(folder, now=now)
    except Exception:  # noqa: BLE001 - pruning the store never fails the lint
        pass


def touch(folder: str, tag: str) -> None:
    """The tag's `roots/` file marked used now (a run that reuses a tag does not write it)."""
    try:
        os.utime(os.path.join(folder, "roots", tag), follow_symlinks=False)
    except (OSError, NotImplementedError, ValueError):
        pass


def prune_tags(folder: str, current: str, now: float | None = None, dry_run: bool = False) -> list[str]:
    """Remove the tags past `KEEP_TAGS` (by last use) or unused for `TAG_MAX_AGE`, never
    `current`; the removed tags (with `dry_run`, those that would be)."""
    now = time.time() if now is None else now
    used: dict[str, float] = {}  # tag -> mtime of its roots/ file
    orphans: dict[str, float] = {}  # tag without a roots/ file -> newest mtime of its files
    for sub in TAG_FOLDERS:
        for entry in _files(os.path.join(folder, sub), _TAG):
            mtime = _mtime(entry)
            if mtime is None:
                continue
            if sub == "roots":
                used[entry.name] = mtime
            else:
                orphans[entry.name] = max(orphans.get(entry.name, mtime), mtime)
    by_use = sorted(used, key=lambda t: (used[t], t), reverse=True)
    kept = {t for t in by_use[:KEEP_TAGS] if now - used[t] <= TAG_MAX_AGE}
    kept.add(current)
    gone = [t for t in by_use if t not in kept]
    gone += sorted(t for t, mtime in orphans.items() if t not in used and t not in kept and now - mtime > GRACE)
    if not dry_run:
        for t in gone:
            for sub in TAG_FOLDERS:  # roots/ first: a run finds no tag rather than part of one
                _unlink(os.path.join(folder, sub, t))
    return gone


def live_digests(folder: str) -> set[str]:
    """The summary digests that the `roots/` and `state/` files in the store name."""
    live: set[str] = set()
    for entry in _files(os.path.join(folder, "roots"), _TAG):
        stats = _load(entry.path)
        if isinstance(stats, dict):
            live.update(st[2] for st in stats.values() if isinstance(st, tuple) and len(st) == 3 and isinstance(st[2], str))
    for entry in _files(os.path.join(folder, "state"), _TAG):
        live.update(d for d in _state_digests(entry.path) if isinstance(d, str))
    return live


def sweep_summaries(folder: str, now: float | None = None, dry_run: bool = False) -> list[str]:
    """Remove the summaries no `roots/` or `state/` file names, and interrupted writes, older
    than `GRACE`; the paths removed (with `dry_run`, those that would be)."""
    now = time.time() if now is None else now
    live = live_digests(folder)
    gone: list[str] = []
    for sub in TAG_FOLDERS:
        for entry in _files(os.path.join(folder, sub), _TEMPORARY):
            _sweep(entry, now, gone, dry_run)
    for bucket in _folders(folder, _BUCKET):
        for entry in _files(bucket.path, None):
            if _BLOB.match(entry.name):
                if bucket.name + entry.name not in live:
                    _sweep(entry, now, gone, dry_run)
            elif _TEMPORARY.match(entry.name):
                _sweep(entry, now, gone, dry_run)
    for entry in _files(os.path.join(folder, "graph"), None):
        if _GRAPH_MEMO.match(entry.name) or _TEMPORARY.match(entry.name):
            _sweep(entry, now, gone, dry_run)  # worked out again where still needed
    return gone


# --- the filesystem, every error ignored -----------------------------------------------------------


def _due(folder: str, marker: str, every: float, now: float) -> bool:
    """Whether `every` seconds have passed since the marker was last set; if so, it is set
    now (before the work, so that concurrent runs do not all do it)."""
    try:
        last = os.stat(os.path.join(folder, marker), follow_symlinks=False).st_mtime
    except OSError:
        last = None
    if last is not None and 0 <= now - last < every:
        return False
    return _claim(folder, marker, now)


def _claim(folder: str, marker: str, now: float) -> bool:
    path = os.path.join(folder, marker)
    try:
        if os.path.islink(path):
            return False
        with open(path, "ab"):
            pass
        os.utime(path, (now, now))
        return True
    except OSError:
        return False


def _folders(folder: str, name):
    try:
        with os.scandir(folder) as entries:
            found = [e for e in entries if name.match(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return found


def _files(folder: str, name) -> list:
    """The plain files (not links) of `folder` whose names match `name` (None: any); none
    when `folder` is itself a link."""
    try:
        if os.path.islink(folder):
            return []
        with os.scandir(folder) as entries:
            return [e for e in entries if (name is None or name.match(e.name)) and e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _mtime(entry) -> float | None:
    try:
        return entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return None


def _sweep(entry, now: float, gone: list, dry_run: bool) -> None:
    mtime = _mtime(entry)
    if mtime is not None and now - mtime > GRACE:
        gone.append(entry.path)
        if not dry_run:
            _unlink(entry.path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _open(path: str):
    return os.fdopen(os.open(path, os.O_RDONLY | _NOFOLLOW), "rb")


def _load(path: str):
    try:
        with _open(path) as handle:
            return marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _state_digests(path: str) -> tuple:
    """The digests a `state/` file names: the third item of its tuple (repo._save_state), read
    from the start of the file without loading the rest (tens of megabytes)."""
    try:
        with _open(path) as handle:
            data = handle.read(1 << 20)
            try:
                found = _marshal_prefix(data, 3)[2]
            except (EOFError, ValueError):
                data += handle.read()
                found = None
        if found is None:
            try:
                found = _marshal_prefix(data, 3)[2]
            except (EOFError, ValueError):
                blob = marshal.loads(data)
                found = blob[2] if isinstance(blob, tuple) and len(blob) > 2 else ()
    except (OSError, ValueError, EOFError, TypeError, IndexError, struct.error):
        return ()
    return found if isinstance(found, tuple) else ()


def _marshal_prefix(data: bytes, count: int) -> list:
    """The first `count` items of the marshalled tuple `data` when they are strings or tuples
    of strings; EOFError when `data` stops before them, ValueError for anything else."""
    refs: list = []
    pos = 0

    def take(n: int) -> bytes:
        nonlocal pos
        if pos + n > len(data):
            raise EOFError
        chunk = data[pos:pos + n]
        pos += n
        return chunk

    def size() -> int:
        n = struct.unpack("<i", take(4))[0]
        if n < 0:
            raise ValueError("negative size")
        return n

    def item(depth: int):
        code = take(1)[0]
        flag, kind = code & 0x80, chr(code & 0x7F)
        if kind == "r":
            index = size()
            if index >= len(refs) or refs[index] is None:
                raise ValueError("bad reference")
            return refs[index]
        if kind in "zZ":
            value = take(take(1)[0]).decode("latin-1")
        elif kind in "aA":
            value = take(size()).decode("latin-1")
        elif kind in "ut":
            value = take(size()).decode("utf-8", "surrogatepass")
        elif kind in "()" and depth < 1:
            slot = len(refs)
            if flag:
                refs.append(None)
            n = take(1)[0] if kind == ")" else size()
            value = tuple(item(depth + 1) for _ in range(n))
            if flag:
                refs[slot] = value
            return value
        else:
            raise ValueError(f"marshal type {kind!r}")
        if flag:
            refs.append(value)
        return value

    code = take(1)[0]
    if chr(code & 0x7F) not in "()":
        raise ValueError("not a tuple")
    if code & 0x80:
        refs.append(None)
    n = take(1)[0] if chr(code & 0x7F) == ")" else size()
    if n < count:
        raise ValueError("short tuple")
    return [item(0) for _ in range(count)]
