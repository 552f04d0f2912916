"""`# noqa`, `# noqa: SL101`, `# synclint: ignore[SL101]` and `# synclint: skip-file`."""

from __future__ import annotations

import re

from synclint.violation import Violation

SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*synclint:[ \t]*skip-file\b", re.M)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*synclint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_ALL = frozenset({"*"})


_SKIP_COMMENT = re.compile(r"#[ \t]*synclint:[ \t]*skip-file\b")


def skips_file(text: str) -> bool:
    """A `# synclint: skip-file` comment on a line of its own: a real comment token, not
    the same words inside a string literal."""
    if SKIP_FILE.search(text) is None:
        return False
    import io
    import tokenize

    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and _SKIP_COMMENT.match(tok.string) and not tok.line[: tok.start[1]].strip():
                return True
    except (tokenize.TokenError, SyntaxError, ValueError):
        return True  # not tokenizable: the comment-looking line is taken at its word
    return False


def _comment(line: str) -> str | None:
    """The comment part of one line, skipping `#` inside string literals on that line."""
    quote: str | None = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
        elif ch == "#":
            return line[i:]
        elif ch in "'\"":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            i += len(quote)
            continue
        i += 1
    return None


def codes_suppressed_on(line: str) -> frozenset[str] | None:
    """Codes a line's comment suppresses: None for none, {"*"} for all."""
    lowered = line.lower()  # `# NOQA` counts, as in flake8 and ruff
    if "noqa" not in lowered and "synclint" not in lowered:
        return None
    comment = _comment(line)
    if comment is None:
        return None
    found: set[str] = set()
    for pattern in (_NOQA, _IGNORE):
        for match in pattern.finditer(comment):
            codes = match.group("codes")
            if not codes:
                return _ALL
            found.update(c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c)
    return frozenset(found) if found else None


def is_suppressed(violation: Violation, lines: list[str]) -> bool:
    rows = {violation.location.row}
    if violation.noqa_row:
        rows.add(violation.noqa_row)
    for row in rows:
        if 1 <= row <= len(lines):
            codes = codes_suppressed_on(lines[row - 1])
            if codes is not None and (codes is _ALL or violation.code in codes):
                return True
    return False
