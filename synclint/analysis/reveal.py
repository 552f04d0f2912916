"""`reveal(expr)`: ask the analysis what it believes about an expression, the way a rule would.

Like a type checker's `reveal_type`, a snippet marks the expressions to ask about by wrapping
them in `reveal(...)`; `reveal_placements(source)` walks the file with the engine's batched
visitor (so the answers come through `ctx.placement`, `ctx.device_target` and `ctx.hot_path`,
exactly as rules see them) and returns one answer per call, in source order. The placement
tests and `docs/placement.md` use it; it is also handy when deciding why a rule fired.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from synclint.analysis.imports import ImportTable
from synclint.analysis.values import Placement
from synclint.config import Settings


@dataclass(frozen=True)
class Revealed:
    line: int
    expression: str  # the source text inside reveal(...)
    placement: Placement
    device_target: Placement | None  # what it would mean as a `device=` argument
    hot_path: str | None
    provenance: tuple[str, ...]  # "line N: ..." steps, as `--explain` prints them


class _RevealProbe:
    """Answers every `reveal(x)` call; shaped like a rule for the engine's dispatch table."""

    def __init__(self) -> None:
        self.found: list[tuple[cst.Call, cst.BaseExpression, Placement, Placement | None, str | None]] = []

    @staticmethod
    def handlers() -> dict[str, str]:
        return {"Call": "visit_Call"}

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "reveal" and len(node.args) == 1:
            expr = node.args[0].value
            self.found.append((node, expr, ctx.placement(expr), ctx.device_target(expr), ctx.hot_path))


def reveal_placements(source: str, settings: Settings | None = None) -> list[Revealed]:
    from synclint.context import LintContext  # the context imports this package
    from synclint.engine import BatchedVisitor

    module = cst.parse_module(source)
    imports = ImportTable()
    imports.collect_top_level(module)
    from synclint.analysis.host_fields import device_fields, host_fields

    ctx = LintContext(module, settings or Settings(), imports, host_fields=host_fields(source), device_fields=device_fields(source))
    probe = _RevealProbe()
    BatchedVisitor(ctx, (probe,)).walk(module)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    out = []
    for call, expr, placement, target, hot in probe.found:
        steps = tuple(
            f"line {positions[ev.node].start.line}: {ev.reason}" if ev.node in positions else ev.reason
            for ev in placement.evidence
        )
        out.append(Revealed(positions[call].start.line, module.code_for_node(expr), placement, target, hot, steps))
    return out
