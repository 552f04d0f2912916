"""SL401-SL404: data-dependent shapes. Measured-clean forms are never flagged, host data is
never flagged, and SL403's output_size fix is unsafe, sound only when the host list is
provably the one the repeats were copied from (checked by running it on the CPU build)."""

from __future__ import annotations

import runpy
import textwrap
from pathlib import Path

import pytest
import torch

from synclint import prefilter
from synclint.config import Settings
from synclint.engine import lint_source
from synclint.fix import fix_source
from synclint.rules import rule_by_code
from synclint.violation import Confidence

ANY = Settings(min_confidence=Confidence.LOW)


def findings(source: str, settings: Settings = ANY) -> list[tuple[int, str, str, str | None]]:
    result = lint_source(textwrap.dedent(source), "case.py", settings)
    return [
        (v.location.row, v.code, v.confidence.label, v.fix.applicability.value if v.fix else None)
        for v in result.violations
        if v.code.startswith("SL4")
    ]


PRELUDE = """\
import numpy as np
import torch
import torch.nn.functional as F

def step(n: int, device, host_counts: list[int]):
    x = torch.randn(8, device=device)
    m = x > 0
    ids = torch.randint(0, 4, (8,), device=device)
    cpu = torch.arange(8)
    arr = np.arange(8)
"""


@pytest.mark.parametrize(
    "line",
    [
        "torch.where(m, x, 0)",
        "torch.nonzero_static(m, size=8)",
        "x.repeat_interleave(ids, output_size=n)",
        "x.repeat_interleave(2)",
        "torch.histc(x, bins=10, min=-1.0, max=1.0)",
        "x.histc(10, -1, 1)",
        "F.one_hot(ids, num_classes=4)",
        "F.one_hot(ids, 4)",
        "cpu.nonzero()",
        "torch.unique(cpu)",
        "torch.bincount(cpu)",
        "np.unique(arr)",
        "np.bincount(arr)",
        "np.nonzero(arr)",
        "x[cpu > 2]",
        "x[ids]",
    ],
)
def test_clean_forms_are_never_flagged(line):
    assert findings(PRELUDE + f"    {line}\n") == []


STALLS = [
    ("x[m]", "SL401"),
    ("x[~m & (x < 1)]", "SL401"),
    ("torch.nonzero(m)", "SL402"),
    ("torch.where(m)", "SL402"),
    ("torch.masked_select(x, m)", "SL402"),
    ("x.unique()", "SL402"),
    ("torch.repeat_interleave(x, ids)", "SL403"),
    ("torch.repeat_interleave(ids)", "SL403"),
    ("torch.bincount(ids, minlength=4)", "SL404"),
    ("torch.histc(x, bins=10)", "SL404"),
    ("x.histc(10, 0, 0)", "SL404"),
    ("F.one_hot(ids)", "SL404"),
    ("F.one_hot(ids, num_classes=-1)", "SL404"),
]


@pytest.mark.parametrize(("line", "code"), STALLS)
def test_measured_stalls_are_flagged(line, code):
    found = findings(PRELUDE + f"    {line}\n", Settings())
    assert [(row, c) for row, c, _, _ in found] == [(11, code)]


def test_unknown_placements_are_low_and_hidden_by_default():
    source = """\
    import torch

    def count(ids, x):
        return torch.bincount(ids), x.unique()
    """
    assert findings(source) == [(4, "SL404", "low", None), (4, "SL402", "low", None)]
    assert findings(source, Settings()) == []


REPEATS = """\
import torch

def expand(device="cuda"):
    lens = [3, 0, 2]
    values = torch.tensor([10, 20, 30], device=device)
    counts = torch.tensor(lens, pin_memory=False).to(device)
    return torch.repeat_interleave(values, counts), torch.repeat_interleave(counts)
"""


def test_output_size_fix_is_unsafe_and_gives_the_same_tensors(tmp_path):
    settings = Settings(select=("SL403",))
    assert fix_source(REPEATS, "r.py", settings).applied == 0  # unsafe: not applied by --fix
    result = fix_source(REPEATS, "r.py", settings, unsafe=True)
    assert result.applied == 2
    assert result.fixed.count("output_size=sum(lens)") == 2
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(REPEATS)
    after.write_text(result.fixed)
    for a, b in zip(runpy.run_path(str(before))["expand"]("cpu"), runpy.run_path(str(after))["expand"]("cpu")):
        assert torch.equal(a, b)


@pytest.mark.parametrize(
    "change",
    ["    lens.append(1)\n", "    lens = lens[::-1]\n", "    lens[0] = 5\n"],
)
def test_output_size_fix_is_withheld_when_the_host_list_may_have_changed(change):
    lines = REPEATS.splitlines(keepends=True)
    source = "".join(lines[:6]) + change + "".join(lines[6:])
    found = findings(source, Settings())
    assert found and all(fix is None for _, code, _, fix in found if code == "SL403")


@pytest.mark.parametrize("code", ["SL401", "SL402", "SL403", "SL404"])
def test_prefilter_triggers_cover_every_flagged_source(code):
    rule = rule_by_code(code)
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / code / "before.py"
    stalls = [PRELUDE + f"    {line}\n" for line, c in STALLS if c == code]
    for source in (fixture.read_text(), *rule.doc_code_blocks("Example"), *stalls):
        assert prefilter.may_match(source, [rule])


def test_module_level_code_and_masked_writes_of_unknown_values():
    source = """\
    import torch

    ids = torch.zeros(8, dtype=torch.long, device="cuda")
    unk = torch.ones(1, device="cuda")
    ids[ids == -1] = UNK_TOKEN_ID
    ids[ids == -2] = unk
    keep = ids > 0
    kept = ids[keep]
    """
    assert findings(source, Settings()) == [(6, "SL401", "high", None), (8, "SL401", "high", None)]


def test_output_size_fix_recognises_the_vllm_helper():
    source = """\
    import torch
    from vllm.utils.torch_utils import async_tensor_h2d

    def _prepare_inputs(self, req_ids, num_scheduled: list[int], device):
        counts = async_tensor_h2d(num_scheduled, device=device, dtype=torch.int32)
        return torch.repeat_interleave(req_ids, counts)
    """
    result = fix_source(textwrap.dedent(source), "v.py", Settings(select=("SL403",), min_confidence=Confidence.LOW), unsafe=True)
    assert "torch.repeat_interleave(req_ids, counts, output_size=sum(num_scheduled))" in result.fixed
