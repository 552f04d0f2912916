"""A class that holds a host tensor and its copy on the device, whatever its fields are
called (`self.cpu = torch.zeros(..., pin_memory=True)`, `self.gpu = torch.zeros_like(self.cpu,
device=device)`): the copy is read as the device tensor it is where the object's class is
known (synclint/repo/summary.py `_device_copies`). Real-shaped multi-file projects: a staging
buffer defined in one file and read by a model runner in another, with the look-alikes that
stay unplaced."""

from __future__ import annotations

from index_projects import _store, findings, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo

# The shape of an engine's staging buffer: a pinned host tensor, its device twin, a numpy view.
BUFFERS = """\
    import numpy as np
    import torch


    class StagedBuffer:
        \"\"\"A host tensor and its device twin, filled on the host and copied each step.\"\"\"

        def __init__(self, *size: int, dtype: torch.dtype, device: torch.device, pin_memory: bool = True):
            self.cpu = torch.zeros(*size, dtype=dtype, device="cpu", pin_memory=pin_memory)
            self.gpu = torch.zeros_like(self.cpu, device=device)
            self.np: np.ndarray
            self.np = self.cpu.numpy()

        def copy_to_gpu(self, n: int) -> torch.Tensor:
            return self.gpu[:n].copy_(self.cpu[:n], non_blocking=True)
    """

RUNNER = """\
    import torch

    from pkg.buffers import StagedBuffer


    class ModelRunner:
        def __init__(self, max_tokens: int, device: torch.device):
            self.input_ids = StagedBuffer(max_tokens, dtype=torch.int32, device=device)
            self.positions = StagedBuffer(max_tokens, dtype=torch.int64, device=device)

        def execute_model(self, num_tokens: int):
            self.input_ids.copy_to_gpu(num_tokens)
            ids = self.input_ids.gpu[:num_tokens]
            longest = ids.max().item()
            host_last = self.positions.cpu[:num_tokens].max().item()
            return longest, host_last, self.positions.np[:num_tokens].sum()
    """

# Look-alikes: a twin built on the host, a cast that keeps its place, a copy moved by
# `.to(device)` and by `.cuda()`.
VARIANTS = """\
    import torch


    class MovedBuffer:
        def __init__(self, n: int, device: torch.device):
            self.host = torch.zeros(n, dtype=torch.int64, pin_memory=True)
            self.on_device = self.host.to(device, non_blocking=True)


    class CudaBuffer:
        def __init__(self, n: int):
            self.staging = torch.zeros(n, dtype=torch.int64, device="cpu")
            self.data = self.staging.cuda()


    class HostTwin:
        def __init__(self, n: int):
            self.a = torch.zeros(n, dtype=torch.int64)
            self.b = torch.zeros_like(self.a)


    class CastTwin:
        def __init__(self, n: int):
            self.a = torch.zeros(n, dtype=torch.int64)
            self.b = self.a.to(torch.float32)


    def step(moved: MovedBuffer, cuda: CudaBuffer, twin: HostTwin, cast: CastTwin):
        a = moved.on_device.sum().item()
        b = cuda.data.max().item()
        c = twin.b.sum().item()
        d = cast.b.sum().item()
        return a, b, c, d
    """


def test_the_device_twin_of_a_host_buffer_is_read_as_a_device_tensor(tmp_path):
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/buffers.py": BUFFERS, "pkg/runner.py": RUNNER})
    # Line 14 syncs on the device twin; line 15 reads the host buffer (no sync), line 16 a
    # numpy view.
    assert findings(root, "pkg/runner.py") == [("runner.py", 14, "SL201")]
    facts = repo.build(root, use_cache=False)
    assert facts.typed_fact("StagedBuffer", "gpu")[0] == repo.DEVICE
    assert facts.typed_fact("StagedBuffer", "cpu")[0] == repo.HOST


def test_moves_by_to_and_cuda_make_twins_and_host_copies_and_casts_do_not(tmp_path):
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/variants.py": VARIANTS})
    assert findings(root, "pkg/variants.py") == [("variants.py", 29, "SL201"), ("variants.py", 30, "SL201")]
    # The host twin and the cast hold host data: nothing at any confidence.
    assert findings(root, "pkg/variants.py", min_confidence="low") == [("variants.py", 29, "SL201"), ("variants.py", 30, "SL201")]


def test_a_twin_also_given_the_host_buffer_itself_stays_unplaced(tmp_path):
    # Without a separate device (`self.gpu = self.cpu` where the buffer lives on the host),
    # the twin holds host data too: a read of it says nothing of where it is.
    buffers = BUFFERS.replace(
        "            self.gpu = torch.zeros_like(self.cpu, device=device)\n",
        "            if device == \"cpu\":\n"
        "                self.gpu = self.cpu\n"
        "            else:\n"
        "                self.gpu = torch.zeros_like(self.cpu, device=device)\n",
    )
    assert buffers != BUFFERS
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/buffers.py": buffers, "pkg/runner.py": RUNNER})
    assert findings(root, "pkg/runner.py") == []


def test_a_source_also_given_device_data_is_no_host_buffer(tmp_path):
    # `self.cpu` is also given a device tensor in another method: the class is no host
    # buffer with a twin, so the copy is not declared a tensor by it.
    buffers = BUFFERS.replace(
        "        def copy_to_gpu(self, n: int) -> torch.Tensor:",
        "        def swap(self) -> None:\n"
        "            self.cpu = self.gpu\n\n"
        "        def copy_to_gpu(self, n: int) -> torch.Tensor:",
    )
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/buffers.py": buffers, "pkg/runner.py": RUNNER})
    facts = repo.build(root, use_cache=False)
    found = facts.typed_fact("StagedBuffer", "gpu")
    assert found is None or found[0] != repo.DEVICE
