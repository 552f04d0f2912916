"""The rows where a finding's wait happens at run time.

Most findings wait where they are reported (the readback, the copy, the index). A rule
that reports a loop over a device tensor (`for n in lens:`) flags the loop header, but the
host waits where the body uses an element as a number (`hidden[start:start + n]`), one row
or more below. The runtime join and the tracer's own proof read a finding's rows through
this module, so that a site anywhere in such a loop confirms it."""

from __future__ import annotations

import ast
from functools import lru_cache

_LOOPS = (ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def waits_in_loop_body(code: str) -> bool:
    """Whether the rule `code` flags a loop whose body is where the host waits."""
    from synclint.rules import rule_by_code

    rule = rule_by_code(code)
    return bool(rule is not None and getattr(rule, "waits_in_loop_body", False))


@lru_cache(maxsize=64)
def _loop_spans(source: str) -> tuple[tuple[int, int, int, int], ...]:
    """(first row of the iterated expression, its last row, first row, last row) of every
    loop and comprehension in `source`; empty where it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, _LOOPS):
            continue
        iterables = [node.iter] if isinstance(node, (ast.For, ast.AsyncFor)) else [g.iter for g in node.generators]
        for iterable in iterables:
            spans.append((iterable.lineno, iterable.end_lineno or iterable.lineno, node.lineno, node.end_lineno or node.lineno))
    return tuple(spans)


def runtime_rows(code: str, first: int, last: int, source: str | None) -> tuple[int, int]:
    """The rows a run-time site of a finding of `code` at rows `first`..`last` may be on:
    the finding's own rows, or, for a loop rule, the whole loop whose iterated expression
    the finding covers (the innermost one)."""
    if source is None or not waits_in_loop_body(code):
        return first, last
    best = None
    for iter_first, iter_last, loop_first, loop_last in _loop_spans(source):
        if iter_first <= first and last <= iter_last and (best is None or loop_last - loop_first < best[1] - best[0]):
            best = (loop_first, loop_last)
    if best is None:
        return first, last
    return min(first, best[0]), max(last, best[1])
