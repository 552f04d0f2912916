"""The judged sample of docs/precision.md: the first N default findings of a JSON report in a
fixed pseudo-random order, each joined with the verdict docs/precision.md already holds for
its line and rule (a verdict is a property of the line, so a line judged before keeps it).

    synclint check CORPUS --output-format json -o report.json --exit-zero -q --no-cache
    python scripts/precision_sample.py report.json CORPUS [--n 60] [--verdicts docs/precision.md]

The order is that of sha256("2026|<path relative to CORPUS>|<row>|<code>"), so a finding keeps
its place while the report around it changes. Lines with no verdict yet print `TODO`; the
summary counts true / cold / false over the judged ones.
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


def sample_key(path: str, row: int, code: str) -> str:
    return hashlib.sha256(f"2026|{path}|{row}|{code}".encode()).hexdigest()


def known_verdicts(texts: list[str]) -> dict[tuple[str, int, str], tuple[str, str]]:
    """(path, line, code) -> (verdict, why) from every verdict table row of the given texts.
    docs/precision.md lists the newest round first: the first verdict found for a line wins
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--verdicts", type=Path, action="append",
                        help="files holding verdict tables (default docs/precision.md)")
    args = parser.parse_args(argv)
    corpus = args.corpus.resolve()
    findings = []
    for finding in json.loads(args.report.read_text()):
        path = Path(finding["filename"]).resolve()
        try:
            rel = path.relative_to(corpus).as_posix()
        except ValueError:
            rel = finding["filename"]
        findings.append((sample_key(rel, finding["location"]["row"], finding["code"]), rel, finding))
    findings.sort(key=lambda item: item[0])
    sources = args.verdicts or [Path(__file__).resolve().parent.parent / "docs" / "precision.md"]
    verdicts = known_verdicts([source.read_text() for source in sources])
    counts: Counter[str] = Counter()
    print("| n | finding | rule | tier | verdict | why |")
    print("|---:|---|---|---|---|---|")
    for n, (_, rel, finding) in enumerate(findings[: args.n], 1):
        row, code = finding["location"]["row"], finding["code"]
        verdict, why = verdicts.get((rel, row, code), ("TODO", finding["message"]))
        counts[verdict] += 1
        print(f"| {n} | `{rel}:{row}` | {code} | {finding.get('tier', '')} | {verdict} | {why} |")
    judged = sum(counts[v] for v in VERDICTS)
    share = f"{100 * counts['true'] / judged:.0f}%" if judged else "-"
    print(f"\n{len(findings)} findings; sample {min(args.n, len(findings))}: true {counts['true']}, "
          f"cold {counts['cold']}, false {counts['false']}, not judged {counts['TODO']}; "
          f"precision over the judged {share}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
