"""Candidate hand-removed syncs between two releases of a package: the lines of the older
release that look like a sync (the 21 patterns of a naive search) and that the newer release
no longer has (not moved: the line is nowhere in the new file; not kept: the sync token is not
in the lines that replace it). Tests and benchmarks are left out.

    python bench/history/candidates.py OLD_ROOT NEW_ROOT OUT.json

Each candidate is then judged by reading both releases' code (was the line a sync on a device
tensor, and is the sync gone?); the judged true sites are kept in `sites.json` and scored by
`score.py`."""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path

PATTERNS = re.compile("|".join([
    r"\.item\(\)", r"\.tolist\(\)", r"\.cpu\(\)", r"\.numpy\(\)", r"torch\.(tensor|as_tensor)\(",
    r"non_blocking\s*=\s*True", r"from_numpy", r"nonzero", r"masked_select", r"torch\.where\(",
    r"repeat_interleave", r"bincount", r"\.unique\(", r"new_tensor\(", r"synchronize\(", r"\.to\(",
    r"\]\s*=[^=]", r"\bint\(", r"\bfloat\(", r"\.max\(\)", r"\.min\(\)"]))
SKIPPED_FOLDERS = {"tests", "test", "benchmarks"}


def candidates(old: Path, new: Path) -> list[dict]:
    out = []
    for path in sorted(old.rglob("*.py")):
        rel = path.relative_to(old)
        if SKIPPED_FOLDERS & set(rel.parts) or not (new / rel).exists():
            continue
        a = path.read_text(errors="replace").splitlines()
        b = (new / rel).read_text(errors="replace").splitlines()
        if a == b:
            continue
        kept_lines = {line.strip() for line in b}
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag not in ("replace", "delete"):
                continue
            replacement = "\n".join(b[j1:j2])
            for i in range(i1, i2):
                text = a[i].strip()
                if not text or text.startswith("#") or text in kept_lines:
                    continue
                gone = [m.group(0) for m in PATTERNS.finditer(a[i]) if m.group(0) not in replacement]
                # an indexed assignment alone is mostly a dict or a list: left out
                if gone and set(gone) != {"] = "}:
                    out.append({"path": str(rel), "line": i + 1, "text": text, "gone": gone,
                                "old": "\n".join(a[max(0, i1 - 3):i2 + 3]), "new": replacement})
    return out


if __name__ == "__main__":
    found = candidates(Path(sys.argv[1]), Path(sys.argv[2]))
    Path(sys.argv[3]).write_text(json.dumps(found, indent=1))
    print(f"{len(found)} candidates in {len({c['path'] for c in found})} files")
