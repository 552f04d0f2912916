"""Every rule's docstring follows the ruff template, and its examples are its tests:
the `## Example` code is flagged by the rule, the `## Use instead` code is not, and for a
rule with a fix, fixing the example leaves nothing for that rule to flag."""

from __future__ import annotations

import pytest

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.fix import fix_source
from synclint.rules import FixAvailability, all_rules
from synclint.violation import Confidence

RULES = all_rules()
SECTIONS = ("What it does", "Why it stalls", "Example", "Use instead", "Fix safety")


def _settings(rule) -> Settings:
    # Only this rule, at any confidence: the example must show the pattern itself.
    return Settings(select=(rule.code,), min_confidence=Confidence.LOW)


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_docstring_has_every_section(rule):
    for section in SECTIONS:
        assert rule.doc_section(section), f"{rule.code} docstring lacks '## {section}'"
    assert rule.doc_code_blocks("Example"), f"{rule.code}: no ```python block under ## Example"
    assert rule.doc_code_blocks("Use instead"), f"{rule.code}: no ```python block under ## Use instead"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_example_is_flagged(rule):
    for block in rule.doc_code_blocks("Example"):
        codes = [v.code for v in lint_source(block, "example.py", _settings(rule)).violations]
        assert rule.code in codes, f"{rule.code} does not flag its own example:\n{block}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_use_instead_is_clean(rule):
    for block in rule.doc_code_blocks("Use instead"):
        codes = [v.code for v in lint_source(block, "example.py", _settings(rule)).violations]
        assert rule.code not in codes, f"{rule.code} flags its own 'Use instead':\n{block}"


@pytest.mark.parametrize("rule", [r for r in RULES if r.fix_availability is not FixAvailability.NEVER], ids=lambda r: r.code)
def test_fixed_example_is_clean(rule):
    for block in rule.doc_code_blocks("Example"):
        result = fix_source(block, "example.py", _settings(rule), unsafe=True)
        assert result.applied >= 1, f"{rule.code} offers a fix but fixed nothing in its example"
        assert rule.code not in [v.code for v in result.violations]
        compile(result.fixed, "fixed.py", "exec")
