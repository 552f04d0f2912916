"""Shapes of real syncs that the rules see beyond their first forms: truth tests of tensor
results whose input is not placed, `x[:, dev_idx] = 0`, `t.copy_(number)`, device values
stored through a mask, event waits through `self.<attr>` and sync-only wrappers."""

from __future__ import annotations

import textwrap

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Confidence

LOW = Settings(min_confidence=Confidence.LOW)


def findings(source: str, code: str, settings: Settings = LOW) -> list[tuple[int, str]]:
    result = lint_source(textwrap.dedent(source), "case.py", settings.replace(select=(code,)))
    return [(v.location.row, v.confidence.label) for v in result.violations]


def test_truth_tests_of_tensor_results_with_unplaced_inputs_are_low():
    source = """\
    import numpy as np
    import torch

    def forward(self, batch, info, arr: np.ndarray, flags: list[bool]):
        if batch.extend and batch.track_mask.any():
            pass
        if not torch.all(info.top_ps == 1.0):
            pass
        if batch.prefix_lens.sum() == 0:
            pass
        if arr.any() or any(flags) or batch.need_min_p:
            pass
    """
    assert findings(source, "SL203") == [(5, "low"), (7, "low"), (9, "low")]
    assert findings(source, "SL203", Settings()) == []


def test_item_sizing_of_an_unplaced_tensor_is_low_and_host_operand_does_not_place():
    source = """\
    import torch

    def plan(seq_lens, window: int):
        n = int(seq_lens.max().item())
        clipped = torch.minimum(seq_lens, torch.tensor(window + 1))
        total = clipped.sum().item()
        return n, total
    """
    assert findings(source, "SL204") == [(4, "low")]
    assert findings(source, "SL201") == [(6, "low")]


def test_scatter_through_a_device_index_with_slices_and_an_unplaced_base():
    source = """\
    import torch

    class Pool:
        def __init__(self, size, device):
            self.free_slots = torch.arange(size, dtype=torch.int64, device=device)
            self.cache = make_cache(size)

        def alloc(self, n: int, rows):
            idx = self.free_slots[:n]
            self.free_slots = self.free_slots[n:]
            self.cache.state[:, idx] = 0
            self.cache.state[:, idx] = rows.to(self.free_slots.device)
            self.cache.state[:, 0] = 0
            return idx
    """
    assert findings(source, "SL302") == [(11, "medium")]


def test_copy_of_a_python_number_and_element_write_of_an_unknown_value():
    source = """\
    import torch

    def prepare(bs: int, names, pool, src, device):
        ids = torch.empty((bs,), dtype=torch.int64, device=device)
        rows = torch.empty((bs, 4), device=device)
        for i, name in enumerate(names):
            ids[i] = pool.get_id(name)
            rows[i] = pool.get_row(name)
        ids.copy_(0)
        ids.copy_(src)
        host = torch.zeros(bs)
        host.copy_(1)
        return ids
    """
    assert findings(source, "SL302") == [(7, "medium"), (9, "medium")]


def test_enumerate_and_zip_targets_are_placed():
    from synclint.analysis.reveal import reveal_placements

    source = textwrap.dedent("""\
    import torch

    def f(items, device):
        lens = torch.zeros(4, device=device)
        for i, n in enumerate(lens):
            reveal(i)
            reveal(n)
        for a, b in zip(lens, items):
            reveal(a)
            reveal(b)
        reveal([k for k, v in enumerate(lens)][0])
    """)
    got = [a.placement.describe() for a in reveal_placements(source)]
    assert got[:4] == ["Python scalar", "device tensor", "device tensor", "unknown"]


def test_device_value_stored_through_a_mask_of_the_same_tensor():
    source = """\
    import torch

    class Worker:
        def __init__(self, n, device):
            self.remap = torch.empty(n, dtype=torch.int64, device=device)

        def resolve(self, batch, other):
            ids = batch.input_ids
            mask = ids < 0
            ids[mask] = self.remap[-ids[mask]]
            ids[mask] = 0
            other.scores[batch.keep_mask] = self.remap[:4]
    """
    got = findings(source, "SL401")
    assert (10, "medium") in got and all(row != 11 for row, _ in got)
    assert (12, "medium") not in got and (12, "high") not in got


def test_event_waits_through_attributes_wrappers_and_off_the_hot_path():
    source = """\
    import torch

    class Worker:
        def __init__(self):
            self.done = torch.cuda.Event()
            self.pool = None

        def _wait(self):
            self.done.synchronize()

        def forward(self, x):
            self._wait()
            self.done.synchronize()
            return x

        def maybe_wait(self, info):
            info.verify_done.synchronize()
            self.pool.synchronize()

        def load_weights(self):
            self._wait()
            self.done.synchronize()
    """
    assert findings(source, "SL501") == [(12, "high"), (13, "high"), (17, "medium")]


def test_the_screen_keeps_callers_of_sync_wrappers():
    source = textwrap.dedent("""\
    import torch

    def _wait(stream):
        stream.synchronize()

    def helper(x):
        return x + 1

    def forward(x, copy_stream):
        _wait(copy_stream)
        return helper(x)
    """)
    screened = lint_source(source, "case.py", Settings(select=("SL501",)))
    whole = lint_source(source, "case.py", Settings(select=("SL501",), screen=False))
    assert [v.location.row for v in screened.violations] == [v.location.row for v in whole.violations] == [10]


def test_a_bool_function_returning_a_tensor_test_is_a_truth_test():
    source = """\
    import torch

    class M:
        def no_absorb(self, batch) -> bool:
            return batch.mode.is_extend() and batch.prefix_lens.sum() == 0

        def ready(self, x) -> bool:
            return x is not None and self.flag

        def empty(self, lens, device) -> bool:
            lens = lens.to(device)
            return lens.sum() == 0

        def total(self, lens, device):
            lens = lens.to(device)
            return lens.sum() == 0
    """
    assert findings(source, "SL203") == [(5, "low"), (12, "medium")]


def test_concatenation_with_a_host_element_moved_to_the_device():
    source = """\
    import torch

    def build(n: int, mm_inputs, positions, device):
        deltas = [torch.tensor([0]) if mm_inputs[i] is None else mm_inputs[i].delta for i in range(n)]
        a = torch.stack(deltas, dim=0).to(device=device)
        b = torch.cat([torch.arange(4), mm_inputs[0].offsets]).to(device)
        positions = positions.to(device)
        c = torch.cat([positions, mm_inputs[1]]).to(device)
        d = torch.cat([m.delta for m in mm_inputs]).to(device)
        return a, b, c, d
    """
    assert findings(source, "SL103") == [(5, "medium"), (6, "medium")]


def test_unplaced_vectors_in_any_and_in_sizes_are_low():
    source = """\
    import torch

    def f(batch, kv_indptr, shape, flags: list[bool]):
        a = not any(batch.extend_prefix_lens)
        b = any(flags) or any(batch.items)
        c = torch.empty(kv_indptr[-1], device="cuda")
        d = torch.empty(shape[-1], device="cuda")
    """
    assert findings(source, "SL203") == [(4, "low")]
    assert findings(source, "SL208") == [(6, "low")]
