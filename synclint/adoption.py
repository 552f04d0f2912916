"""Adopting synclint on a codebase that already has findings: a baseline of the known ones,
and a check of only the lines changed since a git revision.

Baseline (`--baseline FILE`): a JSON file of the findings present when it was written, each
keyed by a fingerprint that does not depend on the row: the code, the path relative to the
baseline's folder, the flagged lines' code (comments and whitespace removed) and the
occurrence index among the findings with those three equal. Lines added or removed above a
finding, or a re-indent, leave it in the baseline; an edit of the flagged line itself, or a
new copy of it, is a new finding.

Changed lines (`--diff-base REV`): `git diff -U0 REV` from the repository's top folder gives
the rows added or changed in each file; untracked files (not ignored) count as wholly new;
files deleted since REV are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from synclint.suppressions import _comment_start, source_lines
from synclint.violation import Violation

BASELINE_VERSION = 1
# A finding spread over more lines than this is keyed by its first lines only.
_MAX_KEY_LINES = 20


class AdoptionError(Exception):
    """A baseline that cannot be read, or a git command that failed: the message says why."""


# --- baseline ----------------------------------------------------------------------------


def _code_of(lines: list[str], v: Violation) -> str:
    first = v.location.row
    last = max(first, min(v.end_location.row, first + _MAX_KEY_LINES - 1))
    parts = []
    for row in range(first, last + 1):
        if 1 <= row <= len(lines):
            line = lines[row - 1]
            cut = _comment_start(line)
            parts.append("".join((line if cut is None else line[:cut]).split()))
    return "\n".join(parts)


def _relative(filename: str, root: Path) -> str:
    if filename == "-":
        return filename
    absolute = os.path.abspath(filename)
    try:
        return Path(os.path.relpath(absolute, root)).as_posix()
    except ValueError:  # another drive on Windows
        return Path(absolute).as_posix()


def fingerprints(violations: list[Violation], root: Path, texts: dict) -> list[str]:
    """One fingerprint per violation, in order. `texts` maps a filename to its text, or for
    a notebook to {cell index: cell text}; a file missing from it is read from disk, once."""
    lines_of: dict[tuple, list[str]] = {}
    seen: dict[tuple, int] = {}
    out: dict[int, str] = {}
    for v in sorted(violations, key=lambda v: v.sort_key):
        cell = getattr(v, "cell", None)
        where = (v.filename, cell)
        if where not in lines_of:
            if v.filename not in texts:
                texts[v.filename] = _read(v.filename)
            text = texts[v.filename]
            if isinstance(text, dict):
                text = text.get(cell)
            lines_of[where] = source_lines(text) if isinstance(text, str) else []
        key = (v.code, _relative(v.filename, root), "" if cell is None else str(cell), _code_of(lines_of[where], v))
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        out[id(v)] = hashlib.sha256("\0".join((*key, str(rank))).encode("utf-8")).hexdigest()[:32]
    return [out[id(v)] for v in violations]


def _read(filename: str) -> str | None:
    try:
        return Path(filename).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def write_baseline(path: Path, violations: list[Violation], texts: dict) -> int:
    root = Path(os.path.abspath(path)).parent
    prints = fingerprints(violations, root, texts)
    entries = sorted(
        (
            {"fingerprint": fp, "code": v.code, "file": _relative(v.filename, root), "message": v.message}
            for v, fp in zip(violations, prints)
        ),
        key=lambda e: (e["file"], e["code"], e["fingerprint"]),
    )
    blob = json.dumps({"synclint-baseline": BASELINE_VERSION, "findings": entries}, indent=2) + "\n"
    try:
        from synclint.fix.write import atomic_write

        atomic_write(path, blob.encode("utf-8"))
    except OSError as exc:
        raise AdoptionError(f"{path}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(entries)


def read_baseline(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AdoptionError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AdoptionError(f"{path}: not a synclint baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("synclint-baseline") != BASELINE_VERSION or not isinstance(data.get("findings"), list):
        raise AdoptionError(f"{path}: not a synclint baseline (write one with --baseline {path} --update-baseline)")
    return {e["fingerprint"] for e in data["findings"] if isinstance(e, dict) and isinstance(e.get("fingerprint"), str)}


def without_baselined(violations: list[Violation], path: Path, texts: dict) -> tuple[list[Violation], int]:
    """The violations not in the baseline at `path`, and how many were hidden."""
    known = read_baseline(path)
    root = Path(os.path.abspath(path)).parent
    prints = fingerprints(violations, root, texts)
    kept = [v for v, fp in zip(violations, prints) if fp not in known]
    return kept, len(violations) - len(kept)


# --- changed lines since a git revision --------------------------------------------------

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
EVERY_LINE = None  # a file that is new since the revision: every line counts


@dataclass
class Changes:
    top: Path
    lines: dict[str, set[int] | None] = field(default_factory=dict)  # real path -> rows (None: all)
    deleted: set[str] = field(default_factory=set)  # real paths deleted since the revision

    def has_file(self, path) -> bool:
        return os.path.realpath(path) in self.lines

    def is_deleted(self, path) -> bool:
        return os.path.realpath(path) in self.deleted

    def touches(self, v: Violation) -> bool:
        rows = self.lines.get(os.path.realpath(v.filename), set())
        if rows is EVERY_LINE:
            return True
        if getattr(v, "cell", None) is not None:
            return bool(rows)  # a notebook's rows count in its cells, git's in its JSON: any change
        return any(row in rows for row in range(v.location.row, max(v.location.row, v.end_location.row) + 1))


def _git(args: list[str], cwd: Path) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise AdoptionError("--diff-base needs git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise AdoptionError(f"`git {' '.join(args)}` took over 120 s") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise AdoptionError(f"`git {' '.join(args)}` failed: {message[0] if message else proc.returncode}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def _unquote(path: str) -> str:
    if path.startswith('"') and path.endswith('"'):
        return path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
    return path


def changed_since(rev: str, cwd: Path | None = None) -> Changes:
    """The rows added or changed in each file since `rev`, in the work tree (staged or not)."""
    cwd = cwd or Path.cwd()
    try:
        top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    except AdoptionError:
        raise AdoptionError(f"--diff-base needs a git repository; {cwd} is not in one") from None
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], top)
    except AdoptionError:
        raise AdoptionError(f"--diff-base: `{rev}` is not a commit of the repository at {top}") from None
    diff = _git(
        ["-c", "core.quotePath=false", "diff", "-U0", "--no-color", "--no-ext-diff", "-M",
         "--src-prefix=a/", "--dst-prefix=b/", rev, "--"],
        top,
    )
    changes = Changes(top)
    old = new = None
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            old = new = None
        elif line.startswith("--- "):
            old = _unquote(line[4:].rstrip("\t"))
        elif line.startswith("+++ "):
            new = _unquote(line[4:].rstrip("\t"))
            if new == "/dev/null":
                if old and old.startswith("a/"):
                    changes.deleted.add(os.path.realpath(top / old[2:]))
                new = None
            elif new.startswith("b/"):
                new = os.path.realpath(top / new[2:])
                changes.lines.setdefault(new, set())
        elif new is not None and line.startswith("@@"):
            match = _HUNK.match(line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or "1")
                rows = changes.lines[new]
                if rows is not EVERY_LINE:
                    rows.update(range(start, start + count))
    for name in _git(["ls-files", "-z", "--others", "--exclude-standard"], top).split("\0"):
        if name:
            changes.lines[os.path.realpath(top / name)] = EVERY_LINE
    return changes
