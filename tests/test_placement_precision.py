"""SL101 and SL201 with placement inference against a naive name match on the same files.

The corpus is real-shaped code (spelled as vLLM, SGLang and transformers spell it) written to
disk. Lines that really stall end with `# stalls`; look-alikes that do not stall end with
`# no stall`. The naive matcher flags every `.item()` and every `torch.tensor/as_tensor(...,
device=...)`; synclint at default settings must flag every stalling line (no loss) and no
look-alike, so it flags strictly fewer look-alikes than the naive match.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Confidence

ITEM_FILE = textwrap.dedent(
    """\
    import numpy as np
    import torch
    from torch import nn


    class Sampler(nn.Module):
        def __init__(self, vocab_size, device):
            super().__init__()
            self.device = device
            self.counts = torch.zeros(vocab_size, dtype=torch.int64, device=device)
            self.host_counts = torch.zeros(vocab_size, dtype=torch.int64)
            self.weight = nn.Parameter(torch.ones(vocab_size))

        def forward(self, logits):
            best = logits.cuda().argmax(dim=-1)
            first = best[0].item()  # stalls
            total = self.counts.sum().item()  # stalls
            scale = self.weight.norm().item()  # stalls
            seen = self.host_counts.sum().item()  # no stall
            return first, total, scale, seen

        def stats(self, token_ids: list[int]):
            ids = torch.tensor(token_ids)
            longest = ids.max().item()  # no stall
            arr = np.asarray(token_ids)
            mean = arr.mean().item()  # no stall
            spread = np.float32(arr.std()).item()  # no stall
            return longest, mean, spread


    def finish(logits, device):
        probs = torch.softmax(logits.to(device), dim=-1)
        top = probs.max().item()  # stalls
        host = probs.cpu()
        again = host.max().item()  # no stall
        staged = probs.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        last = staged[-1].item()  # no stall
        return top, again, last


    def from_numpy_batch(batch: np.ndarray):
        t = torch.from_numpy(batch)
        return t.sum().item()  # no stall
    """
)

FACTORY_FILE = textwrap.dedent(
    """\
    import numpy as np
    import torch
    import torch as th
    from torch import tensor


    class ModelRunner:
        def __init__(self, device):
            self.device = device
            self.pinned = torch.zeros(4096, dtype=torch.int64, pin_memory=True)

        def _prepare_inputs(self, token_ids, positions: np.ndarray):
            ids = torch.tensor(token_ids, dtype=torch.long, device=self.device)  # stalls
            pos = torch.as_tensor(positions, device=self.device)  # stalls
            # a blocking copy (as_tensor never passes non_blocking) waits even from pinned memory
            staged = torch.as_tensor(self.pinned, device=self.device)  # stalls
            return ids, pos, staged

        def prepare_decode_metadata(self, seq_lens, rank):
            lens = th.tensor(seq_lens, device=torch.device("cuda", rank))  # stalls
            host = torch.tensor(seq_lens, device="cpu")  # no stall
            return lens, host


    def build(sampled, hidden):
        g = sampled.cuda()
        ids = tensor(g.tolist(), device="cuda:0")  # stalls
        copy = torch.tensor(g, device="cuda")  # no stall
        cpu_ref = torch.zeros(3)
        same = torch.tensor([1, 2, 3], device=cpu_ref.device)  # no stall
        dev = "cpu"
        local = torch.tensor([0], device=dev)  # no stall
        return ids, copy, same, local


    def lazily_imported(ids):
        import torch as T
        return T.tensor(ids, device="cuda")  # stalls
    """
)


def _marked(text: str, mark: str) -> set[int]:
    return {i for i, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith(f"# {mark}")}


def _naive(text: str, kind: str) -> set[int]:
    """Rows a name match flags: every `.item()`, or every tensor/as_tensor call with device=."""
    module = cst.parse_module(text)
    rows: set[int] = set()

    class Matcher(cst.CSTVisitor):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
            if kind == "item":
                hit = isinstance(func, cst.Attribute) and name == "item" and not node.args
            else:
                has_device = any(a.keyword is not None and a.keyword.value == "device" for a in node.args)
                hit = name in ("tensor", "as_tensor", "asarray") and has_device
            if hit:
                rows.add(self.get_metadata(PositionProvider, node).start.line)

    MetadataWrapper(module).visit(Matcher())
    return rows


def _flagged(path: Path, code: str) -> set[int]:
    result = lint_source(path.read_bytes(), str(path), Settings())
    return {v.location.row for v in result.violations if v.code == code}


def _compare(tmp_path: Path, text: str, code: str, kind: str) -> tuple[set[int], set[int], set[int], set[int]]:
    path = tmp_path / f"{code.lower()}_corpus.py"
    path.write_text(text)
    stalls, lookalikes = _marked(text, "stalls"), _marked(text, "no stall")
    assert stalls and lookalikes
    return stalls, lookalikes, _naive(path.read_text(), kind), _flagged(path, code)


def test_sl201_flags_every_stall_and_no_lookalike(tmp_path):
    stalls, lookalikes, naive, flagged = _compare(tmp_path, ITEM_FILE, "SL201", "item")
    assert naive == stalls | lookalikes  # the name match cannot tell them apart
    assert stalls <= flagged  # no loss on the true cases
    assert flagged & lookalikes == set()
    assert len(flagged) < len(naive)


def test_sl101_flags_every_stall_and_no_lookalike(tmp_path):
    stalls, lookalikes, naive, flagged = _compare(tmp_path, FACTORY_FILE, "SL101", "factory")
    assert naive == stalls | lookalikes
    assert stalls <= flagged
    assert flagged & lookalikes == set()
    assert len(flagged) < len(naive)


def test_a_field_set_to_none_first_holds_what_it_is_assigned_later():
    code = textwrap.dedent(
        """\
        import torch


        class Backend:
            def __init__(self, max_bs: int, device, window: bool):
                self.window_indptr = None
                self.host_lens = None
                if window:
                    self.window_indptr = torch.zeros((max_bs + 1,), dtype=torch.int32, device=device)
                    self.host_lens = torch.zeros(max_bs, dtype=torch.int32)

            def replay(self, bs: int):
                n_win = int(self.window_indptr[bs].item())  # stalls
                n_host = int(self.host_lens[bs].item())  # no stall
                return n_win + n_host
        """
    )
    found = [(v.location.row, v.code) for v in lint_source(code, "backend.py", Settings(include_cold=True)).violations]
    # `self.window_indptr = None` is the field not set yet: where it is read as a tensor, it
    # is the device buffer; the host one is no readback.
    assert found == [(13, "SL201")]


def test_a_local_bound_to_none_on_one_path_is_the_tensor_where_used_as_one():
    code = textwrap.dedent(
        """\
        import torch


        def step(flag: bool, n: int):
            lens = None
            host = None
            if flag:
                lens = torch.zeros(n, device="cuda")
                host = torch.zeros(n)
            if lens is None:
                return 0
            return int(lens.sum().item()) + int(host.sum().item())  # the first stalls
        """
    )
    found = [(v.location.row, v.code) for v in lint_source(code, "step.py", Settings(include_cold=True)).violations]
    assert [code for row, code in found if row == 12] == ["SL204"]


def test_a_torch_function_writing_into_out_returns_that_tensor():
    code = textwrap.dedent(
        """\
        import torch

        PIN_MEMORY = True


        class VisionEncoder:
            def position_ids(self, seq_lens, grids, device):
                # Built on the host, concatenated straight into a pinned buffer: the copy is async.
                pinned = torch.concat(
                    [torch.arange(n) % (h * w) for n, (_, h, w) in zip(seq_lens, grids)],
                    dim=0,
                    out=torch.empty(sum(seq_lens), dtype=torch.int64, pin_memory=PIN_MEMORY),
                ).to(device, non_blocking=True)
                # The same without `out=`: a pageable concatenation.
                pageable = torch.concat([torch.arange(n) for n in seq_lens], dim=0).to(device, non_blocking=True)
                # Written into a device buffer: the result is on the device.
                on_device = torch.cat([pinned, pinned], out=torch.empty(2 * len(pinned), device=device))
                return pinned, pageable, int(on_device.sum().item())
        """
    )
    found = [(v.location.row, v.code) for v in lint_source(code, "encoder.py", Settings(include_cold=True, min_confidence=Confidence.LOW)).violations]
    assert found == [(15, "SL102"), (18, "SL204")]


def test_a_cpu_test_keeps_a_buffer_that_may_be_pinned():
    code = textwrap.dedent(
        """\
        import numpy as np
        import torch

        PIN_MEMORY = True


        def async_tensor_h2d(data, device):
            if isinstance(data, np.ndarray):
                data = torch.from_numpy(data)
            if isinstance(data, torch.Tensor):
                t = data
                if PIN_MEMORY and not t.is_pinned():
                    t = torch.empty(t.shape, dtype=t.dtype, device="cpu", pin_memory=True).copy_(t)
            else:
                t = torch.tensor(data, pin_memory=PIN_MEMORY, device="cpu")
            assert t.is_cpu
            return t.to(device=device, non_blocking=True)  # staged in pinned memory: async


        def pageable(data, device):
            t = torch.tensor(data)
            assert t.is_cpu
            return t.to(device=device, non_blocking=True)  # pageable: SL102
        """
    )
    found = [(v.location.row, v.code) for v in lint_source(code, "h2d.py", Settings(include_cold=True, min_confidence=Confidence.LOW)).violations]
    assert found == [(23, "SL102")]
