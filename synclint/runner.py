"""Lint (or fix) many files: discovery -> per-file engine -> outcomes, in order.

Each file is independent, so the work spreads over processes (`jobs`); results are returned
in discovery order whatever the number of processes, so `-j1` and `-jN` print the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from synclint.config import Settings
from synclint.discover import discover
from synclint.engine import io_error_violation, lint_source
from synclint.fix.apply import fix_source
from synclint.violation import Violation


@dataclass
class FileOutcome:
    filename: str
    violations: list[Violation] = field(default_factory=list)
    original: str | None = None  # decoded text, kept only when fixing
    fixed: str | None = None
    encoding: str = "utf-8"
    applied: int = 0
    error: str | None = None  # a fix that was refused, for the user to see

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.original is not None and self.fixed != self.original


@dataclass
class RunResult:
    outcomes: list[FileOutcome] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # discovery problems
    cache_hits: int = 0

    @property
    def violations(self) -> list[Violation]:
        return [v for o in self.outcomes for v in o.violations]


def read_source(path: Path) -> bytes:
    return path.read_bytes()


def process_file(filename: str, settings: Settings, fix: bool, unsafe: bool, source: bytes | None = None) -> FileOutcome:
    """One file, start to finish. Never raises for bad input."""
    if source is None:
        try:
            source = read_source(Path(filename))
        except IsADirectoryError:
            return FileOutcome(filename, [io_error_violation(filename, "is a directory, not a file")])
        except OSError as exc:
            return FileOutcome(filename, [io_error_violation(filename, f"cannot read: {exc.strerror or exc}")])
    if fix:
        result = fix_source(source, filename, settings, unsafe=unsafe)
        return FileOutcome(filename, result.violations, result.original, result.fixed, result.encoding, result.applied, result.error)
    result = lint_source(source, filename, settings)
    return FileOutcome(filename, result.violations, encoding=result.encoding)


def lint_paths(
    paths: list[Path],
    settings: Settings,
    *,
    fix: bool = False,
    unsafe: bool = False,
    jobs: int | None = 1,
    use_cache: bool = True,
) -> RunResult:
    found = discover(paths, settings)
    run = RunResult(errors=found.errors)
    for path in found.files:
        run.outcomes.append(process_file(str(path), settings, fix, unsafe))
    return run
