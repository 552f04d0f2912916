"""Suppression comments, and the unused-suppression check (SL003).

- `# noqa` (every code), `# noqa: SL101`, `# noqa: SL2` (a prefix: the whole SL2 family),
  `# noqa: SL101, SL201 reason...`;
- `# synclint: ignore`, `# synclint: ignore[SL101, SL2] reason...`;
- `# gpu-sync-ok: reason`: the convention some inference engines use to mark a deliberate
  sync; it suppresses every code on its line;
- `# synclint: skip-file` on a line of its own skips the file.

A comment counts on the flagged line or on the first line of the finding's statement. The
text after the codes is the reason; it is kept and shown by `--show-suppressions`.

SL003 reports a `# noqa: CODES` or `# synclint: ignore[...]` that suppresses nothing among
the rules enabled for the file (ruff's RUF100). A code of a rule that is not enabled is not
"unused" (another configuration may enable it); a blanket `# noqa` is never reported (other
linters read it too), nor is `# gpu-sync-ok` (other tools read it). Its safe fix removes the
unused codes, or the whole comment when none is used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from synclint.lines import split_lines
from synclint.violation import (
    Applicability,
    Confidence,
    Edit,
    Fix,
    Location,
    Severity,
    UNUSED_SUPPRESSION,
    Violation,
)

SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*synclint:[ \t]*skip-file\b", re.M)
_CODE = r"[A-Z]+[0-9]+"
_NOQA = re.compile(rf"#\s*(?i:noqa)(?::\s*(?P<codes>{_CODE}(?:(?:\s*,\s*|\s+){_CODE})*))?(?P<rest>[^#]*)")
_IGNORE = re.compile(r"#\s*synclint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?(?P<rest>[^#]*)")
_GPU_SYNC_OK = re.compile(r"#\s*gpu-sync-ok\b(?P<rest>[^#]*)")
_OURS = re.compile(r"SL[0-9]+$")
_A_CODE = re.compile(rf"{_CODE}$")
_WORDS = ("noqa", "synclint", "gpu-sync-ok")
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


def _comment_start(line: str) -> int | None:
    """Where a line's comment starts, skipping `#` inside string literals on that line."""
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
            return i
        elif ch in "'\"":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            i += len(quote)
            continue
        i += 1
    return None


def _comment(line: str) -> str | None:
    start = _comment_start(line)
    return None if start is None else line[start:]


def _reason(rest: str) -> str | None:
    """The free text after a directive's codes: `  -- warm-up only` -> `warm-up only`."""
    reason = rest.strip().lstrip(":-\u2013\u2014 \t").strip()
    return reason or None


@dataclass
class Directive:
    """One suppression comment on one line. Columns are 0-based offsets in the line."""

    row: int
    kind: str  # "noqa", "ignore" or "gpu-sync-ok"
    codes: tuple[str, ...] | None  # None: every code
    reason: str | None
    start: int  # the `#`
    end: int  # after the codes (or the reason, when there is one)
    codes_span: tuple[int, int] | None = None  # where the codes are written
    used: set[str] = field(default_factory=set)  # selectors that suppressed something ("*": blanket)

    @property
    def text(self) -> str:
        if self.kind == "gpu-sync-ok":
            return "# gpu-sync-ok"
        if self.kind == "noqa":
            return "# noqa" + (f": {', '.join(self.codes)}" if self.codes else "")
        return "# synclint: ignore" + (f"[{', '.join(self.codes)}]" if self.codes is not None else "")

    def selectors_for(self, code: str) -> list[str]:
        """The selectors of this directive that cover `code` (["*"] for a blanket one)."""
        if self.codes is None:
            return ["*"]
        return [c for c in self.codes if code.startswith(c)]


def directives_on(line: str, row: int) -> list[Directive]:
    """The suppression directives in a line's comment (none when it has no comment)."""
    lowered = line.lower()
    if not any(word in lowered for word in _WORDS):
        return []
    start = _comment_start(line)
    if start is None:
        return []
    found: list[Directive] = []
    for kind, pattern in (("noqa", _NOQA), ("ignore", _IGNORE), ("gpu-sync-ok", _GPU_SYNC_OK)):
        for match in pattern.finditer(line, start):
            rest = match.group("rest")
            reason = _reason(rest)
            end = match.end("rest") if reason else match.end("rest") - len(rest)
            codes: tuple[str, ...] | None = None
            span = None
            if kind != "gpu-sync-ok" and match.group("codes") is not None:
                raw = match.group("codes")
                codes = tuple(c.upper() for c in re.split(r"[\s,]+", raw.strip()) if c)
                span = (match.start("codes"), match.end("codes"))
                if kind == "ignore" and not codes:
                    codes = None  # `ignore[]`: as a blanket ignore
            found.append(Directive(row, kind, codes, reason, match.start(), end, span))
    found.sort(key=lambda d: d.start)
    return found


def codes_suppressed_on(line: str) -> frozenset[str] | None:
    """Codes (or prefixes) a line's comment suppresses: None for none, {"*"} for all."""
    found: set[str] = set()
    for directive in directives_on(line, 0):
        if directive.codes is None:
            return _ALL
        found.update(directive.codes)
    return frozenset(found) if found else None


def source_lines(text: str, keepends: bool = False) -> list[str]:
    """The file's lines as the parser counts them (row N is item N-1): `lines.split_lines`."""
    return split_lines(text, keepends)


