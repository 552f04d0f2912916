"""Device-to-host rules SL201-SL206: what each reports, what it leaves alone, and that one
expression gets one finding (the most specific rule's)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from synclint import prefilter
from synclint.config import Settings
from synclint.engine import lint_source, run_rules
from synclint.rules import rule_by_code
from synclint.violation import Confidence, Severity

import libcst as cst

HEADER = "import torch\n\n\ndef step(self, x, device):\n    t = x.to(device)\n    u = torch.zeros(4, device=device)\n"


def _lint_file(tmp_path: Path, body: str, settings: Settings | None = None, header: str = HEADER):
    """Write a real file (the header puts `t`, `u` on the device) and lint its bytes."""
    path = tmp_path / "snippet.py"
    path.write_text(header + textwrap.indent(textwrap.dedent(body), "    "))
    result = lint_source(path.read_bytes(), str(path), settings or Settings(select=("SL2",)))
    return result.violations


def _found(violations) -> list[str]:
    return [f"{v.location.row}:{v.location.column} {v.code}" for v in violations]


# --- SL203: every implicit readback form, and the host-only look-alikes ---------------------

@pytest.mark.parametrize(
    "body, column",
    [
        ("n = int(t)", 9),
        ("f = float(t)", 9),
        ("b = bool(t)", 9),
        ("r = range(t)", 9),
        ("if t:\n    pass", 8),
        ("while t.any():\n    pass", 11),
        ("assert t.all(), 'bad'", 12),
        ("y = 1 if t else 2", 14),
        ("ys = [v for v in range(3) if t]", 34),
        ("z = not t", 13),
        ("m = max(t, u)", 9),
        ("print(t)", 11),
        ("s = f'{t}'", 12),
        ("s = F'{t}'", 12),
        ("s = rf'{t}'", 13),
        ("e = torch.equal(t, u)", 9),
        ("a = torch.allclose(t, u)", 9),
        ("a = t.allclose(u)", 9),
        ("s = 'ids: %s' % t", 9),
        ("s = 'ids: %s, %s' % (x, t)", 9),
        ("s = 'ids: {}'.format(t)", 9),
    ],
)
def test_sl203_reports_each_implicit_readback(tmp_path, body, column):
    assert _found(_lint_file(tmp_path, body)) == [f"7:{column} SL203"]


@pytest.mark.parametrize(
    "body",
    [
        "n = len(t)",
        "n = int(t.shape[0])",
        "n = int(t.size(0))",
        "b = bool(x is None)",
        "if t is not None:\n    pass",
        "if t.numel() > 0 and t.dim() == 2:\n    pass",
        "if torch.is_floating_point(t):\n    pass",
        "if t.is_contiguous():\n    pass",
        "s = f'{t.shape} on {t.device}'",
        "print(t.shape, t.dtype)",
        "total = sum([t, u])",
        "y = t if x is None else u",
        "s = '%s on %s' % (t.shape, t.device)",
        "s = '{}'.format(t.dtype)",
        "raise ValueError(f'bad ids: {t}')",
        "torch._check(x is None, lambda: f'bad ids: {t}')",
    ],
)
def test_sl203_leaves_host_only_lookalikes_alone(tmp_path, body):
    assert _found(_lint_file(tmp_path, body)) == []


def test_sl203_reports_both_operands_of_a_tested_boolean_once_each(tmp_path):
    found = _found(_lint_file(tmp_path, "if t.any() and not u.all():\n    pass"))
    assert found == ["7:8 SL203", "7:24 SL203"]


def test_sl203_reports_only_the_tested_operand_of_an_assigned_boolean(tmp_path):
    # `t or u` truth-tests `t` only; the result (`u`) is assigned, not tested
    assert _found(_lint_file(tmp_path, "y = t or u")) == ["7:9 SL203"]


def test_sl203_truth_test_of_a_submodule_is_host_only_but_of_a_buffer_is_not(tmp_path):
    source = """\
import torch
from torch import nn


