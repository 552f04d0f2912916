"""Run synclint over a real corpus: no crash, every fixed file compiles, findings per 1,000
lines at default settings beside a naive text search, and a reproducible sample of findings
to judge by hand (written to a JSON file; the verdicts live in docs/precision.md).

    python scripts/corpus_precision.py CORPUS_DIR [--sample 50] [--seed 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

# What a reviewer would grep for without synclint: each shape the issue tracker names.
NAIVE = re.compile(
    r"\.item\(\)|\.tolist\(\)|\.cpu\(\)|\.numpy\(\)|\.cuda\(|\.to\(|torch\.tensor\(|torch\.as_tensor\("
    r"|\bint\(|\bfloat\(|\bbool\(|\.nonzero\(|torch\.nonzero\(|torch\.where\(|repeat_interleave\("
    r"|\.synchronize\(|masked_select\(|\.unique\(|bincount\("
)


def _one(path: str):
    from synclint.config import Settings
    from synclint.engine import lint_source
    from synclint.fix import fix_source

    settings = Settings()
    source = Path(path).read_bytes()
    text = source.decode("utf-8", errors="replace")
    lines = text.count("\n") + 1
    naive = len(NAIVE.findall(text))
    out = {"path": path, "lines": lines, "naive": naive, "findings": [], "crash": None, "fix_error": None, "fixed": 0}
    try:
        result = lint_source(source, path, settings)
        out["findings"] = [
            {"code": v.code, "row": v.location.row, "col": v.location.column, "message": v.message,
             "confidence": v.confidence.label, "hot": v.hot_path, "provenance": list(v.provenance),
             "fixable": v.fix is not None}
            for v in result.violations
        ]
        if any(v.fix is not None for v in result.violations):
            for unsafe in (False, True):
                fixed = fix_source(source, path, settings, unsafe=unsafe)
                if fixed.error:
                    out["fix_error"] = fixed.error
                elif fixed.changed:
                    try:
                        compile(fixed.fixed, path, "exec")
                    except SyntaxError as exc:
                        out["fix_error"] = f"fixed file does not compile: {exc}"
                    out["fixed"] = max(out["fixed"], fixed.applied)
    except Exception as exc:  # noqa: BLE001 - the point is to count crashes
        out["crash"] = f"{exc.__class__.__name__}: {exc}"
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="precision_run.json")
    parser.add_argument("-j", "--jobs", type=int, default=multiprocessing.cpu_count())
    args = parser.parse_args()
    files = sorted(str(p) for p in Path(args.corpus).rglob("*.py"))
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(_one, files, chunksize=8)
    elapsed = time.perf_counter() - start
    lines = sum(r["lines"] for r in results)
    naive = sum(r["naive"] for r in results)
    findings = [dict(f, path=r["path"]) for r in results for f in r["findings"]]
    crashes = [(r["path"], r["crash"]) for r in results if r["crash"]]
    fix_errors = [(r["path"], r["fix_error"]) for r in results if r["fix_error"]]
    per_code = Counter(f["code"] for f in findings)
    rng = random.Random(args.seed)
    sample = rng.sample(findings, min(args.sample, len(findings)))
    summary = {
        "files": len(files), "lines": lines, "seconds": round(elapsed, 1),
        "findings": len(findings), "per_kloc": round(1000 * len(findings) / lines, 3),
        "naive_hits": naive, "naive_per_kloc": round(1000 * naive / lines, 2),
        "per_code": dict(sorted(per_code.items())), "crashes": crashes, "fix_errors": fix_errors,
        "files_fixed": sum(1 for r in results if r["fixed"]), "sample": sample,
    }
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k != "sample"}, indent=2))
    return 1 if crashes or fix_errors else 0


if __name__ == "__main__":
    sys.exit(main())
