"""An override that leaves a parameter unannotated (`def build(self, common_prefix_len,
common_meta)`) reads it as the nearest base's method declares it (`common_meta:
CommonMeta`), as a type checker infers it (synclint/screen/places.py
`inherited_parameter_class`, synclint/repo/facts.py `_Family.keys`): its fields are placed through
that class, in the index (a field of another class given `common_meta.query_start_loc`) and in
the lint (a read of `common_meta.x` in the override itself). Real-shaped multi-file projects
with look-alikes that stay at low confidence."""

from __future__ import annotations

from index_projects import _store, findings, lint, project  # noqa: F401 - _store is an autouse fixture

from synclint.violation import Confidence


# The step's common metadata (device tensors, built by the runner), a builder interface that
# declares it, and a backend whose builder overrides `build` without annotations. The name
# `query_start_loc` also holds a host tensor in an unrelated class, so by the name alone the
# field is neither.
PROJECT = {
    "pkg/__init__.py": "",
    "pkg/common.py": """\
        from dataclasses import dataclass

        import torch


        @dataclass
        class CommonMeta:
            query_start_loc: torch.Tensor
            seq_lens: torch.Tensor
            num_reqs: int


        class MetaBuilder:
            def build(self, common_prefix_len: int, common_meta: CommonMeta, fast_build: bool = False):
                raise NotImplementedError


        class HostPlan:
            def __init__(self, n: int):
                self.query_start_loc = torch.zeros(n + 1, dtype=torch.int32)
                self.seq_lens = torch.zeros(n, dtype=torch.int32)
        """,
    "pkg/runner.py": """\
        import torch

        from pkg.common import CommonMeta


        class Runner:
            def __init__(self, builder, device):
                self.builder = builder
                self.device = device

            def execute_model(self, n: int):
                meta = CommonMeta(
                    query_start_loc=torch.zeros(n + 1, dtype=torch.int32, device=self.device),
                    seq_lens=torch.zeros(n, dtype=torch.int32, device=self.device),
                    num_reqs=n,
                )
                return self.builder.build(0, meta)
        """,
    "pkg/backend.py": """\
        from dataclasses import dataclass

        import torch

        from pkg.common import MetaBuilder


        @dataclass
        class MyMeta:
            query_start_loc: torch.Tensor
            seq_lens: torch.Tensor
            num_reqs: int = 0


        class MyBuilder(MetaBuilder):
            def build(self, common_prefix_len, common_meta, fast_build=False):
                cm = common_meta
                longest = int(cm.seq_lens.max())
                return MyMeta(query_start_loc=cm.query_start_loc, seq_lens=cm.seq_lens, num_reqs=longest)

            def describe(self, plan):
                return plan.query_start_loc.tolist()


        class MyImpl:
            def forward(self, x: torch.Tensor, meta: MyMeta):
                starts = meta.query_start_loc.tolist()
                return x[: starts[-1]]
        """,
}


def test_a_field_given_through_an_unannotated_override_parameter_is_a_device_field(tmp_path):
    root = project(tmp_path / "proj", PROJECT)
    found = findings(root, "pkg/backend.py")
    # MyMeta.query_start_loc is given `common_meta.query_start_loc`, a CommonMeta field that
    # holds device tensors only: the step's `.tolist()` is found at default settings.
    assert ("backend.py", 27, "SL202") in found
    (finding,) = [v for v in lint(root, "pkg/backend.py") if v.location.row == 27]
    assert "MyMeta.query_start_loc is assigned device tensors" in " ".join(finding.provenance)


def test_a_read_of_the_parameter_in_the_override_itself_is_placed_through_the_base(tmp_path):
    root = project(tmp_path / "proj", PROJECT)
    (finding,) = [v for v in lint(root, "pkg/backend.py", min_confidence="low", include_cold=True) if v.location.row == 18]
    assert finding.code == "SL204"
    assert finding.confidence == Confidence.MEDIUM
    assert "CommonMeta" in " ".join(finding.provenance)


def test_a_parameter_no_base_declares_stays_as_the_name_says(tmp_path):
    # `describe(self, plan)`: no base declares `plan`, so `plan.query_start_loc` is the name's
    # field (device in one class, host in another): never a default finding.
    root = project(tmp_path / "proj", PROJECT)
    assert not [f for f in findings(root, "pkg/backend.py") if f[1] == 22]


def test_without_the_base_declaration_the_override_says_nothing(tmp_path):
    files = dict(PROJECT)
    files["pkg/common.py"] = files["pkg/common.py"].replace(
        "def build(self, common_prefix_len: int, common_meta: CommonMeta, fast_build: bool = False):",
        "def build(self, common_prefix_len, common_meta, fast_build=False):",
    )
    root = project(tmp_path / "proj", files)
    found = findings(root, "pkg/backend.py")
    assert not [f for f in found if f[1] in (18, 22, 27)]


def test_a_base_that_declares_a_host_class_places_it_on_the_host(tmp_path):
    # The base declares the parameter a `HostPlan` (host tensors only): the override's reads
    # of it are host data, also at low confidence.
    files = dict(PROJECT)
    files["pkg/common.py"] = files["pkg/common.py"].replace(
        "common_meta: CommonMeta, fast_build", "common_meta: HostPlan, fast_build"
    )
    root = project(tmp_path / "proj", files)
    low = findings(root, "pkg/backend.py", min_confidence="low", include_cold=True)
    assert not [f for f in low if f[1] == 18]


def test_a_generic_base_declares_the_parameter_too(tmp_path):
    # `class MyBuilder(MetaBuilder[MyMeta])` with `class MetaBuilder(Generic[M])`: the
    # subscripted base is the interface whose declarations the override inherits.
    files = dict(PROJECT)
    files["pkg/common.py"] = files["pkg/common.py"].replace(
        "from dataclasses import dataclass\n", "from dataclasses import dataclass\nfrom typing import Generic, TypeVar\n"
    ).replace("class MetaBuilder:", "M = TypeVar(\"M\")\n\n\nclass MetaBuilder(Generic[M]):")
    files["pkg/backend.py"] = files["pkg/backend.py"].replace("class MyBuilder(MetaBuilder):", "class MyBuilder(MetaBuilder[MyMeta]):")
    root = project(tmp_path / "proj", files)
    assert ("backend.py", 27, "SL202") in findings(root, "pkg/backend.py")
