"""SARIF 2.1.0, with every rule in the driver and fixes as artifact changes.

For GitHub code scanning: each rule carries its documentation as `help.markdown`, `tags`
and a `precision`; each result carries `partialFingerprints` (so an alert follows its line
when lines above it move) and its confidence as `precision`. No URL is invented: the rule
reference is printed by `synclint rule CODE`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from synclint import __version__
from synclint.report.fingerprint import VERSION as FINGERPRINT_KEY
from synclint.report.fingerprint import fingerprints
from synclint.violation import ENGINE_CODES, INPUT_CODES, UNUSED_SUPPRESSION

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
_INPUT_RULES = {code: (name, summary[0].upper() + summary[1:]) for code, (name, summary) in INPUT_CODES.items()}
# synclint's confidence (that the value lives where the rule needs it) -> SARIF precision.
PRECISION = {"high": "high", "medium": "medium", "low": "low"}
_FAMILY_TAGS = {
    "SL1": "host-to-device",
    "SL2": "device-to-host",
    "SL3": "indexing",
    "SL4": "data-dependent-shape",
    "SL5": "explicit-synchronization",
}


def rule_tags(code: str) -> list[str]:
    family = next((tag for prefix, tag in _FAMILY_TAGS.items() if code.startswith(prefix)), None)
    if family is None:
        return ["synclint", "input"]
    return ["synclint", "performance", "gpu-sync", family]


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


def _rule_precision(code: str, violations) -> str:
    """The lowest confidence among this run's findings of the rule (GitHub sorts alerts by a
    rule's precision); `medium`, the default `--min-confidence`, for a rule with none."""
    seen = [v.confidence for v in violations if v.code == code]
    return PRECISION[min(seen).label] if seen else "medium"


def _rules(violations) -> list[dict]:
    out = []
    for code, (name, text) in _INPUT_RULES.items():
        help_text = f"{text}. synclint reports it so that a CI gate never passes over a file it could not lint."
        out.append(
            {
                "id": code,
                "name": name,
                "shortDescription": {"text": text},
                "help": {"text": help_text, "markdown": help_text},
                "defaultConfiguration": {"level": "error"},
                "properties": {"tags": rule_tags(code), "precision": "very-high", "fix": "never"},
            }
        )
    name, text, _ = ENGINE_CODES[UNUSED_SUPPRESSION]
    help_text = "A suppression comment that suppresses no finding of an enabled rule. Its safe fix removes it."
    out.append(
        {
            "id": UNUSED_SUPPRESSION,
            "name": name,
            "shortDescription": {"text": text[0].upper() + text[1:]},
            "help": {"text": help_text, "markdown": help_text},
            "defaultConfiguration": {"level": "warning"},
            "properties": {"tags": ["synclint", "suppression"], "precision": "very-high", "fix": "always"},
        }
    )
    from synclint.rules import all_rules  # here: the rules import libcst, which other formats never need

    for rule in all_rules():
        doc = rule.doc()
        footer = f"\n\n`synclint rule {rule.code}` prints this documentation."
        out.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.doc_section("What it does") or rule.summary},
                "help": {"text": doc + footer, "markdown": doc + footer},
                "defaultConfiguration": {"level": _LEVEL[rule.severity.value]},
                "properties": {
                    "tags": rule_tags(rule.code),
                    "precision": _rule_precision(rule.code, violations),
                    "fix": rule.fix_availability.value,
                },
            }
        )
    return out


def render(violations, sources=None, explain=False) -> str:
    rules = _rules(violations)
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for v, fingerprint in zip(violations, fingerprints(violations, sources)):
        location = {"uri": _uri(v.filename)}
        if not location["uri"].startswith("file:"):
            location["uriBaseId"] = "%SRCROOT%"
        result = {
            "ruleId": v.code,
            "level": _LEVEL[v.severity.value],
            "message": {"text": v.message},
            "locations": [{"physicalLocation": {"artifactLocation": location, "region": _region(v.location, v.end_location)}}],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
            "properties": {"confidence": v.confidence.label, "precision": PRECISION[v.confidence.label], "tier": v.tier},
        }
        if v.code in index:
            result["ruleIndex"] = index[v.code]
        if v.hot_path:
            result["properties"]["hotPath"] = v.hot_path
        if v.tier_reason:
            result["properties"]["tierReason"] = v.tier_reason
        if v.cell is not None:  # a notebook: the rows count within this cell (1-based)
            result["properties"]["cell"] = v.cell
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
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
