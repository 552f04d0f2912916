"""synclint's public Python API: lint or fix one source text.

    >>> import synclint
    >>> source = "import torch\\nx = torch.zeros(4, device='cuda')\\nif x.sum() > 0:\\n    pass\\n"
    >>> [v.code for v in synclint.lint_source(source, "model.py")]
    ['SL203']

Every caller inside synclint goes through these functions: the command line (and so the
pre-commit hooks, which run it), the language server, the GPU proof harness and the runtime
tracer's `--runtime` join. What they return is stable: `Violation` records (1-based rows and
columns, a `fix` with text edits where one exists) and, for `fix_source`, a `FixResult`.

Both functions never raise for bad input: an undecodable or oversized file is an SL002
finding, a file that does not parse an SL001 finding.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine (libcst) is imported on the first call, not with `synclint`
    from synclint.config import Settings
    from synclint.fix.apply import FixResult

__all__ = ["Findings", "fix_source", "lint_source", "settings_for"]

DEFAULT_FILENAME = "<string>"


class Findings(list):
    """What ``lint_source`` returns: a list of ``Violation``, with ``hidden``, the findings that
    the tiers shown left out (``{"cold": n}`` without ``include-cold``, ``{"unknown": n}`` under
    ``only-hot``; findings a comment suppresses are not counted), for a summary to mention."""

    def __init__(self, violations=(), hidden: dict | None = None) -> None:
        super().__init__(violations)
        self.hidden: dict = dict(hidden or {})


def lint_source(source: str | bytes, filename: str = DEFAULT_FILENAME, settings: Settings | None = None) -> Findings:
    """Lint one file's content and return its findings, sorted by position.

    Args:
        source: the file's content. ``bytes`` are decoded as Python does (a PEP 263 coding
            cookie or a BOM, else UTF-8); ``str`` is taken as it is.
        filename: the name shown in each ``Violation`` and matched by ``per-file-ignores``.
            Nothing is read from it: pass the path the source belongs to (an editor's
            unsaved buffer, a file in a git index, ...).
        settings: a ``synclint.Settings`` (for a file's project configuration, see
            ``synclint.settings_for(path)``); ``None`` means the defaults.

    Returns:
        A new list of ``synclint.Violation`` (a ``Findings``, whose ``hidden`` counts the
        findings the tiers shown left out), after ``# noqa`` / ``# synclint: ignore``
        suppressions, ``per-file-ignores`` and ``min-confidence`` are applied. Each carries
        ``code``, ``message``, ``location`` / ``end_location`` (1-based, end exclusive),
        ``severity``, ``confidence``, ``noqa_row`` (the row a ``# noqa`` comment must be on),
        ``url`` and, when the rule can fix it, ``fix`` (``applicability`` "safe" or "unsafe",
        ``message``, ``edits``).
    """
    from synclint.engine import lint_source as _lint

    result = _lint(source, filename, settings)
    return Findings(result.violations, result.hidden)


def fix_source(
    source: str | bytes,
    filename: str = DEFAULT_FILENAME,
    settings: Settings | None = None,
    *,
    unsafe: bool | None = None,
) -> FixResult:
    """Apply every applicable fix to one file's content, re-linting until nothing changes.

    Args:
        source, filename, settings: as for ``lint_source``.
        unsafe: also apply fixes marked unsafe (they may change results); ``None`` takes
            ``settings.unsafe_fixes`` (``unsafe-fixes`` in the configuration, default off).

    Returns:
        A ``synclint.FixResult``: ``fixed`` (the new text; equal to ``original`` when nothing
        applied, ``None`` when the source could not be decoded), ``violations`` (what
        remains in the fixed text), ``applied`` (how many fixes), ``changed``, ``encoding``
        (to write the text back as it was read) and ``error`` (set, with the text left
        unchanged, if a fix would have produced code that does not parse; it never
        returns such code) and ``hidden`` (as for ``lint_source``, of what remains). Nothing
        is written to disk.
    """
    from synclint.fix.apply import fix_source as _fix

    return _fix(source, filename, settings, unsafe=unsafe)


def settings_for(path: str | Path) -> Settings:
    """The settings that ``synclint check PATH`` uses for the file or folder ``path``: those of
    the nearest configuration found from it upward, else the defaults. Raises
    ``synclint.ConfigError`` (naming the file and the key) for an invalid configuration."""
    from synclint.config import load_settings

    path = Path(path)
    return load_settings([path if path.exists() else path.parent], None)
