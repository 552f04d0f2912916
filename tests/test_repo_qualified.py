"""A method's parameters are given what the calls that reach it through their class pass
(`self.pool.free(x)` with `self.pool = DevicePool(...)`), not what every method of its name
is passed (`HostPool.free`, `MirrorPool.free`): synclint/repo/solver.py `_QualifiedCalls`."""

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


ROPE = """\
    import torch


    def rope_index(grid: torch.Tensor, merge: int):
        sizes = grid.cpu().tolist()
        return [s // merge for s in sizes]


    class Processor:
        def positions(self, grid_rows):
            return rope_index(torch.tensor(grid_rows), 2)
    """

VISION = """\
    import torch
    from torch import nn


    class VisionModel(nn.Module):
        def rope_index(self, grid: torch.Tensor, merge: int):
            return grid.prod(-1) // merge

        def forward(self, pixels: torch.Tensor, grid: torch.Tensor):
            return self.rope_index(grid.to(pixels.device), 2)
    """


def test_a_call_through_its_class_gives_nothing_to_a_function_of_the_same_name(tmp_path):
    # `self.rope_index(grid)` runs the model's own method, never the processor's module-level
    # `rope_index`: the function is given the host grid alone, and its `.cpu()` is no sync.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/rope.py": ROPE, "pkg/vision.py": VISION})
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "VisionModel.rope_index", "grid")][0] == repo.DEVICE
    assert facts.values[("p", "rope_index", "grid")][0] == repo.HOST
    assert [v for v in _violations(root, "pkg/rope.py") if v.code == "SL202"] == []
    # The look-alike: a call by name on an object of unknown class may run either, and gives both.
    vision = VISION + """

    def embed(model, pixels: torch.Tensor, grid: torch.Tensor):
        return model.rope_index(grid.to(pixels.device), 2)
    """
    root = project(tmp_path / "by_name", {"pkg/__init__.py": "", "pkg/rope.py": ROPE, "pkg/vision.py": vision})
    assert repo.build(root, use_cache=False).values[("p", "rope_index", "grid")][0] & repo.DEVICE


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


# --- a method reads its own parameters as the calls through its class give them ---------------

# Five unrelated classes define `all_gather()`; calls whose object's class nothing says
# (`comm.all_gather(...)`) pass host data, by position, to every method of the name.
COMM = """\
    import torch


    class HostComm:
        def all_gather(self, x):
            return [x]


    class ObjectComm:
        def all_gather(self, obj):
            return [obj]


    class ListComm:
        def all_gather(self, values):
            return list(values)


    class ShmComm:
        def all_gather(self, t):
            return t.clone()


    def gather_counts(comm, counts: list[int]):
        return comm.all_gather(torch.tensor(counts))
    """

SYNC_INFO = """\
    from dataclasses import dataclass

    import torch


    @dataclass
    class StepSyncInfo:
        num_tokens: int
        gathered: torch.Tensor = None

        def local_tensor(self, like: torch.Tensor) -> torch.Tensor:
            return torch.full((like.shape[1],), self.num_tokens, dtype=like.dtype, device=like.device)

        def all_gather(self, out: torch.Tensor, group):
            torch.distributed.all_gather_into_tensor(out.flatten(), self.local_tensor(out), group=group)
            self.gathered = out


    @dataclass
    class HostSyncInfo:
        num_tokens: int
        gathered: torch.Tensor = None

        def all_gather(self, out: torch.Tensor, group):
            torch.distributed.all_gather_into_tensor(out.flatten(), out[0], group=group)
            self.gathered = out


    @dataclass
    class OrphanSyncInfo:
        gathered: torch.Tensor = None

        def all_gather(self, out: torch.Tensor, group):
            self.gathered = out
    """

