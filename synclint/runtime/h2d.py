"""`async_tensor_h2d`: host data to a device tensor without blocking the host.

`torch.tensor(data, device="cuda")` copies from pageable memory with a blocking copy: the
host waits for every queued kernel. Staging the data in pinned memory and copying with
`non_blocking=True` queues the copy on the stream instead (measured on an H200: no wait).
The pinned staging buffer stays valid until the copy has run: PyTorch's caching host
allocator records the copy's stream before the buffer can be reused.
"""

from __future__ import annotations

from typing import Any


def _pinning_available(torch) -> bool:
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken CUDA install: behave as on a CPU-only host
        return False


def async_tensor_h2d(data: Any, dtype=None, device=None, *, pin_memory: bool | None = None):
    """Like `torch.tensor(data, dtype=dtype, device=device)`, but the copy does not block.

    `data`: a list, tuple, scalar, numpy array or tensor. A CPU target (or no device) just
    converts. The result never shares memory with `data` and carries no autograd history,
    as with `torch.tensor`; a tensor already on a device is copied there (cast to `dtype`).
    `pin_memory`: stage in pinned memory (default: when CUDA is available).
    """
    import torch

    target = torch.device(device) if device is not None else torch.device("cpu")
    if isinstance(data, torch.Tensor):
        # torch.tensor(t) copies t's data without its autograd history: so do we.
        data = data.detach()
        if data.device.type != "cpu" or target.type == "cpu":
            return data.to(device=target, dtype=dtype, copy=True)
        host, shares_input = data.to(dtype) if dtype is not None else data, dtype is None or data.dtype == dtype
    elif _is_numpy(data):
        host = torch.as_tensor(data, dtype=dtype)  # shares the array's memory when it can
        shares_input = True
    else:
        host, shares_input = torch.tensor(data, dtype=dtype), False
    if target.type == "cpu":
        return host.clone() if shares_input else host  # torch.tensor always copies: so do we
    pin = _pinning_available(torch) if pin_memory is None else pin_memory
    if not pin:
        return host.to(target)
    # pin_memory() copies into page-locked memory, so the input may change afterwards.
    return (host if host.is_pinned() and not shares_input else host.pin_memory()).to(target, non_blocking=True)


def _is_numpy(data: Any) -> bool:
    return type(data).__module__ == "numpy" and hasattr(data, "__array_interface__")
