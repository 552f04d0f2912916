"""What a "line" is, once for the whole program.

Python's tokenizer and libcst end a line at `\\r\\n`, `\\r` or `\\n`, and at nothing else.
`str.splitlines` also splits at form feed, vertical tab, `\\x1c`-`\\x1e`, `\\x85`, U+2028 and
U+2029, which may stand inside a comment or a string: rows counted with it drift from the
parser's rows after such a character, and an edit or a suppression lands on the wrong line.
Every place that turns a row into a line or a (row, column) into an offset goes through here:
positions, the edit applier, suppressions, reporters and the diff.
"""

from __future__ import annotations

import bisect
import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")
# One physical line with its terminator (the last one may have none).
_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
TERMINATORS = ("\r\n", "\r", "\n")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """`text.splitlines(keepends)` with only Python's line terminators."""
    if not keepends and "\r" not in text:
        # Only `\n` ends a line here: `str.split` does it at C speed (a report splits every
        # file it quotes a line of).
        lines = text.split("\n")
        if not lines[-1]:
            lines.pop()  # the text ends with a line break (or is empty): no line after it
        return lines
    lines = _PHYSICAL_LINE.findall(text)
    if keepends:
        return lines
    return [_strip_end(line) for line in lines]


def _strip_end(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def ending(line: str) -> str:
    """The terminator a physical line ends with ("" for the last line of a file without one)."""
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def line_starts(text: str) -> list[int]:
    """Offset of the first character of each line (row 1 at index 0)."""
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def count_breaks(text: str) -> int:
    return len(LINE_BREAK.findall(text))


def ends_with_break(text: str) -> bool:
    return text.endswith(("\n", "\r"))


class LineIndex:
    """Rows and columns (1-based) <-> offsets in one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)

    def offset(self, row: int, column: int) -> int:
        """Offset of (row, column), both 1-based; clamped to the line and the text."""
        text = self.text
        if row < 1:
            return 0
        if row - 1 >= len(self.starts):
            return len(text)
        start = self.starts[row - 1]
        line_end = self.starts[row] if row < len(self.starts) else len(text)
        return min(start + column - 1, line_end, len(text))

    def row_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def line(self, row: int) -> str | None:
        """Row `row`'s text without its terminator; None outside the text."""
        if not 1 <= row <= len(self.starts):
            return None
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        if start == end == len(self.text) and row > 1:
            return None  # after a final line break there is no further line
        return _strip_end(self.text[start:end])


def patch_lines(text: str) -> list[str]:
    """Lines as `patch` and `git apply` count them: ended by `\\n` only (a `\\r` is part of a
    line's content for them). The one place that does not use Python's line breaks: a diff
    split at a lone `\\r` would not apply."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


NO_NEWLINE_MARKER = "\\ No newline at end of file\n"


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff that `git apply` and `patch` accept: lines split as they split them, and
    the "\\ No newline at end of file" marker after a last line without one."""
    import difflib

    out = []
    for line in difflib.unified_diff(patch_lines(old), patch_lines(new), old_name, new_name):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n" + NO_NEWLINE_MARKER)
    return "".join(out)


MIN_LINE_LENGTH = 88  # a file whose lines are all short still allows this much


def line_length(text: str, index: LineIndex | None = None) -> int:
    """The file's line length: the length that 99% of its lines stay within (the longest
    line for a file of under 100 lines), and at least MIN_LINE_LENGTH."""
    index = index or LineIndex(text)
    starts = index.starts
    lengths = sorted((starts[i + 1] if i + 1 < len(starts) else len(text)) - starts[i] for i in range(len(starts)))
    if not lengths:
        return MIN_LINE_LENGTH
    # (the lengths count the line break: one or two characters more than the line)
    return max(MIN_LINE_LENGTH, lengths[-1 - len(lengths) // 100] - 1)