SCHEDULER_STEP = """\
    import torch

    from pkg.sync_info import HostSyncInfo, OrphanSyncInfo, StepSyncInfo


    def sync_step(num_tokens: int, group, device):
        info = StepSyncInfo(num_tokens=num_tokens)
        info.all_gather(torch.empty((4, 2), dtype=torch.int64, device=device), group)
        modes = info.gathered[:, 1].tolist()
        return max(modes)


    def sync_step_on_host(num_tokens: int, cpu_group):
        info = HostSyncInfo(num_tokens=num_tokens)
        info.all_gather(torch.empty((4, 2), dtype=torch.int64), cpu_group)
        return max(info.gathered[:, 1].tolist())


    def read_orphan(info: OrphanSyncInfo):
        return info.gathered.tolist()
    """


def _sync_project(tmp_path: Path) -> Path:
    return project(tmp_path, {"pkg/__init__.py": "", "pkg/comm.py": COMM, "pkg/sync_info.py": SYNC_INFO, "pkg/sched.py": SCHEDULER_STEP})


def test_a_method_reads_its_parameter_as_the_calls_through_its_class_pass_it(tmp_path):
    # `info.all_gather(device_buffer, group)` with `info = StepSyncInfo(...)`: inside the method
    # `out` is that device buffer, so the field it is stored in is a device field, although
    # every call of a method named `all_gather` (the name of five unrelated classes) passes
    # host data too.
    root = _sync_project(tmp_path)
    assert "all_gather" in repo.build(root, use_cache=False).crowded
    found = [(v.location.row, v.code, v.confidence) for v in _violations(root, "pkg/sched.py", min_confidence=Confidence.LOW)]
    assert (9, "SL202", Confidence.MEDIUM) in found
    # The host look-alike (its only call through the class passes a host buffer) stays silent,
    # and so does a method of the crowded name no call reaches through its class (what the
    # calls of the name pass says nothing of it): unknown, not a device tensor.
    assert not [f for f in found if f[0] == 16]
    assert [f for f in found if f[0] == 20 and f[2] is not Confidence.LOW] == []
    facts = repo.build(root, use_cache=False)
    assert facts.field_fact("StepSyncInfo", "gathered")[0] == repo.DEVICE
    assert facts.field_fact("HostSyncInfo", "gathered")[0] == repo.HOST
    # The calls through their classes give the orphan nothing, and the call by name passes
    # its host buffer by position to methods that name that position differently (`x`,
    # `obj`, `values`, `t`, `out`): nothing either. Never a device field: at most what the
    # field's name holds in the repository, device and host, which is low.
    orphan = facts.field_fact("OrphanSyncInfo", "gathered")
    assert orphan is None or not orphan[0] & repo.DEVICE or orphan[0] & repo.AMBIGUOUS and not orphan[0] & repo.RESOLVABLE


def test_a_method_of_a_name_few_classes_define_still_reads_the_calls_of_its_name(tmp_path):
    # Without the crowding classes a call of unknown class (`syncer.all_gather(buf, g)`)
    # reaches every `all_gather()`: the orphan's parameter is given the device buffer it passes.
    sched = SCHEDULER_STEP + """

    def relay(syncer, group, device):
        syncer.all_gather(torch.zeros((4, 2), device=device), group)
    """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/sync_info.py": SYNC_INFO, "pkg/sched.py": sched})
    facts = repo.build(root, use_cache=False)
    assert "all_gather" not in facts.crowded
    assert facts.values[("p", "OrphanSyncInfo.all_gather", "out")][0] == repo.DEVICE


def test_own_parameters_screen_as_the_analysis_reads_them(tmp_path):
    root = _sync_project(tmp_path)
    for name in ("pkg/sched.py", "pkg/sync_info.py"):
        for confidence in (Confidence.MEDIUM, Confidence.LOW):
            screened = [(v.location.row, v.code, v.confidence) for v in _violations(root, name, min_confidence=confidence)]
            whole = [(v.location.row, v.code, v.confidence) for v in _violations(root, name, min_confidence=confidence, screen=False)]
            assert screened == whole


# --- the result of a method called through an object of a known class ------------------------

