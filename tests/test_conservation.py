"""Findings are conserved by fixes: for every fix, the findings before it = those it fixed +
those that remain after it, including findings about the fixed value's later use (a fix
must not hide them: the analysis knows that each H2D form a fix writes returns a device
tensor). Checked on every fixture, safe and unsafe, with and without the screen."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from synclint.config import Settings, settings_from_table
from synclint.engine import lint_source
from synclint.fix import fix_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FILES = sorted(FIXTURES.glob("*/*.py"))


def _codes(text: str, settings: Settings) -> Counter:
    return Counter(v.code for v in lint_source(text, "m.py", settings).violations)


def _eligible(v, unsafe: bool) -> bool:
    from synclint.violation import Applicability

    return v.fix is not None and (unsafe or v.fix.applicability is Applicability.SAFE)


def resolved_alongside(violations, unsafe: bool) -> Counter:
    """Findings without a fix whose span an applied fix rewrites, by code: another rule's
    report of the same value (SL208 and SL104 on one `min=` bound), which that fix may
    resolve too."""
    edits = [
        (e.location.row, e.location.column, e.end_location.row, e.end_location.column)
        for v in violations
        if _eligible(v, unsafe)
        for e in v.fix.edits
        if e.location != e.end_location
    ]

    def overlaps(v, e) -> bool:
        start, end = (v.location.row, v.location.column), (v.end_location.row, v.end_location.column)
        return start < (e[2], e[3]) and (e[0], e[1]) < end

    return Counter(v.code for v in violations if v.fix is None and any(overlaps(v, e) for e in edits))


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_conserves_its_findings(path, unsafe):
    settings = Settings()
    text = path.read_text(encoding="utf-8")
    violations = lint_source(text, "m.py", settings).violations
    before = Counter(v.code for v in violations)
    result = fix_source(text, "m.py", settings, unsafe=unsafe)
    after = _codes(result.fixed, settings)
    assert not after - before, f"a fix made new findings: {after - before}"
    # Findings that vanished without a fix of their own: only another rule's report of the
    # very code a fix rewrote.
    extra = (before - after) - Counter(v.code for v in violations if _eligible(v, unsafe))
    assert not extra - resolved_alongside(violations, unsafe), f"findings hidden by a fix: {extra}"
    assert sum(before.values()) == result.applied + sum(extra.values()) + sum(after.values()), (before, result.applied, extra, after)


# `lens` is built by the fixed H2D form, then read back to size something: SL204 must stay.
SIZING = """\
import torch
{imports}

def _prepare_inputs(self, toks, device):
    lens = {call}
    return int(lens.max()) + 1
"""

FORMS = [
    ("", 'torch.tensor(toks, device="cuda")'),  # the finding before any fix
    ("", 'torch.tensor(toks, pin_memory=torch.cuda.is_available()).to("cuda", non_blocking=torch.cuda.is_available())'),
    ("", 'torch.full((), 5, device="cuda")'),
    ("", 'torch.arange(8, device="cuda").float()'),
    ("from synclint.runtime import async_tensor_h2d", 'async_tensor_h2d(toks, device="cuda")'),
    ("from vllm.utils.torch_utils import async_tensor_h2d", 'async_tensor_h2d(toks, "cuda")'),
    ("from vllm.utils.torch_utils import async_tensor_h2d", 'async_tensor_h2d(toks, device=device)'),
    ("from vllm.utils import async_tensor_h2d", 'async_tensor_h2d(toks, torch.int32, "cuda", True)'),
    ("from sglang.srt.utils import async_h2d", 'async_h2d(toks, dtype=torch.int32, device="cuda")'),
    ("from myproj.gpu import to_gpu", 'to_gpu(toks, device="cuda")'),
]


@pytest.mark.parametrize("screen", [True, False], ids=["screen", "no-screen"])
@pytest.mark.parametrize("imports, call", FORMS, ids=[c.split("(")[0] + str(i) for i, (_, c) in enumerate(FORMS)])
def test_a_device_tensor_built_by_any_fix_form_keeps_its_later_findings(imports, call, screen):
    settings = settings_from_table({"h2d-helper": "myproj.gpu.to_gpu"}, "pyproject.toml").replace(screen=screen)
    text = SIZING.format(imports=imports, call=call)
    assert _codes(text, settings)["SL204"] == 1, text


def test_the_summary_counts_what_was_there(project, synclint):
    """Three fixable copies and a readback of one of them: 4 findings, 3 fixed, 1 remaining."""
    project.write(
        {
            "a.py": (
                "import torch\nfrom vllm.utils.torch_utils import async_tensor_h2d\n\n\n"
                "def forward(self, toks, n):\n"
                '    a = torch.tensor(toks, dtype=torch.long, device="cuda")\n'
                '    b = torch.from_numpy(n).to("cuda")\n'
                "    lens = torch.tensor(toks).cuda()\n"
                "    return a, b, int(lens.max()) + 1\n"
            )
        }
    )
    before = synclint("check", "--output-format", "concise", "a.py")
    assert "Found 4 findings." in before.out.splitlines()
    fixed = synclint("check", "--fix", "--output-format", "concise", "a.py")
    assert "Found 4 findings (3 fixed, 1 remaining)." in fixed.out.splitlines()
    assert "SL204" in fixed.out
    assert (project.root / "a.py").read_text().count("import") == 2  # vLLM's helper, used; nothing added


@pytest.mark.parametrize("value", ["1", "-3", "2**40", "1.0", "1e-5", "-0.0", "True", "False", "2j"])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_full_of_a_literal_has_the_dtype_and_value_of_tensor(value, default):
    """The SL101 fix `torch.tensor(v, device=d)` -> `torch.full((), v, device=d)` is exact:
    bool -> bool, int -> int64, float -> the default float dtype, complex -> default complex."""
    torch = pytest.importorskip("torch")
    previous = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, default))
    try:
        v = eval(value)
        a, b = torch.tensor(v), torch.full((), v)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b) and str(a) == str(b)  # -0.0 keeps its sign
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize(
    "call",
    [
        "torch.tensor(1e-5, device=DEV)",
        "torch.tensor(-3, dtype=torch.int32, device=DEV)",
        "torch.tensor(True, device=DEV)",
        "torch.tensor(len(xs), dtype=torch.float16, device=DEV)",
        "torch.tensor([-1], dtype=int, device=DEV)",
        "torch.tensor([[0.5, 0.5], [0.5, 0.5]], device=DEV)",
        "torch.tensor([False, False, False], device=DEV)",
        "torch.tensor([7, 7], dtype=torch.uint8, device=DEV)",
    ],
)
def test_copy_free_factory_fixes_give_the_same_tensor(call):
    """Each SL101 fix that builds on the device (torch.full) gives exactly
    the tensor the copy gave: dtype, shape and values (run on the CPU build)."""
    torch = pytest.importorskip("torch")
    source = f"import torch\n\ndef forward(self, xs):\n    return {call.replace('DEV', 'xs.device')}\n"
    result = fix_source(source, "m.py", Settings(select=("SL101",)))
    assert result.applied == 1 and "pin_memory" not in result.fixed, result.fixed
    assert "torch.full(" in result.fixed
    want, got = {}, {}
    exec(source, {"torch": torch}, want)
    exec(result.fixed, {"torch": torch}, got)
    xs = torch.zeros(3)
    a, b = want["forward"](None, xs), got["forward"](None, xs)
    assert (a.dtype, a.shape) == (b.dtype, b.shape) and torch.equal(a, b)
