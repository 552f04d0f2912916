"""Reporters: one violation model, rendered in each output format."""

from __future__ import annotations

from synclint.report import concise, full, github, gitlab, json_format, sarif

FORMATS = {
    "full": full.render,
    "concise": concise.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
    "gitlab": gitlab.render,
}


# The formats meant for a person read on a terminal: colour and the `[*]` marker.
TERMINAL_FORMATS = ("full", "concise")


def render(fmt: str, violations, sources: dict | None = None, explain: bool = False, style=None, unsafe_fixes: bool = False) -> str:
    """Render violations (already sorted) as text in format `fmt`. `sources` maps a filename
    to its text (a notebook's to {cell index: cell text}); `style` (synclint.terminal.Style)
    colours the terminal formats; `unsafe_fixes`: `[*]` marks unsafe fixes too."""
    if fmt in TERMINAL_FORMATS:
        from synclint.terminal import PLAIN

        return FORMATS[fmt](violations, sources=sources or {}, explain=explain, style=style or PLAIN, unsafe_fixes=unsafe_fixes)
    return FORMATS[fmt](violations, sources=sources or {}, explain=explain)