SLOT_POOLS = """\
    from typing import Optional

    import torch


    class SlotPool:
        def __init__(self, size: int, device):
            self.free_slots = torch.arange(1, size + 1, dtype=torch.int64, device=device)

        def alloc(self, need: int) -> Optional[torch.Tensor]:
            if need > len(self.free_slots):
                return None
            select = self.free_slots[:need]
            self.free_slots = self.free_slots[need:]
            return select

        def free(self, index: torch.Tensor):
            self.free_slots = torch.cat((self.free_slots, index))


    class HostSlotPool:
        def __init__(self, size: int):
            self.free_slots = list(range(size))

        def alloc(self, need: int) -> Optional[list[int]]:
            if need > len(self.free_slots):
                return None
            select = self.free_slots[:need]
            self.free_slots = self.free_slots[need:]
            return select
    """

REQUEST = """\
    from typing import Optional

    import torch


    class Request:
        def __init__(self, rid: str):
            self.rid = rid
            self.track_slots: Optional[torch.Tensor] = None
            self.cache_rows: Optional[torch.Tensor] = None
    """

REQUEST_POOL = """\
    import torch

    from pkg.pools import HostSlotPool, SlotPool
    from pkg.request import Request


    class RequestPool:
        def __init__(self, size: int, device):
            self.slot_pool = SlotPool(size, device)
            self.host_pool = HostSlotPool(size)

        def alloc(self, reqs: list[Request]) -> list[list[int]]:
            rows = []
            for req in reqs:
                if req.track_slots is None:
                    req.track_slots = self.slot_pool.alloc(2)
                rows.append(req.track_slots.tolist())
            return rows

        def alloc_rows(self, n: int) -> list[int]:
            rows = self.slot_pool.alloc(n)
            return rows.tolist()

        def alloc_host_rows(self, reqs: list[Request]) -> int:
            picked = self.host_pool.alloc(len(reqs))
            return int(picked[0]) if picked else -1
    """


def test_a_method_called_through_its_class_gives_what_that_method_returns(tmp_path):
    # `req.track_slots = self.slot_pool.alloc(2)` with `self.slot_pool = SlotPool(...)`: the
    # field holds what `SlotPool.alloc` returns (a slice of its device free list), so reading it
    # back in the loop is a sync; so is the result used in place (`rows.tolist()`).
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": SLOT_POOLS, "pkg/request.py": REQUEST,
                              "pkg/manager.py": REQUEST_POOL})
    found = [(v.location.row, v.code, v.confidence) for v in _violations(root, "pkg/manager.py")]
    assert found == [(17, "SL202", Confidence.MEDIUM), (22, "SL202", Confidence.MEDIUM)]
    facts = repo.build(root, use_cache=False)
    assert facts.field_fact("Request", "track_slots")[0] == repo.DEVICE
    assert "the class of the object is `SlotPool`" in facts.method_result("SlotPool", "alloc")[1]
    # The host pool's `alloc()` (a slice of a list) is no device tensor; a class that has no
    # such method says nothing.
    host = facts.method_result("HostSlotPool", "alloc")
    assert host is None or not host[0] & repo.DEVICE
    assert facts.method_result("Request", "alloc") is None
    # Screened or not, the same findings.
    whole = [(v.location.row, v.code, v.confidence) for v in _violations(root, "pkg/manager.py", screen=False)]
    assert whole == found


def test_an_override_that_returns_host_data_leaves_the_result_unplaced(tmp_path):
    # A call through a `SlotPool` may run a subclass's override: where that one returns host
    # tensors (a pool kept in host memory), the call's result is not a device tensor.
    pools = SLOT_POOLS + """

    class HostMemorySlotPool(SlotPool):
        def alloc(self, need: int) -> Optional[torch.Tensor]:
            return torch.arange(need, dtype=torch.int64)
    """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": pools, "pkg/request.py": REQUEST,
                              "pkg/manager.py": REQUEST_POOL})
    assert _violations(root, "pkg/manager.py") == []
    assert repo.build(root, use_cache=False).method_result("SlotPool", "alloc") is None


