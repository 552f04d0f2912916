"""The SL1xx fixes keep results: checked by running code before and after the fix (on the
CPU, where the same PyTorch semantics apply), and, for the fixes whose safety depends on
type promotion, exhaustively over the dtypes a tensor may have."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.fix import fix_source
from synclint.violation import Applicability, Confidence

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]

# Functions whose H2D copies SL101-SL105 fix. They take `device`; run with "cpu" they
# compute the same values as on a GPU, so before and after can be compared here.
PROGRAM = '''
import numpy as np
import torch


def forward(token_ids, seq_len, hidden, positions_np, x, device):
    out = {}
    out["ids"] = torch.tensor(token_ids, dtype=torch.int32, device=device)
    out["floats"] = torch.tensor([0.1, 2.5, -3.0], device=device)
    out["range"] = torch.tensor(list(range(2, seq_len, 3)), device=device)
    out["array"] = torch.as_tensor(positions_np, device=device)
    out["nb_numpy"] = torch.from_numpy(positions_np).to(device, non_blocking=True)
    out["nb_list"] = torch.tensor(token_ids).to(device=device, non_blocking=True)
    out["nb_cast"] = torch.from_numpy(positions_np).to(device, torch.float16, non_blocking=True)
    out["arange"] = torch.arange(seq_len).to(device)
    out["arange_shape"] = torch.arange(hidden.shape[0]).to(device)
    out["arange_float"] = torch.arange(0, 1, 0.125).to(device)
    out["ones"] = torch.ones(2, 3, dtype=torch.bool).to(device)
    out["full"] = torch.full((2,), 7.5).to(device)
    out["moved_numpy"] = torch.from_numpy(positions_np).to(device)
    out["moved_cast"] = torch.from_numpy(positions_np).to(device=device, dtype=torch.float32)
    out["maximum"] = torch.maximum(x, torch.tensor(0, device=device))
    out["minimum"] = torch.minimum(x, torch.tensor(2.5, device=device))
    out["clamp"] = torch.clamp(x, min=torch.tensor(-1.0, device=device))
    out["new_zero"] = x.new_tensor([0])
    out["new_ones"] = x.new_tensor([1, 1, 1])
    out["new_full"] = x.new_tensor([2.5, 2.5])
    out["new_scalar"] = x.new_tensor(7)
    return out
'''


def _run(text: str, x):
    namespace: dict = {}
    exec(compile(text, "program.py", "exec"), namespace)
    return namespace["forward"]([5, 6, 7], 11, torch.zeros(4, 2), np.arange(6, dtype=np.int64), x, "cpu")


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.float16, torch.float32, torch.float64], ids=str)
def test_fixed_program_computes_the_same_tensors(unsafe, dtype):
    settings = Settings(select=("SL1",))
    result = fix_source(PROGRAM, "program.py", settings, unsafe=unsafe)
    # Safe mode leaves the possibly-empty range and the from_numpy moves to a device that
    # may be the CPU (where `.to()` aliases the array and the helper copies) to --unsafe-fixes.
    assert result.error is None and result.applied >= (15 if unsafe else 13)
    x = torch.tensor([-3, 0, 1, 4]).to(dtype)
    before, after = _run(PROGRAM, x), _run(result.fixed, x)
    assert before.keys() == after.keys()
    for key in before:
        assert after[key].dtype == before[key].dtype, key
        assert after[key].shape == before[key].shape, key
        assert torch.equal(after[key], before[key]), key


def _sl104_fix(literal: str):
    source = f"import torch\n\ndef f(x):\n    return torch.maximum(x, torch.tensor({literal}, device='cuda'))\n"
    (violation,) = [v for v in lint_source(source, "f.py", Settings(select=("SL104",))).violations]
    return violation.fix.applicability


def _maximum_equals_clamp(value) -> bool:
    for dtype in DTYPES:
        if dtype is torch.bool:
            continue  # clamp has no bool kernel; the fix is never offered for bool literals
        x = torch.arange(-3, 5).to(dtype)
        try:
            a = torch.maximum(x, torch.tensor(value))
        except RuntimeError:
            a = None
        try:
            b = torch.clamp(x, min=value)
        except RuntimeError:
            b = None
        if (a is None) != (b is None):
            return False
        if a is not None and (a.dtype != b.dtype or not torch.equal(a, b)):
            return False
    return True


@pytest.mark.parametrize("literal", ["0", "7", "0x7", "127", "-127", "0.5", "2.5", "-30.0", "6.0", "65504.0", "0.0"])
def test_sl104_safe_literals_give_the_same_tensor_for_every_dtype(literal):
    assert _sl104_fix(literal) is Applicability.SAFE
    assert _maximum_equals_clamp(eval(literal))


@pytest.mark.parametrize("literal", ["1e-8", "0.1", "300", "-300", "70000.0", "1e9"])
def test_sl104_unsafe_literals_have_a_dtype_where_the_results_differ(literal):
    assert _sl104_fix(literal) is Applicability.UNSAFE
    assert not _maximum_equals_clamp(eval(literal))


@pytest.mark.parametrize("data", ["[0]", "[1]", "[0, 0, 0]", "0", "1", "7", "1e9", "[2.5, 2.5]", "[-1, -1]", "[1.0]", "-0.5"])
def test_sl105_fill_equals_new_tensor_for_every_dtype(data):
    source = f"def forward(x):\n    return x.new_tensor({data})\n"
    result = fix_source(source, "f.py", Settings(select=("SL105",)))
    assert result.applied == 1
    fixed_expr = result.fixed.splitlines()[1].strip().removeprefix("return ")
    assert "new_tensor" not in fixed_expr
    for dtype in DTYPES:
        x = torch.zeros(3, dtype=dtype)
        try:
            expected = x.new_tensor(eval(data))
        except RuntimeError:
            expected = None
        try:
            got = eval(fixed_expr, {"x": x})
        except RuntimeError:
            got = None
        assert (expected is None) == (got is None), (dtype, data)
        if expected is not None:
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape), (dtype, data)
            assert torch.equal(got, expected), (dtype, data)


def test_sl104_fix_is_not_offered_for_values_that_may_not_be_numbers():
    source = "import torch\n\ndef forward(x, bound):\n    return torch.maximum(x, torch.tensor(bound, device='cuda'))\n"
    (violation,) = lint_source(source, "f.py", Settings(select=("SL104",), min_confidence=Confidence.LOW)).violations
    assert violation.fix is None
