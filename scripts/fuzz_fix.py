"""The long fuzz run of the fixer: N generated cases, each checked for the properties of
tests/test_fix_properties.py (no crash, fixed text compiles, idempotent, findings conserved,
suppressed lines untouched, `--diff` applies with `git apply` to exactly the --fix text).

    python scripts/fuzz_fix.py --cases 10000 --pool 300 --seed 1 [--seconds S]

Generating a module with hypothesmith costs about 0.3 s, so the run first draws a pool of
`--pool` hypothesmith modules, then builds each case from one of them (or none) with random
sync-shaped injections, line-terminator style, stray line-break-like characters in comments
and strings, and final newline or not. Prints counts as JSON; exit 1 if any case failed."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzzing import check, random_case  # noqa: E402


def _pool(size: int, seed: int) -> list[str]:
    import hypothesmith
    from hypothesis import HealthCheck, given, seed as hseed, settings

    bases: list[str] = []

    @hseed(seed)
    @settings(max_examples=size, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(hypothesmith.from_grammar(auto_target=False))
    def collect(text):
        bases.append(text)

    collect()
    return bases


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cases", type=int, default=10000)
    p.add_argument("--pool", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no limit) and report the cases run")
    args = p.parse_args()
    start = time.monotonic()
    bases = [""] + _pool(args.pool, args.seed)
    rng = random.Random(args.seed)
    counts = {"cases": 0, "invalid_compositions_skipped": 0, "failed": 0}
    stats: dict = {}
    failures = []
    while counts["cases"] < args.cases and not (args.seconds and time.monotonic() - start > args.seconds):
        text = random_case(rng, bases)
        if text is None:
            counts["invalid_compositions_skipped"] += 1
            continue
        counts["cases"] += 1
        problems = check(text, unsafe=rng.random() < 0.5, stats=stats)
        if problems:
            counts["failed"] += 1
            if len(failures) < 20:
                failures.append({"problems": problems, "text": text})
    counts.update(stats)
    counts["pool"] = len(bases) - 1
    counts["seconds"] = round(time.monotonic() - start)
    print(json.dumps({**counts, "failures": failures}, indent=2))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
