"""`synclint.runtime.async_tensor_h2d`, the helper that SL1xx fixes call, on a CPU-only host:
its results equal `torch.tensor(...)` (values, dtype, shape), never alias the input, and carry
no autograd history. The pinned, non-blocking path needs a GPU; here a non-CPU target is the
`meta` device, which exercises the same branch without pinning."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from synclint.runtime import async_tensor_h2d

INPUTS = [
    pytest.param(lambda: [1, 2, 3], id="int-list"),
    pytest.param(lambda: [[0.5, 1.5], [2.5, 3.5]], id="nested-float-list"),
    pytest.param(lambda: (7, 8), id="tuple"),
    pytest.param(lambda: 3.25, id="float-scalar"),
    pytest.param(lambda: True, id="bool-scalar"),
    pytest.param(lambda: np.arange(6, dtype=np.int32).reshape(2, 3), id="numpy-int32"),
    pytest.param(lambda: np.linspace(0.0, 1.0, 5), id="numpy-float64"),
    pytest.param(lambda: np.arange(12).reshape(3, 4)[:, 1:3], id="numpy-strided-view"),
    pytest.param(lambda: torch.arange(10, dtype=torch.int32), id="cpu-tensor"),
    pytest.param(lambda: torch.arange(12.0).reshape(3, 4).t(), id="cpu-tensor-transposed"),
]
DTYPES = [None, torch.float16, torch.int64, torch.float32]


def _reference(data, dtype):
    if isinstance(data, torch.Tensor):
        return data.clone().detach().to(dtype) if dtype is not None else data.clone().detach()
    return torch.tensor(data, dtype=dtype)


@pytest.mark.parametrize("make", INPUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("device", [None, "cpu", torch.device("cpu")], ids=["no-device", "cpu-str", "cpu-device"])
def test_cpu_target_equals_torch_tensor(make, dtype, device):
    expected = _reference(make(), dtype)
    result = async_tensor_h2d(make(), dtype=dtype, device=device)
    assert result.device.type == "cpu"
    assert result.dtype == expected.dtype
    assert result.shape == expected.shape
    assert torch.equal(result, expected)


@pytest.mark.parametrize("make", INPUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_device_target_has_torch_tensor_dtype_and_shape(make, dtype):
    expected = _reference(make(), dtype)
    result = async_tensor_h2d(make(), dtype=dtype, device="meta")
    assert result.device.type == "meta"
    assert (result.dtype, result.shape) == (expected.dtype, expected.shape)


def test_result_does_not_alias_a_numpy_input():
    array = np.arange(4, dtype=np.float32)
    result = async_tensor_h2d(array, device="cpu")
    array[:] = -1.0
    assert result.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_result_does_not_alias_a_cpu_tensor_input():
    source = torch.arange(4)
    result = async_tensor_h2d(source, device="cpu")
    source.fill_(9)
    assert result.tolist() == [0, 1, 2, 3]
    assert result.data_ptr() != source.data_ptr()


def test_result_does_not_alias_a_list_input():
    values = [1, 2, 3]
    result = async_tensor_h2d(values, device="cpu")
    values[0] = 100
    assert result.tolist() == [1, 2, 3]


def test_tensor_input_loses_autograd_history_like_torch_tensor():
    weights = torch.ones(3, requires_grad=True)
    result = async_tensor_h2d(weights * 2, device="cpu")
    assert not result.requires_grad and result.grad_fn is None
    assert result.tolist() == [2.0, 2.0, 2.0]


def test_keyword_call_of_the_fix_spelling_works_positionally_too():
    # Fixes emit `async_tensor_h2d(data, dtype=..., device=...)`; the documented positional
    # order (data, dtype, device) must mean the same.
    assert torch.equal(async_tensor_h2d([1, 2], torch.int32, "cpu"), torch.tensor([1, 2], dtype=torch.int32))


def test_unpinned_path_is_taken_when_pinning_is_refused():
    result = async_tensor_h2d([1.0, 2.0], device="meta", pin_memory=False)
    assert result.device.type == "meta" and result.dtype == torch.float32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("make", INPUTS)
def test_cuda_target_equals_torch_tensor(make):
    expected = _reference(make(), None).to("cuda")
    result = async_tensor_h2d(make(), device="cuda")
    torch.cuda.synchronize()
    assert result.device.type == "cuda" and result.dtype == expected.dtype
    assert torch.equal(result, expected)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_copy_is_not_changed_by_a_later_write_to_the_input():
    array = np.arange(1 << 20, dtype=np.float32)
    torch.cuda._sleep(50_000_000)  # keep the stream busy so the copy is still queued
    result = async_tensor_h2d(array, device="cuda")
    array[:] = -1.0
    torch.cuda.synchronize()
    assert float(result[-1]) == float((1 << 20) - 1)
