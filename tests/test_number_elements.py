"""A parameter annotated a Python number to which a caller passes one element of a device
tensor (`local_token_count(..., per_dp=self.group_tokens_gpu[group])`) may hold a
0-dim device tensor: where PyTorch reads it as a number (a `clamp` bound beside a Python
bound, a size) the value is read back (synclint/repo/fixpoint.py `_loop_numbers`, element relays)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings

# A data-parallel batch whose per-rank token counts live on the device, and the helper that
# turns the global count of real tokens into this rank's count.
BATCH = """\
    from dataclasses import dataclass
    from typing import List, Optional

    import torch

    from pkg.parallel import get_shard_rank, get_shard_count


    def local_token_count(global_count: torch.Tensor, tokens_per_group: int) -> torch.Tensor:
        shard = get_shard_rank()
        shards = get_shard_count()
        tokens_per_shard = tokens_per_group // shards
        return torch.clamp(global_count - tokens_per_shard * shard, 0, tokens_per_shard)


    @dataclass
    class StepBatch:
        group_tokens_cpu: Optional[List[int]] = None
        group_tokens_gpu: Optional[torch.Tensor] = None
        real_token_count: Optional[torch.Tensor] = None

        def localize_for_shard(self, group: int, gathered: bool) -> None:
            if gathered:
                tokens_per_group = self.group_tokens_gpu[group]
            else:
                tokens_per_group = self.group_tokens_gpu[0]
            self.real_token_count = local_token_count(self.real_token_count, tokens_per_group=tokens_per_group)
    """

PARALLEL = """\
    def get_shard_rank() -> int:
        return 0


    def get_shard_count() -> int:
        return 1
    """

# The graph runner's caller passes a Python number.
BUFFERS = """\
    import torch

    from pkg.batch import local_token_count


    class GraphBuffers:
        def __init__(self, max_bs: int):
            self.real_token_count = torch.zeros(1, dtype=torch.int32, device="cuda")

        def replay_prepare(self, batch, bs: int, num_tokens_per_bs: int):
            local = local_token_count(batch.real_token_count, bs * num_tokens_per_bs)
            self.real_token_count.copy_(local)
    """

CLAMP_ROW = 13


def _findings(root, name: str, **settings):
    run = runner.lint_paths([root / name], Settings(**settings), jobs=1, use_cache=False)
    return [(v.location.row, v.code) for v in run.violations]


def _files(batch: str = BATCH) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/parallel.py": PARALLEL, "pkg/batch.py": batch, "pkg/buffers.py": BUFFERS}


def test_a_number_parameter_given_an_element_of_a_device_tensor(tmp_path):
    assert "torch.clamp" in textwrap.dedent(BATCH).splitlines()[CLAMP_ROW - 1]
    root = project(tmp_path, _files())
    # `torch.clamp(..., 0, tokens_per_shard)`: a Python bound beside a 0-dim device bound.
    assert (CLAMP_ROW, "SL208") in _findings(root, "pkg/batch.py")
    facts = repo.build(root, use_cache=False)
    mask, reason = facts.values[("p", "local_token_count", "tokens_per_group")]
    assert mask == repo.DEVICE | repo.SCALAR
    assert "a caller passes it an element or a reduction of a device tensor" in reason
    # Without the index the annotation is all there is.
    assert (CLAMP_ROW, "SL208") not in _findings(root, "pkg/batch.py", repository_index=False)


@pytest.mark.parametrize(
    "element",
    [
        # The host copy of the counts: a Python list.
        "self.group_tokens_cpu[group]",
        # A row of the counts held in a dict of Python numbers, by its key.
        'self.limits["decode"]',
        # A Python list built here.
        "[n for n in self.group_tokens_cpu][group]",
        # A slice is no element (and no number: a caller passing one is not followed).
        "self.group_tokens_gpu[:1]",
    ],
)
def test_elements_of_host_data_or_slices_stay_quiet(tmp_path, element):
    batch = BATCH.replace("tokens_per_group = self.group_tokens_gpu[group]", f"tokens_per_group = {element}")
    batch = batch.replace("tokens_per_group = self.group_tokens_gpu[0]", f"tokens_per_group = {element}")
    root = project(tmp_path, _files(batch))
    assert (CLAMP_ROW, "SL208") not in _findings(root, "pkg/batch.py")
    found = repo.build(root, use_cache=False).values.get(("p", "local_token_count", "tokens_per_group"))
    assert found is None or not found[0] & repo.DEVICE


def test_an_element_of_a_tensor_that_may_be_on_the_host_says_nothing(tmp_path):
    # The counts are a device tensor on one path and a host tensor on another: its element
    # is no sure 0-dim device tensor (a loop's element would be; an indexed one is not).
    counts = """\
        def gather_counts(self, counts: List[int], device):
            self.token_counts = torch.tensor(counts).to(device, non_blocking=True)

        def use_host_counts(self, counts: List[int]):
            self.token_counts = torch.tensor(counts)