TRANSLATOR = """\
    import torch


    class PageTranslator:
        def __init__(self, num_pages: int, device):
            self.page_pos = torch.arange(num_pages, device=device)

        def translate(self, loc: torch.Tensor) -> torch.Tensor:
            return self.page_pos[loc // 16] * 16 + loc % 16


    class SlotRegistry:
        def __init__(self):
            self._slots = {}

        def register(self, name: str, slot):
            self._slots[name] = slot

        def get_slot(self, name: str):
            return self._slots[name]
    """

BACKEND_META = """\
    from dataclasses import dataclass

    import torch

    from pkg.translate import PageTranslator, SlotRegistry


    @dataclass
    class Meta:
        page_table: torch.Tensor = None


    class Backend:
        def __init__(self, req_to_token: torch.Tensor, device):
            self.req_to_token = req_to_token.to(device)
            self.translator = PageTranslator(64, device)
            self.registry = SlotRegistry()

        def plan(self, rows: torch.Tensor) -> Meta:
            meta = Meta(page_table=self.req_to_token[rows])
            meta.page_table = self.translator.translate(meta.page_table)
            return meta

        def load(self, meta: Meta, bs: int):
            meta.page_table = self.registry.get_slot("page_table").slice_for(bs)

        def offload(self, host_loc_cpu: torch.Tensor):
            return self.translator.translate(host_loc_cpu)

        def longest(self, meta: Meta) -> int:
            return int(meta.page_table.max())
    """


def test_a_method_result_made_from_its_arguments_or_undeclared_does_not_flow_through_its_class(tmp_path):
    # `translate(loc)` returns what each call passes it (a device page table here, a host copy
    # in `offload`): one target for all its calls would make the page table "device or host",
    # so a call through the class does not read it. Nor does one of a method not declared to
    # return a tensor (`get_slot()`: a slot object out of a dict, a Python value to the index):
    # `.slice_for()` on it must not carry that into the field.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/translate.py": TRANSLATOR, "pkg/backend.py": BACKEND_META})
    facts = repo.build(root, use_cache=False)
    assert facts.field_fact("Meta", "page_table")[0] == repo.DEVICE
    assert facts.method_result("PageTranslator", "translate") is None
    assert facts.method_result("SlotRegistry", "get_slot") is None
    assert [(v.location.row, v.code) for v in _violations(root, "pkg/backend.py")] == [(31, "SL204")]


STATE_POOLS = """\
    import torch


    class StatePool:
        def translate_indices(self, indices: torch.Tensor) -> torch.Tensor:
            # Slots are physical in a static pool: the identity.
            return indices


    class VirtualStatePool(StatePool):
        def __init__(self, num_slots: int, device):
            self.physical = torch.arange(num_slots, dtype=torch.int32, device=device)

        def translate_indices(self, indices: torch.Tensor) -> torch.Tensor:
            return self.physical[indices].to(torch.int32)


    class HostStatePool:
        def __init__(self, num_slots: int):
            self.physical = torch.arange(num_slots, dtype=torch.int32)

        def translate_indices(self, indices: torch.Tensor) -> torch.Tensor:
            return indices.to(torch.int64)
    """

TRACKERS = """\
    import torch


    class StateTracker:
        def track(self, cache_indices: torch.Tensor, lens: torch.Tensor):
            cache_indices = cache_indices.cpu()
            return cache_indices[lens > 0]


    class OffloadStager:
        def stage(self, slots: torch.Tensor):
            return slots.cpu().numpy()
    """

STATE_BACKEND = """\
    import torch

    from pkg.pools import HostStatePool, StatePool
    from pkg.trackers import OffloadStager, StateTracker


    class StateBackend:
        def __init__(self, runner, device):
            self.pool: StatePool = runner.state_pool
            self.host_pool: HostStatePool = runner.host_state_pool
            self.tracker = StateTracker()
            self.stager = OffloadStager()
            self.device = device

        def _translate(self, indices: torch.Tensor) -> torch.Tensor:
            return self.pool.translate_indices(indices)

        def prepare(self, slots: torch.Tensor, lens: torch.Tensor, host_slots: torch.Tensor):
            indices = self._translate(slots.to(self.device, non_blocking=True))
            self.tracker.track(indices, lens)
            staged = self.host_pool.translate_indices(torch.tensor(host_slots.tolist()))
            self.stager.stage(staged)
    """


