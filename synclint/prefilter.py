"""Skip files that cannot hold any enabled pattern before paying for a libcst parse.

Each rule lists identifiers (`triggers`) at least one of which must appear in any source it
can flag (for `.item()` that is `item`). A file in which no enabled rule's trigger appears
as a word is not parsed. The check is on words, not on syntax, so it can only let too much
through, never hide a finding: `x . item ()` and `getattr(x, "item")` both contain `item`.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=64)
def _pattern(triggers: frozenset[str]) -> re.Pattern[str] | None:
    if not triggers:
        return None
    words = "|".join(sorted(re.escape(t) for t in triggers))
    return re.compile(rf"\b(?:{words})\b")


def triggers_of(rules) -> frozenset[str]:
    found: set[str] = set()
    for rule in rules:
        if not rule.triggers:
            return frozenset()  # a rule without triggers may match anything: no prefilter
        found.update(rule.triggers)
    return frozenset(found)


def may_match(text: str, rules) -> bool:
    """False only when no enabled rule can possibly match `text`."""
    triggers = triggers_of(rules)
    if not triggers:
        return True
    pattern = _pattern(triggers)
    return pattern is not None and pattern.search(text) is not None
