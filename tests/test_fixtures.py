"""Each rule's fixtures, real-shaped code in fixtures/<CODE>/:

- before.py           code the rule flags
- before.expected     the exact findings at default settings, one `row:col CODE` a line
- after.py            before.py after `synclint --fix` (safe fixes), when the rule has a fix
- after_unsafe.py     before.py after `--fix --unsafe-fixes`, when it has unsafe fixes
- clean.py            look-alikes that must not be flagged at default settings

Checked: exact diagnostics, exact fixed text, idempotence, the fixed file compiles and has
no undefined names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.fix import fix_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and (p / "before.py").exists()) if FIXTURES.exists() else []


def _findings(text: str, code: str) -> list[str]:
    result = lint_source(text, "before.py", Settings())
    return [f"{v.location.row}:{v.location.column} {v.code}" for v in result.violations if v.code.startswith(code)]


def _undefined_names(text: str) -> list[str]:
    from pyflakes.api import check
    from pyflakes.reporter import Reporter
    import io

    out = io.StringIO()
    check(text, "fixed.py", Reporter(out, out))
    return [line for line in out.getvalue().splitlines() if "undefined name" in line]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_before_findings_are_exact(case):
    expected = [line.strip() for line in (case / "before.expected").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert _findings((case / "before.py").read_text(), case.name) == expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_clean_lookalikes_are_not_flagged(case):
    clean = case / "clean.py"
    assert clean.exists(), f"{case.name} has no clean.py of look-alikes"
    text = clean.read_text()
    assert _findings(text, case.name) == []


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("variant", ["after.py", "after_unsafe.py"])
def test_fix_gives_expected_text_and_is_idempotent(case, variant):
    expected_file = case / variant
    if not expected_file.exists():
        pytest.skip(f"{case.name} has no {variant}")
    unsafe = variant == "after_unsafe.py"
    before = (case / "before.py").read_text()
    result = fix_source(before, "before.py", Settings(), unsafe=unsafe)
    assert result.error is None
    assert result.fixed == expected_file.read_text()
    again = fix_source(result.fixed, "before.py", Settings(), unsafe=unsafe)
    assert again.applied == 0 and again.fixed == result.fixed
    compile(result.fixed, str(expected_file), "exec")
    assert _undefined_names(result.fixed) == _undefined_names(before)
