"""SL301-SL304: the measured facts about indexing, the fixes' applicability, and the fixed
code computing the same tensors as the original (run on the CPU build of PyTorch)."""

from __future__ import annotations

import runpy
import textwrap

import pytest
import torch

from conftest import unwrapped
from synclint import prefilter
from synclint.config import Settings
from synclint.engine import lint_source
from synclint.fix import fix_source
from synclint.rules import rule_by_code
from synclint.violation import Confidence

ANY = Settings(min_confidence=Confidence.LOW)


def findings(source: str, settings: Settings = ANY) -> list[tuple[int, str, str, str | None]]:
    """(row, code, confidence, fix applicability) of every finding, even `low` ones."""
    result = lint_source(textwrap.dedent(source), "case.py", settings)
    return [
        (v.location.row, v.code, v.confidence.label, v.fix.applicability.value if v.fix else None)
        for v in result.violations
        if v.code[:3] in ("SL3", "SL4")
    ]


PRELUDE = """\
import torch

def step(n: int, device):
    x = torch.zeros(8, 4, device=device)
    y_gpu = torch.ones(4, device=device)
    gpu_idx = torch.arange(3, device=device)
    mask = x[:, 0] > 0
    cpu_bool_mask = torch.zeros(8, dtype=torch.bool)
    t = torch.zeros(16, device=device)
"""

MEASURED_CLEAN = [
    "x[gpu_idx]",
    "x[3]",
    "x[cpu_bool_mask]",
    "x[0] = y_gpu",
    "x[gpu_idx] = y_gpu",
    "x[mask] = 1.0",
    "t[2:5] = 1.0",
    "x.masked_fill_(mask.unsqueeze(1), 1.0)",
    "x.index_fill_(0, gpu_idx, 1.0)",
    "torch.where(mask, t[:8], 0)",
    "torch.nonzero_static(mask, size=8)",
    "torch.repeat_interleave(t, gpu_idx, output_size=n)",
]


@pytest.mark.parametrize("line", MEASURED_CLEAN)
def test_measured_clean_patterns_are_never_flagged(line):
    assert findings(PRELUDE + f"    {line}\n") == []


MEASURED_STALLS = [
    ("x[torch.arange(3)] = y_gpu[:3].unsqueeze(1)", "SL301"),  # x[cpu_idx] = y
    ("x[[1, 2, 3]]", "SL301"),
    ("x[gpu_idx] = 1.0", "SL302"),
    ("x[mask] = y_gpu", "SL401"),
    ("t[3] = float(n)", "SL302"),
    ("x[:, [0, 2]] = 0.0", "SL303"),
    ("x[gpu_idx[0] : gpu_idx[1]]", "SL304"),
    ("x[mask]", "SL401"),
    ("len(x[mask])", "SL401"),
]


@pytest.mark.parametrize(("line", "code"), MEASURED_STALLS)
def test_measured_stalls_are_flagged_once_by_their_rule(line, code):
    found = findings(PRELUDE + f"    {line}\n", Settings())
    assert [(row, c) for row, c, _, _ in found] == [(10, code)]


def test_host_index_fix_is_safe_for_pageable_unsafe_for_pinned_and_absent_for_unknown_dtype():
    source = """\
    import torch

    def gather(device, rows_np):
        hidden = torch.zeros(8, 4, device=device)
        pageable = torch.arange(3)
        pinned = torch.arange(3).pin_memory()
        unknown = torch.from_numpy(rows_np)
        return hidden[pageable], hidden[pinned], hidden[unknown]
    """
    assert findings(source) == [
        (8, "SL301", "medium", "safe"),
        (8, "SL301", "medium", "unsafe"),
        (8, "SL301", "medium", None),
    ]


def test_list_index_writes_get_a_fix_only_for_literal_integer_lists():
    source = """\
    import torch

    def mask_logits(banned: list[int]):
        logits = torch.zeros(2, 10, device="cuda")
        logits[:, [1, -1]] = 0.0
        logits[:, banned] = 0.0
        logits[:, [True, False] * 5] = 0.0
        logits[0, [1, 2]] = 0.0
        return logits
    """
    assert findings(source) == [
        (5, "SL303", "high", "safe"),
        (6, "SL303", "high", None),
        (8, "SL303", "high", None),
    ]


def test_element_write_needs_as_many_indices_as_known_dims():
    source = """\
    import torch

    def write(i: int, j: int, v: float, device, other):
        grid = torch.zeros(4, 4, device="cuda")
        grid[i] = v
        grid[i, j] = v
        other = other.cuda()
        other[i, j] = float(v)
        other[i] = float(v)
    """
    assert findings(source) == [
        (6, "SL302", "high", "safe"),
        (8, "SL302", "medium", "safe"),
        (9, "SL302", "low", "safe"),
    ]


def test_slice_bounds_on_the_host_are_clean():
    source = """\
    import torch

    def split(n: int, lens: list[int], device):
        hidden = torch.zeros(64, device=device)
        cu = torch.zeros(5, dtype=torch.int32, device=device)
        host_cu = cu.tolist()
        return hidden[host_cu[0] : host_cu[1]], hidden[: n], hidden[cu[0] :]
    """
    assert findings(source) == [(7, "SL304", "medium", None)]


