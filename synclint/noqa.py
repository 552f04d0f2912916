"""`--add-noqa`: write a `# noqa: CODE` comment on each line that has a finding, as ruff does.

The comment goes on the line that suppression reads (the first line of the finding's
statement, else the flagged line), at the end of the code: after an existing comment, or
merged into an existing `# noqa: CODES` (codes added after the ones there, its reason kept).
A line that ends inside a multi-line string or with a backslash cannot carry a comment; the
next candidate line is used, and a finding with none is left as it is. Running it again
adds nothing: every finding is then suppressed. SL001/SL002 (input problems) cannot be
suppressed and SL003 is about suppressions themselves, so none of them gets a comment.
"""

from __future__ import annotations

import tokenize

from synclint.suppressions import directives_on, source_lines
from synclint.violation import ENGINE_CODES, Violation


def _split_ending(line: str) -> tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body) :]


def commentable_rows(lines: list[str]) -> set[int] | None:
    """Rows whose end is code (a comment may be appended); None when the text does not
    tokenize (a syntax error: nothing is added to such a file)."""
    readline = iter(lines).__next__
    rows: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL):
                rows.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError, StopIteration):
        return None
    return rows


def add_noqa(text: str, violations: list[Violation], reason: str | None = None) -> tuple[str, int, int]:
    """`text` with `# noqa` comments added for `violations`, the number of lines changed and
    the number of findings left without a comment (no line of theirs can carry one)."""
    lines = source_lines(text, keepends=True)
    wanted = [v for v in violations if v.code not in ENGINE_CODES]
    if not wanted:
        return text, 0, 0
    rows_ok = commentable_rows(lines)
    if rows_ok is None:
        return text, 0, len(wanted)
    codes_by_row: dict[int, set[str]] = {}
    skipped = 0
    for v in wanted:
        for row in (v.noqa_row or v.location.row, v.location.row):
            if row in rows_ok and 1 <= row <= len(lines):
                codes_by_row.setdefault(row, set()).add(v.code)
                break
        else:
            skipped += 1
    changed = 0
    for row, codes in sorted(codes_by_row.items()):
        body, ending = _split_ending(lines[row - 1])
        directives = directives_on(body, row)
        if any(d.codes is None for d in directives):
            continue  # a blanket comment already covers every code
        covered = {c for d in directives for c in (d.codes or ())}
        new = sorted(c for c in codes if not any(c.startswith(p) for p in covered))
        if not new:
            continue
        existing = next((d for d in directives if d.kind == "noqa" and d.codes_span), None)
        if existing is not None:
            _, end = existing.codes_span
            body = body[:end] + ", " + ", ".join(new) + body[end:]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(new) + (f" {reason.strip()}" if reason and reason.strip() else "")
        lines[row - 1] = body + ending
        changed += 1
    return "".join(lines), changed, skipped
