"""The function-level screen (synclint/screen/) never changes what synclint reports: with
it and without it, every finding (position, message, fix, provenance) is the same, on the
fixtures and on real PyTorch code, at the default confidence and at every confidence, for
every rule alone and all together. It keeps line numbers, and it parses less."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from synclint import screen
from synclint.config import Settings
from synclint.engine import enabled_rules, lint_source
from synclint.fix.apply import fix_source
from synclint.rules import all_rules
from synclint.violation import Confidence

from test_parallel import FIXTURES, real_code_sample

DEFAULT = Settings()
ALL_CONFIDENCES = Settings(min_confidence=Confidence.LOW)


def _report(text: str, path: str, settings: Settings) -> list[tuple]:
    result = lint_source(text, path, settings)
    return [(dataclasses.astuple(v), v.provenance) for v in result.violations]


def _differences(corpus: dict[Path, str], settings: Settings) -> list[str]:
    out = []
    for path, text in corpus.items():
        screened = _report(text, str(path), settings)
        whole = _report(text, str(path), settings.replace(screen=False))
        if screened != whole:
            out.append(f"{path}: {len(screened)} findings with the screen, {len(whole)} without")
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[Path, str]:
    sample = real_code_sample(tmp_path_factory.mktemp("sample"), torch_files=40, corpus_files=30)
    files = sorted(FIXTURES.rglob("*.py")) + sorted(sample.rglob("*.py"))
    return {path: path.read_text(encoding="utf-8", errors="replace") for path in files}


def test_the_corpus_has_findings_to_lose(corpus):
    found = sum(len(lint_source(text, str(path), DEFAULT).violations) for path, text in corpus.items())
    assert found >= 50


@pytest.mark.parametrize("settings", [DEFAULT, ALL_CONFIDENCES], ids=["default", "all-confidences"])
def test_same_findings_with_and_without_the_screen(corpus, settings):
    assert _differences(corpus, settings) == []


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_same_findings_for_each_rule_alone(corpus, rule):
    # One rule alone is screened by its own words and sites only.
    assert _differences(corpus, DEFAULT.replace(select=(rule.code,))) == []


def test_the_check_would_catch_a_screen_that_hides_findings(corpus, monkeypatch):
    code = "SL203"
    rule = next(r for r in all_rules() if r.code == code)
    assert any(v.code == code for path, text in corpus.items() for v in lint_source(text, str(path), DEFAULT).violations)
    monkeypatch.setattr(rule, "shape_words", ("no_such_call",))
    monkeypatch.setattr(rule, "device_only", False)
    enabled_rules.cache_clear()
    try:
        assert _differences(corpus, DEFAULT.replace(select=(code,))) != []
    finally:
        enabled_rules.cache_clear()


def test_fixes_are_the_same_with_and_without_the_screen():
    for before in sorted(FIXTURES.glob("SL*/before.py")):
        text = before.read_text(encoding="utf-8")
        screened = fix_source(text, str(before), DEFAULT, unsafe=True)
        whole = fix_source(text, str(before), DEFAULT.replace(screen=False), unsafe=True)
        if (before.parent / "after.py").exists():
            assert screened.applied > 0, before  # a rule with a fix: something was fixed
        assert (screened.fixed, screened.applied, screened.violations) == (whole.fixed, whole.applied, whole.violations), before


def test_the_screen_parses_less_of_real_code(corpus):
    kept = total = 0
    for path, text in corpus.items():
        reduced = screen.reduce(text, enabled_rules(DEFAULT), DEFAULT.min_confidence)
        total += len(text.strip())
        kept += len(text.strip()) if reduced is None else len(reduced.strip())
    assert kept < 0.7 * total


# --- the reduced text ---------------------------------------------------------------------------


def _reduce(source: str, settings: Settings = DEFAULT) -> str | None:
    return screen.reduce(textwrap.dedent(source), enabled_rules(settings), settings.min_confidence)


MODEL = '''\
"""A model."""
import torch
from torch import nn

SCALE = 2


def host_only(xs):
    if xs:
        return [x * SCALE for x in xs]
    return []


class Block(nn.Module):
    """Docstring."""

    def __init__(self, dim):
        super().__init__()
        self.register_buffer("scale", torch.ones(dim))
        self.dim = dim

    def describe(self):
        if self.dim > 4:
            return "wide"
        return "narrow"

    def forward(self, x):
        if (self.scale > 0).any():
            x = x * self.scale
        return x
'''


def test_units_without_a_finding_are_blanked_and_lines_keep_their_numbers():
    reduced = _reduce(MODEL)
    assert reduced is not None
    original, kept = MODEL.splitlines(), reduced.splitlines()
    assert len(kept) == len(original)
    for old, new in zip(original, kept):
        assert new in (old, "")
    text = "\n".join(kept)
    assert "def forward" in text and "if (self.scale > 0).any():" in text
    assert "def __init__" in text  # it writes `self.scale`, which forward() reads
    assert "def host_only" not in text and "def describe" not in text
    assert "import torch" in text and '"""A model."""' in text


def test_a_file_where_nothing_can_be_flagged_is_not_parsed():
    source = MODEL.replace("if (self.scale > 0).any():", "if self.dim:")
    assert _reduce(source) == screen.NOTHING
    result = lint_source(source, "m.py", DEFAULT)
    assert not result.parsed and result.violations == []


def test_at_low_confidence_guesses_count_so_units_are_kept():
    source = """\
        import torch

        def f(x: torch.Tensor):
            if x:
                return 1
    """
    assert _reduce(source) == screen.NOTHING  # a torch.Tensor annotation is a low guess
    assert _reduce(source, ALL_CONFIDENCES) is None  # SL203 may report it at low


@pytest.mark.parametrize(
    "source",
    [
        # a device value reaches the test through a module-level name
        'import torch\nDEV = "cuda"\ndef f(n):\n    t = torch.zeros(n, device=DEV)\n    if t.sum():\n        pass\n',
        # through a local function's result
        "import torch\ndef make():\n    return torch.ones(3).cuda()\ndef f():\n    t = make()\n    print(t)\n",
        # through tuple unpacking, element by element
        "import torch\ndef f(x):\n    a, b = x.cuda(), 0\n    assert a\n",
        # through an attribute another method writes
        "import torch\nclass M:\n    def setup(self):\n        self.t = torch.ones(2, device='cuda')\n    def run(self):\n        return int(self.t)\n",
    ],
)
def test_device_values_are_followed_into_the_unit_that_flags_them(source):
    screened = lint_source(source, "m.py", DEFAULT)
    whole = lint_source(source, "m.py", DEFAULT.replace(screen=False))
    assert whole.violations, "the case must hold a finding"
    assert screened.violations == whole.violations


def test_statements_sharing_a_line_are_kept_together():
    source = "import torch\nx = 1; y = torch.ones(2).cuda()\ndef f():\n    print(y)\n"
    reduced = _reduce(source)
    assert reduced is None or "x = 1; y = torch.ones(2).cuda()" in reduced
    assert lint_source(source, "m.py", DEFAULT).violations == lint_source(source, "m.py", DEFAULT.replace(screen=False)).violations


def test_a_class_kept_only_for_its_name_gets_pass():
    source = (
        "import torch\n\n\nclass Base(torch.nn.Module):\n    def helper(self):\n        return 1\n\n\n"
        "def f(x):\n    y = x.cuda()\n    if y:\n        return Base\n"
    )
    reduced = _reduce(source)
    assert reduced is not None
    assert "class Base(torch.nn.Module):\n    pass\n" in reduced
    assert "def helper" not in reduced


def test_line_endings_are_kept():
    source = MODEL.replace("\n", "\r\n")
    reduced = _reduce(source)
    assert reduced is not None and reduced.count("\r\n") == source.count("\r\n") and "\n" not in reduced.replace("\r\n", "")
    assert _report(source, "m.py", DEFAULT) == _report(source, "m.py", DEFAULT.replace(screen=False))


@pytest.mark.parametrize(
    "source",
    ["def f(:\n    pass\n", "import torch\r\nx = 1\rdef f(t):\n    return t.item()\n"],
    ids=["syntax-error", "lone-carriage-return"],
)
def test_text_the_screen_cannot_read_is_parsed_whole(source):
    assert _reduce(source) is None
