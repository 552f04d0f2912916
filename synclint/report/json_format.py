"""ruff-compatible JSON: same keys, 1-based rows and columns, absolute filenames."""

from __future__ import annotations

import json
import os


def _loc(loc) -> dict:
    return {"row": loc.row, "column": loc.column}


def violation_to_dict(v) -> dict:
    fix = None
    if v.fix is not None:
        fix = {
            "applicability": v.fix.applicability.value,
            "message": v.fix.message,
            "edits": [
                {"content": e.content, "location": _loc(e.location), "end_location": _loc(e.end_location)}
                for e in v.fix.edits
            ],
        }
    return {
        "cell": v.cell,
        "code": v.code,
        "end_location": _loc(v.end_location),
        "filename": os.path.abspath(v.filename) if v.filename != "-" else "-",
        "fix": fix,
        "location": _loc(v.location),
        "message": v.message,
        "noqa_row": v.noqa_row,
        "url": v.url,
        "severity": v.severity.value,
        "confidence": v.confidence.label,
        "hot_path": v.hot_path,
        "tier": v.tier,
        "tier_reason": v.tier_reason,
        "provenance": list(v.provenance),
    }


def render(violations, sources=None, explain=False) -> str:
    return json.dumps([violation_to_dict(v) for v in violations], indent=2) + "\n"
