"""GitLab code quality: the subset of the Code Climate JSON format that GitLab reads
(`description`, `check_name`, `fingerprint`, `severity`, `location.path`,
`location.lines.begin`), for `artifacts: reports: codequality:`."""

from __future__ import annotations

import json

from synclint.report.fingerprint import display_path, fingerprints
from synclint.violation import IO_ERROR, SYNTAX_ERROR

# GitLab's severities: info, minor, major, critical, blocker.
SEVERITY = {"error": "major", "warning": "minor", "note": "info"}


def _description(v) -> str:
    if v.code in (SYNTAX_ERROR, IO_ERROR):
        return f"{v.code} {v.message}"
    return f"{v.code} {v.message} (confidence: {v.confidence.label})"


def render(violations, sources=None, explain=False) -> str:
    issues = []
    for v, fingerprint in zip(violations, fingerprints(violations, sources)):
        issues.append(
            {
                "description": _description(v),
                "check_name": v.code,
                "fingerprint": fingerprint,
                "severity": SEVERITY[v.severity.value],
                "location": {"path": display_path(v.filename), "lines": {"begin": v.location.row}},
            }
        )
    return json.dumps(issues, indent=2) + "\n"
