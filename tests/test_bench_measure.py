"""bench/measure.py: the peak memory of a process tree, with the pages forked workers share
counted once per process (RSS summed) and once in all (PSS summed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Loaded by its path: bench/ on sys.path would shadow the standard library's `profile` with
# bench/profile.py for every test after this one.
_spec = importlib.util.spec_from_file_location("bench_measure", ROOT / "bench" / "measure.py")
measure = importlib.util.module_from_spec(_spec)
sys.modules["bench_measure"] = measure  # a dataclass needs its module registered
_spec.loader.exec_module(measure)

pytestmark = pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="needs Linux /proc smaps_rollup")

# A parent that fills 96 MiB, then forks four workers that share it and each add 16 MiB of their own.
TREE = """
import os, time
shared = b"x" * (96 * 2**20)
for _ in range(4):
    if os.fork() == 0:
        own = b"y" * (16 * 2**20)
        time.sleep(1.5)
        os._exit(0)
time.sleep(0.5)
for _ in range(4):
    os.wait()
"""


def test_shared_pages_count_once_per_process_in_rss_and_once_in_pss(tmp_path):
    m = measure.run("tree", [sys.executable, "-c", TREE], cwd=tmp_path, output=tmp_path / "tree.log")
    assert m.returncode == 0
    assert m.peak_tree_mib >= 5 * 96  # the parent's 96 MiB, once per process
    assert 96 + 4 * 16 <= m.peak_tree_pss_mib < 2 * 96 + 4 * 16  # shared once, each worker's own added
    assert m.peak_tree_pss_mib < m.peak_tree_mib


def test_a_saved_run_without_pss_still_loads():
    saved = {"name": "old", "wall_s": 1.0, "cpu_s": 1.0, "peak_process_mib": 10.0, "peak_tree_mib": 20.0,
             "load_before": 0.0, "load_after": 0.0, "returncode": 0}
    assert measure.Measurement(**saved).peak_tree_pss_mib == 0.0
