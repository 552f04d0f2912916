"""SL1xx matchers: prefilter triggers cover every finding, strided views of pinned buffers
are told from contiguous ones, and allow-contexts silence intended copies."""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst
import pytest

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.rules import rule_by_code
from synclint.rules.sl1xx_h2d import strided_index
from synclint.violation import Confidence

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CODES = ["SL101", "SL102", "SL103", "SL104", "SL105", "SL106"]
LOW = Settings(min_confidence=Confidence.LOW)


def _span(lines: list[str], v) -> str:
    if v.location.row == v.end_location.row:
        return lines[v.location.row - 1][v.location.column - 1 : v.end_location.column - 1]
    first = lines[v.location.row - 1][v.location.column - 1 :]
    middle = lines[v.location.row : v.end_location.row - 1]
    last = lines[v.end_location.row - 1][: v.end_location.column - 1]
    return "\n".join([first, *middle, last])


@pytest.mark.parametrize("code", CODES)
def test_every_finding_contains_one_of_its_rules_triggers(code):
    # The prefilter skips a file in which no trigger appears; a trigger inside the flagged
    # code itself guarantees that it never hides a finding.
    rule = rule_by_code(code)
    pattern = re.compile(rf"\b(?:{'|'.join(map(re.escape, rule.triggers))})\b")
    text = (FIXTURES / code / "before.py").read_text()
    lines = text.splitlines()
    found = [v for v in lint_source(text, "before.py", LOW).violations if v.code == code]
    assert found
    for v in found:
        if "constant index list" in v.message:
            # SL106's `t[:, [0, 2]]`: the device tensor's origin (one of SL301's device-origin
            # triggers, which SL106 lists) is elsewhere in the file, where the prefilter sees it.
            assert pattern.search(text), f"{code} at {v.location}: no trigger in the file"
            continue
        assert pattern.search(_span(lines, v)), f"{code} at {v.location}: no trigger in {_span(lines, v)!r}"


@pytest.mark.parametrize(
    ("index", "strided"),
    [
        ("buf[:n]", False),
        ("buf[i]", False),
        ("buf[i, :n]", False),
        ("buf[:n, :]", False),
        ("buf[None, :n]", False),
        ("buf[:, :n]", True),
        ("buf[:, 0]", True),
        ("buf[::2]", True),
        ("buf[..., :n]", True),
        ("buf[:n:1]", False),
    ],
)
def test_strided_index(index, strided):
    assert strided_index(cst.parse_expression(index)) is strided


def test_contiguous_and_strided_views_of_a_pinned_buffer():
    source = (
        "import torch\n\n"
        "class Runner:\n"
        "    def __init__(self, max_num_reqs, max_num_blocks_per_req, device):\n"
        "        self.table_cpu = torch.zeros((max_num_reqs, max_num_blocks_per_req), dtype=torch.int32, pin_memory=True)\n"
        "        self.device = device\n\n"
        "    def _prepare_inputs(self, n, k):\n"
        "        rows = self.table_cpu[:n].to(self.device, non_blocking=True)\n"
        "        flat = self.table_cpu.view(-1).to(self.device, non_blocking=True)\n"
        "        cols = self.table_cpu[:n, :k].to(self.device, non_blocking=True)\n"
        "        tr = self.table_cpu.t().to(self.device, non_blocking=True)\n"
        "        return rows, flat, cols, tr\n"
    )
    found = [(v.location.row, v.code) for v in lint_source(source, "r.py", Settings(select=("SL102",))).violations]
    assert found == [(11, "SL102"), (12, "SL102")]
    # a buffer of a literal shape (64 x 128 int32, 32 KiB) is too small to block: low only
    small = source.replace("(max_num_reqs, max_num_blocks_per_req)", "(64, 128)")
    assert [v.location.row for v in lint_source(small, "r.py", Settings(select=("SL102",))).violations] == []
    low = lint_source(small, "r.py", Settings(select=("SL102",), min_confidence=Confidence.LOW)).violations
    assert [v.location.row for v in low] == [11, 12] and "`zeros(64, 128)`" in low[0].message


def test_a_conditionally_pinned_source_is_not_flagged():
    # vLLM: `gpu.copy_(cpu.pin_memory() if PIN_MEMORY else cpu, non_blocking=True)`.
    source = (
        "import torch\n\n"
        "def copy_to_gpu(cpu, n, device, PIN_MEMORY):\n"
        "    gpu = torch.empty(n, device=device)\n"
        "    return gpu.copy_(cpu.pin_memory() if PIN_MEMORY else cpu, non_blocking=True)\n"
    )
    assert lint_source(source, "c.py", LOW).violations == []


def test_allow_context_silences_intended_copies():
    body = (
        "    ids = torch.tensor(token_ids, device=device)\n"
        "    pos = torch.arange(n).to(device)\n"
        "    return ids, pos\n"
    )
    plain = "import torch\n\ndef forward(token_ids, n, device):\n" + body
    allowed = (
        "import torch\nfrom vllm.utils import gpu_sync_allowed\n\ndef forward(token_ids, n, device):\n"
        "    with gpu_sync_allowed():\n" + "".join("    " + line for line in body.splitlines(keepends=True))
    )
    assert [v.code for v in lint_source(plain, "a.py", Settings()).violations] == ["SL101", "SL103"]
    assert lint_source(allowed, "a.py", Settings(allow_contexts=("gpu_sync_allowed",))).violations == []
    # not allowed by default: vLLM's context marks syncs its runtime check tolerates
    assert [v.code for v in lint_source(allowed, "a.py", Settings()).violations] == ["SL101", "SL103"]


def test_sl103_leaves_non_blocking_moves_to_sl102_and_dtype_casts_alone():
    source = (
        "import numpy as np\nimport torch\n\n"
        "def forward(a: np.ndarray, device):\n"
        "    x = torch.from_numpy(a).to(device, non_blocking=True)\n"
        "    y = torch.from_numpy(a).to(torch.float16)\n"
        "    return x, y\n"
    )
    codes = [v.code for v in lint_source(source, "m.py", LOW).violations]
    assert codes == ["SL102"]


def test_to_other_tensor_is_reported_without_a_fix():
    # `.to(other_tensor)` takes the other tensor's device and dtype: no helper call can
    # take a tensor as its device, so no fix is offered.
    source = (
        "import numpy as np\nimport torch\n\n"
        "def forward(a: np.ndarray):\n"
        "    ref = torch.zeros(3, device='cuda')\n"
        "    x = torch.from_numpy(a).to(ref)\n"
        "    y = torch.from_numpy(a).to(ref, non_blocking=True)\n"
        "    return x, y\n"
    )
    found = lint_source(source, "m.py", Settings(select=("SL1",))).violations
    assert [(v.location.row, v.code) for v in found] == [(6, "SL103"), (7, "SL102")]
    assert all(v.fix is None for v in found)
