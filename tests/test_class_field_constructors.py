"""A metadata object built through a class held in a field (`self.metadata_cls(x=...)`, a
builder generic over its metadata class): its keyword arguments are the fields of whatever
class that is, as those of `Cls(x=...)` are (synclint/repo/declarations.py `_CLASS_NAME_SUFFIXES`). A
backend in another file reads a field back from the builder's result."""

from __future__ import annotations

import textwrap

import pytest

from index_projects import _store, findings, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo

METADATA = """\
    from dataclasses import dataclass
    from typing import Optional

    import torch


    @dataclass
    class CommonMetadata:
        query_start_loc: torch.Tensor
        seq_lens: torch.Tensor

        def computed_tokens(self) -> torch.Tensor:
            return self.seq_lens - (self.query_start_loc[1:] - self.query_start_loc[:-1])


    @dataclass
    class StateSpaceMetadata:
        num_prefills: int
        has_initial_states_p: Optional[torch.Tensor] = None
    """

BUILDER = """\
    import torch

    from pkg.metadata import CommonMetadata, StateSpaceMetadata


    class StateSpaceBuilder:
        metadata_cls = StateSpaceMetadata

        def build_common(self, common: CommonMetadata, num_reqs: int, num_prefills: int):
            has_initial_states_p = None
            if num_prefills > 0:
                computed = common.computed_tokens()
                has_initial_states_p = computed[num_reqs - num_prefills : num_reqs] > 0
            return self.metadata_cls(num_prefills=num_prefills, has_initial_states_p=has_initial_states_p)
    """

BACKEND = """\
    import torch

    from pkg.builder import StateSpaceBuilder


    class Mamba2Builder(StateSpaceBuilder):
        def build(self, common, num_reqs: int, num_prefills: int):
            meta = self.build_common(common, num_reqs, num_prefills)
            prep_initial_states = False
            if meta.num_prefills > 0:
                prep_initial_states = (
                    torch.any(meta.has_initial_states_p).item()
                    if meta.has_initial_states_p is not None
                    else False
                )
            return meta, prep_initial_states
    """

RUNNER = """\
    import torch

    from pkg.metadata import CommonMetadata


    def common_metadata(query_start_loc_cpu, seq_lens_cpu):
        return CommonMetadata(
            query_start_loc=query_start_loc_cpu.to("cuda", non_blocking=True),
            seq_lens=seq_lens_cpu.to("cuda", non_blocking=True),
        )
    """

ITEM_ROW = 12


def _files(builder: str = BUILDER) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/metadata.py": METADATA, "pkg/builder.py": builder, "pkg/backend.py": BACKEND, "pkg/runner.py": RUNNER}


def test_the_keywords_of_a_class_held_in_a_field_are_its_fields(tmp_path):
    root = project(tmp_path, _files())
    assert ("backend.py", ITEM_ROW, "SL201") in findings(root, "pkg/backend.py")
    mask, reason = repo.build(root, use_cache=False).values[("a", "has_initial_states_p")]
    assert mask == repo.DEVICE
    assert "builder.py" in reason


@pytest.mark.parametrize(
    "call",
    [
        # A factory function, not a class: its keywords are its parameters, not fields.
        "self.metadata_factory(num_prefills=num_prefills, has_initial_states_p=has_initial_states_p)",
        # A method of the builder.
        "self.finish(num_prefills=num_prefills, has_initial_states_p=has_initial_states_p)",
    ],
)
def test_other_calls_through_a_field_give_no_fields(tmp_path, call):
    builder = BUILDER.replace("self.metadata_cls(num_prefills=num_prefills, has_initial_states_p=has_initial_states_p)", call)
    root = project(tmp_path, _files(builder))
    assert ("backend.py", ITEM_ROW, "SL201") not in findings(root, "pkg/backend.py")
    assert ("a", "has_initial_states_p") not in repo.build(root, use_cache=False).values


# A request's state kept by the front end: its `__init__` declares `top_p` a number, and a
# class method builds it from a request whose options are of a class in another file. The
# batch of another file holds a device tensor in a field of the same name.
STATE_FILES = {
    "pkg/__init__.py": "",
    "pkg/batch.py": """\
        import torch


        class InputBatch:
            def __init__(self, n: int, device):
                self.top_p = torch.empty(n, device=device)

            def fill(self, values):
                self.top_p = torch.tensor(values, device=self.top_p.device)
        """,
    "pkg/sampling.py": """\
        from dataclasses import dataclass

        import torch


        @dataclass
        class SamplingMetadata:
            top_p: torch.Tensor | None
            temperature: torch.Tensor | None
        """,
    "pkg/params.py": """\
        class SamplingParams:
            top_p: float = 1.0


        class EngineRequest:
            request_id: str
            sampling_params: SamplingParams | None
        """,
    "pkg/state.py": """\
        from pkg.params import EngineRequest


        class RequestState:
            def __init__(self, request_id: str, top_p: float | None = None):
                self.request_id = request_id
                self.top_p = top_p

            @classmethod
            def from_new_request(cls, request: EngineRequest) -> "RequestState":
                if sampling_params := request.sampling_params:
                    top_p = sampling_params.top_p
                else:
                    top_p = None
                return cls(request_id=request.request_id, top_p=top_p)


        def trace(req_state: RequestState, attributes: dict):
            if req_state.top_p:
                attributes["top_p"] = req_state.top_p
        """,
}


def test_a_constructor_keyword_goes_through_the_classes_own_init(tmp_path):
    # `__init__` says what its parameter becomes: `self.top_p = top_p` of a `float | None`.
    root = project(tmp_path / "a", STATE_FILES)
    assert ("state.py", 19, "SL203") not in findings(root, "pkg/state.py")
    # Without an `__init__` of its own (a dataclass), the keyword is the field's value.
    files = {name: textwrap.dedent(text) for name, text in STATE_FILES.items()}
    before = files["pkg/state.py"]
    files["pkg/state.py"] = before.replace(
        "    def __init__(self, request_id: str, top_p: float | None = None):\n"
        "        self.request_id = request_id\n"
        "        self.top_p = top_p\n",
        "    request_id = None\n"
        "    top_p = None\n",
    )
    assert files["pkg/state.py"] != before
    # (also where another class of the same name has an `__init__` without that parameter)
    files["pkg/worker_state.py"] = "class RequestState:\n    def __init__(self, n: int):\n        self.n = n\n"
    # `sampling_params` is `request.sampling_params`, of the class `EngineRequest` (another
    # file) declares: its `top_p` is a float, whatever a batch's field of that name holds.
    root = project(tmp_path / "declared", files)
    assert ("state.py", 18, "SL203") not in findings(root, "pkg/state.py")
    # The options' class no longer declares `top_p`: what `sampling_params.top_p` holds is
    # then what the repository gives any field of that name (the batch's device tensor).
    files["pkg/params.py"] = files["pkg/params.py"].replace("top_p: float = 1.0", "temperature: float = 1.0")
    root = project(tmp_path / "b", files)
    assert ("state.py", 18, "SL203") in findings(root, "pkg/state.py")