def test_a_method_that_returns_its_parameter_gives_each_call_its_own_argument(tmp_path):
    # `pool.translate_indices(x)` returns `x` itself in the static pool (the virtual pool's
    # override reads a device table): the call's result is where this call's argument is, a
    # device tensor here, so the tracker's `.cpu()` of it syncs. The host pool's pass-through
    # is given a host tensor: what the stager copies is already on the host.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": STATE_POOLS, "pkg/trackers.py": TRACKERS,
                              "pkg/backend.py": STATE_BACKEND})
    facts = repo.build(root, use_cache=False)
    assert facts.get(("p", "StateTracker.track", "cache_indices"))[0] == repo.DEVICE
    assert facts.get(("p", "OffloadStager.stage", "slots"))[0] != repo.DEVICE
    found = [(v.location.row, v.code) for v in _violations(root, "pkg/trackers.py")]
    assert found == [(6, "SL202")]


def test_a_pass_through_argument_from_the_host_gives_no_device_parameter(tmp_path):
    # The look-alike: every call passes host data through the identity; the parameter it
    # fills is no device tensor, and nothing is reported.
    backend = STATE_BACKEND.replace("slots.to(self.device, non_blocking=True)", "slots.cpu()")
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/pools.py": STATE_POOLS, "pkg/trackers.py": TRACKERS,
                              "pkg/backend.py": backend})
    facts = repo.build(root, use_cache=False)
    found = facts.get(("p", "StateTracker.track", "cache_indices"))
    assert found is None or found[0] != repo.DEVICE
    assert _violations(root, "pkg/trackers.py") == []


LENGTH_UTILS = """\
    import torch


    def rank_local_lens(seq_lens: torch.Tensor, world_size: int = 1, rank: int = 0) -> torch.Tensor:
        lens = seq_lens.to(torch.int32)
        base = lens // world_size
        rem = (lens - base * world_size - rank).clamp(0, 1)
        return base + rem
    """

LENGTH_BUILDER = """\
    import torch

    from pkg.lens import rank_local_lens


    class MetadataBuilder:
        def __init__(self, world_size: int, rank: int, device):
            self.world_size = world_size
            self.rank = rank
            self.device = device

        def build_host(self, seq_lens_cpu: torch.Tensor):
            seq_lens_cpu = rank_local_lens(seq_lens_cpu, self.world_size, self.rank)
            return seq_lens_cpu.tolist()

        def build_device(self, query_start_loc: torch.Tensor, seq_lens_cpu: torch.Tensor):
            seq_lens = seq_lens_cpu.to(self.device, non_blocking=True)
            local = rank_local_lens(seq_lens, self.world_size, self.rank)
            return local.tolist()
    """


def test_a_helper_made_of_its_arguments_alone_gives_each_call_its_own_place(tmp_path):
    # `rank_local_lens()` returns arithmetic of its arguments only: called with host lengths
    # its result is on the host (`.tolist()` is free), with device lengths on the device
    # (`.tolist()` copies back and waits), whatever other calls pass it.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/lens.py": LENGTH_UTILS, "pkg/builder.py": LENGTH_BUILDER})
    facts = repo.build(root, use_cache=False)
    assert facts.passes("rank_local_lens") == ((2, "rank"), (0, "seq_lens"), (1, "world_size"))
    found = [(v.location.row, v.code) for v in _violations(root, "pkg/builder.py")]
    assert found == [(19, "SL202")]


