"""Property test of the fixer on generated modules (hypothesmith) with injected sync-shaped
statements: no crash, the fixed text compiles, idempotent, findings conserved, suppressed
lines untouched, and the --diff applies with `git apply` to exactly what --fix writes.

A few hundred cases in the default run; `SYNCLINT_FUZZ_EXAMPLES=N` runs N more in the slow
test (scripts/fuzz_fix.py runs the long campaign)."""

from __future__ import annotations

import os

import pytest

hypothesis = pytest.importorskip("hypothesis")
hypothesmith = pytest.importorskip("hypothesmith")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fuzzing import NEWLINES, ODD, SNIPPETS, check, compose  # noqa: E402

_BASES = st.one_of(st.just(""), hypothesmith.from_grammar(auto_target=False))
_CASES = st.builds(
    compose,
    _BASES,
    st.lists(st.integers(0, len(SNIPPETS) - 1), min_size=1, max_size=5),
    st.lists(st.integers(0, len(ODD) - 1), max_size=5),
    st.integers(0, len(NEWLINES) - 1),
    st.lists(st.integers(0, 1000), min_size=1, max_size=5),
    st.booleans(),
)
_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _holds(text):
    assume(text is not None)
    assert check(text) == []


@settings(max_examples=200, **_COMMON)
@given(_CASES)
def test_fixer_properties_on_generated_modules(text):
    _holds(text)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SYNCLINT_FUZZ_EXAMPLES"), reason="set SYNCLINT_FUZZ_EXAMPLES=N to run N more cases")
def test_fixer_properties_long_run():
    @settings(max_examples=int(os.environ.get("SYNCLINT_FUZZ_EXAMPLES", "0") or 0), **_COMMON)
    @given(_CASES)
    def run(text):
        _holds(text)

    run()


@pytest.mark.parametrize("pick", range(len(SNIPPETS)))
@pytest.mark.parametrize("newline", range(len(NEWLINES)))
def test_every_snippet_is_fixed_cleanly_in_every_line_style(pick, newline):
    text = compose("x = 1\n", [pick, pick], [pick], newline, [0, 1])
    assert text is not None
    assert check(text) == []
    assert check(text, unsafe=False) == []
