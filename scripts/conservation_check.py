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
        if len(before) != result.applied + len(after) or new:
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
