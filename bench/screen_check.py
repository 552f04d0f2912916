"""Does the function-level screen change any finding on the whole corpus, and how much of
the libcst parse does it save? Lints every corpus file with the screen and without it (one
process) and compares the findings; times the screen, a libcst parse of each whole file and
a libcst parse of what the screen keeps.

    .venv/bin/python bench/screen_check.py [--every N] [--no-compare]

Exit status 1 when any file's findings differ (each difference is printed; a difference in
the `--explain` provenance alone is printed and counted too).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, metavar="N", help="every Nth corpus file only")
    parser.add_argument("--no-compare", action="store_true", help="time only; do not lint twice")
    args = parser.parse_args()

    import libcst as cst

    from synclint import prefilter, screen
    from synclint.config import Settings
    from synclint.engine import enabled_rules, lint_source

    settings = Settings()
    rules = enabled_rules(settings)
    root = corpus.fetch()
    files = sorted(root.rglob("*.py"))[:: args.every]
    screen_s = whole_s = kept_s = 0.0
    skipped = reduced = whole_files = differ = explained = lines = findings = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        lines += text.count("\n")
        wanted = prefilter.rules_for(text, rules)
        if not wanted:
            continue
        start = time.perf_counter()
        kept = screen.reduce(text, wanted, settings.min_confidence)
        middle = time.perf_counter()
        try:
            cst.parse_module(text)
        except Exception:  # noqa: BLE001 - a file libcst rejects: nothing to compare
            continue
        end = time.perf_counter()
        screen_s += middle - start
        whole_s += end - middle
        if kept == screen.NOTHING:
            skipped += 1
        elif kept is None:
            whole_files += 1
            kept_s += end - middle
        else:
            reduced += 1
            start = time.perf_counter()
            cst.parse_module(kept)
            kept_s += time.perf_counter() - start
        if not args.no_compare:
            on = lint_source(text, str(path), settings).violations
            off = lint_source(text, str(path), settings.replace(screen=False)).violations
            findings += len(on)
            if [dataclasses.astuple(v) for v in on] != [dataclasses.astuple(v) for v in off]:
                differ += 1
                print(f"DIFFERENT: {path}: {len(on)} findings with the screen, {len(off)} without")
            elif [v.provenance for v in on] != [v.provenance for v in off]:
                explained += 1
                print(f"PROVENANCE ONLY: {path}: the --explain chains differ")
    print(f"{len(files):,} files, {lines:,} lines: {skipped:,} need no libcst parse, {reduced:,} are parsed in part, {whole_files:,} whole")
    print(f"libcst parse of every file: {whole_s:.1f} s; screen (ast) {screen_s:.1f} s + parse of what it keeps {kept_s:.1f} s"
          f" = {(screen_s + kept_s) / whole_s:.2f} of it")
    if not args.no_compare:
        print(f"{findings:,} findings; files whose findings differ with the screen: {differ}; whose provenance differs: {explained}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
