"""SL501 and the repository's call graph: a device-wide synchronization in a helper that no
local signal calls hot (not `forward`, not in a loop) is reported where the call graph
reaches the helper from a hot root, in another file, and not where only `__init__`, nothing,
or a benchmark reaches it."""

from __future__ import annotations

from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import runner
from synclint.config import Settings
from synclint.violation import Confidence

FILES = {
    "engine/blocks.py": """\
        import torch


        class BlockZeroer:
            def __init__(self, capacity: int, device: torch.device):
                self.capacity = capacity
                self.ids = torch.empty(capacity, dtype=torch.int64, device=device)
                self.reset()

            def zero_blocks(self, block_ids: list[int]) -> None:
                if len(block_ids) > self.capacity:
                    # The old buffer may still be read by a copy in flight.
                    torch.accelerator.synchronize()
                    self.capacity = 2 * len(block_ids)
                    self.ids = torch.empty(self.capacity, dtype=torch.int64, device=self.ids.device)
                self.ids[: len(block_ids)].zero_()

            def reset(self) -> None:
                torch.cuda.synchronize()
                self.ids.zero_()

            def drain(self) -> None:
                torch.cuda.synchronize()
                self.ids.zero_()


        def time_zeroing(zeroer: BlockZeroer) -> None:
            zeroer.zero_blocks(list(range(8)))
            torch.cuda.synchronize()
        """,
    "engine/runner.py": """\
        import torch

        from engine.blocks import BlockZeroer


        class ModelRunner:
            def __init__(self, device: torch.device):
                self.zeroer = BlockZeroer(1024, device)

            def execute_model(self, scheduler_output):
                self.zeroer.zero_blocks(scheduler_output.new_block_ids)
                return scheduler_output
        """,
}


def sl501(root: Path, name: str, **settings) -> dict[int, tuple[str, str, str]]:
    settings = Settings(select=("SL501",), min_confidence=Confidence.LOW, **settings)
    run = runner.lint_paths([root / name], settings, jobs=1, use_cache=False)
    return {v.location.row: (v.confidence.label, v.tier, v.message) for v in run.violations}


def test_a_device_wide_sync_in_a_helper_the_serving_step_calls(tmp_path):
    root = project(tmp_path / "proj", FILES)
    found = sl501(root, "engine/blocks.py", include_cold=True)
    # Reached from `execute_model` in another file: reported, with the path that reaches it.
    confidence, tier, message = found[13]
    assert (confidence, tier) == ("medium", "hot")
    assert "ModelRunner.execute_model -> BlockZeroer.zero_blocks" in message
    # Reached only from `__init__` (reset), from nothing (drain), or from a benchmark-like
    # function nothing hot calls: not reported.
    assert set(found) == {13}


def test_without_the_call_from_the_serving_step_nothing_is_reported(tmp_path):
    files = dict(FILES)
    files["engine/runner.py"] = FILES["engine/runner.py"].replace(
        "self.zeroer.zero_blocks(scheduler_output.new_block_ids)", "pass")
    root = project(tmp_path / "proj", files)
    assert sl501(root, "engine/blocks.py", include_cold=True) == {}



TIMED = """\
    import time

    import torch

    from engine.blocks import BlockZeroer


    class TimedZeroer(BlockZeroer):
        def zero_blocks(self, block_ids: list[int]) -> None:
            torch.cuda.synchronize()
            start = time.perf_counter()
            super().zero_blocks(block_ids)
            torch.cuda.synchronize()
            self.elapsed = time.perf_counter() - start
    """


def test_a_sync_that_brackets_a_timer_read_is_a_measurement(tmp_path):
    files = dict(FILES)
    files["engine/timed.py"] = TIMED
    files["engine/runner.py"] = FILES["engine/runner.py"].replace(
        "from engine.blocks import BlockZeroer", "from engine.timed import TimedZeroer as BlockZeroer")
    root = project(tmp_path / "proj", files)
    # Both syncs of the timed override are reached every step, but each sits beside a clock
    # read: they time the work.
    assert sl501(root, "engine/timed.py", include_cold=True) == {}
    # Without the clock reads, the same syncs are reported.
    files["engine/timed.py"] = TIMED.replace("time.perf_counter()", "0.0")
    root = project(tmp_path / "other", files)
    assert set(sl501(root, "engine/timed.py", include_cold=True)) == {10, 13}
