"""SL207/SL208: the table of arguments PyTorch reads as Python numbers is checked against
PyTorch itself (a dispatch trace on the CPU shows `_local_scalar_dense`, the op behind
`.item()`, for a 0-dim tensor in each listed argument, and not for the measured-clean forms),
and the rules report what the table says and nothing of the look-alikes."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from synclint.apis.torch_api import CLAMP_FUNCTIONS, NUMBER_ARGUMENT_FUNCTIONS, NUMBER_ARGUMENT_METHODS  # noqa: E402
from synclint.config import Settings  # noqa: E402
from synclint.engine import lint_source  # noqa: E402
from synclint.violation import Confidence  # noqa: E402


class _Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _reads_a_number(call) -> bool:
    mode = _Ops()
    with mode:
        call()
    return any("_local_scalar_dense" in op for op in mode.ops)


T = torch.tensor(2)
X = torch.zeros(4, 6)
F = torch.nn.functional

# One call per table entry, with the 0-dim tensor `T` in an argument the table lists.
FUNCTION_CALLS = {
    "zeros": lambda: torch.zeros(T, 3),
    "ones": lambda: torch.ones((T, 3)),
    "empty": lambda: torch.empty(T),
    "rand": lambda: torch.rand(T),
    "randn": lambda: torch.randn(size=(T,)),
    "full": lambda: torch.full((3,), T),
    "arange": lambda: torch.arange(T),
    "randint": lambda: torch.randint(0, T, (3,)),
    "randperm": lambda: torch.randperm(T),
    "eye": lambda: torch.eye(T),
    "narrow": lambda: torch.narrow(X, 0, 0, T),
    "nn.functional.interpolate": lambda: F.interpolate(X[None], size=(T,)),
    "nn.functional.pad": lambda: F.pad(X, (0, T)),
}
METHOD_CALLS = {
    "reshape": lambda: X.reshape(T, -1),
    "view": lambda: X.view(T, 12),
    "repeat": lambda: X.repeat(T, 1),
    "expand": lambda: X[:1].expand(T, 6),
    "new_zeros": lambda: X.new_zeros(T),
    "new_ones": lambda: X.new_ones((T, 2)),
    "new_empty": lambda: X.new_empty(T),
    "new_full": lambda: X.new_full((2,), T),
    "narrow": lambda: X.narrow(0, 0, T),
    "topk": lambda: X.topk(T),
    "roll": lambda: X.roll(T),
    "select": lambda: X.select(0, T),
}


def test_every_table_entry_has_a_checked_call():
    assert set(FUNCTION_CALLS) == set(NUMBER_ARGUMENT_FUNCTIONS)
    assert set(METHOD_CALLS) == set(NUMBER_ARGUMENT_METHODS)
    assert {"clamp", "clip"} <= CLAMP_FUNCTIONS


@pytest.mark.parametrize("name", sorted(FUNCTION_CALLS))
def test_function_arguments_are_read_as_numbers(name):
    assert _reads_a_number(FUNCTION_CALLS[name])


@pytest.mark.parametrize("name", sorted(METHOD_CALLS))
def test_method_arguments_are_read_as_numbers(name):
    assert _reads_a_number(METHOD_CALLS[name])


def test_clamp_reads_a_tensor_bound_only_next_to_a_number_bound():
    assert _reads_a_number(lambda: torch.clamp(X, 0, T))
    assert _reads_a_number(lambda: X.clamp_(0, T))
    assert not _reads_a_number(lambda: torch.clamp(X, min=T))
    assert not _reads_a_number(lambda: torch.clamp(X, T, T))


def test_zero_dim_index_is_read_and_a_one_dim_index_is_not():
    w = torch.zeros(8, 4)
    assert _reads_a_number(lambda: w[T])
    assert not _reads_a_number(lambda: w[torch.tensor([2])])
    ids = torch.arange(3)
    # iterating is an unbind; using the element as an index reads it
    assert not _reads_a_number(lambda: [n for n in ids])
    assert _reads_a_number(lambda: [w[n] for n in ids])


def _found(source: str, code: str, confidence=Confidence.MEDIUM) -> list[int]:
    result = lint_source(textwrap.dedent(source), "case.py", Settings(select=(code,), min_confidence=confidence))
    return [v.location.row for v in result.violations]


def test_sl208_reports_numbers_from_device_tensors_only():
    source = """\
    import torch
    import torch.nn.functional as F

    def f(x, lens_cpu, n: int, device):
        lens = lens_cpu.to(device)
        a = torch.empty(lens[0], device=device)
        b = torch.empty(lens_cpu[0], device=device)
        c = torch.empty(n, device=device)
        d = x.view(-1, lens.max())
        e = torch.clamp(x, 0, lens.max())
        g = torch.clamp(x, min=lens.max())
        h = F.interpolate(x, size=(lens[1], n))
        i = x[lens.argmax()]
        j = x[lens]
        k = x[lens > 0]
    """
    assert _found(source, "SL208") == [6, 9, 10, 12, 13]


def test_sl207_reports_loops_that_use_elements_as_numbers():
    source = """\
    import torch

    def f(hidden, lens_cpu, rows, device):
        seq_lens = lens_cpu.to(device)
        for n in seq_lens:
            hidden = hidden[:n]
        for n in seq_lens:
            hidden = hidden * n
        for i, n in enumerate(seq_lens):
            print(i)
        for n in lens_cpu:
            hidden = hidden[:n]
        mat = torch.zeros(4, 4, device=device)
        for row in mat:
            hidden = hidden[:row]
        picked = [int(v) for v in torch.arange(4, device=device)]
        as_list = list(torch.arange(4, device=device))
        return hidden
    """
    assert _found(source, "SL207") == [5, 16, 17]


def test_sl208_leaves_out_calls_that_do_not_fit_the_tensor_method():
    source = """\
    import torch

    def f(moe, launcher, x, lens_cpu, device, **kw):
        lens = lens_cpu.to(device)
        logits = x.cuda()
        a = x.topk(lens.max())
        b = x.topk(lens.max(), dim=-1, sorted=False)
        c = moe.topk(lens, logits, **kw)
        d = launcher(4).topk(lens, logits, x, 0, 8)
        e = moe.topk(lens.max(), renormalize=True)
        f = x.cuda().topk(lens.max(), 1)
        g = x.roll(lens.max(), 0)
        h = moe.topk(lens, x, **kw)
        i = x.cuda().topk(lens.max(), **kw)
    """
    assert _found(source, "SL208") == [6, 7, 11, 12, 14]
