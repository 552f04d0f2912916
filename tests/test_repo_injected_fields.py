"""A field assigned a parameter the method declares a class (`self.prepare_finalize =
prepare_finalize` with `prepare_finalize: PrepareFinalize`, the usual way an object is handed
to the one that uses it) holds that class (synclint/repo/classes.py `_method_info`): calls through it
reach the class's method and the overrides of its subclasses, which are given what these
calls pass, although many unrelated classes define a method of that name. Real-shaped
multi-file projects with look-alikes that stay at low confidence."""

from __future__ import annotations

from index_projects import _store, findings, lint, project  # noqa: F401 - _store is an autouse fixture


PROJECT = {
    "pkg/__init__.py": "",
    "pkg/kernel.py": """\
        import torch


        class PrepareFinalize:
            def prepare(self, a1: torch.Tensor, topk_ids: torch.Tensor):
                raise NotImplementedError


        class NaivePrepareFinalize(PrepareFinalize):
            def prepare(self, a1: torch.Tensor, topk_ids: torch.Tensor):
                hits = topk_ids == 0
                rows = hits.nonzero()
                return a1[rows]


        class ModularKernel:
            def __init__(self, prepare_finalize: PrepareFinalize):
                self.prepare_finalize = prepare_finalize

            def run(self, hidden: torch.Tensor, topk_ids: torch.Tensor):
                return self.prepare_finalize.prepare(hidden, topk_ids)
        """,
    "pkg/layer.py": """\
        import torch
        from torch import nn

        from pkg.kernel import ModularKernel


        class MoELayer(nn.Module):
            def __init__(self, kernel: ModularKernel):
                super().__init__()
                self.kernel = kernel

            def forward(self, x: torch.Tensor):
                ids = torch.argmax(x, dim=-1, keepdim=True)
                return self.kernel.run(x, ids)
        """,
    # Four unrelated families that also define `prepare(a1, topk_ids)` and are given host
    # tensors: what the calls of the name pass says nothing of one class's method.
    "pkg/tools.py": """\
        import torch


        class ToolA:
            def prepare(self, a1, topk_ids):
                return a1, topk_ids


        class ToolB:
            def prepare(self, a1, topk_ids):
                return a1, topk_ids


        class ToolC:
            def prepare(self, a1, topk_ids):
                return a1, topk_ids


        class ToolD:
            def prepare(self, a1, topk_ids):
                return a1, topk_ids


        def offline(n: int):
            ids = torch.zeros(n, dtype=torch.int64)
            ToolA().prepare(ids, ids)
            ToolB().prepare(ids, ids)
            ToolC().prepare(ids, ids)
            ToolD().prepare(ids, ids)
        """,
}


def test_an_override_reached_through_an_injected_field_is_given_what_the_caller_passes(tmp_path):
    root = project(tmp_path / "proj", PROJECT)
    found = findings(root, "pkg/kernel.py")
    assert ("kernel.py", 12, "SL402") in found  # `hits.nonzero()` of the step's device top-k ids
    (finding,) = [v for v in lint(root, "pkg/kernel.py") if v.location.row == 12]
    assert finding.tier == "hot"


def test_an_unannotated_constructor_parameter_says_nothing(tmp_path):
    files = dict(PROJECT)
    files["pkg/kernel.py"] = files["pkg/kernel.py"].replace(
        "def __init__(self, prepare_finalize: PrepareFinalize):", "def __init__(self, prepare_finalize):"
    )
    root = project(tmp_path / "proj", files)
    assert not [f for f in findings(root, "pkg/kernel.py") if f[1] == 12]


def test_a_parameter_rebound_before_it_is_stored_says_nothing(tmp_path):
    # `prepare_finalize = prepare_finalize or ...`: the field may hold something else.
    files = dict(PROJECT)
    files["pkg/kernel.py"] = files["pkg/kernel.py"].replace(
        "                self.prepare_finalize = prepare_finalize\n",
        "                prepare_finalize = prepare_finalize or make_default()\n"
        "                self.prepare_finalize = prepare_finalize\n",
    ) + "\n\ndef make_default():\n    return None\n"
    root = project(tmp_path / "proj", files)
    assert not [f for f in findings(root, "pkg/kernel.py") if f[1] == 12]


def test_the_unrelated_families_stay_quiet(tmp_path):
    root = project(tmp_path / "proj", PROJECT)
    assert not findings(root, "pkg/tools.py", min_confidence="low")


def test_a_constructor_elsewhere_in_the_class_still_says_the_class(tmp_path):
    # `self.prepare_finalize = NaivePrepareFinalize()` in another method: the class that
    # builds it is what the field holds; the declared parameter does not make it ambiguous.
    files = dict(PROJECT)
    files["pkg/kernel.py"] = files["pkg/kernel.py"].replace(
        "            def run(self, hidden: torch.Tensor, topk_ids: torch.Tensor):\n",
        "            def reset(self):\n"
        "                self.prepare_finalize = NaivePrepareFinalize()\n\n"
        "            def run(self, hidden: torch.Tensor, topk_ids: torch.Tensor):\n",
    )
    root = project(tmp_path / "proj", files)
    assert ("kernel.py", 12, "SL402") in findings(root, "pkg/kernel.py")
