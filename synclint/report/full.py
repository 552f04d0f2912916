"""`path:row:col: CODE message`, the source line, a caret span, and the fix title."""

from __future__ import annotations

from synclint.lines import split_lines
from synclint.report.concise import line as headline
from synclint.terminal import PLAIN


def source_text(v, sources) -> str | None:
    """The text the finding's rows count in: the file's, or in a notebook its cell's."""
    text = sources.get(v.filename)
    if isinstance(text, dict):  # a notebook: cell index -> cell text
        return text.get(v.cell)
    return text


def _snippet(v, lines: list[str] | None, style=PLAIN) -> list[str]:
    if lines is None:
        return []
    row = v.location.row
    if not 1 <= row <= len(lines):
        return []
    source = lines[row - 1].expandtabs(1)
    gutter = str(row)
    pad = " " * len(gutter)
    start = v.location.column - 1
    end = v.end_location.column - 1 if v.end_location.row == row else len(source)
    width = max(1, end - start)
    bar = style.blue("|")
    return [f"{pad} {bar}", f"{style.blue(gutter)} {bar} {source}", f"{pad} {bar} {' ' * start}{style.paint('^' * width + ' ' + v.code, 'bold', 'red')}"]


def render(violations, sources=None, explain=False, style=PLAIN, unsafe_fixes=False) -> str:
    sources = sources or {}
    out: list[str] = []
    split: dict[int, list[str]] = {}  # id of a source text -> its lines, split once per text
    for v in violations:
        out.append(headline(v, style, unsafe_fixes))
        text = source_text(v, sources)
        if text is not None and id(text) not in split:
            split[id(text)] = split_lines(text)  # Python's rows, as the findings count them
        out.extend(_snippet(v, None if text is None else split[id(text)], style))
        if v.fix is not None:
            marker = "" if v.fix.applicability.value == "safe" else " (unsafe: --unsafe-fixes)"
            out.append(f"  {style.cyan('= fix:')} {v.fix.message}{marker}")
        if explain:
            for p in v.provenance:
                out.append(f"  = because {p}")
            if v.hot_path:
                out.append(f"  = hot path: {v.hot_path}")
            if v.tier_reason:
                out.append(f"  = tier: {v.tier} ({v.tier_reason})")
        out.append("")
    # Each finding ends with a blank line, the last one too, so the summary stands apart.
    return "\n".join(out) + ("\n" if out else "")
