"""A finding's fingerprint for code-scanning tools (SARIF `partialFingerprints`, GitLab's
`fingerprint`): stable when lines are added or removed above the finding, different for two
findings of one rule on identical lines of the same file.

It hashes the rule code, the path relative to the working directory, the text of the
finding's line with its whitespace removed, and the finding's rank among the findings with
those three equal (the first such one is 0)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

VERSION = "synclint/v1"


def display_path(path: str) -> str:
    """Relative to the working directory, with `/` separators, when inside it; else absolute."""
    if path == "-":
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return Path(path).resolve().as_posix()
    return Path(path).resolve().as_posix() if rel.startswith("..") else Path(rel).as_posix()


def read_source_text(filename: str):
    """A file's text for showing or hashing its lines; for a notebook, {cell: text}."""
    try:
        text = Path(filename).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if filename.endswith(".ipynb"):
        from synclint.notebook import cell_texts

        return cell_texts(text)
    return text


def _line(text: str | None, row: int) -> str:
    if text is None:
        return ""
    lines = text.splitlines()
    return "".join(lines[row - 1].split()) if 1 <= row <= len(lines) else ""


def fingerprints(violations, sources: dict | None = None) -> list[str]:
    """One hex digest per violation, in order. `sources` maps a filename to its text; a file
    missing from it is read from disk (once)."""
    texts: dict[str, str | None] = dict(sources or {})
    seen: dict[tuple, int] = {}
    out = []
    for v in violations:
        if v.filename not in texts:
            texts[v.filename] = read_source_text(v.filename)
        text = texts[v.filename]
        if isinstance(text, dict):  # a notebook: cell index -> cell text
            text = text.get(v.cell)
        key = (v.code, display_path(v.filename), _line(text, v.location.row))
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        out.append(hashlib.sha256("\0".join((*key, str(rank))).encode("utf-8")).hexdigest())
    return out
