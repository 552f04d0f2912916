"""A name the repository gives a device tensor in one place and other values elsewhere is
low; a member only `torch.Tensor` has, used on it, says it is the tensor there (medium:
synclint/analysis/sources.py `resolve_by_method`, synclint/apis/tensor_members.py), on
real-shaped projects: a method tensors lack (`fuser.validate(...)`) says nothing, and a
field the repository also gives host tensors is no device field at all."""

from __future__ import annotations

from index_projects import _store, lint, project  # noqa: F401 - _store is an autouse fixture

SLOTS = {
    "meta.py": """\
        from dataclasses import dataclass
        import torch


        @dataclass
        class StepMeta:
            lengths: torch.Tensor


        def build(n, device):
            return StepMeta(lengths=torch.zeros(n, dtype=torch.int64, device=device))
        """,
    "request.py": """\
        class Request:
            def __init__(self, prompt):
                self.lengths = 0
                self.prompt = prompt
        """,
    "use.py": """\
        def longest(batch):
            return int(batch.lengths.amax().item())


        def checked(batch):
            return bool(batch.lengths.validate())
        """,
}


def _rows(root, name, **settings):
    return {(v.location.row, v.code): v.confidence.name.lower() for v in lint(root, name, **settings)}


def test_a_member_only_tensors_have_resolves_the_name(tmp_path):
    root = project(tmp_path / "proj", SLOTS)
    found = _rows(root, "use.py", min_confidence="low")
    # `.amax()` is a tensor's: no int has it, so `batch.lengths` is the device tensor there.
    assert found.get((2, "SL204")) == "medium"
    # `.validate()` is no tensor method: `lengths` is some other object there, nothing is said.
    assert (6, "SL203") not in found or found[(6, "SL203")] == "low"


def test_a_name_also_given_host_tensors_stays_low_whatever_member_is_used(tmp_path):
    files = dict(SLOTS)
    files["request.py"] = SLOTS["request.py"].replace("        class Request:", "        import torch\n\n\n        class Request:").replace("self.lengths = 0", "self.lengths = torch.zeros(4, dtype=torch.int64)")
    root = project(tmp_path / "proj", files)
    found = _rows(root, "use.py", min_confidence="low")
    # A host tensor has `.amax()` too: the name stays low.
    assert found.get((2, "SL204")) == "low"
    assert (2, "SL204") not in _rows(root, "use.py")



MERGE = {
    "models/encoder.py": """\
        import torch


        def merge_vision(text: torch.Tensor, vision: torch.Tensor, is_multimodal: torch.Tensor | None):
            if is_multimodal is None or not bool(is_multimodal.any().item()):
                return text
            mask = is_multimodal.to(device=vision.device, non_blocking=True)
            return torch.where(mask.unsqueeze(-1), vision, text)
        """,
    "runner/gather.py": """\
        import numpy as np
        import torch

        from models.encoder import merge_vision


        def gather(text, vision, n: int):
            is_mm = np.zeros(n, dtype=bool)
            return merge_vision(text, vision, is_mm)


        def gather_on_device(text, vision, n: int):
            is_mm = torch.zeros(n, dtype=torch.bool, device="cuda")
            return merge_vision(text, vision, is_mm)
        """,
}


def test_a_move_to_the_device_does_not_say_the_name_is_the_device_tensor(tmp_path):
    root = project(tmp_path / "proj", MERGE)
    # Moving `is_multimodal` to the device is what code does with host data: the name stays
    # low (the runner also gives it an array), and the readback before it is not reported.
    found = _rows(root, "models/encoder.py", min_confidence="low")
    assert found.get((5, "SL201")) == "low"
    assert (5, "SL201") not in _rows(root, "models/encoder.py")
    # A dtype conversion is a tensor's use all the same: there the name is the tensor.
    files = dict(MERGE)
    files["models/encoder.py"] = MERGE["models/encoder.py"].replace(
        "is_multimodal.to(device=vision.device, non_blocking=True)", "is_multimodal.to(torch.bool)")
    root = project(tmp_path / "dtype", files)
    assert _rows(root, "models/encoder.py").get((5, "SL201")) == "medium"
