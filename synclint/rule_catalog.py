"""What the prefilter, the screen and the cache's digest read of each rule, as plain data:
its code, trigger words, shape words, whether it reports device values only and where
(`device_sites`), and the function that gives its screen words for one file (`words_of`).

The rules themselves import libcst and the analysis (about a quarter of a second). A run
that only asks whether an edited file's screened input is still the one its last findings
were made from (a comment, a function no rule can flag: synclint/runner.py) reads this
catalog from the cache instead, and imports the rules only when the answer is no. The
catalog is written by a run that loaded the rules, under the same code fingerprint as the
cache, so it always describes the rules of the code that reads it."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class RuleInfo:
    code: str
    triggers: tuple[str, ...]
    shape_words: tuple[str, ...] | None
    device_only: bool
    device_sites: tuple[str, ...] | None
    words_of: str

    def screen_words(self, tree) -> tuple[str, ...] | None:
        """As `Rule.screen_words` (synclint/rules/base.py)."""
        if self.words_of:
            return words_function(self.words_of)(tree)
        return self.shape_words


@lru_cache(maxsize=None)
def words_function(path: str):
    """The function "module:name" names."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def describe(rules) -> tuple:
    """The catalog of rule classes (or instances), as plain tuples (marshal-able)."""
    return tuple(
        (r.code, tuple(r.triggers), None if r.shape_words is None else tuple(r.shape_words), bool(r.device_only),
         None if r.device_sites is None else tuple(r.device_sites), r.words_of)
        for r in rules
    )


def from_plain(plain) -> tuple[RuleInfo, ...] | None:
    """The catalog back from `describe`'s tuples; None for anything malformed."""
    try:
        return tuple(RuleInfo(*entry) for entry in plain)
    except TypeError:
        return None


def specificity(code: str, prefixes) -> int:
    best = -1
    for prefix in prefixes:
        p = prefix.strip().upper()
        if p == "ALL":
            p = ""
        if code.startswith(p):
            best = max(best, len(p))
    return best


def select(codes, select, extend_select, ignore) -> frozenset[str]:
    """ruff's rule: the most specific matching selector wins (`--select SL1 --ignore SL102`)."""
    selectors = (*select, *extend_select)
    return frozenset(code for code in codes if specificity(code, selectors) > specificity(code, ignore))