class PatchEmbeddings(nn.Module):
    def __init__(self, embed_dim: int):
        super().__init__()
        self.normalization = nn.LayerNorm(embed_dim)
        self.register_buffer("attn_mask_probs", torch.ones(4))

    def forward(self, pixel_values):
        if self.normalization:
            pixel_values = self.normalization(pixel_values)
        if self.attn_mask_probs[0] > 0:
            pixel_values = pixel_values * 2
        return pixel_values
"""
    path = tmp_path / "patch_embeddings.py"
    path.write_text(source)
    result = lint_source(path.read_bytes(), str(path), Settings(select=("SL203",)))
    assert _found(result.violations) == ["14:12 SL203"]


def test_sl203_does_not_guess_about_unknown_values(tmp_path):
    body = "if x:\n    pass\nn = int(x)"
    assert _found(_lint_file(tmp_path, body, Settings(select=("SL203",), min_confidence=Confidence.LOW))) == []


# --- one expression, one finding ---------------------------------------------------------

@pytest.mark.parametrize(
    "body, expected",
    [
        ("n = int(t.max()) + 1", ["7:9 SL204"]),
        ("n = t.max().item() + 1", ["7:9 SL204"]),
        ("n = int(t.max().item())", ["7:9 SL204"]),
        ("n = int(t.sum())", ["7:9 SL204"]),
        ("r = range(t[1] - t[0])", ["7:9 SL204"]),
        ("b = bool(t.any().item())", ["7:14 SL201"]),
        ("v = t.max().item()", ["7:9 SL201"]),
        ("x = int(t.argmax())", ["7:9 SL203"]),
        ("ids = t.cpu().tolist()", ["7:11 SL202"]),
        ("a = t.cpu().numpy()", ["7:9 SL202"]),
    ],
)
def test_each_expression_gets_one_finding(tmp_path, body, expected):
    assert _found(_lint_file(tmp_path, body)) == expected


def test_len_of_masked_is_reported_once_by_the_mask_rule_or_else_by_sl203(tmp_path):
    body = "n = len(t[t > 0])"
    both = _found(_lint_file(tmp_path, body, Settings(select=("SL203", "SL401"))))
    assert len(both) == 1 and both[0].endswith("SL401")
    alone = _found(_lint_file(tmp_path, body, Settings(select=("SL203",))))
    assert alone == ["7:9 SL203"]


def test_sl204_says_when_the_readback_repeats_per_element(tmp_path):
    body = "lens = [int(t[i + 1] - t[i]) for i in range(3)]"
    (violation,) = _lint_file(tmp_path, body)
    assert violation.code == "SL204" and "once per iteration" in violation.message


def test_sl204_leaves_host_reductions_alone(tmp_path):
    body = "h = torch.tensor([1, 2])\nn = int(h.max()) + 1\nm = [int(h[i + 1] - h[i]) for i in range(1)]"
    assert _found(_lint_file(tmp_path, body)) == []


# --- SL202 ---------------------------------------------------------------------------------

def test_sl202_flags_blocking_to_cpu_but_not_non_blocking(tmp_path):
    body = 'a = t.to("cpu")\nb = t.to(device="cpu")\nc = t.to(torch.device("cpu"))\nd = t.to("cpu", non_blocking=True)'
    assert _found(_lint_file(tmp_path, body)) == ["7:9 SL202", "8:9 SL202", "9:9 SL202"]


def test_sl202_reports_unknown_receivers_only_at_low_confidence(tmp_path):
    violations = _lint_file(tmp_path, "ids = x.tolist()", Settings(select=("SL202",), min_confidence=Confidence.LOW))
    assert [(v.code, v.confidence) for v in violations] == [("SL202", Confidence.LOW)]
    assert _lint_file(tmp_path, "ids = x.tolist()", Settings(select=("SL202",))) == []


# --- SL205 / SL206 -------------------------------------------------------------------------

def test_sl205_pageable_destination_flagged_pinned_and_its_views_not(tmp_path):
    body = """\
    pageable = torch.empty(4, dtype=torch.int64)
    pinned = torch.empty(4, dtype=torch.int64, pin_memory=True)
    pageable.copy_(t, non_blocking=True)
    pinned.copy_(t, non_blocking=True)
    view = pinned[:2]
    view.copy_(t[:2], non_blocking=True)
    pageable.copy_(t)
    """
    assert _found(_lint_file(tmp_path, body, Settings(select=("SL205",)))) == ["9:5 SL205"]


def test_sl206_is_an_error_and_a_sync_or_rebinding_clears_it(tmp_path):
    body = """\
    a = t.to("cpu", non_blocking=True)
    first = a.tolist()
    torch.cuda.synchronize()
    second = a.tolist()
    b = t.to("cpu", non_blocking=True)
    b = [0]
    third = b[0]
    """
    violations = _lint_file(tmp_path, body, Settings(select=("SL206",)))
    assert _found(violations) == ["8:13 SL206"]
    assert violations[0].severity is Severity.ERROR


def test_sl206_stream_ordering_is_not_a_host_sync(tmp_path):
    body = """\
    y = t.to("cpu", non_blocking=True)
    torch.cuda.current_stream().wait_stream(x)
    ids = y.tolist()
    done = torch.cuda.Event()
    done.wait()
    again = y.tolist()
    """
    # wait_stream orders streams only: the read still races; an event wait counts as a sync
    assert _found(_lint_file(tmp_path, body, Settings(select=("SL206",)))) == ["9:11 SL206"]


def test_sl206_a_loop_target_or_augmented_assignment_rebinds(tmp_path):
    body = """\
    y = t.to("cpu", non_blocking=True)
    for y in [1, 2]:
        print(y)
    z = t.to("cpu", non_blocking=True)
    z += 1
    print(z)
    w = t.to("cpu", non_blocking=True)
    print(w)
    """
    assert _found(_lint_file(tmp_path, body, Settings(select=("SL206",)))) == ["14:11 SL206"]


def test_sl206_reads_in_another_function_are_not_claimed(tmp_path):
    source = """\
