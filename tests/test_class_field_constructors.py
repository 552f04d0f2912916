"""A metadata object built through a class held in a field (`self.metadata_cls(x=...)`, a
builder generic over its metadata class): its keyword arguments are the fields of whatever
class that is, as those of `Cls(x=...)` are (synclint/repo.py `_CLASS_NAME_SUFFIXES`). A
backend in another file reads a field back from the builder's result."""

from __future__ import annotations

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
