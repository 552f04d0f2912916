"""What placement inference costs, measured on a real corpus.

For each sampled file the module is parsed once (timed), then visited four ways:

- plain:  the engine's batched visitor with no rules (a plain libcst parse-and-visit);
- stub:   every enabled rule, with `ctx.placement` / `ctx.device_target` answering "unknown"
          (the rules' own matching, without the analysis);
- lazy:   every enabled rule with the real analysis, as `synclint check` runs it;
- eager:  the real analysis forced on every scope (a placement query for the first name of
          every function), the cost if the analysis were not lazy.

The analysis cost is (lazy - stub) / (parse + plain). Each visit is repeated and the fastest
run kept. It also counts what a naive name match flags (`.item()`, tensor factories with
`device=`) against what SL101/SL201 report at default confidence.

    python bench/placement_cost.py /tmp/ref/transformers /tmp/ref/vllm --files 400
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import libcst as cst

from synclint.analysis.imports import ImportTable
from synclint.analysis.placement import UNKNOWN
from synclint.config import Settings
from synclint.context import LintContext
from synclint.engine import BatchedVisitor, enabled_rules
from synclint.violation import Confidence

BENCH = Path(__file__).resolve().parent


def sample_files(roots: list[Path], limit: int) -> list[Path]:
    """Every k-th file (sorted), so the sample spreads over the whole corpus, deterministically."""
    files = sorted(p for root in roots for p in root.rglob("*.py") if p.is_file())
    if limit and len(files) > limit:
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    return files


class _Eager:
    """A pseudo-rule that asks the placement of the first name in every function body."""

    @staticmethod
    def handlers() -> dict[str, str]:
        return {"FunctionDef": "visit_FunctionDef"}

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        body = getattr(node.body, "body", ())
        if body:
            ctx.statements.append(body[0])
            try:
                ctx.placement(cst.Name("self"))
            finally:
                ctx.statements.pop()


def _context(module: cst.Module, settings: Settings) -> LintContext:
    imports = ImportTable()
    imports.collect_top_level(module)
    return LintContext(module, settings, imports)


def _visit(module: cst.Module, settings: Settings, rules, mode: str):
    ctx = _context(module, settings)
    if mode == "stub":
        ctx.placement = lambda expr: UNKNOWN
        ctx.device_target = lambda expr: None
    start = time.perf_counter()
    module.visit(BatchedVisitor(ctx, rules))
    return time.perf_counter() - start, ctx


def _naive_hits(module: cst.Module) -> int:
    hits = 0

    class Matcher(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal hits
            func = node.func
            name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
            if isinstance(func, cst.Attribute) and name == "item" and not node.args:
                hits += 1
            elif name in ("tensor", "as_tensor", "asarray") and any(
                a.keyword is not None and a.keyword.value == "device" for a in node.args
            ):
                hits += 1

    module.visit(Matcher())
    return hits


def measure(files: list[Path], repeats: int) -> dict:
    settings = Settings()
    rules = enabled_rules(settings)
    totals = {"parse": 0.0, "plain": 0.0, "stub": 0.0, "lazy": 0.0, "eager": 0.0}
    counts = {"files": 0, "lines": 0, "scopes_lazy": 0, "scopes_eager": 0, "naive": 0, "sl101_sl201": 0}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            start = time.perf_counter()
            module = cst.parse_module(text)
            parse = time.perf_counter() - start
        except (UnicodeDecodeError, cst.ParserSyntaxError, RecursionError):
            continue
        counts["files"] += 1
        counts["lines"] += text.count("\n")
        totals["parse"] += parse
        for mode, mode_rules in (("plain", ()), ("stub", rules), ("lazy", rules), ("eager", (*rules, _Eager()))):
            best, ctx = min((_visit(module, settings, mode_rules, mode) for _ in range(repeats)), key=lambda r: r[0])
            totals[mode] += best
            analysis = ctx._placements
            if mode in ("lazy", "eager"):
                counts[f"scopes_{mode}"] += analysis.scopes_analysed if analysis is not None else 0
            if mode == "lazy":
                counts["sl101_sl201"] += sum(
                    1 for f in ctx.findings if f.code in ("SL101", "SL201") and f.confidence >= Confidence.MEDIUM
                )
        counts["naive"] += _naive_hits(module)
    return {"seconds": totals, "counts": counts}


def report(result: dict) -> str:
    t, c = result["seconds"], result["counts"]
    base = t["parse"] + t["plain"]
    kloc = c["lines"] / 1000 or 1

    def pct(x: float) -> str:
        return f"{100 * x / base:.1f}%"

    rows = [
        f"files: {c['files']}, lines: {c['lines']:,}",
        f"parse:                      {t['parse']:.2f} s",
        f"plain visit:                {t['plain']:.2f} s   (parse + plain = {base:.2f} s, the baseline)",
        f"rules, analysis stubbed:    {t['stub']:.2f} s",
        f"rules, lazy analysis:       {t['lazy']:.2f} s",
        f"rules, eager analysis:      {t['eager']:.2f} s",
        f"analysis cost, lazy:        {t['lazy'] - t['stub']:.2f} s = {pct(t['lazy'] - t['stub'])} of the baseline",
        f"analysis cost, eager:       {t['eager'] - t['stub']:.2f} s = {pct(t['eager'] - t['stub'])} of the baseline",
        f"rules + lazy analysis:      {t['lazy']:.2f} s = {pct(t['lazy'])} of the baseline",
        f"scopes analysed, lazy/eager: {c['scopes_lazy']:,} / {c['scopes_eager']:,}",
        f"naive .item()/tensor(device=) matches: {c['naive']:,} ({c['naive'] / kloc:.2f} per 1,000 lines)",
        f"SL101+SL201 findings (>= medium):      {c['sl101_sl201']:,} ({c['sl101_sl201'] / kloc:.2f} per 1,000 lines)",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path, help="folders of Python files (default: bench/.corpus/src)")
    parser.add_argument("--files", type=int, default=400, help="sample this many files (0: all)")
    parser.add_argument("--repeats", type=int, default=3, help="visits per mode and file; the fastest is kept")
    args = parser.parse_args(argv)
    roots = args.roots or [BENCH / ".corpus" / "src"]
    missing = [r for r in roots if not r.is_dir()]
    if missing:
        print(f"no such folder: {', '.join(map(str, missing))} (pip download a corpus and unzip it)", file=sys.stderr)
        return 2
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    files = sample_files(roots, args.files)
    print(report(measure(files, args.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
