"""A method's parameters are given what the calls that reach it through their class pass
(`self.pool.free(x)` with `self.pool = DevicePool(...)`), not what every method of its name
is passed (`HostPool.free`, `MirrorPool.free`): synclint/repo.py `_QualifiedCalls`."""

from __future__ import annotations

import textwrap
from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence

POOLS = """\
    import torch


    class DevicePool:
        def __init__(self, n: int, device):
            self.free_slots = torch.arange(n, device=device)

        def free(self, free_index: torch.Tensor):
            pages = torch.unique(free_index // 16)
            self.free_slots = torch.cat((self.free_slots, pages))


    class HostPool:
        def __init__(self, n: int):
            self.free_slots = torch.arange(n)

        def free(self, free_index: torch.Tensor):
            pages = torch.unique(free_index // 16)
            self.free_slots = torch.cat((self.free_slots, pages))


    class MirrorPool:
        def free(self, free_index: torch.Tensor):
            return torch.unique(free_index)
    """

CACHE = """\
    import torch

    from pkg.pools import DevicePool, HostPool


    class Cache:
        def __init__(self, device):
            self.pool = DevicePool(64, device)
            self.host_pool = HostPool(64)

        def evict(self, indices: torch.Tensor, host_indices: torch.Tensor):
            self.pool.free(indices.to(self.pool.free_slots.device))
            self.host_pool.free(torch.tensor(host_indices.tolist()))

        def release(self, req_to_token: torch.Tensor, rows):
            self.pool.free(req_to_token[rows])
    """


def _violations(root: Path, name: str, **settings):
    return runner.lint_paths([root / name], Settings(**settings), jobs=1, use_cache=False).violations


def test_each_method_is_given_what_the_calls_through_its_class_pass(tmp_path):
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": POOLS, "pkg/cache.py": CACHE})
    found = _violations(root, "pkg/pools.py", min_confidence=Confidence.LOW)
    by_row = {v.location.row: v for v in found}
    assert by_row[9].confidence is Confidence.MEDIUM  # DevicePool.free: device indices
    assert 18 not in by_row  # HostPool.free: host indices only
    assert by_row[24].confidence is Confidence.LOW  # MirrorPool.free: no call says; the name is mixed
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "DevicePool.free", "free_index")][0] == repo.DEVICE
    assert facts.values[("p", "HostPool.free", "free_index")][0] == repo.HOST


def test_a_call_of_unknown_class_reaches_every_method_of_the_name(tmp_path):
    # `pool.free(x)` with nothing saying what `pool` is: both methods may run, both are given x.
    cache = CACHE + """

    def drop(pool, idx_cpu: torch.Tensor):
        pool.free(idx_cpu)
    """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": POOLS, "pkg/cache.py": cache})
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "DevicePool.free", "free_index")][0] != repo.DEVICE


def test_a_module_forward_whose_callers_pass_host_data_is_not_assumed_on_the_device(tmp_path):
    # `self.merger(x, meta.grid_thw_cpu)`: the merger's forward is given the host mirror, so its
    # `int(grid_h)` reads host data; the same forward of a module nothing calls is assumed on
    # the device (the inputs of forward() live where the module runs).
    vision = """\
        import torch
        from torch import nn


        class PatchMerger(nn.Module):
            def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
                t, h, w = grid_thw[0]
                return x.reshape(int(h), int(w), -1)


        class OrphanMerger(nn.Module):
            def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
                t, h, w = grid_thw[0]
                return x.reshape(int(h), int(w), -1)


        class VisionModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.merger = PatchMerger()

            def forward(self, x: torch.Tensor, grid_thw_cpu: torch.Tensor):
                return self.merger(x, grid_thw_cpu)
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/vision.py": vision})
    rows = sorted({v.location.row for v in _violations(root, "pkg/vision.py")})
    assert rows == [14]


def _pools(n: int) -> str:
    """`n` unrelated pool classes with a `free()`, the last a host pool."""
    classes = [
        f"""
        class Pool{i}:
            def free(self, indices: torch.Tensor):
                self.slots = torch.cat((self.slots, indices))
        """
        for i in range(n - 1)
    ]
    classes.append("""
        class PagedHostPool:
            def free(self, indices: torch.Tensor):
                return indices.cpu().tolist()
        """)
    return "import torch\n" + "".join(textwrap.dedent(c) for c in classes)


SCHEDULER = """\
    import torch


    def release(allocator, rows: torch.Tensor, req_to_token: torch.Tensor):
        allocator.free(req_to_token[rows].cuda())
    """


def test_calls_of_a_crowded_method_name_say_nothing_of_one_class(tmp_path):
    # `allocator.free(device_indices)` with the allocator's class unknown: where many unrelated
    # classes define `free()`, the host pool's `free()` is not taken to be given device indices.
    root = project(tmp_path / "crowded", {"pkg/__init__.py": "", "pkg/pools.py": _pools(5), "pkg/sched.py": SCHEDULER})
    found = [v for v in _violations(root, "pkg/pools.py") if v.location.row >= 18]
    assert found == []
    assert "free" in repo.build(root, use_cache=False).crowded
    # Two classes: the calls of the name still reach both, and say device.
    root = project(tmp_path / "few", {"pkg/__init__.py": "", "pkg/pools.py": _pools(2), "pkg/sched.py": SCHEDULER})
    assert [v.code for v in _violations(root, "pkg/pools.py") if v.location.row >= 6] == ["SL202"]


def test_a_submodule_built_from_a_registry_of_classes_is_given_what_its_caller_passes(tmp_path):
    # `self.adapter = _ADAPTERS.get(kind)(...)`: the adapter is one of the registry's classes,
    # so its forward is given `meta.grid_thw_cpu` (host data) by the only call.
    vision = """\
        import torch
        from torch import nn


        class ShuffleAdapter(nn.Module):
            def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
                t, h, w = grid_thw[0]
                return x.reshape(int(h), int(w), -1)


        class MergerAdapter(nn.Module):
            def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
                return x


        _ADAPTERS: dict[str, type[nn.Module]] = {"shuffle": ShuffleAdapter, "merger": MergerAdapter}


        class VisionModel(nn.Module):
            def __init__(self, kind: str):
                super().__init__()
                adapter_cls = _ADAPTERS.get(kind)
                self.adapter = adapter_cls()

            def forward(self, x: torch.Tensor, meta):
                return self.adapter(x, meta.grid_thw_cpu)
        """
    root = project(tmp_path / "registry", {"pkg/__init__.py": "", "pkg/vision.py": vision})
    assert [v.location.row for v in _violations(root, "pkg/vision.py")] == []
    # Built directly (no registry), the class is unknown: the forward's inputs are assumed on
    # the device, as before.
    direct = vision.replace("adapter_cls = _ADAPTERS.get(kind)", "adapter_cls = kind")
    root = project(tmp_path / "direct", {"pkg/__init__.py": "", "pkg/vision.py": direct})
    assert sorted({v.location.row for v in _violations(root, "pkg/vision.py")}) == [8]
