"""Apply fixes to source text, as ruff does: non-overlapping fixes in order, then lint the
result again and repeat until nothing fixable is left (fixes can enable other fixes)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from synclint.config import Settings
from synclint.violation import Applicability, Edit, Violation

MAX_ROUNDS = 10


@dataclass
class FixResult:
    filename: str
    original: str | None
    fixed: str | None
    encoding: str = "utf-8"
    applied: int = 0
    violations: list[Violation] = field(default_factory=list)  # what remains after fixing
    error: str | None = None  # why fixing stopped early (the file is then left as it was)

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.original is not None and self.fixed != self.original


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _offset(starts: list[int], text: str, row: int, column: int) -> int:
    if row - 1 >= len(starts):
        return len(text)
    return min(starts[row - 1] + column - 1, len(text))


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (rows/columns 1-based, ends exclusive)."""
    starts = _line_starts(text)
    spans = []
    for edit in edits:
        begin = _offset(starts, text, edit.location.row, edit.location.column)
        end = _offset(starts, text, edit.end_location.row, edit.end_location.column)
        content = edit.content
        if begin == len(text) and text and not text.endswith("\n") and edit.location.column == 1:
            content = "\n" + content  # insertion "on the next line" of a file without final newline
        spans.append((begin, end, content))
    for begin, end, content in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:begin] + content + text[end:]
    return text


def _fixable(violation: Violation, unsafe: bool) -> bool:
    fix = violation.fix
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe)


def apply_fixes(text: str, violations: list[Violation], unsafe: bool) -> tuple[str, int]:
    """Apply every fix that does not overlap an earlier one; identical edits (the same import
    added by two fixes) are applied once. Returns the new text and the number of fixes."""
    chosen: list[Edit] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    applied = 0
    for violation in sorted(violations, key=lambda v: v.sort_key):
        if not _fixable(violation, unsafe):
            continue
        new_edits = [e for e in violation.fix.edits if e not in chosen]
        spans = [((e.location.row, e.location.column), (e.end_location.row, e.end_location.column)) for e in new_edits]
        if any(_overlaps(span, other) for span in spans for other in taken):
            continue  # the next round applies it, on the text this round produced
        chosen.extend(new_edits)
        taken.extend(spans)
        applied += 1
    return (apply_edits(text, chosen) if chosen else text), applied


def _overlaps(a, b) -> bool:
    (a0, a1), (b0, b1) = a, b
    if a0 == a1 or b0 == b1:  # insertions overlap only a span that strictly contains them
        point, span = (a0, b) if a0 == a1 else (b0, a)
        return span[0] < point < span[1]
    return a0 < b1 and b0 < a1


def fix_source(source: bytes | str, filename: str, settings: Settings | None = None, unsafe: bool | None = None) -> FixResult:
    """Lint, fix, and lint again until stable. Never returns text that does not parse."""
    from synclint.engine import lint_source

    settings = settings or Settings()
    unsafe = settings.unsafe_fixes if unsafe is None else unsafe
    result = lint_source(source, filename, settings)
    out = FixResult(filename, result.text, result.text, result.encoding, violations=result.violations)
    if result.text is None:
        return out
    text = result.text
    for _ in range(MAX_ROUNDS):
        new_text, applied = apply_fixes(text, result.violations, unsafe)
        if not applied or new_text == text:
            break
        try:
            cst.parse_module(new_text)
        except Exception as exc:  # noqa: BLE001 - a broken fix must never reach the disk
            out.error = f"a fix produced code that does not parse ({exc.__class__.__name__}); fixes not applied"
            out.fixed = out.original
            out.applied = 0
            out.violations = lint_source(out.original, filename, settings).violations
            return out
        text = new_text
        out.applied += applied
        result = lint_source(text, filename, settings)
    out.fixed = text
    out.violations = result.violations
    return out
