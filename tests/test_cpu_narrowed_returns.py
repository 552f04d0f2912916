"""A helper that hands back its argument only where that argument is a CPU tensor (`if
t.device.type == "cpu": return t`) returns host tensors, whatever its callers give it: a
field its result is assigned to also holds host data (synclint/screen/places.py
`cpu_narrowed_returns`, read by the repository index), on a real-shaped project."""

from __future__ import annotations

from index_projects import _store, lint, project  # noqa: F401 - _store is an autouse fixture

FILES = {
    "srv/utils.py": """\
        import torch


        def async_d2h(tensor: torch.Tensor) -> torch.Tensor:
            if tensor.device.type == "cpu":
                return tensor
            host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
            host.copy_(tensor, non_blocking=True)
            return host


        def to_device(tensor: torch.Tensor) -> torch.Tensor:
            if tensor.is_cuda:
                return tensor
            return tensor.cuda()
        """,
    "srv/output.py": """\
        from dataclasses import dataclass

        import torch

        from srv.utils import async_d2h, to_device


        @dataclass
        class LogitsOutput:
            hidden_states: torch.Tensor
            next_token_ids: torch.Tensor


        def capture(h: torch.Tensor, ids: torch.Tensor) -> LogitsOutput:
            return LogitsOutput(hidden_states=h.cuda(), next_token_ids=ids.cuda())


        class Result:
            def __init__(self, out: LogitsOutput):
                self.out = out

            def copy_to_cpu(self):
                self.out.hidden_states = async_d2h(self.out.hidden_states)
                self.out.next_token_ids = to_device(self.out.next_token_ids)
        """,
    "srv/process.py": """\
        from srv.output import LogitsOutput


        def process(out: LogitsOutput):
            return out.hidden_states.tolist(), out.next_token_ids.tolist()
        """,
}


def _found(root):
    return {(v.location.row, v.location.column, v.code): v.confidence.name.lower() for v in lint(root, "srv/process.py", min_confidence="low")}


def test_a_result_returned_only_on_the_cpu_branch_is_host_data(tmp_path):
    found = _found(project(tmp_path / "proj", FILES))
    # `hidden_states` is a device tensor and, after `copy_to_cpu`, a pinned host copy: not a
    # device field (nothing at default); `next_token_ids` is moved to the device both ways.
    assert [c for (row, col, code), c in found.items() if col < 30] in ([], ["low"])
    assert any(col >= 30 and c == "medium" for (row, col, code), c in found.items())


def test_without_the_cpu_test_the_argument_passes_through(tmp_path):
    files = dict(FILES)
    files["srv/utils.py"] = FILES["srv/utils.py"].replace('if tensor.device.type == "cpu":', "if tensor.numel() == 0:")
    found = _found(project(tmp_path / "proj", files))
    # Now `async_d2h` may hand back the device tensor it was given.
    assert [c for (row, col, code), c in found.items() if col < 30] == ["medium"]


def test_the_helper_imported_under_another_name_returns_the_same(tmp_path):
    # `from srv.utils import async_d2h as _async_d2h`, as the overlap scheduler imports it: the
    # call reads what the repository's `async_d2h` returns, so the field is again not a
    # device field. (Before, the alias was looked up as a function of its own name, found
    # nothing, and the pinned host copy counted for nothing.)
    files = dict(FILES)
    files["srv/output.py"] = (
        FILES["srv/output.py"]
        .replace("from srv.utils import async_d2h, to_device", "from srv.utils import async_d2h as _async_d2h, to_device")
        .replace("= async_d2h(", "= _async_d2h(")
    )
    found = _found(project(tmp_path / "proj", files))
    assert [c for (row, col, code), c in found.items() if col < 30] in ([], ["low"])
