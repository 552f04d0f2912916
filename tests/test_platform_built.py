"""A class the repository builds only on another platform's branch is that platform's code:
its methods' findings are cold for the default CUDA target (synclint/repo/tiers.py
`_CallGraphTiers._built_elsewhere`, synclint/analysis/class_uses.py `class_uses`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

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


BACKEND = """\
    import torch


    class PagedBackend(BackendBase):
        def forward(self, query: torch.Tensor, seq_lens: torch.Tensor):
            hits = torch.ones(query.shape[0], dtype=torch.bool, device="cuda")
            return query[hits]

        @staticmethod
        def get_impl_cls():
            return PagedImpl


    class PagedImpl:
        def prefill(self, query: torch.Tensor):
            keep = torch.ones(query.shape[0], dtype=torch.bool, device="cuda")
            return query[keep]

        @classmethod
        def make(cls):
            return PagedImpl()


    class BackendBase:
        @classmethod
        def page_size(cls, spec):
            return spec.block_size * cls.bytes_per_token
    """

REGISTRY = """\
    import enum


    class Backend(enum.Enum):
        PAGED = "pkg.paged.PagedBackend"
        FLASH = "pkg.flash.FlashBackend"
    """

ROCM_SELECTOR = """\
    from pkg.registry import Backend


    def backends():
        return [Backend.PAGED.value, Backend.FLASH.value]
    """

CUDA_SELECTOR = """\
    from pkg.registry import Backend


    def backends():
        return [Backend.FLASH.value]
    """


def _registry_project(tmp_path, cuda=CUDA_SELECTOR, rocm=ROCM_SELECTOR):
    files = {"pkg/__init__.py": "", "pkg/paged.py": BACKEND, "pkg/registry.py": REGISTRY,
             "pkg/platforms/__init__.py": "", "pkg/platforms/rocm.py": rocm, "pkg/platforms/cuda.py": cuda}
    return project(tmp_path, files)


def test_a_class_named_by_a_registry_entry_only_another_platforms_file_uses_is_cold(tmp_path):
    root = _registry_project(tmp_path)
    assert 7 not in [v.location.row for v in lint(root, "pkg/paged.py")]
    (cold,) = [v for v in lint(root, "pkg/paged.py", include_cold=True) if v.location.row == 7]
    assert cold.tier == Tier.COLD and "(rocm)" in cold.tier_reason
    assert 7 in [v.location.row for v in lint(root, "pkg/paged.py", target_platforms=("rocm",))]


def test_the_implementation_a_backend_hands_out_goes_where_the_backend_goes(tmp_path):
    # `get_impl_cls()` returns the class: it is built where the backend is, here only on
    # ROCm. Its own `make()` builds it only where `make` is called. (Reading every use inside
    # a class as "wherever that class is used" was tried: a runner built inside a worker class
    # named by a configuration string went cold by the worker's subclasses for other
    # platforms. Only a class a method returns follows the method's class.)
    root = _registry_project(tmp_path)
    assert 17 not in [v.location.row for v in lint(root, "pkg/paged.py")]
    (cold,) = [v for v in lint(root, "pkg/paged.py", include_cold=True) if v.location.row == 17]
    assert cold.tier == Tier.COLD and "`PagedImpl`" in cold.tier_reason and "(rocm)" in cold.tier_reason
    assert 17 in [v.location.row for v in lint(root, "pkg/paged.py", target_platforms=("rocm",))]


PAGE_SIZE = """\
    from pkg.paged import PagedBackend, PagedImpl


    def page_size(config, spec):
        if config.cache_dtype == "paged":
            backend = PagedBackend
        else:
            backend = None
        return backend.page_size(spec)
    """


def _with_module(tmp_path, text):
    root = _registry_project(tmp_path)
    (root / "pkg" / "sizes.py").write_text(textwrap.dedent(text))
    return root


def test_a_question_asked_of_a_class_builds_nothing(tmp_path):
    # A class named to compute a page size (a class-level call, here through a local) is not
    # built there, nor is what it hands out.
    shown = [v.location.row for v in lint(_with_module(tmp_path, PAGE_SIZE), "pkg/paged.py")]
    assert 7 not in shown and 17 not in shown


def test_a_class_level_call_that_builds_or_hands_out_counts(tmp_path):
    # `get_impl_cls()` asked where every platform runs hands the implementation out there
    # (the backend itself is not built by it); `PagedImpl.make()` builds the implementation.
    asked = PAGE_SIZE.replace("backend.page_size(spec)", "backend.get_impl_cls()")
    shown = [v.location.row for v in lint(_with_module(tmp_path, asked), "pkg/paged.py")]
    assert 17 in shown and 7 not in shown
    made = PAGE_SIZE.replace("return backend.page_size(spec)", "return PagedImpl.make()")
    assert 17 in [v.location.row for v in lint(_with_module(tmp_path / "made", made), "pkg/paged.py")]


def test_a_class_held_and_passed_on_may_be_built_anywhere(tmp_path):
    # The local is read another way (handed to a function): whoever takes it may build it.
    passed = PAGE_SIZE.replace("return backend.page_size(spec)", "return make_layer(backend, spec)")
    shown = [v.location.row for v in lint(_with_module(tmp_path, passed), "pkg/paged.py")]
    assert 7 in shown and 17 in shown


def test_a_registry_entry_a_target_platform_uses_keeps_the_class_reported(tmp_path):
    root = _registry_project(tmp_path, cuda=CUDA_SELECTOR.replace("[Backend.FLASH.value]", "[Backend.FLASH.value, Backend.PAGED.value]"))
    shown = [v.location.row for v in lint(root, "pkg/paged.py")]
    assert 7 in shown and 17 in shown


def test_a_registry_entry_nothing_uses_may_be_chosen_by_name(tmp_path):
    # Only a configuration string picks the entry: nothing says which platform builds it.
    root = _registry_project(tmp_path, rocm=ROCM_SELECTOR.replace("Backend.PAGED.value, ", ""))
    assert 7 in [v.location.row for v in lint(root, "pkg/paged.py")]


def test_a_class_built_through_an_import_alias_is_built_there(tmp_path):
    factory = FACTORY.replace("    return NaivePrepare()\n", "    from pkg.prepare import BatchedPrepare as PrepareV1\n\n    return PrepareV1()\n")
    root = _project(tmp_path, factory)
    assert (8, "SL402") in [(v.location.row, v.code) for v in lint(root, "pkg/prepare.py")]


def test_a_class_a_platform_file_uses_as_a_value_may_be_built_anywhere(tmp_path):
    # `platforms/cpu.py` runs on the CPU, but the class it hands on as a value may be built by
    # whoever takes it: the XPU-only construction no longer decides.
    files = {"pkg/__init__.py": "", "pkg/prepare.py": PREPARE, "pkg/factory.py": FACTORY, "pkg/platforms.py": PLATFORMS,
             "pkg/backends/__init__.py": "", "pkg/backends/cpu.py": "from pkg.prepare import BatchedPrepare\n\nDEFAULT_PREPARE = BatchedPrepare\n"}
    root = project(tmp_path, files)
    assert (8, "SL402") in [(v.location.row, v.code) for v in lint(root, "pkg/prepare.py")]


def test_the_folders_above_the_project_say_nothing_of_its_platforms(tmp_path, monkeypatch):
    # The project lives under a folder whose name is a platform word: its files are not that
    # platform's, and the XPU-only class is still the only one that goes cold. (Linted from
    # the project's root, as the command line and the hook give the files.)
    root = _project(tmp_path / "npu")
    monkeypatch.chdir(root)
    shown = [(v.location.row, v.code) for v in lint(Path("."), "pkg/prepare.py")]
    assert (8, "SL402") not in shown
    assert (15, "SL401") in shown and (21, "SL402") in shown


PLANNER = """\
    import torch


    def plan_decode(kv_lens: torch.Tensor, kv_indptr: torch.Tensor):
        longest = int(kv_lens.max().item())
        return longest, kv_indptr


    def plan_shared(kv_lens: torch.Tensor):
        return int(kv_lens.sum().item())
    """

AITER_BACKEND = """\
    import torch
    from pkg.planner import plan_decode, plan_shared


    class AiterBackend:
        def init_forward_metadata(self, batch):
            kv_lens = torch.ones(4, device="cuda")
            plan_shared(kv_lens)
            return plan_decode(kv_lens, kv_lens)
    """

FLASH_BACKEND = """\
    import torch
    from pkg.planner import plan_shared


    class FlashBackend:
        def init_forward_metadata(self, batch):
            return plan_shared(torch.ones(4, device="cuda"))
    """

RUNNER = """\
    class Runner:
        def forward(self, batch):
            self.backend.init_forward_metadata(batch)
    """


def test_a_helper_called_only_from_another_platforms_file_is_that_platforms_code(tmp_path):
    # `plan_decode` is reached only from the ROCm library's backend (`aiter_backend.py`): not a
    # CUDA sync. `plan_shared` is reached from the CUDA backend too, and stays reported.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/planner.py": PLANNER, "pkg/aiter_backend.py": AITER_BACKEND,
                              "pkg/flash_backend.py": FLASH_BACKEND, "pkg/runner.py": RUNNER})
    assert [(v.location.row, v.code) for v in lint(root, "pkg/planner.py")] == [(10, "SL204")]
    (cold,) = [v for v in lint(root, "pkg/planner.py", include_cold=True) if v.location.row == 5]
    assert cold.tier == Tier.COLD
    assert sorted((v.location.row, v.code) for v in lint(root, "pkg/planner.py", target_platforms=("rocm",))) == [(5, "SL204"), (10, "SL204")]
