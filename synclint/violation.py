"""The one violation model that every rule produces and every reporter renders.

Rows and columns are 1-based, as in ruff's JSON output, so tools that read ruff's JSON
read ours. Columns count characters (not bytes) of the line.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """Whether a fix can change behaviour (ruff's terms)."""

    SAFE = "safe"  # cannot change results: applied by --fix
    UNSAFE = "unsafe"  # may change results: applied only with --unsafe-fixes


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Confidence(enum.IntEnum):
    """How sure we are that the flagged value lives where the rule needs it to."""

    LOW = 0  # placement unknown: the pattern matched, the tensor may live anywhere
    MEDIUM = 1  # placement inferred from names or conventions (e.g. a `device` parameter)
    HIGH = 2  # placement proven from the code (a factory with device=, .cuda(), ...)

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Confidence:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown confidence {text!r} (expected low, medium or high)") from None


@dataclass(frozen=True, order=True)
class Location:
    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between two locations (end exclusive) with `content`."""

    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Violation:
    code: str
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Fix | None = None
    severity: Severity = Severity.WARNING
    confidence: Confidence = Confidence.HIGH
    # Row whose comment can carry `# noqa` for this violation: the first row of the statement.
    noqa_row: int | None = None
    url: str | None = None
    # Why we believe the placement: "line 12: torch.zeros(..., device='cuda') -> device tensor".
    provenance: tuple[str, ...] = field(default=(), compare=False)
    hot_path: str | None = None  # why the code is hot ("in forward()"), None when not
    # How often the code runs: "hot" (every step), "cold" (init, weight loading, warm-up,
    # caches, tests), "unknown"; and why (see synclint/analysis/tier.py).
    tier: str = "unknown"
    tier_reason: str | None = field(default=None, compare=False)
    # In a notebook: the 1-based index of the cell among all cells (rows are then relative to
    # the cell, as in ruff's JSON); None in a Python file.
    cell: int | None = None

    @property
    def sort_key(self) -> tuple:
        return (self.filename, self.cell or 0, self.location.row, self.location.column, self.code)


# Codes for problems with the input rather than the code in it. They are findings too
# (the run goes on), so that a CI gate never passes over a file it could not read.
SYNTAX_ERROR = "SL001"
IO_ERROR = "SL002"
# code -> (name, summary), for `synclint rules`, `--statistics` and SARIF.
INPUT_CODES = {
    SYNTAX_ERROR: ("syntax-error", "the file could not be parsed"),
    IO_ERROR: ("io-error", "the file could not be read or decoded (or a path is missing, a symlink broken)"),
}
# A `# noqa: CODE` / `# synclint: ignore[CODE]` that suppresses nothing (ruff's RUF100).
UNUSED_SUPPRESSION = "SL003"

# Every code the engine itself reports (not rules under synclint/rules/): name, summary, fix.
ENGINE_CODES = {
    **{code: (name, summary, "never") for code, (name, summary) in INPUT_CODES.items()},
    UNUSED_SUPPRESSION: (
        "unused-suppression",
        "a `# noqa: CODE` or `# synclint: ignore[CODE]` comment suppresses nothing",
        "always",
    ),
}
