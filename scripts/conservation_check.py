"""Do fixes conserve findings on real code, and add no dependency?

    python scripts/conservation_check.py DIR [DIR ...] [--unsafe] [--json FILE]

For every Python file under each DIR (default settings, the way `synclint check --fix`
runs): lint it, fix it in memory, lint the fixed text. A file conserves its findings when
findings before = fixes applied + findings after, and no code has more findings after than
before (a fix made no new finding and hid none). Also counts the fixed files that would
import synclint (`import synclint` / `from synclint`) where the original did not. Prints
per-directory totals and the files that do not conserve; exit 1 if any.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.fix import fix_source


def _imports_synclint(text: str) -> bool:
    return any(line.lstrip().startswith(("import synclint", "from synclint")) for line in text.splitlines())


def _eligible(v, unsafe: bool) -> bool:
    from synclint.violation import Applicability

    return v.fix is not None and (unsafe or v.fix.applicability is Applicability.SAFE)


def _resolved_alongside(violations, unsafe: bool) -> Counter:
    """Findings without a fix whose span an applied fix rewrites, by code."""
    edits = [
        (e.location.row, e.location.column, e.end_location.row, e.end_location.column)
        for v in violations
        if _eligible(v, unsafe)
        for e in v.fix.edits
        if e.location != e.end_location
    ]

    def overlaps(v, e) -> bool:
        start, end = (v.location.row, v.location.column), (v.end_location.row, v.end_location.column)
        return start < (e[2], e[3]) and (e[0], e[1]) < end

    return Counter(v.code for v in violations if v.fix is None and any(overlaps(v, e) for e in edits))


def check_dir(root: Path, settings: Settings, unsafe: bool) -> dict:
    totals = Counter()
    bad = []
    t0 = time.perf_counter()
    for path in sorted(root.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        totals["files"] += 1
        before = lint_source(text, str(path), settings).violations
        if not any(v.fix is not None for v in before):
            totals["findings"] += len(before)
            totals["remaining"] += len(before)
            continue
        result = fix_source(text, str(path), settings, unsafe=unsafe)
        if result.error:
            bad.append({"file": str(path.relative_to(root)), "error": result.error})
            continue
        after = lint_source(result.fixed, str(path), settings).violations
        totals["files_fixed"] += 1
        totals["findings"] += len(before)
        totals["fixed"] += result.applied
        totals["remaining"] += len(after)
        if _imports_synclint(result.fixed) and not _imports_synclint(text):
            totals["files_importing_synclint"] += 1
        new = Counter(v.code for v in after) - Counter(v.code for v in before)
        # A finding without a fix of its own may vanish only when an applied fix rewrote its
        # span: another rule's report of the same code (SL106 on a literal that SL101 now
        # builds on the device), resolved by that fix.
        extra = (Counter(v.code for v in before) - Counter(v.code for v in after)) - Counter(
            v.code for v in before if _eligible(v, unsafe)
        )
        totals["resolved_alongside"] += sum(extra.values())
        if extra - _resolved_alongside(before, unsafe) or new or len(before) != result.applied + sum(extra.values()) + len(after):
            bad.append({"file": str(path.relative_to(root)), "before": len(before), "fixed": result.applied,
                        "after": len(after), "new": dict(new),
                        "lost": dict(Counter(v.code for v in before) - Counter(v.code for v in after))})
    totals["seconds"] = round(time.perf_counter() - t0, 1)
    totals["not_conserved"] = len(bad)
    return {"root": str(root), "totals": dict(totals), "not_conserved": bad}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--unsafe", action="store_true", help="apply unsafe fixes too")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    settings = Settings()
    reports = []
    for d in a.dirs:
        report = check_dir(Path(d), settings, a.unsafe)
        reports.append(report)
        t = report["totals"]
        print(f"{d}: {t.get('files', 0)} files, {t.get('findings', 0)} findings = {t.get('fixed', 0)} fixed + "
              f"{t.get('resolved_alongside', 0)} resolved by another finding's fix + "
              f"{t.get('remaining', 0)} remaining; {t.get('files_fixed', 0)} files fixed, "
              f"{t.get('files_importing_synclint', 0)} would import synclint; not conserved: {t['not_conserved']} "
              f"({t['seconds']} s)", flush=True)
        for b in report["not_conserved"][:20]:
            print("   ", b)
    if a.json:
        Path(a.json).write_text(json.dumps(reports, indent=1))
    return 1 if any(r["not_conserved"] or r["totals"].get("files_importing_synclint") for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