"""
    batch = BATCH.replace("        def localize_for_shard(", counts + "        def localize_for_shard(")
    batch = batch.replace("self.group_tokens_gpu[", "self.token_counts[")
    root = project(tmp_path, _files(batch))
    assert ("p", "local_token_count", "tokens_per_group") not in repo.build(root, use_cache=False).values
    # Given only the device copy, the same element is one.
    root = project(tmp_path / "device", _files(batch.replace("self.token_counts = torch.tensor(counts)\n", "return\n")))
    assert repo.build(root, use_cache=False).values[("p", "local_token_count", "tokens_per_group")][0] == repo.DEVICE | repo.SCALAR


def test_the_element_relay_is_an_argument_of_the_call_too(tmp_path):
    # `f(x, counts[rank])` directly, positionally.
    batch = BATCH.replace(
        "local_token_count(self.real_token_count, tokens_per_group=tokens_per_group)",
        "local_token_count(self.real_token_count, self.group_tokens_gpu[group])",
    )
    root = project(tmp_path, _files(batch))
    assert (CLAMP_ROW, "SL208") in _findings(root, "pkg/batch.py")


def test_a_name_also_bound_to_a_number_is_no_element(tmp_path):
    # The element is read back first (`int(...)`): what is passed is a Python number.
    batch = BATCH.replace(
        "            self.real_token_count = local_token_count(",
        "            tokens_per_group = int(tokens_per_group)\n            self.real_token_count = local_token_count(",
    )
    root = project(tmp_path, _files(batch))
    assert ("p", "local_token_count", "tokens_per_group") not in repo.build(root, use_cache=False).values


# A scheduler's plan reads `batch.prefix_lens`: a list of Python ints in the batch class it
# is given, a device tensor in a runner's batch of another module (the field read by its
# name alone, the object's class unknown).
REPLAY = {
    "pkg/__init__.py": "",
    "pkg/replay.py": """\
        def replay_len(prefix_len: int) -> int:
            return min(prefix_len, 128)


        def plan(batch, resets):
            return [replay_len(p) if r else 0 for r, p in zip(resets, batch.prefix_lens)]
        """,
    "pkg/batches.py": """\
        import torch


        class ScheduleBatch:
            def __init__(self, reqs):
                self.prefix_lens = [len(r.prefix) for r in reqs]


        class ForwardBatch:
            def __init__(self, lens, device):
                self.prefix_lens = torch.tensor(lens, dtype=torch.int64).to(device, non_blocking=True)
        """,
}


def test_a_loop_over_a_name_that_also_holds_python_numbers_says_nothing_of_its_elements(tmp_path):
    # A name that is a list of Python ints in one class and a device tensor in another is no
    # tensor the loop surely walks: `min(prefix_len, 128)` stays a number.
    root = project(tmp_path, REPLAY)
    assert ("p", "replay_len", "prefix_len") not in repo.build(root, use_cache=False).values
    assert [f for f in _findings(root, "pkg/replay.py") if f[1] == "SL203"] == []
    # Where every class holds a device tensor there, its elements reach the parameter.
    batches = REPLAY["pkg/batches.py"].replace("[len(r.prefix) for r in reqs]", 'torch.zeros(len(reqs), device="cuda")')
    files = {**REPLAY, "pkg/batches.py": batches}
    root = project(tmp_path / "tensors", files)
    assert repo.build(root, use_cache=False).values[("p", "replay_len", "prefix_len")][0] == repo.DEVICE | repo.SCALAR
    assert (2, "SL203") in _findings(root, "pkg/replay.py")


# A vision encoder's rotary table, sized by the largest grid position: the position ids are
# built on the device, and their maximum (a 0-dim device tensor) is passed to a method of the
# submodule whose parameter is annotated `int` and used as the length of `torch.arange`.
ROTARY = """\
    import torch
    from torch import nn


    class VisionRotaryEmbedding(nn.Module):
        def __init__(self, dim: int, theta: float = 10000.0) -> None:
            super().__init__()
            inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
            self.register_buffer("inv_freq", inv_freq, persistent=False)

        def forward(self, seqlen: int) -> torch.Tensor:
            seq = torch.arange(seqlen, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
            return torch.outer(seq, self.inv_freq)


    class TextRotaryEmbedding(nn.Module):
        def forward(self, seqlen: int) -> torch.Tensor:
            return torch.arange(seqlen)
    """

ENCODER = """\
    import torch
    from torch import nn

    from pkg.rotary import TextRotaryEmbedding, VisionRotaryEmbedding


    class VisionEncoder(nn.Module):
        def __init__(self, head_dim: int) -> None:
            super().__init__()
            self.rotary_pos_emb = VisionRotaryEmbedding(head_dim // 2)

        def forward(
            self,
            hidden_states: torch.Tensor,
            grid_thw: list[tuple[int, int, int]],
            height_position_ids: torch.Tensor,
            width_position_ids: torch.Tensor,
        ) -> torch.Tensor:
            pids = torch.stack([height_position_ids, width_position_ids], dim=-1)
            max_grid_size = pids.max() + 1
            table = self.rotary_pos_emb(max_grid_size)
            return table[pids].flatten(1)


    class TextModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rotary = TextRotaryEmbedding()

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            return self.rotary(input_ids.shape[-1])
    """

ARANGE_ROW = 12


def _rotary_files(encoder: str = ENCODER) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/rotary.py": ROTARY, "pkg/encoder.py": encoder}


def test_a_reduction_of_a_device_tensor_passed_through_the_class(tmp_path):
    assert "torch.arange(seqlen, device=" in textwrap.dedent(ROTARY).splitlines()[ARANGE_ROW - 1]
    root = project(tmp_path, _rotary_files())
    assert (ARANGE_ROW, "SL208") in _findings(root, "pkg/rotary.py")
    values = repo.build(root, use_cache=False).values
    mask, reason = values[("p", "VisionRotaryEmbedding.forward", "seqlen")]
    assert mask == repo.DEVICE | repo.SCALAR
    assert "encoder.py:21" in reason, reason
    # The other class's `forward(seqlen: int)` is given a Python number only.
    assert ("p", "TextRotaryEmbedding.forward", "seqlen") not in values
    assert [row for row, code in _findings(root, "pkg/rotary.py") if code == "SL208"] == [ARANGE_ROW]


@pytest.mark.parametrize(
    "size",
    [
        # Read back once, as a Python number, by the caller itself.
        "int(pids.max()) + 1",
        # The maximum of the host grid sizes.
        "max(max(h, w) for _, h, w in grid_thw)",
        # A host tensor's maximum.
        "torch.tensor(grid_thw).max() + 1",
    ],
)
def test_a_number_or_a_host_reduction_passed_through_the_class_says_nothing(tmp_path, size):
    root = project(tmp_path, _rotary_files(ENCODER.replace("max_grid_size = pids.max() + 1", f"max_grid_size = {size}")))
    assert (ARANGE_ROW, "SL208") not in _findings(root, "pkg/rotary.py")
    found = repo.build(root, use_cache=False).values.get(("p", "VisionRotaryEmbedding.forward", "seqlen"))
    assert found is None or not found[0] & repo.DEVICE


# The position ids built on the device when the caller gives none, one image at a time, from
# the grid sizes a caller passes as a list of tuples: `arange(...) % (h * w)` is a device
# tensor whatever `h` and `w` are, so their maximum is still a reduction of a device tensor.
BUILT_IDS = """\
            if height_position_ids is None or width_position_ids is None:
                split_hids, split_wids = [], []
                for t, h, w in grid_thw:
                    image_pids = torch.arange(t * h * w, device=hidden_states.device) % (h * w)
                    sample_hids = image_pids // w
                    sample_wids = image_pids % w
                    split_hids.append(sample_hids)
                    split_wids.append(sample_wids)
                height_position_ids = torch.concat(split_hids, dim=0)
                width_position_ids = torch.concat(split_wids, dim=0)
            pids = torch.stack([height_position_ids, width_position_ids], dim=-1)
"""

# The encoder's caller: a vision tower that hands on the grid sizes it is given as a list.
TOWER = """\
    from pkg.encoder import VisionEncoder


    class VisionTower:
        def __init__(self) -> None:
            self.encoder = VisionEncoder(64)

        def run(self, pixel_values, grid_thw):
            return self.encoder(pixel_values, grid_thw, None, None)

        def dummy(self, pixel_values):
            return self.run(pixel_values, [(1, 4, 4)])
"""


@pytest.mark.parametrize("ids", ["built", "passed"])
def test_arithmetic_with_a_device_tensor_is_on_the_device_whatever_the_other_operand(tmp_path, ids):
    encoder = ENCODER
    if ids == "built":
        encoder = encoder.replace(
            "            pids = torch.stack([height_position_ids, width_position_ids], dim=-1)\n", BUILT_IDS
        ).replace("height_position_ids: torch.Tensor,", "height_position_ids: torch.Tensor | None,").replace(
            "width_position_ids: torch.Tensor,", "width_position_ids: torch.Tensor | None,")
    root = project(tmp_path, {**_rotary_files(encoder), "pkg/tower.py": TOWER})
    values = repo.build(root, use_cache=False).values
    mask, reason = values[("p", "VisionRotaryEmbedding.forward", "seqlen")]
    assert mask == repo.DEVICE | repo.SCALAR, reason
    assert (ARANGE_ROW, "SL208") in _findings(root, "pkg/rotary.py")


def _one_model(size: str) -> str:
    """A vision model in one module: its rotary table's class, and the encoder sizing it."""
    rotary = textwrap.dedent(ROTARY).split("\n\n\nclass TextRotaryEmbedding")[0]
    encoder = textwrap.dedent(ENCODER).split("\n\n\nclass TextModel")[0]
    encoder = encoder.replace("from pkg.rotary import TextRotaryEmbedding, VisionRotaryEmbedding\n", "")
    encoder = encoder.replace("max_grid_size = pids.max() + 1", f"max_grid_size = {size}")
    return rotary + "\n\n" + encoder.split("from torch import nn\n", 1)[1] + "\n"


def test_a_class_name_two_modules_define_is_given_what_its_own_module_passes(tmp_path):
    # Two vision models each define a `VisionRotaryEmbedding` (the index knows a class by its
    # name): one sizes its table by a device maximum, the other by a Python one. Each
    # class's `forward(seqlen: int)` is given what its own module's call passes.
    device, host = _one_model("pids.max() + 1"), _one_model("max(max(h, w) for _, h, w in grid_thw)")
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/model1.py": device, "pkg/model2.py": host})
    assert ("p", "VisionRotaryEmbedding.forward", "seqlen") not in repo.build(root, use_cache=False).values
    arange = next(i for i, line in enumerate(device.splitlines(), 1) if "torch.arange(seqlen" in line)
    assert (arange, "SL208") in _findings(root, "pkg/model1.py")
    assert (arange, "SL208") not in _findings(root, "pkg/model2.py")


def test_a_nested_function_is_given_only_what_its_own_outer_function_passes(tmp_path):
    # `def f(length: float)` nested in a method is called with floats there; another module's
    # `f` is passed the elements of a loop over a device tensor. Only the calls made inside
    # the method reach the nested `f`, so its result stays a number.
    files = {
        "pkg/__init__.py": "",
        "pkg/sizer.py": """\
            import logging

            logger = logging.getLogger(__name__)


            class ChunkSizer:
                def __init__(self):
                    self.a = 1.0
                    self.b = 2.0
                    self.target_latency = None

                def set_target_latency(self, base_chunk_size: int):
                    def f(length: float) -> float:
                        return self.a * length * length + self.b * length

                    self.target_latency = f(float(base_chunk_size)) - f(0.0)

                def size(self, history_len: int):
                    if self.target_latency is None:
                        return None
                    discriminant = self.b * self.b + 4 * self.a * self.target_latency
                    if discriminant < 0:
                        logger.warning(f"negative ({discriminant:.2e})")
                    return discriminant
            """,
        "pkg/components.py": """\
            import torch


            def f(length):
                return length * 2


            def step(lens: torch.Tensor):
                lens = lens.cuda()
                return [f(n) for n in lens]
            """,
    }
    root = project(tmp_path / "proj", files)
    settings = Settings(include_cold=True)
    run = runner.lint_paths([root / "pkg" / "sizer.py"], settings, jobs=1, use_cache=False)
    assert [(v.location.row, v.code) for v in run.violations] == []
    # The module-level `f` is still given the device elements by the loop of its module.
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "f", "length")][0] & repo.DEVICE