FIXABLE = """\
import torch

def run(device="cuda"):
    hidden = torch.arange(24.0, device=device).reshape(6, 4)
    rows = torch.tensor([4, 0, 4], dtype=torch.long)
    gathered = hidden[rows]
    hidden[rows] = gathered * 2
    grid = torch.zeros(3, 3, device=device)
    grid[1, 2] = float(7)
    idx = torch.arange(2, dtype=torch.long, device=device)
    grid[idx] = 5.5
    logits = torch.zeros(2, 6, device=device)
    logits[:, [0, -1, 3, 3]] = -float("inf")
    logits[[1]] = 2.0
    listed = hidden[[5, -1, 5]]
    return gathered, hidden, grid, logits, listed
"""


def test_fixed_code_computes_the_same_tensors(tmp_path):
    before = tmp_path / "before.py"
    before.write_text(FIXABLE)
    result = fix_source(FIXABLE, "before.py", Settings(select=("SL3",)), unsafe=True)
    assert result.error is None and result.applied == 7
    after = tmp_path / "after.py"
    after.write_text(result.fixed)
    assert "index_fill_(1," in result.fixed and "index_fill_(0," in result.fixed
    assert ".fill_(float(7))" in result.fixed and "new_full((), 5.5)" in result.fixed
    assert "hidden[torch.tensor([5, -1, 5], dtype=torch.long, pin_memory=torch.cuda.is_available()).to(hidden.device, non_blocking=torch.cuda.is_available())]" in unwrapped(result.fixed)
    # The same code on the CPU build: every tensor must be equal.
    expected = runpy.run_path(str(before))["run"]("cpu")
    actual = runpy.run_path(str(after))["run"]("cpu")
    assert len(expected) == len(actual) == 5
    for a, b in zip(expected, actual):
        assert torch.equal(a, b)


@pytest.mark.parametrize("code", ["SL301", "SL302", "SL303", "SL304"])
def test_prefilter_triggers_cover_every_flagged_source(code):
    """The prefilter skips files without a trigger word: it must never hide a finding."""
    from pathlib import Path

    rule = rule_by_code(code)
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / code / "before.py"
    stalls = [PRELUDE + f"    {line}\n" for line, c in MEASURED_STALLS if c == code]
    sources = [fixture.read_text(), *rule.doc_code_blocks("Example"), *stalls]
    for source in sources:
        assert prefilter.may_match(source, [rule])



def test_device_origin_triggers_cover_the_placement_analysis_tables():
    """SL301-SL304 and SL401 report only values that may be on the device; their triggers
    must name every word through which the analysis can decide that."""
    from synclint.analysis import annotations
    from synclint.apis import torch_api
    from synclint.rules.helpers import DEVICE_ORIGIN_TRIGGERS

    words = set(DEVICE_ORIGIN_TRIGGERS)
    assert set(torch_api.DEVICE_LIKE_NAMES) <= words
    assert torch_api.PARAMETER_ATTRIBUTES and set(torch_api.PARAMETER_ATTRIBUTES) <= words
    assert {name.rsplit(".", 1)[-1] for name in getattr(annotations, "_TENSOR", ())} <= words
    assert torch_api.MODULE_MEMBER_CALLS and all(call.split(".")[1] in words for call in torch_api.MODULE_MEMBER_CALLS)


def test_annotated_and_module_parameters_pass_the_prefilter():
    source = """\
    from torch import Tensor

    def gather(x: Tensor, rows: list[int]):
        return x[rows]
    """
    rule = rule_by_code("SL301")
    assert prefilter.may_match(textwrap.dedent(source), [rule])
    assert [(r, c) for r, c, _, _ in findings(source)] == [(4, "SL301")]


def test_element_writes_see_the_dims_of_attributes_built_in_init():
    source = """\
    import torch

    class Sampler:
        def __init__(self, n: int):
            self.table = torch.zeros(n, 8, device="cuda")
            self.flat = torch.zeros(n, device="cuda")

        def update(self, i: int, v: float):
            self.table[i] = v
            self.flat[i] = v
            self.table[i, 0] = v
    """
    assert findings(source) == [(10, "SL302", "high", "safe"), (11, "SL302", "high", "safe")]


def test_a_mask_moved_to_the_cpu_is_not_a_host_index_finding():
    # transformers (VibeVoice): "Keeps a mask already on the CPU from syncing with the accelerator"
    source = """\
    import torch

    def pool(acoustic_features, num_audio_tokens, device):
        acoustic_features = acoustic_features.to(device)
        positions = torch.arange(acoustic_features.shape[1], device=device)
        padding_mask = (positions < num_audio_tokens[:, None]).cpu()
        return acoustic_features[padding_mask]
    """
    assert findings(source) == []


def test_self_attribute_rebuilt_from_itself_does_not_recurse():
    # A cache that offloads and prefetches its own tensor (`self.keys = self.keys.to(d)`) once
    # sent SL302's dimension lookup around the cycle until a RecursionError ended the whole run.
    from synclint.api import lint_source

    source = (
        "import torch\n\n"
        "class Cache:\n"
        "    def __init__(self, device):\n"
        "        self.device = device\n"
        "        self.keys = torch.zeros(2, 4, 8)\n\n"
        "    def offload(self):\n"
        "        self.keys = self.keys.to('cpu', non_blocking=True)\n\n"
        "    def prefetch(self):\n"
        "        self.keys = self.keys.to(self.device, non_blocking=True)\n\n"
        "    def update(self, key_states, cache_position):\n"
        "        self.keys[:, :, cache_position] = key_states\n"
        "        self.keys[0, 0] = 1.0\n"
    )
    codes = [v.code for v in lint_source(source, filename="cache.py")]
    assert "SL002" not in codes
