"""The judged sample of docs/precision.md: the first N default findings of a JSON report in a
fixed pseudo-random order, each joined with the verdict the precision pages already hold for
its line and rule (a verdict is a property of the line, so a line judged before keeps it).

    synclint check CORPUS --output-format json -o report.json --exit-zero -q --no-cache
    python scripts/precision_sample.py report.json CORPUS [--n 60] [--salt 2026]
    python scripts/precision_sample.py report.json CORPUS --all     # every finding, by tier

The order is that of sha256("<salt>|<path relative to CORPUS>|<row>|<code>"), so a finding
keeps its place while the report around it changes; a new salt draws a fresh sample. A report
made with `--include-cold --min-confidence low` serves too: only what the default report shows
(tier `hot` or `unknown`, confidence `medium` or `high`) is joined. Lines with no verdict yet
print `TODO`; the summary counts true / cold / false over the judged ones, in all and by tier.
The verdicts are read from docs/precision.md and docs/history/precision-rounds.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

# `| n | `path:line` | SLxxx | ... |`, or the older `| n | SLxxx | `path:line` | ... |`
VERDICT_ROW = re.compile(r"^\|\s*\d+\s*\|\s*`([^`]+):(\d+)`\s*\|\s*(SL\d+)\s*\|(.*)$")
OLD_VERDICT_ROW = re.compile(r"^\|\s*\d+\s*\|\s*(SL\d+)\s*\|\s*`([^`]+):(\d+)`\s*\|(.*)$")
VERDICTS = ("true", "cold", "false")


DEFAULT_SALT = "2026"
VERDICT_PAGES = ("precision.md", "history/precision-rounds.md")


def sample_key(path: str, row: int, code: str, salt: str = DEFAULT_SALT) -> str:
    return hashlib.sha256(f"{salt}|{path}|{row}|{code}".encode()).hexdigest()


def shown_by_default(finding: dict) -> bool:
    """Whether the default report shows the finding: not `cold`, confidence `medium` or up."""
    return finding.get("tier") != "cold" and finding.get("confidence") in ("medium", "high")


def known_verdicts(texts: list[str]) -> dict[tuple[str, int, str], tuple[str, str]]:
    """(path, line, code) -> (verdict, why) from every verdict table row of the given texts.
    The precision pages list the newest round first: the first verdict found for a line wins
    (a line judged again later, with more of its callers read, keeps the newer verdict)."""
    verdicts: dict[tuple[str, int, str], tuple[str, str]] = {}
    for text in texts:
        for line in text.splitlines():
            match = VERDICT_ROW.match(line)
            if match:
                path, row, code, rest = match.groups()
            else:
                match = OLD_VERDICT_ROW.match(line)
                if not match:
                    continue
                code, path, row, rest = match.groups()
            cells = [cell.strip() for cell in rest.split("|")]
            verdict = next((cell for cell in cells if cell in VERDICTS), None)
            if verdict is None:
                continue
            why = cells[cells.index(verdict) + 1] if cells.index(verdict) + 1 < len(cells) else ""
            verdicts.setdefault((path, int(row), code), (verdict, why))
    return verdicts


def summary(counts: Counter) -> str:
    """`true 5, cold 1, false 2, not judged 0; precision over the judged 62%`."""
    judged = sum(counts[v] for v in VERDICTS)
    share = f"{100 * counts['true'] / judged:.1f}%" if judged else "-"
    return (f"true {counts['true']}, cold {counts['cold']}, false {counts['false']}, "
            f"not judged {counts['TODO']}; precision over the judged {share}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--n", type=int, default=60, help="how many findings to draw (default 60)")
    parser.add_argument("--all", action="store_true", help="join every default finding, not a sample")
    parser.add_argument("--salt", default=DEFAULT_SALT, help="the order's salt: a new one draws a fresh sample")
    parser.add_argument("--verdicts", type=Path, action="append",
                        help="files holding verdict tables (default: docs/precision.md and docs/history/precision-rounds.md)")
    args = parser.parse_args(argv)
    corpus = args.corpus.resolve()
    findings = []
    for finding in json.loads(args.report.read_text()):
        if not shown_by_default(finding):
            continue
        path = Path(finding["filename"]).resolve()
        try:
            rel = path.relative_to(corpus).as_posix()
        except ValueError:
            rel = finding["filename"]
        findings.append((sample_key(rel, finding["location"]["row"], finding["code"], args.salt), rel, finding))
    findings.sort(key=lambda item: item[0])
    docs = Path(__file__).resolve().parent.parent / "docs"
    sources = args.verdicts or [docs / page for page in VERDICT_PAGES]
    verdicts = known_verdicts([source.read_text() for source in sources])
    drawn = findings if args.all else findings[: args.n]
    counts: Counter[str] = Counter()
    by_tier: Counter[tuple[str, str]] = Counter()
    print("| n | finding | rule | tier | verdict | why |")
    print("|---:|---|---|---|---|---|")
    for n, (_, rel, finding) in enumerate(drawn, 1):
        row, code = finding["location"]["row"], finding["code"]
        verdict, why = verdicts.get((rel, row, code), ("TODO", finding["message"]))
        counts[verdict] += 1
        by_tier[finding.get("tier", ""), verdict] += 1
        print(f"| {n} | `{rel}:{row}` | {code} | {finding.get('tier', '')} | {verdict} | {why} |")
    print(f"\n{len(findings)} default findings; {'all' if args.all else 'sample'} {len(drawn)}: "
          f"{summary(counts)}", file=sys.stderr)
    for tier in sorted({tier for tier, _ in by_tier}):
        print(f"  {tier or '(no tier)'}: {summary(Counter({v: n for (t, v), n in by_tier.items() if t == tier}))}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
