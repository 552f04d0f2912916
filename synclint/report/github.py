"""GitHub Actions workflow commands: one `::warning ...::message` line per finding, titled
`synclint (CODE)`, the message ending with the confidence."""

from __future__ import annotations

import os

from synclint.violation import IO_ERROR, SYNTAX_ERROR

_INPUT_CODES = (SYNTAX_ERROR, IO_ERROR)  # about the file, not a placement: no confidence


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _relpath(path: str) -> str:
    """Relative to the working directory (GitHub resolves it against the workspace); a file
    outside it keeps its absolute path rather than a chain of `../`."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return os.path.abspath(path) if rel.startswith("..") else rel


def render(violations, sources=None, explain=False) -> str:
    out = []
    for v in violations:
        level = {"error": "error", "warning": "warning", "note": "notice"}[v.severity.value]
        title = f"synclint ({v.code})"
        props = (
            f"file={_escape_property(_relpath(v.filename))},line={v.location.row},col={v.location.column},"
            f"endLine={v.end_location.row},endColumn={v.end_location.column},title={_escape_property(title)}"
        )
        message = v.message if v.code in _INPUT_CODES else f"{v.message} (confidence: {v.confidence.label})"
        out.append(f"::{level} {props}::{_escape_data(message)}")
    return "\n".join(out) + ("\n" if out else "")