METRICS = """\
    class CounterWrapper:
        def __init__(self, metric):
            self.metric = metric

        def inc(self, value: float = 1.0) -> None:
            if value == 0:
                return
            self.metric.inc(value)
    """

RECORDER = """\
    import torch


    class Recorder:
        def __init__(self, histogram, num_ranks: int):
            self.histogram = histogram
            self.counts = torch.zeros(num_ranks, dtype=torch.int64, device="cuda")

        def flush(self, layer: int):
            buckets = self.histogram.labels(layer=str(layer))
            for rank in range(self.counts.shape[0]):
                count = self.counts[rank]
                buckets.observed.inc(count)
    """


def test_a_call_by_name_does_not_override_a_number_annotation(tmp_path):
    # `buckets.observed.inc(count)`: the object's class is not said (a library's
    # histogram), so the repository's `CounterWrapper.inc(value: float)` it may reach by name
    # keeps its annotation: `if value == 0:` reads a Python number.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/metrics.py": METRICS, "pkg/recorder.py": RECORDER})
    assert (6, "SL203") not in _findings(root, "pkg/metrics.py")
    values = repo.build(root, use_cache=False).values
    found = values.get(("p", "CounterWrapper.inc", "value"))
    assert found is None or not found[0] & repo.DEVICE
    # Where the code says the class, the element still overrides the annotation.
    typed = RECORDER.replace("import torch\n", "import torch\n\n    from pkg.metrics import CounterWrapper\n").replace(
        "self.histogram = histogram", "self.observed = CounterWrapper(histogram)").replace(
        "buckets.observed.inc(count)", "self.observed.inc(count)")
    assert "self.observed.inc(count)" in typed and "CounterWrapper(histogram)" in typed
    root = project(tmp_path / "typed", {"pkg/__init__.py": "", "pkg/metrics.py": METRICS, "pkg/recorder.py": typed})
    assert (6, "SL203") in _findings(root, "pkg/metrics.py")