PLANS = """\
    from typing import NamedTuple

    import torch


    class DecodePlan(NamedTuple):
        lens: torch.Tensor

        @staticmethod
        def generate(seq_lens: torch.Tensor, pool: torch.Tensor) -> "DecodePlan":
            return DecodePlan(seq_lens + pool[0])


    class PrefillPlan(NamedTuple):
        lens: torch.Tensor

        @staticmethod
        def generate(seq_lens: torch.Tensor, pool: torch.Tensor) -> "PrefillPlan":
            seq_lens_cpu = seq_lens.cpu()
            return PrefillPlan(seq_lens_cpu)
    """

BUILDER = """\
    import torch

    from pkg.plans import DecodePlan, PrefillPlan


    def make_plan(is_prefill: bool, seq_lens: torch.Tensor, pool: torch.Tensor, seq_lens_cpu):
        if is_prefill:
            planner = torch.tensor(seq_lens_cpu, dtype=torch.int64)
            return PrefillPlan.generate(seq_lens=planner, pool=pool)
        return DecodePlan.generate(seq_lens=seq_lens.to(torch.int64), pool=pool)
    """


def test_a_static_method_called_through_its_class_is_given_that_call_alone(tmp_path):
    # `PrefillPlan.generate(...)` and `DecodePlan.generate(...)` run two methods of one name:
    # each is given its own call's arguments, so the prefill plan's `.cpu()` of the host
    # lengths is no sync.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/plans.py": PLANS, "pkg/builder.py": BUILDER})
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "PrefillPlan.generate", "seq_lens")][0] == repo.HOST
    assert facts.values[("p", "DecodePlan.generate", "seq_lens")][0] == repo.DEVICE
    assert [v for v in _violations(root, "pkg/plans.py", min_confidence=Confidence.LOW) if v.code == "SL202"] == []
    # The look-alike: the prefill plan built from the device lengths syncs.
    builder = BUILDER.replace("seq_lens=planner", "seq_lens=seq_lens.to(torch.int64)")
    root = project(tmp_path / "device", {"pkg/__init__.py": "", "pkg/plans.py": PLANS, "pkg/builder.py": builder})
    assert [v.location.row for v in _violations(root, "pkg/plans.py") if v.code == "SL202"] == [19]


LAYERS = """\
    import torch
    from torch import nn


    class Base(nn.Module):
        def scale(self, lens: torch.Tensor, factor: int):
            return lens.tolist()


    class Child(Base):
        def forward(self, x: torch.Tensor):
            lens = torch.arange(4)
            return Base.scale(self, lens, 2)


    class Other(Base):
        def forward(self, x: torch.Tensor):
            return super().scale(torch.arange(4), 2)
    """


def test_a_method_called_through_its_base_with_its_object_first_is_given_the_rest(tmp_path):
    # `Base.scale(self, lens, 2)`: `self` is the object, `lens` the first parameter.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": LAYERS})
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "Base.scale", "lens")][0] == repo.HOST
    assert ("p", "Base.scale", "factor") not in facts.values or not facts.values[("p", "Base.scale", "factor")][0] & repo.DEVICE
    # The look-alike: a device tensor given through the base reaches the parameter.
    layers = LAYERS.replace("lens = torch.arange(4)", "lens = torch.arange(4, device=x.device)")
    root = project(tmp_path / "device", {"pkg/__init__.py": "", "pkg/layers.py": layers})
    assert repo.build(root, use_cache=False).values[("p", "Base.scale", "lens")][0] & repo.DEVICE


AUDIO = """\
    import torch
    from torch import nn


    class AudioEncoder(nn.Module):
        @staticmethod
        def downsampled_length(lengths: torch.Tensor) -> torch.Tensor:
            def conv_out_len(length: torch.Tensor) -> torch.Tensor:
                return (length - 1) // 2 + 1

            return conv_out_len(conv_out_len(lengths))

        @staticmethod
        def num_audio_tokens(raw_len: int) -> int:
            lengths = torch.tensor(raw_len, dtype=torch.long)
            return int(AudioEncoder.downsampled_length(lengths).item())

        def forward(self, features: torch.Tensor, seq_lengths: torch.Tensor):
            seq_lengths = seq_lengths.to(features.device)
            lens = self.downsampled_length(seq_lengths)
            max_len = int(lens.max().item())
            return features[:, :max_len]
    """


