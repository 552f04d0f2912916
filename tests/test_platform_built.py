"""A class the repository builds only on another platform's branch is that platform's code:
its methods' findings are cold for the default CUDA target (synclint/repo.py
`_CallGraphTiers._built_elsewhere`, synclint/analysis/guards.py `class_uses`)."""

from __future__ import annotations

from index_projects import _store, lint, project  # noqa: F401 - _store is an autouse fixture

from synclint.analysis.tier import Tier

PREPARE = """\
    import torch


    class BatchedPrepare:
        def prepare(self, hidden: torch.Tensor, topk_ids: torch.Tensor, num_experts: int):
            local_ids = torch.arange(num_experts, device="cuda").view(-1, 1, 1)
            hits = (topk_ids.unsqueeze(0) == local_ids).any(dim=2)
            e_idx, t_idx = hits.nonzero(as_tuple=True)
            return e_idx, t_idx


    class NaivePrepare:
        def prepare(self, hidden: torch.Tensor, topk_ids: torch.Tensor, num_experts: int):
            mask = torch.ones(num_experts, dtype=torch.bool, device="cuda")
            return hidden[mask]


    class RegisteredPrepare:
        def prepare(self, hidden: torch.Tensor, topk_ids: torch.Tensor, num_experts: int):
            hits = torch.ones(num_experts, dtype=torch.bool, device="cuda")
            return hits.nonzero()
    """

FACTORY = """\
    from pkg.platforms import current_platform
    from pkg.prepare import BatchedPrepare, NaivePrepare, RegisteredPrepare

    BACKENDS = {"registered": RegisteredPrepare}


    def make_prepare(config):
        if current_platform.is_xpu() and config.backend == "batched":
            return BatchedPrepare()
        if config.backend in BACKENDS and current_platform.is_xpu():
            return BACKENDS[config.backend]()
        return NaivePrepare()
    """

PLATFORMS = """\
    class Platform:
        def is_xpu(self) -> bool:
            return False


    current_platform = Platform()
    """


def _project(tmp_path, factory=FACTORY):
    return project(tmp_path, {"pkg/__init__.py": "", "pkg/prepare.py": PREPARE, "pkg/factory.py": factory,
                              "pkg/platforms.py": PLATFORMS})


def test_a_class_built_only_on_another_platforms_branch_is_cold_for_cuda(tmp_path):
    root = _project(tmp_path)
    shown = [(v.location.row, v.code) for v in lint(root, "pkg/prepare.py")]
    # The XPU-only class's `nonzero` is not shown; the class built everywhere and the one a
    # registry holds (built wherever the registry is read) are.
    assert (8, "SL402") not in shown
    assert (15, "SL401") in shown and (21, "SL402") in shown
    (cold,) = [v for v in lint(root, "pkg/prepare.py", include_cold=True) if v.location.row == 8]
    assert cold.tier == Tier.COLD and "only on branches for other platforms (xpu)" in cold.tier_reason


def test_the_same_class_is_reported_for_its_own_platform(tmp_path):
    root = _project(tmp_path)
    shown = [(v.location.row, v.code) for v in lint(root, "pkg/prepare.py", target_platforms=("xpu",))]
    assert (8, "SL402") in shown


def test_a_class_also_built_outside_the_branch_stays_reported(tmp_path):
    factory = FACTORY.replace("    return NaivePrepare()\n", "    if config.fallback:\n        return BatchedPrepare()\n    return NaivePrepare()\n")
    root = _project(tmp_path, factory)
    assert (8, "SL402") in [(v.location.row, v.code) for v in lint(root, "pkg/prepare.py")]
