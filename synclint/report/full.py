"""`path:row:col: CODE message`, the source line, a caret span, and the fix title."""

from __future__ import annotations

from synclint.lines import split_lines
from synclint.report.concise import line as headline


def _snippet(v, text: str | None) -> list[str]:
    if text is None:
        return []
    lines = split_lines(text)  # Python's rows, as the findings count them
    row = v.location.row
    if not 1 <= row <= len(lines):
        return []
    source = lines[row - 1].expandtabs(1)
    gutter = str(row)
    pad = " " * len(gutter)
    start = v.location.column - 1
    end = v.end_location.column - 1 if v.end_location.row == row else len(source)
    width = max(1, end - start)
    return [f"{pad} |", f"{gutter} | {source}", f"{pad} | {' ' * start}{'^' * width} {v.code}"]


def render(violations, sources=None, explain=False) -> str:
    sources = sources or {}
    out: list[str] = []
    for v in violations:
        out.append(headline(v))
        out.extend(_snippet(v, sources.get(v.filename)))
        if v.fix is not None:
            marker = "" if v.fix.applicability.value == "safe" else " (unsafe: --unsafe-fixes)"
            out.append(f"  = fix: {v.fix.message}{marker}")
        if explain:
            for p in v.provenance:
                out.append(f"  = because {p}")
            if v.hot_path:
                out.append(f"  = hot path: {v.hot_path}")
        out.append("")
    # Each finding ends with a blank line, the last one too, so the summary stands apart.
    return "\n".join(out) + ("\n" if out else "")
