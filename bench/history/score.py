"""Recall on the judged sites of `sites.json`: lint the files that hold them inside each older
release's whole tree (the way a pre-commit hook runs), and count a site found when a default
finding (medium confidence or more, tier not cold) covers its line.

    python bench/history/score.py RELEASES_DIR [--synclint "python -m synclint"] [--sites FILE]

RELEASES_DIR holds one unpacked release per folder, named by its version (`0.30.0/vllm/...`,
each with an empty `pyproject.toml` at its root, as bench/corpus.py lays out its corpus)."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("releases", type=Path)
    parser.add_argument("--synclint", default=f"{sys.executable} -m synclint")
    parser.add_argument("--sites", type=Path, default=HERE / "sites.json",
                        help="the judged sites (default: sites.json beside this script)")
    args = parser.parse_args()
    sites = json.loads(args.sites.read_text())["sites"]
    found: dict[tuple, list] = {}
    for release in sorted({s["release"] for s in sites}):
        root = args.releases / release
        files = sorted({s["path"] for s in sites if s["release"] == release})
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            command = [*shlex.split(args.synclint), "check", *files, "--include-cold", "--min-confidence", "low",
                       "--output-format", "json", "-o", out.name, "--exit-zero", "-q"]
            subprocess.run(command, cwd=root, check=True)
            for finding in json.loads(Path(out.name).read_text()):
                path = str(Path(finding["filename"]).resolve().relative_to(root.resolve()))
                found.setdefault((release, path), []).append(finding)
    counts = {"cuda": [0, 0, 0], "other": [0, 0, 0]}
    for site in sites:
        hits = [f for f in found.get((site["release"], site["path"]), [])
                if f["location"]["row"] <= site["line"] <= f["end_location"]["row"]]
        default = [f for f in hits if f["confidence"] != "low" and f["tier"] != "cold"]
        verdict = "found" if default else ("hidden" if hits else "missed")
        tally = counts[site["platform"]]
        tally[0] += 1
        tally[1] += bool(default)
        tally[2] += bool(hits)
        shown = ", ".join(f"{f['code']} {f['confidence']} {f['tier']}" for f in hits) or "-"
        print(f"{verdict:7} {site['platform']:5} {site['release']} {site['path']}:{site['line']} ({site['hot']}) [{shown}]")
    for platform, (n, default, any_) in counts.items():
        print(f"{platform}: {default}/{n} at default settings, {any_}/{n} at any confidence or tier")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
