"""A device the code itself chooses: the CPU on one branch (a gloo group instead of NCCL, a
CPU fallback) leaves the tensor's place open, and its readbacks are `low`; the accelerator
wherever one is available (`"cuda" if torch.cuda.is_available() else "cpu"`) is a device,
in the file and through the repository index alike."""

from __future__ import annotations

from pathlib import Path

from tests.index_projects import findings, project

BUFFERS = """\
    import torch


    class Exchange:
        flags: torch.Tensor
        counts: torch.Tensor

        def __init__(self, group, use_nccl: bool):
            if use_nccl:
                self.device = group.device
            else:
                self.device = "cpu"
            self.flags = torch.zeros(8, dtype=torch.int64, device=self.device)
            local = "cuda" if torch.cuda.is_available() else "cpu"
            self.counts = torch.zeros(8, dtype=torch.int64, device=local)
    """

READER = """\
    from comm.buffers import Exchange


    def negotiate(exchange: Exchange):
        ready = exchange.flags.max().item()
        total = exchange.counts.sum().item()
        return ready, total
    """


def test_a_buffer_on_a_device_the_code_sets_to_the_cpu_is_not_reported_by_default_but_one_on_the_available_accelerator_is(tmp_path: Path):
    root = project(tmp_path / "proj", {"comm/__init__.py": "", "comm/buffers.py": BUFFERS, "comm/reader.py": READER})
    shown = {(name, row, code) for name, row, code in findings(root, "comm/reader.py")}
    assert ("reader.py", 6, "SL201") in shown, shown  # `counts`: on the accelerator
    assert ("reader.py", 5, "SL201") not in shown, shown  # `flags`: the CPU with a gloo group
    low = {(name, row, code) for name, row, code in findings(root, "comm/reader.py", min_confidence="low")}
    assert ("reader.py", 5, "SL201") in low, low
