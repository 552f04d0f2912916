"""SARIF 2.1.0, with every rule in the driver and fixes as artifact changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from synclint import __version__
from synclint.rules import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
_INPUT_RULES = {
    "SL001": ("syntax-error", "The file could not be parsed"),
    "SL002": ("io-error", "The file could not be read or decoded"),
}


def _uri(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return Path(path).resolve().as_uri()
    if rel.startswith(".."):
        return Path(path).resolve().as_uri()
    return Path(rel).as_posix()


def _region(start, end) -> dict:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def _rules() -> list[dict]:
    out = [
        {"id": code, "name": name, "shortDescription": {"text": text}, "defaultConfiguration": {"level": "error"}}
        for code, (name, text) in _INPUT_RULES.items()
    ]
    for rule in all_rules():
        out.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.doc_section("What it does") or rule.summary},
                "help": {"text": rule.doc(), "markdown": rule.doc()},
                "helpUri": rule.url(),
                "defaultConfiguration": {"level": _LEVEL[rule.severity.value]},
                "properties": {"fix": rule.fix_availability.value},
            }
        )
    return out


def render(violations, sources=None, explain=False) -> str:
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for v in violations:
        location = {"uri": _uri(v.filename)}
        if not location["uri"].startswith("file:"):
            location["uriBaseId"] = "%SRCROOT%"
        result = {
            "ruleId": v.code,
            "level": _LEVEL[v.severity.value],
            "message": {"text": v.message},
            "locations": [{"physicalLocation": {"artifactLocation": location, "region": _region(v.location, v.end_location)}}],
            "properties": {"confidence": v.confidence.label, "tier": v.tier},
        }
        if v.code in index:
            result["ruleIndex"] = index[v.code]
        if v.hot_path:
            result["properties"]["hotPath"] = v.hot_path
        if v.tier_reason:
            result["properties"]["tierReason"] = v.tier_reason
        if v.provenance:
            result["properties"]["provenance"] = list(v.provenance)
        if v.fix is not None:
            result["fixes"] = [
                {
                    "description": {"text": f"{v.fix.message} ({v.fix.applicability.value})"},
                    "artifactChanges": [
                        {
                            "artifactLocation": location,
                            "replacements": [
                                {"deletedRegion": _region(e.location, e.end_location), "insertedContent": {"text": e.content}}
                                for e in v.fix.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "synclint",
                        "version": __version__,
                        "informationUri": "https://github.com/synclint/synclint",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
