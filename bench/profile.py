"""Where does the time go? Lint a fixed sample of the corpus in one process with timers
around each phase of the engine and around every rule handler, then print a breakdown.

    .venv/bin/python bench/profile.py [--every N]   # every Nth corpus file (default 10)

Timers wrap the functions the engine calls (decode, prefilter, ast and libcst parses, the
visitor pass, placement queries, positions, suppressions); their cost is a few percent.
For a call graph, use `python -m cProfile -o out.prof bench/profile.py` instead.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402

TOTALS: collections.Counter = collections.Counter()
CALLS: collections.Counter = collections.Counter()
_active: set[str] = set()


def timed(label: str, func):
    """Wrap `func` so that its time (outermost call only, when it recurses) adds to `label`."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if label in _active:
            return func(*args, **kwargs)
        _active.add(label)
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            TOTALS[label] += time.perf_counter() - start
            CALLS[label] += 1
            _active.discard(label)

    return wrapper


def instrument() -> None:
    import ast

    import libcst

    from synclint import engine, prefilter, screen
    from synclint.analysis import placement
    from synclint.rules import all_rules

    engine.decode = timed("decode", engine.decode)
    prefilter.rules_for = timed("prefilter", prefilter.rules_for)
    ast.parse = timed("ast parse (in the screen, or for syntax errors)", ast.parse)
    screen.reduce = timed("screen (ast parse included)", screen.reduce)
    engine.screen.reduce = screen.reduce
    libcst.parse_module = timed("libcst parse", libcst.parse_module)
    engine.cst.parse_module = libcst.parse_module
    engine.run_rules = timed("visitor pass (traversal + rules)", engine.run_rules)
    engine.to_violations = timed("positions + violations", engine.to_violations)
    engine._filtered = timed("suppressions + filters", engine._filtered)
    placement.PlacementAnalysis.placement_of = timed("placement analysis", placement.PlacementAnalysis.placement_of)
    for rule in all_rules():
        for method in rule.handlers().values():
            setattr(rule, method, timed(f"rule {rule.code}", getattr(rule, method)))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--every", type=int, default=10, help="profile every Nth corpus file")
    args = p.parse_args()
    root = corpus.fetch()
    files = corpus.python_files(root)[:: args.every]
    lines = corpus.count_lines(files)
    # Paths relative to the corpus root, as `bench/run.py` lints them: an absolute path runs
    # through this repository's `bench/` folder, which the tiers read as benchmark code (cold),
    # and the engine would then parse nothing.
    os.chdir(root)
    files = [path.relative_to(root) for path in files]
    instrument()
    from synclint.config import Settings
    from synclint.engine import lint_source

    settings = Settings()
    start = time.perf_counter()
    parsed = found = 0
    for path in files:
        data = path.read_bytes()
        result = lint_source(data, str(path), settings)
        parsed += result.parsed
        found += len(result.violations)
    total = time.perf_counter() - start
    print(f"{len(files)} files, {lines:,} lines, {parsed} parsed by libcst, {found} findings: {total:.2f} s in one process")
    print(f"{'phase':<40} {'s':>8} {'%':>6} {'calls':>8}")
    rules = {k: v for k, v in TOTALS.items() if k.startswith("rule ")}
    for label, seconds in sorted(TOTALS.items(), key=lambda kv: -kv[1]):
        if label.startswith("rule "):
            continue
        print(f"{label:<40} {seconds:8.2f} {100 * seconds / total:6.1f} {CALLS[label]:8d}")
    handlers = sum(rules.values())
    traversal = TOTALS["visitor pass (traversal + rules)"] - handlers
    print(f"{'  of which: rule handlers':<40} {handlers:8.2f} {100 * handlers / total:6.1f}")
    print(f"{'  of which: traversal, context upkeep':<40} {traversal:8.2f} {100 * traversal / total:6.1f}")
    print("rule handlers (placement queries they make included):")
    for label, seconds in sorted(rules.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<38} {seconds:8.2f} {100 * seconds / total:6.1f} {CALLS[label]:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