import torch


class AsyncOutput:
    def start(self, x, device):
        self.host = x.to(device).to("cpu", non_blocking=True)
        return self.host.tolist()

    def read(self):
        return self.host.tolist()
"""
    path = tmp_path / "async_output.py"
    path.write_text(source)
    result = lint_source(path.read_bytes(), str(path), Settings(select=("SL206",)))
    # the read in start() races with the copy; the one in read() is another function's business
    assert _found(result.violations) == ["7:16 SL206"]


# --- the prefilter never hides a finding -----------------------------------------------------

SNIPPETS = [
    HEADER + "    s = F'{t}'\n",
    HEADER + "    s = Rf'{t}'\n",
    HEADER + "    y = t or u\n",
    HEADER + "    n = t.max().item() + 1\n",
    HEADER + "    a = t.to('cpu', non_blocking=True)\n    print(a.numpy())\n",
    HEADER + "    h = torch.empty(4)\n    h.copy_(t, True)\n",
    HEADER + "    s = '%s' % t\n",
    "import torch\n\n\ndef fmt(ids: torch.LongTensor):\n    return 'ids: %s' % ids\n",
]


@pytest.mark.parametrize("code", ["SL201", "SL202", "SL203", "SL204", "SL205", "SL206"])
@pytest.mark.parametrize("snippet", SNIPPETS)
def test_triggers_appear_wherever_the_rule_finds_something(code, snippet):
    rule = rule_by_code(code)(Settings())
    module = cst.parse_module(snippet)
    findings = run_rules(module, (rule,), Settings(min_confidence=Confidence.LOW))  # no prefilter here
    if findings:
        assert prefilter.may_match(snippet, (rule,)), f"{code}'s triggers hide a finding in:\n{snippet}"


def test_sl202_reports_numpy_only_where_it_copies(tmp_path):
    # `t.numpy()` converts a CPU tensor only (on a device tensor PyTorch raises): no copy, so
    # no finding even where the analysis places `t` on the device; `numpy(force=True)` copies.
    body = "a = t.numpy()\nb = t.numpy(force=True)\nc = t.numpy(force=False)\nd = t.cpu().numpy(force=True)"
    assert _found(_lint_file(tmp_path, body)) == ["8:9 SL202", "10:9 SL202"]