SHARDS = """\
    from dataclasses import dataclass

    import torch


    @dataclass
    class ShardIndices:
        vocab_start_index: int
        vocab_end_index: int


    def shard_indices(sizes):
        return ShardIndices(vocab_start_index=sizes[0], vocab_end_index=sizes[1])
    """

PREFETCH = """\
    from typing import Optional

    import torch


    class Prefetcher:
        def enqueue(self, flat_ids: torch.Tensor, *, vocab_start: int = 0, vocab_end: Optional[int] = None):
            row_ids = flat_ids.detach().cpu()
            if vocab_end is not None:
                row_ids = row_ids[(row_ids >= vocab_start) & (row_ids < vocab_end)]
            row_ids = row_ids - vocab_start
            return self.pages_for_rows(row_ids)

        def pages_for_rows(self, row_ids: torch.Tensor):
            return row_ids.unique(sorted=True).tolist()


    class Table:
        def __init__(self, prefetcher, shard, counts: torch.Tensor):
            self.prefetcher = prefetcher
            self.shard = shard
            self.counts = counts

        def gather(self, ids):
            self.prefetcher.enqueue(ids, vocab_start=self.shard.vocab_start_index)


    def stream(queue, counts: torch.Tensor):
        starts = counts.cuda()
        queue.enqueue(None, vocab_start=starts)
    """


