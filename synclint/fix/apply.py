"""Apply fixes to source text, as ruff does: non-overlapping fixes in order, then lint the
result again and repeat until nothing fixable is left (fixes can enable other fixes)."""

from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass, field

import libcst as cst

from synclint import lines
from synclint.config import Settings
from synclint.lines import LineIndex
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
    hidden: dict = field(default_factory=dict)  # findings the tiers shown hide, by tier (engine.FileResult)

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.original is not None and self.fixed != self.original


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (rows/columns 1-based, ends exclusive), in one pass: the
    time is linear in the text and the edits, however many there are."""
    index = LineIndex(text)
    spans = []
    for order, edit in enumerate(edits):
        begin = index.offset(edit.location.row, edit.location.column)
        end = index.offset(edit.end_location.row, edit.end_location.column)
        content = edit.content
        if begin == len(text) and text and not lines.ends_with_break(text) and edit.location.column == 1:
            # insertion "on the next line" of a file without final newline: end the last
            # line first, with the file's own line break
            first = lines.LINE_BREAK.search(text)
            content = (first.group() if first else "\n") + content
        spans.append((begin, end, order, content))
    # Edits at the same place go in reverse order of the list (as applying them one by one
    # from the end of the text did).
    spans.sort(key=lambda s: (s[0], s[1], -s[2]))
    pieces: list[str] = []
    done = 0
    for begin, end, _, content in spans:
        if begin < done:  # overlapping edits are never chosen together; keep the text whole
            continue
        pieces.append(text[done:begin])
        pieces.append(content)
        done = max(done, end)
    pieces.append(text[done:])
    return "".join(pieces)


def _fixable(violation: Violation, unsafe: bool) -> bool:
    fix = violation.fix
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe)


def apply_fixes(text: str, violations: list[Violation], unsafe: bool) -> tuple[str, int]:
    """Apply every fix that does not overlap an earlier one; identical edits (the same import
    added by two fixes) are applied once. Returns the new text and the number of fixes.
    Linear-logarithmic in the number of fixes (a file with thousands of findings is fixed in
    about the time it takes to lint it)."""
    chosen: list[Edit] = []
    seen: set[Edit] = set()
    taken = _Spans()
    applied = 0
    for violation in sorted(violations, key=lambda v: v.sort_key):
        if not _fixable(violation, unsafe):
            continue
        new_edits = [e for e in violation.fix.edits if e not in seen]
        spans = [((e.location.row, e.location.column), (e.end_location.row, e.end_location.column)) for e in new_edits]
        if any(taken.overlaps(span) for span in spans) or _overlap_each_other(spans):
            continue  # the next round applies it, on the text this round produced
        for edit, span in zip(new_edits, spans):
            chosen.append(edit)
            seen.add(edit)
            taken.add(span)
        applied += 1
    return (apply_edits(text, chosen) if chosen else text), applied


def _overlap_each_other(spans) -> bool:
    return len(spans) > 1 and any(_overlaps(a, b) for i, a in enumerate(spans) for b in spans[i + 1 :])


def _overlaps(a, b) -> bool:
    (a0, a1), (b0, b1) = a, b
    if a0 == a1 or b0 == b1:  # insertions overlap only a span that strictly contains them
        point, span = (a0, b) if a0 == a1 else (b0, a)
        return span[0] < point < span[1]
    return a0 < b1 and b0 < a1


class _Spans:
    """Chosen spans, pairwise non-overlapping: ranges (sorted by start, so disjoint ranges
    are sorted by end too) and insertion points, each answering `overlaps` by bisection."""

    def __init__(self) -> None:
        self.starts: list = []
        self.ends: list = []
        self.points: list = []

    def overlaps(self, span) -> bool:
        a0, a1 = span
        if a0 == a1:  # an insertion: inside the range that starts last before it?
            i = bisect.bisect_left(self.starts, a0) - 1
            return i >= 0 and self.ends[i] > a0
        # a range: does the range starting last before its end reach into it, or does an
        # insertion point lie strictly inside it?
        i = bisect.bisect_left(self.starts, a1) - 1
        if i >= 0 and self.ends[i] > a0:
            return True
        j = bisect.bisect_right(self.points, a0)
        return j < len(self.points) and self.points[j] < a1

    def add(self, span) -> None:
        a0, a1 = span
        if a0 == a1:
            bisect.insort(self.points, a0)
            return
        i = bisect.bisect_left(self.starts, a0)
        self.starts.insert(i, a0)
        self.ends.insert(i, a1)


def fix_source(source: bytes | str, filename: str, settings: Settings | None = None, unsafe: bool | None = None) -> FixResult:
    """Lint, fix, and lint again until stable. Never returns text that does not parse."""
    from synclint.engine import lint_source, parse_module

    settings = settings or Settings()
    unsafe = settings.unsafe_fixes if unsafe is None else unsafe
    result = lint_source(source, filename, settings)
    out = FixResult(filename, result.text, result.text, result.encoding, violations=result.violations, hidden=result.hidden)
    if result.text is None:
        return out
    text = result.text
    for _ in range(MAX_ROUNDS):
        new_text, applied = apply_fixes(text, result.violations, unsafe)
        if not applied or new_text == text:
            break
        try:
            parse_module(new_text)
        except Exception as exc:  # noqa: BLE001 - a broken fix must never reach the disk
            out.error = f"a fix produced code that does not parse ({exc.__class__.__name__}); fixes not applied"
            out.fixed = out.original
            out.applied = 0
            again = lint_source(out.original, filename, settings)
            out.violations, out.hidden = again.violations, again.hidden
            return out
        text = new_text
        out.applied += applied
        result = lint_source(text, filename, settings)
    if out.applied:
        pruned = drop_imports_made_unused(out.original, text, filename)
        if pruned != text:
            try:
                parse_module(pruned)
            except Exception:  # noqa: BLE001 - keep the text that parses
                pruned = text
        if pruned != text:
            text = pruned
            result = lint_source(text, filename, settings)
    out.fixed = text
    out.violations, out.hidden = result.violations, result.hidden
    return out


def drop_imports_made_unused(original: str, fixed: str, filename: str = "") -> str:
    """Remove the imports of torch whose last use the fixes replaced (`torch.tensor(x,
    device=d)` -> a helper call), so that a fix leaves no unused import behind.

    Only where nothing else can use it: an import statement of one name from `torch` (`import
    torch`, `import torch as th`, `from torch import tensor`), alone on its line, at the top
    level; the name was read in the original text and is mentioned nowhere else in the fixed
    text (not in a string annotation, a comment or `__all__`); the module is not a package's
    `__init__.py` and has no `__all__` (where another module may import the name from it)."""
    if os.path.basename(filename) == "__init__.py" or "torch" not in original:
        return fixed
    try:
        before, after = ast.parse(original), ast.parse(fixed)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return fixed
    for stmt in after.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else ()
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return fixed
    index = LineIndex(fixed)
    spans = []
    read_before = None
    for stmt in after.body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)) or len(stmt.names) != 1 or stmt.lineno != stmt.end_lineno:
            continue
        alias = stmt.names[0]
        module = alias.name if isinstance(stmt, ast.Import) else (stmt.module or "")
        if (isinstance(stmt, ast.ImportFrom) and stmt.level) or module.split(".")[0] != "torch" or alias.name == "*":
            continue
        bound = alias.asname or alias.name.split(".")[0]
        line = index.line(stmt.lineno) or ""
        if line.strip() != ast.unparse(stmt):
            continue  # a comment (`# noqa`), a `;`, odd spacing: left as written
        if len(re.findall(rf"(?<!\w){re.escape(bound)}(?!\w)", fixed)) != 1:
            continue  # mentioned elsewhere (or bound twice)
        if read_before is None:
            read_before = {node.id for node in ast.walk(before) if isinstance(node, ast.Name)}
        if bound not in read_before:
            continue  # unused before the fixes too: not ours to remove
        start = index.offset(stmt.lineno, 1)
        end = index.offset(stmt.lineno + 1, 1) if stmt.lineno < len(index.starts) else len(fixed)
        spans.append((start, end))
    for start, end in reversed(spans):
        fixed = fixed[:start] + fixed[end:]
    return fixed