class FileSuppressions:
    """The directives of one file, read once, and which of them suppressed something."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._by_row: dict[int, list[Directive]] = {}

    def on_row(self, row: int) -> list[Directive]:
        if row not in self._by_row:
            self._by_row[row] = directives_on(self.lines[row - 1], row) if 1 <= row <= len(self.lines) else []
        return self._by_row[row]

    def suppressing(self, violation: Violation) -> Directive | None:
        """The directive that suppresses `violation` (marking every one that covers it as
        used, so that a needed comment is never called unused), or None."""
        rows = [violation.location.row]
        if violation.noqa_row and violation.noqa_row != violation.location.row:
            rows.append(violation.noqa_row)
        first = None
        for row in rows:
            for directive in self.on_row(row):
                selectors = directive.selectors_for(violation.code)
                if selectors:
                    directive.used.update(selectors)
                    first = first or directive
        return first

    def all_directives(self) -> list[Directive]:
        for row in range(1, len(self.lines) + 1):
            self.on_row(row)
        return [d for row in sorted(self._by_row) for d in self._by_row[row]]

    def unused(self, filename: str, enabled: frozenset[str], known: tuple[str, ...]) -> list[Violation]:
        """SL003 findings: the `noqa` / `ignore` directives (or codes in them) that suppressed
        nothing although the rule they name is enabled (or the code is unknown)."""
        out = []
        for directive in self.all_directives():
            if directive.kind == "gpu-sync-ok" or (directive.kind == "noqa" and directive.codes is None):
                continue
            if any(UNUSED_SUPPRESSION.startswith(c) for d in self.on_row(directive.row) for c in (d.codes or ())):
                continue  # `# noqa: SL003` keeps the comments of its line
            if directive.codes is None:
                if not directive.used:
                    out.append(self._violation(filename, directive, [], ""))
                continue
            unused, unknown = [], []
            for selector in directive.codes:
                if selector in directive.used or not _A_CODE.match(selector):
                    continue  # used, or not a code (`ignore[CODE]` written in prose)
                if directive.kind == "noqa" and not _OURS.match(selector):
                    continue  # another linter's code
                if not any(code.startswith(selector) for code in known):
                    unknown.append(selector)
                elif any(code.startswith(selector) for code in enabled):
                    unused.append(selector)
            if unused or unknown:
                out.append(self._violation(filename, directive, unused + unknown, _why(unused, unknown)))
        if out:
            # Only a real comment is reported (and fixed): not `# noqa: X` quoted in a
            # docstring. Tokenizing costs; it is done only for a file with a candidate.
            comments = _comment_starts(self.lines)
            out = [v for v in out if any(c <= v.location.column - 1 for c in comments.get(v.location.row, ()))]
        return out

    def _violation(self, filename: str, directive: Directive, dead: list[str], why: str) -> Violation:
        line = self.lines[directive.row - 1]
        row = directive.row
        keep = [c for c in (directive.codes or ()) if c not in dead]
        if directive.codes is not None and keep and directive.codes_span is not None:
            a, b = directive.codes_span
            edit = Edit(", ".join(keep), Location(row, a + 1), Location(row, b + 1))
            fix = Fix(Applicability.SAFE, f"Remove unused code{'s' * (len(dead) != 1)} {', '.join(dead)}", (edit,))
        else:
            fix = Fix(Applicability.SAFE, "Remove the unused suppression comment", (_removal(line, row, directive),))
        what = directive.text
        detail = f" ({why})" if why else ""
        return Violation(
            code=UNUSED_SUPPRESSION,
            message=f"Unused suppression `{what}`{detail}",
            filename=filename,
            location=Location(row, directive.start + 1),
            end_location=Location(row, directive.end + 1),
            fix=fix,
            severity=Severity.WARNING,
            confidence=Confidence.HIGH,
            noqa_row=row,
        )


def _comment_starts(lines: list[str]) -> dict[int, list[int]]:
    """Row -> columns (0-based) where a comment token starts; empty when the text does not
    tokenize."""
    import io
    import tokenize

    starts: dict[int, list[int]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if tok.type == tokenize.COMMENT:
                starts.setdefault(tok.start[0], []).append(tok.start[1])
    except (tokenize.TokenError, SyntaxError):
        return {}
    return starts


def _why(unused: list[str], unknown: list[str]) -> str:
    parts = []
    if unused:
        parts.append(f"unused: {', '.join(unused)}")
    if unknown:
        parts.append(f"unknown: {', '.join(unknown)}")
    return "; ".join(parts)


def _removal(line: str, row: int, directive: Directive) -> Edit:
    """An edit that deletes a directive (and its reason) from its line: with the spaces
    before it when it ends the line, with the spaces after it when another comment follows,
    the whole line when the directive is all there is on it."""
    before = line[: directive.start]
    after = line[directive.end :]
    if not before.strip() and not after.strip():
        return Edit("", Location(row, 1), Location(row + 1, 1))
    if after.strip():
        stop = directive.end + (len(after) - len(after.lstrip()))
        return Edit("", Location(row, directive.start + 1), Location(row, stop + 1))
    begin = len(before.rstrip())
    return Edit("", Location(row, begin + 1), Location(row, len(line) + 1))


def is_suppressed(violation: Violation, lines: list[str]) -> bool:
    return FileSuppressions(lines).suppressing(violation) is not None


def may_have_directives(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _WORDS)
