"""Skip files that cannot hold any enabled pattern before paying for a libcst parse.

Each rule lists identifiers (`triggers`) at least one of which must appear in any source it
can flag (for `.item()` that is `item`). A file in which no enabled rule's trigger appears
as a word is not parsed. The check is on words, not on syntax, so it can only let too much
through, never hide a finding: `x . item ()` and `getattr(x, "item")` both contain `item`.

The same test applies rule by rule (`rules_for`): a rule none of whose triggers appears in a
file cannot flag anything in it, so a file that must be parsed for one rule need not be
visited by the others. tests/test_prefilter.py checks every registered rule's triggers
against the fixtures and real PyTorch code.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")


def words_in(text: str) -> frozenset[str]:
    """Every identifier-like word of `text` (keywords, names, words in strings and comments)."""
    return frozenset(_WORD.findall(text))


def rules_for(text: str, rules) -> tuple:
    """The rules that may match `text`, in their order: those without triggers, and those
    with at least one trigger among the words of `text`."""
    words = words_in(text)
    return tuple(rule for rule in rules if not rule.triggers or not words.isdisjoint(rule.triggers))


def may_match(text: str, rules) -> bool:
    """False only when none of `rules` can possibly match `text` (no rules: no filter)."""
    return not rules or bool(rules_for(text, rules))
