"""Findings that move with their lines: a file whose screened code is the same, line for
line, but at other rows (a line inserted at the top, a function no rule can flag added in
the middle, a blank line removed) keeps its last findings, each moved to its lines' new rows.

The screened text (synclint/screen/) blanks every line no rule can flag. Its *shape* is a
digest of its lines of code (neither blank nor only a comment), in order, and the rows they
stand on. Two versions of a file with the same shape digest differ only in where those lines
stand, so every row a finding cites (its location, its fix's edits, its `noqa` row, the
`line N:` of its evidence) maps from the one version to the other through the line's place
among the lines of code.

The cache keeps, beside a file's findings, the shape digest they were made from and, for each
row they cite, that row's place (`encode`); a new version with the same shape digest takes the
findings with the rows of its own lines (`moved`). Where a finding cites a row that is no line
of code (a fix inserting at a blank line), no shape is kept and the file is linted. The rows
of this file that the repository index cites in evidence (`model.py:993`) are answers of the
index, rewritten as below.

The same holds of the lines of other files a finding cites. The repository index explains a
placement with an example (`parameter x is given only device tensors in the repository (e.g.
model.py:993)`); a line inserted in `model.py` moves that citation, and every file that asked
the index about `x` would get another answer and be linted again. The cache keeps, beside the
digest of the answers a file got, a digest of the same answers with the cited rows left out
(`loose_digest`): where only that one holds, the answers changed in their rows alone, and the
findings are kept with their citations rewritten from the new answers (`recite`).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from dataclasses import dataclass

_LINE_CITED = re.compile(r"^line (\d+):")
# A row of a file the repository index cites: `model.py:993` (repo._where).
_CITATION = re.compile(r"([\w.-]+\.py):(\d+)\b")


@dataclass(frozen=True)
class Shape:
    """The lines of code of a screened text: a digest of their text (with what else the rules
    saw, `facts`), and the row each stands on, in order."""

    digest: str
    rows: tuple[int, ...]


def shape_of(lines: list[str], facts: str, directives: list[tuple[int, str]] = ()) -> Shape:
    """The shape of a screened text given as its lines; `facts`: what else decides the
    findings (the file's name, the rules that run, the facts of its whole text);
    `directives`: the (row, line) of the whole text's suppression comments, which count by
    where they stand among the lines of code (a `# noqa` moves with its line)."""
    h = hashlib.sha256(facts.encode("utf-8", "surrogatepass") + b"\0")
    rows = []
    for row, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped and stripped[0] != "#":  # a comment line changes no finding (suppressions are keyed apart)
            rows.append(row)
            h.update(line.encode("utf-8", "surrogatepass") + b"\n")
    for row, line in directives:
        before = bisect_left(rows, row)
        on_code = before < len(rows) and rows[before] == row
        h.update(f"\0{before}:{on_code}:{line}".encode("utf-8", "surrogatepass"))
    return Shape(h.hexdigest(), tuple(rows))


def _cited_rows(plain: tuple) -> list[int]:
    """Every row of its own file a finding (in the cache's plain form) cites."""
    row, end_row, fix, noqa_row, provenance = plain[2], plain[4], plain[6], plain[9], plain[11]
    rows = [row, end_row]
    if noqa_row is not None:
        rows.append(noqa_row)
    if fix is not None:
        for _, r, _, er, _ in fix[2]:
            rows += (r, er)
    for step in provenance:
        match = _LINE_CITED.match(step)
        if match:
            rows.append(int(match.group(1)))
    return rows


def encode(digest: str, shape: Shape | None, violations: tuple) -> str:
    """The cache's `screened` field: the screened digest, then (where the findings can move
    with their lines) the shape digest and each cited row's place among the lines of code."""
    if shape is None:
        return digest
    places = {}
    for plain in violations:
        for row in _cited_rows(plain):
            if row not in places:
                at = bisect_left(shape.rows, row)
                if at == len(shape.rows) or shape.rows[at] != row:
                    return digest  # a row the screened text blanks
                places[row] = at
    return " ".join((digest, shape.digest, ",".join(f"{row}:{at}" for row, at in sorted(places.items()))))


def decode(screened: str) -> tuple[str, str, dict[int, int]]:
    """(screened digest, shape digest or "", row -> place) of a cache's `screened` field."""
    parts = screened.split(" ")
    if len(parts) != 3:
        return parts[0], "", {}
    places = {}
    for pair in filter(None, parts[2].split(",")):
        row, _, at = pair.partition(":")
        places[int(row)] = int(at)
    return parts[0], parts[1], places


def moved(violations: tuple, places: dict[int, int], rows: tuple[int, ...]) -> tuple | None:
    """The findings (plain form) with every cited row moved to the row its line now stands on
    (`rows`: the new version's rows of lines of code), or None where one cannot be moved."""

    def new(row):
        at = places.get(row)
        if at is None or at >= len(rows):
            raise LookupError(row)
        return rows[at]

    out = []
    try:
        for plain in violations:
            code, message, row, col, end_row, end_col, fix, severity, confidence, noqa_row, url, provenance, hot_path, tier, tier_reason, cell = plain
            if fix is not None:
                fix = (fix[0], fix[1], tuple((content, new(r), c, new(er), ec) for content, r, c, er, ec in fix[2]))
            provenance = tuple(
                _LINE_CITED.sub(lambda m: f"line {new(int(m.group(1)))}:", step, count=1) for step in provenance
            )
            out.append((code, message, new(row), col, new(end_row), end_col, fix, severity, confidence,
                        None if noqa_row is None else new(noqa_row), url, provenance, hot_path, tier, tier_reason, cell))
    except LookupError:
        return None
    return tuple(out)


def loose_digest(reads: dict) -> str:
    """A digest of a file's questions to the repository index and their answers, with the
    rows the answers cite left out (repo.dependency_digest keeps them)."""
    text = _CITATION.sub(r"\1:?", repr(sorted(reads.items())))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _cited_texts(value, out: list) -> None:
    if isinstance(value, str):
        if _CITATION.search(value):
            out.append(value)
    elif isinstance(value, (tuple, list, frozenset)):
        for item in value:
            _cited_texts(item, out)


def _pattern(text: str) -> re.Pattern:
    """`text` with each cited row free: `e.g. model.py:993` matches `e.g. model.py:994`."""
    parts, at = [], 0
    for match in _CITATION.finditer(text):
        parts += (re.escape(text[at : match.start()]), re.escape(match.group(1)), r":\d+\b")
        at = match.end()
    parts.append(re.escape(text[at:]))
    return re.compile("".join(parts))


def recite(violations: tuple, answers: dict) -> tuple | None:
    """The findings (plain form) with every citation of a row rewritten from `answers` (the
    index's answers now, whose loose digest is the findings' own), or None where a finding
    cites a row that no answer accounts for."""
    texts: list[str] = []
    for value in answers.values():
        _cited_texts(value, texts)
    patterns = [(_pattern(text), text) for text in dict.fromkeys(texts)]

    def rewritten(text):
        if not text or not _CITATION.search(text):
            return text
        covered, pieces, at = [], [], 0
        for pattern, new in patterns:
            for match in pattern.finditer(text):
                covered.append((match.start(), match.end(), new))
        covered.sort(key=lambda span: (span[0], -span[1]))
        for (start, end, new), (start2, end2, new2) in zip(covered, covered[1:]):
            if (start, end) == (start2, end2) and new != new2:
                raise LookupError(new)  # two answers alike but for their rows: which one is cited?
        for start, end, new in covered:
            if start < at:
                continue
            pieces += (text[at:start], new)
            at = end
        pieces.append(text[at:])
        spans = [(start, end) for start, end, _ in covered]
        for match in _CITATION.finditer(text):
            if not any(start <= match.start() and match.end() <= end for start, end in spans):
                raise LookupError(match.group(0))
        return "".join(pieces)

    out = []
    try:
        for plain in violations:
            plain = list(plain)
            plain[1] = rewritten(plain[1])
            plain[11] = tuple(rewritten(step) for step in plain[11])
            plain[14] = rewritten(plain[14])
            out.append(tuple(plain))
    except LookupError:
        return None
    return tuple(out)
