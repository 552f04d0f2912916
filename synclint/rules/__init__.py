"""The rule registry: every module `synclint/rules/sl*.py` holds one rule class.

Adding a rule means adding one file here (and its fixtures); nothing else lists rules.
A new rule that sets neither `shape_words` nor `device_only` is run on every function (the
screen keeps everything for it); setting them lets the screen skip code it cannot flag, and
tests/test_screen.py then checks, for that rule alone, that nothing it finds is lost.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from synclint.rules.base import FixAvailability, FixSpec, Rule

__all__ = ["FixAvailability", "FixSpec", "Rule", "all_rules", "rule_by_code", "select_codes"]


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("sl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                found.append(value)
    codes = [r.code for r in found]
    duplicates = {c for c in codes if codes.count(c) > 1}
    if duplicates:
        raise RuntimeError(f"rule codes defined twice: {sorted(duplicates)}")
    return tuple(sorted(found, key=lambda r: r.code))


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code:
            return rule
    return None


# Codes the engine reports about the input itself; selectable like rules.
from synclint.violation import ENGINE_CODES, IO_ERROR, SYNTAX_ERROR  # noqa: E402

INPUT_CODES = (SYNTAX_ERROR, IO_ERROR)


def known_codes() -> tuple[str, ...]:
    return (*ENGINE_CODES, *(r.code for r in all_rules()))


def validate_selectors(selectors, where: str) -> None:
    """Every selector must be a prefix of some known code (or ALL)."""
    codes = known_codes()
    for selector in selectors:
        s = selector.strip().upper()
        if s == "ALL":
            continue
        if not s or not any(code.startswith(s) for code in codes):
            raise ValueError(f"{where}: unknown rule selector `{selector}`")


def select_codes(select, extend_select, ignore) -> frozenset[str]:
    """ruff's rule: the most specific matching selector wins (`--select SL1 --ignore SL102`)."""
    from synclint.rule_catalog import select as chosen

    return chosen(known_codes(), select, extend_select, ignore)
