"""One line per finding: `path:row:col: CODE [*] [confidence] message (hot path)`, ruff's
layout (`path:cell N:row:col:` in a notebook)."""

from __future__ import annotations

from synclint.terminal import PLAIN
from synclint.violation import INPUT_CODES, Applicability


def fixable(v, unsafe_fixes: bool = False) -> bool:
    """Whether `--fix` fixes this finding (the unsafe fixes count when they are enabled)."""
    return v.fix is not None and (unsafe_fixes or v.fix.applicability is Applicability.SAFE)


def position(v) -> str:
    cell = f"cell {v.cell}:" if v.cell is not None else ""
    return f"{v.filename}:{cell}{v.location.row}:{v.location.column}:"


def line(v, style=PLAIN, unsafe_fixes: bool = False) -> str:
    # Some messages already end with where they are hot ("..., in step()"): say it once.
    hot = f" ({v.hot_path})" if v.hot_path and v.hot_path not in v.message else ""
    marker = f" {style.cyan('[*]')}" if fixable(v, unsafe_fixes) else ""
    # SL001/SL002 are about the file, not about where a value lives: no confidence.
    confidence = "" if v.code in INPUT_CODES else f" [{v.confidence.label} confidence]"
    return f"{style.bold(position(v))} {style.paint(v.code, 'bold', 'red')}{marker}{confidence} {v.message}{hot}"


def render(violations, sources=None, explain=False, style=PLAIN, unsafe_fixes=False) -> str:
    out = []
    for v in violations:
        out.append(line(v, style, unsafe_fixes))
        if explain:
            out.extend(f"    because {p}" for p in v.provenance)
            if v.tier_reason:
                out.append(f"    tier: {v.tier} ({v.tier_reason})")
    return "\n".join(out) + ("\n" if out else "")
