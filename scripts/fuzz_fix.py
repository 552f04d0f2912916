"""The long fuzz run of the fixer: N generated cases, each checked for the properties of
tests/test_fix_properties.py (no crash, fixed text compiles, idempotent, findings conserved,
suppressed lines untouched, `--diff` applies with `git apply` to exactly the --fix text).

    python scripts/fuzz_fix.py --cases 10000 --pool 300 --seed 1 [--seconds S] [--jobs N]

Generating a module with hypothesmith costs about 0.3 s, so the run first draws a pool of
`--pool` hypothesmith modules, then builds each case from one of them (or none) with random
sync-shaped injections, line-terminator style, stray line-break-like characters in comments
and strings, and final newline or not. Prints counts as JSON; exit 1 if any case failed.

With `--jobs N` the cases are split into N shards run in parallel processes: shard k draws its
cases from its own generator seeded with (seed, k) over the same pool, and the counts are summed;
`--cases` is the total over all shards."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import shutil
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


def _run(cases: int, bases: list[str], rng: random.Random, seconds: float, start: float) -> dict:
    counts = {"cases": 0, "invalid_compositions_skipped": 0, "failed": 0}
    stats: dict = {}
    failures = []
    while counts["cases"] < cases and not (seconds and time.monotonic() - start > seconds):
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
    counts["failures"] = failures
    return counts


def _shard(job: tuple) -> dict:
    cases, pool, seed, shard, seconds, start = job
    bases = [""] + _pool(pool, seed)
    return _run(cases, bases, random.Random(f"{seed}-{shard}"), seconds, start)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cases", type=int, default=10000)
    p.add_argument("--pool", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no limit) and report the cases run")
    p.add_argument("--jobs", type=int, default=1, help="shards run in parallel processes (default 1: one generator seeded with --seed)")
    args = p.parse_args()
    if not shutil.which("git"):
        sys.exit("fuzz_fix: `git` is not on PATH: the --diff property (git apply) could not be checked")
    start = time.monotonic()
    if args.jobs <= 1:
        bases = [""] + _pool(args.pool, args.seed)
        results = [_run(args.cases, bases, random.Random(args.seed), args.seconds, start)]
    else:
        per, extra = divmod(args.cases, args.jobs)
        jobs = [(per + (k < extra), args.pool, args.seed, k, args.seconds, time.time()) for k in range(args.jobs)]
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            results = pool.map(_shard_wall, jobs)
    total: dict = {}
    failures: list = []
    for result in results:
        failures += result.pop("failures")
        for key, value in result.items():
            total[key] = total.get(key, 0) + value
    total["pool"] = args.pool
    total["jobs"] = max(args.jobs, 1)
    total["seconds"] = round(time.monotonic() - start)
    print(json.dumps({**total, "failures": failures[:20]}, indent=2))
    return 1 if total["failed"] else 0


def _shard_wall(job: tuple) -> dict:
    # time.monotonic() is not comparable across processes: a shard's time limit counts from the
    # wall-clock start of the whole run.
    cases, pool, seed, shard, seconds, wall_start = job
    return _shard((cases, pool, seed, shard, seconds, time.monotonic() - (time.time() - wall_start)))


if __name__ == "__main__":
    sys.exit(main())
