"""A function of another file that returns a tuple (`return start, count`) is read element by
element where every `return` gives a tuple of the same length: `start, count = f(batch)`
binds each name to what `f` returns there (synclint/repo/keys.py, RESULT_ITEM), declared a tensor
by `-> Tuple[torch.Tensor, ...]`. A tuple returned some other way stays one joined result."""

from __future__ import annotations

from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence

BATCH = """\
    from dataclasses import dataclass
    from typing import Optional

    import torch


    @dataclass
    class StepBatch:
        global_num_tokens_gpu: torch.Tensor
        out_cache_loc: torch.Tensor
        dp_rank: int
        local_start: Optional[torch.Tensor] = None
        local_count: Optional[torch.Tensor] = None
    """

RANGES = """\
    from typing import Optional, Tuple

    import torch

    from pkg.batch import StepBatch


    def get_local_range(batch: StepBatch) -> Tuple[torch.Tensor, torch.Tensor]:
        if batch.local_start is None:
            cumtokens = torch.cumsum(batch.global_num_tokens_gpu, dim=0)
            if batch.dp_rank == 0:
                batch.local_start = torch.zeros_like(cumtokens[0])
            else:
                batch.local_start = cumtokens[batch.dp_rank - 1]
            batch.local_count = batch.global_num_tokens_gpu[batch.dp_rank]
        return batch.local_start, batch.local_count


    def get_padded_range(batch: StepBatch, graph_bs: int) -> Tuple[int, int]:
        return batch.dp_rank * graph_bs, graph_bs


    def get_counts(batch: StepBatch) -> tuple[torch.Tensor, int]:
        return batch.global_num_tokens_gpu, batch.dp_rank


    _CACHE: dict = {}


    def get_cached_range(batch: StepBatch) -> Tuple[torch.Tensor, torch.Tensor]:
        if batch.dp_rank in _CACHE:
            return _CACHE[batch.dp_rank]
        return batch.global_num_tokens_gpu[0], batch.global_num_tokens_gpu[1]
    """

CAPTURER = """\
    import torch

    from pkg.batch import StepBatch
    from pkg.ranges import get_cached_range, get_counts, get_local_range, get_padded_range


    class Capturer:
        def __init__(self, buffer: torch.Tensor):
            self.buffer = buffer

        def local_slice(self, batch: StepBatch) -> torch.Tensor:
            start, count = get_local_range(batch)
            end = start + count
            return self.buffer[start:end]

        def padded_slice(self, batch: StepBatch, graph_bs: int) -> torch.Tensor:
            start, count = get_padded_range(batch, graph_bs)
            return self.buffer[start : start + count]

        def rank_slice(self, batch: StepBatch) -> torch.Tensor:
            counts, rank = get_counts(batch)
            return self.buffer[:rank]

        def cached_slice(self, batch: StepBatch) -> torch.Tensor:
            start, end = get_cached_range(batch)
            return self.buffer[start:end]
    """


def _violations(root: Path, name: str, **settings):
    return runner.lint_paths([root / name], Settings(**settings), jobs=1, use_cache=False).violations


def _project(tmp_path: Path) -> Path:
    return project(tmp_path, {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/ranges.py": RANGES, "pkg/capture.py": CAPTURER})


def test_each_element_of_a_returned_tuple_is_placed(tmp_path):
    # `start, count = get_local_range(batch)`: both are device tensors (elements of a device
    # tensor, cached on the batch), so slicing with them reads them back (SL304).
    root = _project(tmp_path)
    found = [(v.location.row, v.code, v.confidence) for v in _violations(root, "pkg/capture.py")]
    assert found == [(14, "SL304", Confidence.MEDIUM)]
    facts = repo.build(root, use_cache=False)
    assert facts.values[(repo.RESULT_ITEM, "get_local_range", 0)][0] == repo.DEVICE
    assert facts.values[(repo.RESULT_ITEM, "get_local_range", 1)][0] == repo.DEVICE
    # The element declared an int beside a device tensor is no device tensor.
    assert facts.values.get((repo.RESULT_ITEM, "get_counts", 1), (0,))[0] != repo.DEVICE
    assert facts.values[(repo.RESULT_ITEM, "get_counts", 0)][0] == repo.DEVICE


def test_host_elements_and_tuples_returned_otherwise_stay_quiet(tmp_path):
    # Python ints unpacked from `get_padded_range()`, the int beside a device tensor in
    # `get_counts()`, and a function one of whose returns is a tuple it did not build (a cache
    # entry): none is reported, even at low confidence for the first two.
    root = _project(tmp_path)
    low = [(v.location.row, v.code, v.confidence) for v in _violations(root, "pkg/capture.py", min_confidence=Confidence.LOW)]
    assert [f for f in low if f[0] in (18, 22)] == []
    assert [f for f in low if f[0] == 26 and f[2] is not Confidence.LOW] == []
    facts = repo.build(root, use_cache=False)
    assert (repo.RESULT_ITEM, "get_cached_range", 0) not in facts.values


def test_unpacked_elements_screen_as_the_analysis_reads_them(tmp_path):
    root = _project(tmp_path)
    for confidence in (Confidence.MEDIUM, Confidence.LOW):
        screened = [(v.location.row, v.code, v.confidence) for v in _violations(root, "pkg/capture.py", min_confidence=confidence)]
        whole = [(v.location.row, v.code, v.confidence) for v in _violations(root, "pkg/capture.py", min_confidence=confidence, screen=False)]
        assert screened == whole


def test_an_element_flows_on_into_a_field(tmp_path):
    # `self.start, ... = ...` aside, an element bound to a name and stored in a field gives the
    # field what that element is (the index reads the unpacked name too).
    keeper = """\
        import torch

        from pkg.batch import StepBatch
        from pkg.ranges import get_local_range


        class Keeper:
            start: torch.Tensor

            def keep(self, batch: StepBatch):
                start, _ = get_local_range(batch)
                self.start = start

            def size(self, buffer: torch.Tensor) -> int:
                return buffer[: self.start].shape[0]
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/ranges.py": RANGES, "pkg/keeper.py": keeper})
    facts = repo.build(root, use_cache=False)
    assert facts.field_fact("Keeper", "start")[0] == repo.DEVICE
    assert [(v.location.row, v.code) for v in _violations(root, "pkg/keeper.py")] == [(15, "SL304")]