def test_a_number_parameter_read_in_arithmetic_stays_a_number(tmp_path):
    # `row_ids - vocab_start` of host ids and a parameter declared `int`: a host tensor, so
    # the page list is no readback, whatever some call of a method named `enqueue` passes
    # (here a device tensor, by keyword). What an element or a reduction of a device tensor
    # gives such a parameter is the relay of `_loop_numbers`, tested above.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/shards.py": SHARDS, "pkg/prefetch.py": PREFETCH})
    rows = {row for row, code in _findings(root, "pkg/prefetch.py") if code in ("SL202", "SL402")}
    assert 15 not in rows, rows
    found = repo.build(root, use_cache=False).values.get(("p", "Prefetcher.pages_for_rows", "row_ids"))
    assert found is None or not found[0] & repo.DEVICE


def test_an_edit_to_one_model_moves_only_its_own_class_s_relay(tmp_path, monkeypatch):
    # Cached runs: the model that starts passing a device maximum to its own table class gets
    # the finding, and loses it when the edit is undone; the other model keeps its own.
    monkeypatch.chdir(tmp_path)
    device, host = _one_model("pids.max() + 1"), _one_model("max(max(h, w) for _, h, w in grid_thw)")
    root = project(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/model1.py": device, "pkg/model2.py": host})
    arange = next(i for i, line in enumerate(device.splitlines(), 1) if "torch.arange(seqlen" in line)

    def reported() -> set[str]:
        run = runner.lint_paths([root / "pkg"], Settings(), jobs=1, use_cache=True)
        return {Path(v.filename).name for v in run.violations if (v.location.row, v.code) == (arange, "SL208")}

    assert reported() == {"model1.py"}
    (root / "pkg/model2.py").write_text(device)
    assert reported() == {"model1.py", "model2.py"}
    (root / "pkg/model2.py").write_text(host)
    assert reported() == {"model1.py"}
