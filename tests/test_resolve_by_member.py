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

