"""The shape and dtype of a field built in the file that writes it: a graph-replay batch info
whose buffers a manager builds once (`Info(weight_indices=torch.zeros(n, dtype=...))`) and
refreshes element by element every step. The index places the field (its dataclass, in
another file, declares it a tensor and the build gives it device tensors); the constructor
call in the writing file says it is 1-D, so `info.weight_indices[i]` is one element."""

from __future__ import annotations

from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import runner
from synclint.config import Settings

BATCH_INFO = """\
    from dataclasses import dataclass
    from typing import Optional

    import torch


    @dataclass
    class AdapterBatchInfo:
        bs: int
        weight_indices: torch.Tensor
        ranks: torch.Tensor
        scores: Optional[torch.Tensor] = None
    """

MANAGER = """\
    import torch

    from batch_info import AdapterBatchInfo


    class AdapterManager:
        def init_graph_batch_info(self, max_bs: int, max_adapters: int):
            with torch.device("cuda"):
                self.graph_info = AdapterBatchInfo(
                    bs=max_bs,
                    weight_indices=torch.zeros(max_bs, dtype=torch.int32),
                    ranks=torch.zeros(max_adapters, dtype=torch.int32),
                )

        def prepare_batch(self, adapter_names, pool, adapters):
            for i, name in enumerate(adapter_names):
                self.graph_info.weight_indices[i] = pool.get_buffer_id(name)
                self.graph_info.ranks[self.graph_info.weight_indices[i]] = adapters[name].rank
    """


def findings(root: Path, name: str) -> list[tuple[int, str]]:
    run = runner.lint_paths([root / name], Settings(), jobs=1, use_cache=False)
    return [(v.location.row, v.code) for v in run.violations]


def test_an_element_of_a_one_dimensional_device_field_is_written_and_used_as_an_index(tmp_path):
    root = project(tmp_path / "proj", {"batch_info.py": BATCH_INFO, "manager.py": MANAGER})
    found = findings(root, "manager.py")
    # The element write copies the value with a blocking copy; the element used as an
    # index is a 0-dim device tensor read back as a Python integer.
    assert (17, "SL302") in found
    assert (18, "SL208") in found


def test_a_two_dimensional_field_row_is_a_slice(tmp_path):
    manager = MANAGER.replace("torch.zeros(max_bs, dtype=torch.int32)", "torch.zeros(max_bs, 4, dtype=torch.int32)")
    root = project(tmp_path / "proj", {"batch_info.py": BATCH_INFO, "manager.py": manager})
    found = findings(root, "manager.py")
    # A row of a 2-D field is a slice (a fill kernel), and as an index it is a tensor index
    # scattering a value of unknown kind: nothing at default settings.
    assert [f for f in found if f[0] in (17, 18)] == []


def test_a_field_whose_shape_the_file_does_not_show_is_not_guessed(tmp_path):
    manager = MANAGER.replace(
        "weight_indices=torch.zeros(max_bs, dtype=torch.int32)", "weight_indices=pool_indices(max_bs)"
    ).replace("import torch\n", "import torch\n\nfrom pools import pool_indices\n", 1)
    root = project(tmp_path / "proj", {"batch_info.py": BATCH_INFO, "manager.py": manager})
    assert [f for f in findings(root, "manager.py") if f[1] in ("SL302", "SL208")] == []


def test_fields_of_the_same_name_with_different_shapes_give_no_shape(tmp_path):
    manager = MANAGER + (
        "\n\n"
        "    def other_info(n, device):\n"
        "        return AdapterBatchInfo(bs=n, weight_indices=torch.zeros(n, 2, dtype=torch.int32, device=device),\n"
        "                                ranks=torch.zeros(n, device=device))\n"
    )
    root = project(tmp_path / "proj", {"batch_info.py": BATCH_INFO, "manager.py": manager})
    assert [f for f in findings(root, "manager.py") if f[0] in (17, 18)] == []
