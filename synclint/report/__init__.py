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


def render(fmt: str, violations, sources: dict[str, str] | None = None, explain: bool = False) -> str:
    """Render violations (already sorted) as text in format `fmt`."""
    return FORMATS[fmt](violations, sources=sources or {}, explain=explain)
