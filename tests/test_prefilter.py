"""The prefilter never hides a finding: for every registered rule, every finding it makes
(prefilter off, every confidence) lies in a file where that rule's triggers appear, on the
fixtures and on a sample of real PyTorch code. Rules are picked up from the registry, so a
rule added later is covered without touching this file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from synclint import prefilter
from synclint.config import Settings
from synclint.engine import enabled_rules, lint_source
from synclint.rules import all_rules
from synclint.violation import Confidence

from test_parallel import FIXTURES, real_code_sample

ALL_CONFIDENCES = Settings(min_confidence=Confidence.LOW)


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[Path, str]:
    """The fixtures and the real-code sample: path -> text."""
    sample = real_code_sample(tmp_path_factory.mktemp("sample"))
    files = _files(FIXTURES) + _files(sample)
    return {path: path.read_text(encoding="utf-8", errors="replace") for path in files}


@pytest.fixture(scope="module")
def unfiltered(corpus) -> dict[Path, list]:
    """Every finding of every rule with the prefilter switched off: the oracle."""
    real = prefilter.rules_for
    prefilter.rules_for = lambda text, rules: tuple(rules)  # every enabled rule, every file
    try:
        return {path: lint_source(text, str(path), ALL_CONFIDENCES).violations for path, text in corpus.items()}
    finally:
        prefilter.rules_for = real


def hidden_findings(rule, corpus, unfiltered) -> list[str]:
    """Findings of `rule` in files that the prefilter would skip if it were the only rule."""
    instance = rule(ALL_CONFIDENCES)
    hidden = []
    for path, text in corpus.items():
        if prefilter.may_match(text, (instance,)):
            continue
        hidden += [f"{path}:{v.location.row}:{v.location.column} {v.code}" for v in unfiltered[path] if v.code == rule.code]
    return hidden


def test_the_corpus_exercises_the_rules(unfiltered):
    codes = {v.code for found in unfiltered.values() for v in found}
    assert len(codes) >= min(5, len(all_rules()))


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_triggers_never_hide_a_finding(rule, corpus, unfiltered):
    assert hidden_findings(rule, corpus, unfiltered) == []


def test_the_check_would_catch_a_wrong_trigger(corpus, unfiltered):
    rule = next(r for r in all_rules() if any(v.code == r.code for found in unfiltered.values() for v in found))
    wrong = type("WrongTriggers", (rule,), {"triggers": ("no_such_word_anywhere",)})
    assert hidden_findings(wrong, corpus, unfiltered) != []


def test_prefilter_on_and_off_agree_at_default_selection(corpus, unfiltered):
    for path, text in corpus.items():
        on = lint_source(text, str(path), ALL_CONFIDENCES).violations
        assert [dataclasses.astuple(v) for v in on] == [dataclasses.astuple(v) for v in unfiltered[path]], path


# --- the word check itself ---------------------------------------------------------------


class _Only:
    def __init__(self, *triggers):
        self.triggers = triggers


def test_word_match_not_substring():
    rules = (_Only("item"),)
    assert prefilter.may_match("x = t.item()\n", rules)
    assert prefilter.may_match("x = getattr(t, 'item')()\n", rules)  # words, not syntax: errs on the side of parsing
    assert not prefilter.may_match("items = [1]\nsubitem = 2\n", rules)


def test_a_rule_without_triggers_disables_the_prefilter():
    assert prefilter.may_match("nothing here\n", (_Only("item"), _Only()))


def test_skipped_file_is_not_parsed_but_syntax_errors_still_reported():
    settings = Settings(select=("SL201",))
    assert [r.code for r in enabled_rules(settings)] == ["SL201"]
    skipped = lint_source("import torch\nx = torch.zeros(3)\n", "a.py", settings)
    assert not skipped.parsed and skipped.violations == []
    parsed = lint_source("import torch\nx = torch.zeros(3, device='cuda').sum().item()\n", "b.py", settings)
    assert parsed.parsed and [v.code for v in parsed.violations] == ["SL201"]
    broken = lint_source("def f(:\n    pass\n", "c.py", settings)
    assert not broken.parsed and [v.code for v in broken.violations] == ["SL001"]


def test_rules_for_keeps_exactly_the_rules_whose_triggers_appear():
    a, b, c = _Only("item"), _Only("non_blocking", "copy_"), _Only()
    assert prefilter.rules_for("y = x.item()\n", (a, b, c)) == (a, c)
    assert prefilter.rules_for("y.copy_(x, non_blocking=True)\n", (a, b)) == (b,)
    assert prefilter.rules_for("subitem = 1  # items\n", (a, b)) == ()


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_running_only_the_triggered_rules_loses_nothing(rule, corpus, unfiltered):
    # The per-rule form of the same guarantee: wherever `rule` finds something, `rules_for`
    # keeps it, whatever other rules are enabled.
    instance = rule(ALL_CONFIDENCES)
    for path, text in corpus.items():
        if any(v.code == rule.code for v in unfiltered[path]):
            assert prefilter.rules_for(text, (instance,)) == (instance,), path