def test_a_helper_returning_its_argument_through_a_nested_function_gives_each_call_its_own(tmp_path):
    # `downsampled_length` returns its argument through `conv_out_len`, a nested function of
    # one expression: the forward's call passes device lengths (read back, reported), the
    # token count's call a host tensor (no sync), though the method is given both.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/audio.py": AUDIO})
    found = _violations(root, "pkg/audio.py")
    assert [(v.location.row, v.code, v.confidence) for v in found] == [(21, "SL204", Confidence.MEDIUM)]


RESAMPLER = """\
    import torch


    class Resampler(torch.nn.Module):
        def forward(self, x, grid_thw):
            def placeholder(x, grid_thw):
                grid_thw_cpu = grid_thw.cpu().numpy()
                offsets = torch.arange(int(grid_thw_cpu.prod()), device=x.device)
                return torch.index_select(x, 0, offsets)

            return placeholder(x, grid_thw)


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.resampler = Resampler()

        def forward(self, x: torch.Tensor, items):
            grid_thw = torch.cat([item.grid for item in items])
            return self.resampler(x, grid_thw)
    """


def test_a_nested_functions_readback_of_its_parameter_says_nothing_of_the_enclosing_name(tmp_path):
    # `grid_thw` of the outer forward is given a host tensor (`torch.cat` of host items); the
    # nested `placeholder` reads its own `grid_thw` back into `grid_thw_cpu`. That readback is
    # evidence about the nested parameter, not the outer name: the nested parameter is given
    # the outer one, host data, and the `.cpu()` copies nothing.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/resampler.py": RESAMPLER})
    assert [(v.location.row, v.code) for v in _violations(root, "pkg/resampler.py")] == []


def test_a_nested_functions_readback_of_a_device_argument_is_still_reported(tmp_path):
    # The same nested function given a device tensor: the readback is a sync.
    text = RESAMPLER.replace("torch.cat([item.grid for item in items])", "torch.cat([item.grid for item in items]).to(x.device)")
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/resampler.py": text})
    assert (7, "SL202") in [(v.location.row, v.code) for v in _violations(root, "pkg/resampler.py")]


CONTEXT = """\
    class RuntimeContext:
        def __init__(self):
            self.published = set()

        def is_published(self, name: str) -> bool:
            return name in self.published


    _CONTEXT = RuntimeContext()


    def get_context() -> RuntimeContext:
        return _CONTEXT
    """

STATE_POOL = """\
    import torch


    class StatePool:
        def __init__(self, size: int, device):
            self.context = torch.zeros(size, 8, dtype=torch.int64, device=device)

        def get_context(self, indices: torch.Tensor) -> torch.Tensor:
            return self.context[indices]

        def last_token(self, row: int):
            return self.get_context(torch.tensor([row], device=self.context.device))
    """

LOGGER = """\
    from pkg.context import get_context


    def redaction_enabled() -> bool:
        return not get_context().is_published("exec")


    def pool_context(pool, rows):
        ctx = pool.get_context(rows)
        return ctx
    """


def test_a_function_called_by_name_is_not_a_method_of_the_same_name(tmp_path):
    # `get_context()` runs the imported module function, never `StatePool.get_context`, whose
    # declared tensor result is known by `StatePool.get_context` alone: `not get_context()...`
    # reads a Python object.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/context.py": CONTEXT, "pkg/pool.py": STATE_POOL,
                              "pkg/logger.py": LOGGER})
    assert _violations(root, "pkg/logger.py", min_confidence=Confidence.LOW) == []
    facts = repo.build(root, use_cache=False)
    assert facts.values[("r", "StatePool.get_context")][0] == repo.DEVICE
    assert ("r", "get_context") not in facts.values or not facts.values[("r", "get_context")][0] & repo.DEVICE
