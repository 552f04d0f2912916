"""The repository index (synclint/repo/): values one file cannot place are placed by what
the rest of the repository gives them, on real-shaped multi-file projects, and a run on one
file (as a pre-commit hook passes only changed files) reads the rest of the repository."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from index_projects import BATCH_INFO, _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence


def findings(root: Path, *names: str, **settings) -> list[tuple[str, int, str, str]]:
    if "min_confidence" in settings:
        settings["min_confidence"] = Confidence[settings["min_confidence"].upper()]
    run = runner.lint_paths([root / n for n in names], Settings(**settings), jobs=1, use_cache=False)
    return [(Path(v.filename).name, v.location.row, v.code, v.confidence.label) for v in run.violations]


METADATA = {
    "batch_info.py": BATCH_INFO,
    "backend.py": """\
        class Backend:
            def plan(self, batch):
                longest = batch.lengths.max().item()
                return longest
        """,
}


def test_a_dataclass_built_in_one_file_is_placed_where_it_is_read(tmp_path):
    root = project(tmp_path / "proj", METADATA)
    assert ("backend.py", 3, "SL201", "medium") in findings(root, "backend.py")
    # Without the index the field is unknown: the finding is low and hidden.
    assert findings(root, "backend.py", repository_index=False) == []


def test_a_field_given_only_host_data_is_host(tmp_path):
    files = dict(METADATA)
    files["batch_info.py"] = METADATA["batch_info.py"].replace(".to(device, non_blocking=True)", "")
    root = project(tmp_path / "proj", files)
    assert findings(root, "backend.py", min_confidence="low") == []


def test_a_helper_in_another_file_returning_a_host_tensor(tmp_path):
    root = project(
        tmp_path / "proj",
        {
            "helpers.py": """\
                import torch


                def gather_lengths(requests):
                    host = [len(r) for r in requests]
                    return torch.cat([torch.tensor(host)])


                def device_lengths(requests, device) -> torch.Tensor:
                    return torch.tensor([len(r) for r in requests], device=device)
                """,
            "step.py": """\
                from helpers import device_lengths, gather_lengths


                def step(requests, device):
                    a = gather_lengths(requests)
                    b = device_lengths(requests, device)
                    return a.max().item(), b.max().item()
                """,
        },
    )
    found = findings(root, "step.py", min_confidence="low")
    # `a` is a host tensor (no finding at all), `b` a device tensor.
    assert [f[1:3] for f in found] == [(7, "SL201")]
    assert found[0][3] == "medium"


STREAMING_MASK = {
    "masks.py": """\
        import torch


        def chunk_mask(x_len: int, chunk_starts: list[int], left_window: int = 0) -> torch.Tensor:
            starts = torch.nn.functional.pad(torch.Tensor(chunk_starts).long(), (1, 0))
            positions = torch.arange(0, x_len).unsqueeze(0).expand(x_len, -1)
            rows = torch.arange(0, x_len).unsqueeze(-1)
            idx = (rows >= starts).sum(-1) - 1 - left_window
            return positions >= starts[idx.clamp(min=0)].unsqueeze(-1)


        def any_chunks(chunk_starts: list[int]) -> bool:
            return len(chunk_starts) > 0
        """,
    "encoder.py": """\
        import torch
        from torch import nn

        from masks import any_chunks, chunk_mask


        class StreamingEncoder(nn.Module):
            def forward(self, xs_pad: torch.Tensor, chunk_starts: list[int]):
                mask = chunk_mask(xs_pad.shape[1], chunk_starts).to(xs_pad.device)
                if any_chunks(chunk_starts):
                    xs_pad = xs_pad * 2
                return xs_pad, mask
        """,
}


def test_a_helper_returning_a_comparison_of_host_tensors_returns_a_host_tensor(tmp_path):
    # An audio encoder's streaming mask, built on the host by a helper in another file from a
    # legacy constructor, positions and a comparison: moving it is a blocking copy. The
    # helper that compares Python numbers returns a bool, and its truth test is no finding.
    root = project(tmp_path / "proj", STREAMING_MASK)
    assert [f[1:4] for f in findings(root, "encoder.py", min_confidence="low")] == [(9, "SL103", "medium")]


def test_a_device_parameter_through_two_calls(tmp_path):
    root = project(
        tmp_path / "proj",
        {
            "runner_mod.py": """\
                import torch
                from planner import prepare


                class Runner:
                    def __init__(self, device):
                        self.positions = torch.zeros(64, dtype=torch.int64, device=device)

                    def execute(self):
                        return prepare(self.positions)
                """,
            "planner.py": """\
                from kernels import plan


                def prepare(positions):
                    return plan(positions[:8])
                """,
            "kernels.py": """\
                import torch


                def plan(positions: torch.Tensor):
                    return int(positions.sum().item())
                """,
        },
    )
    assert ("kernels.py", 5, "SL204", "medium") in findings(root, "kernels.py")


def test_a_cycle_in_the_call_graph_terminates_and_places(tmp_path):
    root = project(
        tmp_path / "proj",
        {
            "a.py": """\
                import torch
                from b import pong


                def ping(x: torch.Tensor, n):
                    if n:
                        return pong(x, n - 1)
                    return x.max().item()


                def start(device):
                    return ping(torch.ones(4, device=device), 3)
                """,
            "b.py": """\
                from a import ping


                def pong(x, n):
                    return ping(x * 2, n)
                """,
        },
    )
    assert ("a.py", 8, "SL201", "medium") in findings(root, "a.py")


def test_a_host_mirror_beside_a_field_makes_it_the_device_copy(tmp_path):
    root = project(
        tmp_path / "proj",
        {
            "meta.py": """\
                from dataclasses import dataclass
                from typing import Optional
                import torch


                @dataclass
                class AttnMeta:
                    query_start: torch.Tensor
                    query_start_cpu: Optional[torch.Tensor] = None
                """,
            "attn.py": """\
                def plan(meta):
                    if meta.query_start_cpu is not None:
                        return meta.query_start_cpu[-1].item()
                    return meta.query_start[-1].item()
                """,
        },
    )
    found = findings(root, "attn.py", min_confidence="low")
    assert [f[1:] for f in found] == [(4, "SL201", "medium")]


def test_an_untyped_field_is_not_guessed_a_device_tensor(tmp_path):
    # `options` is only ever given a value the evaluator may place on the device, but nothing
    # declares it a tensor: the index does not make its truth test a finding.
    root = project(
        tmp_path / "proj",
        {
            "cfg.py": """\
                import torch


                class Holder:
                    def __init__(self, device):
                        self.options = torch.empty(0, device=device)
                """,
            "use.py": """\
                def check(holder):
                    if holder.options:
                        return 1
                """,
        },
    )
    assert findings(root, "use.py") == []


def test_names_say_where_a_tensor_lives():
    assert repo.convention("tokens_gpu") == repo.DEVICE
    assert repo.convention("lengths_cpu") == repo.HOST
    assert repo.convention("offsets_np") == repo.NUMPY
    assert repo.convention("ids_list") == repo.LIST
    assert repo.convention("device") == 0  # a device object, not a tensor
    assert repo.convention("target_device") == 0
    assert repo.convention("count") == 0
    # Flags, counts and device objects are not tensors, whatever their suffix.
    assert repo.convention("is_cuda") == repo.convention("use_gpu") == repo.convention("num_flops_per_gpu") == 0
    assert repo.convention("kv_buffer_device") == 0
    # The methods of a platform dispatch are no tensors either (`act_fn.forward_cuda`).
    assert repo.convention("forward_cuda") == repo.convention("_forward_cpu") == repo.convention("run_gpu") == 0
    assert repo.convention("draft_ids_gpu") == repo.DEVICE
    # A count kept on the host is host data (a host tensor of counts, or a number); a count
    # of CPUs and a flag say nothing.
    assert repo.convention("num_draft_tokens_cpu") == repo.convention("max_seq_lens_host") == repo.HOST
    assert repo.convention("num_cpu") == repo.convention("is_prefill_cpu") == repo.convention("use_cpu") == 0
    # A prefix says it as a suffix does (`host_indices` of a host pool's allocator).
    assert repo.convention("host_indices") == repo.convention("cpu_lens") == repo.HOST
    assert repo.convention("host") == repo.convention("is_host_ready") == 0


BUILDERS = """\
    import torch


    class MambaBuilder:
        def build(self, meta, *, num_draft_tokens_cpu: torch.Tensor | None = None):
            return self._common(meta, num_draft_tokens_cpu=num_draft_tokens_cpu)

        def _common(self, meta, *, num_draft_tokens_cpu: torch.Tensor | None = None):
            to_decode = meta.query_lens_cpu == 1
            if num_draft_tokens_cpu is not None:
                to_decode |= num_draft_tokens_cpu >= 0
            if torch.any(to_decode).item():
                return meta.split()
            return meta
    """

PLANNER = """\
    import torch


    def plan(builder, meta, device):
        return builder.build(meta, num_draft_tokens_cpu=torch.zeros(4, device=device))
    """


def test_a_count_named_for_the_host_is_host_data_whatever_a_call_by_name_passes(tmp_path):
    # `builder.build(...)` of unknown class passes a device tensor under the host name: the
    # name decides, as for any `_cpu` tensor, and `torch.any(...).item()` reads host data.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/mamba.py": BUILDERS, "pkg/planner.py": PLANNER})
    assert [f for f in findings(root, "pkg/mamba.py") if f[2] == "SL201"] == []
    # The look-alike: the same count named for the device is read back.
    gpu = {"pkg/__init__.py": "", "pkg/mamba.py": BUILDERS.replace("num_draft_tokens_cpu", "num_draft_tokens_gpu"),
           "pkg/planner.py": PLANNER.replace("num_draft_tokens_cpu", "num_draft_tokens_gpu")}
    assert [f[1] for f in findings(project(tmp_path / "gpu", gpu), "pkg/mamba.py") if f[2] == "SL201"] == [12]


def test_a_pre_commit_run_on_one_file_reads_the_rest_of_the_repository(tmp_path, monkeypatch):
    root = project(tmp_path / "proj", METADATA)
    monkeypatch.chdir(root)
    from synclint.cli import main

    assert main(["check", "--no-cache", "--exit-zero", "--output-format", "concise", "backend.py"]) == 0
    assert repo.find_root([Path("backend.py")]) == root.resolve()
    assert ("backend.py", 3, "SL201", "medium") in findings(root, "backend.py")


def test_summaries_are_reused_by_content(tmp_path):
    root = project(tmp_path / "proj", METADATA)
    first = repo.build(root.resolve(), use_cache=True)
    calls = []
    real = repo.summarize
    try:
        repo.summarize = lambda text: calls.append(text) or real(text)
        second = repo.build(root.resolve(), use_cache=True)
    finally:
        repo.summarize = real
    assert calls == [] and second.fingerprint == first.fingerprint


CALL_GRAPH = {
    "model.py": """\
        import torch
        from helpers import fill_table, plan_step


        class Runner:
            def __init__(self, device):
                self.table = torch.zeros(8, device=device)
                fill_table(self.table)

            def execute_model(self, count: int):
                return plan_step(self.table[:count])
        """,
    "helpers.py": """\
        import torch


        def fill_table(table: torch.Tensor):
            return int(table.sum().item())


        def plan_step(lengths: torch.Tensor):
            return _inner(lengths)


        def _inner(lengths: torch.Tensor):
            return int(lengths.max().item())
        """,
}


def tiers(root: Path, *names: str) -> dict[int, tuple[str, str | None]]:
    settings = Settings(include_cold=True, min_confidence=Confidence.LOW)
    run = runner.lint_paths([root / n for n in names], settings, jobs=1, use_cache=False)
    return {v.location.row: (v.tier, v.tier_reason) for v in run.violations}


def test_a_helper_reached_only_from_init_is_cold_and_one_reached_from_a_hot_root_is_hot(tmp_path):
    root = project(tmp_path / "proj", CALL_GRAPH)
    found = tiers(root, "helpers.py")
    assert found[5][0] == "cold" and "Runner.__init__ -> fill_table" in found[5][1]
    # _inner is hot through two calls: execute_model -> plan_step -> _inner.
    assert found[13][0] == "hot" and "execute_model -> plan_step -> _inner" in found[13][1]
    # The default report leaves cold findings out.
    default = runner.lint_paths([root / "helpers.py"], Settings(), jobs=1, use_cache=False)
    assert [v.location.row for v in default.violations] == [13]


def test_a_call_graph_cycle_is_searched_once(tmp_path):
    files = dict(CALL_GRAPH)
    files["helpers.py"] = textwrap.dedent(CALL_GRAPH["helpers.py"]) + textwrap.dedent(
        """\


        def ping(x: torch.Tensor):
            return pong(x) + int(x.sum().item())


        def pong(x: torch.Tensor):
            return ping(x)
        """
    )
    root = project(tmp_path / "proj", files)
    found = tiers(root, "helpers.py")
    # Nothing outside the cycle calls it: no verdict from the call graph.
    assert found[17][0] == "unknown"


def test_without_a_root_marker_the_whole_installed_package_is_the_project(tmp_path):
    # An installed package (site-packages) has no .git or pyproject.toml: linting one of its
    # files must read the whole package, not the file's folder alone, or a public method's
    # callers elsewhere in the package are missed (a scheduler's set_timesteps, called by
    # every pipeline, was labelled "reached only from cold code" by its one caller in the folder).
    site = tmp_path / "site-packages"
    (site / "pkg" / "schedulers").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "schedulers" / "__init__.py").write_text("")
    (site / "pkg" / "schedulers" / "ddim.py").write_text("x = 1\n")
    home = tmp_path / "home"
    (home / "loose").mkdir(parents=True)
    (home / "loose" / "script.py").write_text("x = 1\n")
    assert repo.find_root([site / "pkg" / "schedulers" / "ddim.py"]) == (site / "pkg").resolve()
    # A namespace package (folders without `__init__.py`, as a wheel may ship them) is
    # still the whole installed package.
    (site / "nspkg" / "srt" / "layers").mkdir(parents=True)
    (site / "nspkg" / "__init__.py").write_text("")
    (site / "nspkg" / "srt" / "layers" / "attn.py").write_text("x = 1\n")
    assert repo.find_root([site / "nspkg" / "srt" / "layers" / "attn.py"]) == (site / "nspkg").resolve()
    # A loose script in a folder that is neither a project nor a package has no repository:
    # linting it must not read its folder and everything below it (a home folder, /tmp).
    assert repo.find_root([home / "loose" / "script.py"]) is None
    # A folder named on the command line is linted whole, so it is read whole.
    assert repo.find_root([home / "loose"]) == (home / "loose").resolve()


def test_a_mirror_name_also_given_python_values_elsewhere_is_not_a_device_field(tmp_path):
    # One class holds `num_tokens` beside `num_tokens_cpu`; another class's `num_tokens` is a
    # Python int. Fields are keyed by name, so the name says nothing: the scheduler's
    # `if req.num_tokens > budget:` is no finding, the metadata's `.item()` still is (its
    # field is declared a tensor and given only device tensors).
    root = project(
        tmp_path / "proj",
        {
            "meta.py": """\
                from dataclasses import dataclass
                import torch


                @dataclass
                class StepMeta:
                    num_tokens: torch.Tensor
                    num_tokens_cpu: torch.Tensor
                    offsets: torch.Tensor


                def build(n, device):
                    offsets = torch.zeros(n, device=device)
                    return StepMeta(num_tokens=torch.zeros(n, device=device), num_tokens_cpu=torch.zeros(n), offsets=offsets)
                """,
            "request.py": """\
                class Request:
                    def __init__(self, prompt):
                        self.num_tokens = 0
                        self.prompt = prompt
                """,
            "sched.py": """\
                def fits(req, budget):
                    if req.num_tokens > budget:
                        return False
                    return True


                def plan(meta):
                    return meta.offsets.max().item()


                def longest(batch):
                    return batch.num_tokens.max().item(), batch.num_tokens.tolist()


                def through_torch(batch):
                    import torch
                    return int(torch.max(batch.num_tokens)), torch.zeros(3, device=batch.num_tokens.device).sum().item()
                """,
        },
    )
    found = findings(root, "sched.py")
    # `.max()` and `.tolist()` are tensor methods: no int has them, so there the name is the
    # tensor (medium), where a truth test of it is not.
    assert [f[1:3] for f in found] == [(8, "SL201"), (12, "SL201"), (12, "SL202"), (17, "SL204"), (17, "SL201")]
    # The name is a device tensor in one class: with --min-confidence low the truth test shows, low.
    low = findings(root, "sched.py", min_confidence="low")
    assert ("sched.py", 2, "SL203", "low") in low


def test_a_mirror_name_given_only_device_tensors_stays_a_device_field(tmp_path):
    # Look-alike of the above: no class gives `num_tokens` a Python value, so the mirror holds.
    root = project(
        tmp_path / "proj",
        {
            "meta.py": """\
                from dataclasses import dataclass
                import torch


                @dataclass
                class StepMeta:
                    num_tokens: torch.Tensor
                    num_tokens_cpu: torch.Tensor
                """,
            "sched.py": """\
                def fits(meta, budget):
                    if meta.num_tokens.max().item() > budget:
                        return False
                    return True
                """,
        },
    )
    assert ("sched.py", 2, "SL201", "medium") in findings(root, "sched.py")


def test_a_field_declared_a_tensor_but_given_lists_elsewhere_is_not_device(tmp_path):
    # `sampled` is a device tensor in one output class and a list of lists in another: no fact.
    root = project(
        tmp_path / "proj",
        {
            "out.py": """\
                from dataclasses import dataclass
                import torch


                @dataclass
                class DeviceOut:
                    sampled: torch.Tensor


                @dataclass
                class RunnerOut:
                    sampled: list


                def make(device, ids):
                    return DeviceOut(sampled=torch.zeros(4, device=device)), RunnerOut(sampled=[list(ids)])
                """,
            "use.py": """\
                def update(output):
                    if output.sampled:
                        return 1
                    return 0
                """,
        },
    )
    assert findings(root, "use.py") == []
    assert [f[2:] for f in findings(root, "use.py", min_confidence="low")] == [("SL203", "low")]


TRAINING_GRAPH = {
    "codebook.py": """\
        import torch


        class Codebook(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("usage", torch.zeros(n))

            def forward(self, x: torch.Tensor):
                if self.training:
                    self.expire_codes_(x)
                if not self.training:
                    self.track(x)
                try:
                    out = self.quantize(x)
                except RuntimeError:
                    out = self.recover(x)
                return out

            def expire_codes_(self, x: torch.Tensor):
                return int(x.sum().item())

            def track(self, x: torch.Tensor):
                return int(x.max().item())

            def quantize(self, x: torch.Tensor):
                return int(x.min().item())

            def recover(self, x: torch.Tensor):
                return int(x.mean().item())
        """,
}


ONCE_BRANCHES = {
    "runner.py": """\
        import threading
        import torch
        from geometry import slice_geometry
        from plans import get_plan, scan_every_step


        class Runner:
            def start(self):
                threading.Thread(target=self._transfer_loop, daemon=True).start()

            def _transfer_loop(self):
                gather_pages([1, 2, 3], "cuda")

            def execute_model(self, offsets, context, key, x: torch.Tensor):
                geometry = slice_geometry(tuple(offsets), x.device)
                plan = get_plan(context, key, x)
                if self.debug_mode:
                    check_bounds(x)
                return scan_every_step(x) + geometry + plan


        def gather_pages(pages, device):
            return torch.tensor(pages).to(device)


        def check_bounds(x: torch.Tensor):
            return int(x.max().item())
        """,
    "geometry.py": """\
        import torch

        _GEOMETRY = {}


        def slice_geometry(offsets, device):
            key = (offsets, device)
            geometry = _GEOMETRY.get(key)
            if geometry is None:
                geometry = _build_geometry(offsets, device)
                _GEOMETRY[key] = geometry
            return geometry


        def _build_geometry(offsets, device):
            return torch.tensor(list(offsets), device=device)
        """,
    "plans.py": """\
        import torch


        def get_plan(context, key, x):
            cached = context.mask_cache.get(key)
            if cached is not None:
                return cached
            plan = _semantic_groups(x)
            context.mask_cache[key] = plan
            return plan


        def _semantic_groups(x: torch.Tensor):
            return torch.nonzero(x.cuda()).flatten()


        def scan_every_step(x: torch.Tensor):
            return _lookalike_groups(x)


        def _lookalike_groups(x: torch.Tensor):
            # Reached every step through scan_every_step: the same shape is hot.
            return torch.nonzero(x.cuda()).flatten()
        """,
}


def test_a_helper_called_only_in_a_training_branch_or_an_except_handler_is_cold(tmp_path):
    root = project(tmp_path / "proj", TRAINING_GRAPH)
    found = tiers(root, "codebook.py")
    assert found[21][0] == "cold" and "forward [on a cold branch] -> expire_codes_" in found[21][1]
    assert found[30][0] == "cold" and "forward [on a cold branch] -> recover" in found[30][1]
    # `if not self.training:` runs at inference; the `try` body runs every time.
    assert found[24][0] == "hot" and "forward -> track" in found[24][1]
    assert found[27][0] == "hot" and "forward -> quantize" in found[27][1]


def test_a_helper_called_in_a_training_branch_and_elsewhere_hot_is_hot(tmp_path):
    files = {"codebook.py": TRAINING_GRAPH["codebook.py"].replace("self.track(x)\n", "self.track(x)\n" + " " * 20 + "self.expire_codes_(x)\n")}
    root = project(tmp_path / "proj", files)
    found = tiers(root, "codebook.py")
    assert found[22][0] == "hot" and "forward -> expire_codes_" in found[22][1]


def test_vendored_code_nothing_calls_is_cold(tmp_path):
    root = project(
        tmp_path / "proj",
        {
            "engine/runner.py": """\
                import torch
                from engine.third_party.kern.ops import fused_plan


                class Runner:
                    def execute_model(self, lengths: torch.Tensor):
                        return fused_plan(lengths)


                def offline_tool(lengths: torch.Tensor):
                    from engine.third_party.kern.ops import pack_helper
                    return pack_helper(lengths)
                """,
            "engine/third_party/kern/ops.py": """\
                import torch


                def fused_plan(lengths: torch.Tensor):
                    return int(lengths.max().item())


                def pack_helper(lengths: torch.Tensor):
                    return int(lengths.sum().item())


                def reference_impl(lengths: torch.Tensor):
                    return int(lengths.min().item())


                def compare_outputs(lengths: torch.Tensor):
                    return reference_impl(lengths) == fused_plan(lengths)
                """,
        },
    )
    found = tiers(root, "engine/third_party/kern/ops.py")
    # Used by the engine every step: hot. Called from the project, not from a hot root: no
    # verdict. Called only from vendored code nothing calls: library surface the project does
    # not use.
    assert found[5][0] == "hot"
    assert found[9][0] == "unknown"
    assert found[13] == ("cold", "vendored third-party code that no hot code of the repository calls (`reference_impl()`)")
    # The same uncalled function outside a vendored folder says nothing.
    files = {"engine/kern/ops.py": "import torch\n\n\ndef reference_impl(lengths: torch.Tensor):\n    return int(lengths.min().item())\n"}
    other = project(tmp_path / "other", files)
    assert tiers(other, "engine/kern/ops.py")[5][0] == "unknown"


def test_a_name_that_is_a_numpy_array_elsewhere_is_not_resolved_by_numpy_methods(tmp_path):
    # `num_scheduled` is a device tensor beside its host mirror in one class and a numpy array
    # in another: `.max()` and `.any()` are numpy's too, `.device` is not.
    root = project(
        tmp_path / "proj",
        {
            "meta.py": """\
                from dataclasses import dataclass
                import numpy as np
                import torch


                @dataclass
                class DeviceBatch:
                    num_scheduled: torch.Tensor
                    num_scheduled_np: np.ndarray


                @dataclass
                class HostBatch:
                    num_scheduled: np.ndarray
                """,
            "use.py": """\
                import torch


                def plan(batch):
                    longest = int(batch.num_scheduled.max())
                    if (batch.num_scheduled == 0).any():
                        return longest
                    return torch.zeros(2, device=batch.num_scheduled.device).sum().item()
                """,
        },
    )
    assert [f[1:3] for f in findings(root, "use.py")] == [(8, "SL201")]


def test_calls_made_only_on_a_branch_that_runs_once_are_cold(tmp_path):
    root = project(tmp_path / "proj", ONCE_BRANCHES)
    geometry = tiers(root, "geometry.py")
    assert geometry[16][0] == "cold" and "slice_geometry [on a cold branch]" in geometry[16][1]
    plans = tiers(root, "plans.py")
    assert plans[14][0] == "cold" and "get_plan [on a cold branch]" in plans[14][1]
    assert plans[23][0] == "hot"
    runner_tiers = tiers(root, "runner.py")
    # check_bounds is called only in a debug-only branch. gather_pages is called only from a
    # thread's target that runs no model (a transfer thread): off the serving thread, cold.
    assert runner_tiers[27][0] == "cold" and "execute_model [on a cold branch]" in runner_tiers[27][1]
    assert runner_tiers[23] == ("cold", "reached only from cold code (Runner._transfer_loop -> gather_pages)")
    # A thread whose loop runs the model is the serving loop moved off the main thread: what
    # it calls is not cold for that (`_serving_loop`).
    files = dict(ONCE_BRANCHES)
    files["runner.py"] = files["runner.py"].replace(
        'gather_pages([1, 2, 3], "cuda")', 'gather_pages([1, 2, 3], "cuda")\n                self.execute_model([], None, None, None)')
    root = project(tmp_path / "loop", files)
    assert tiers(root, "runner.py")[24][0] == "unknown"


# A graph-metadata table filled by key: the replay builds the entry of a new batch size
# (a method that fills the table does it) and returns; what it calls there runs once per size.
FILLED_TABLE = {
    "backend.py": """\
        import torch


        class Backend:
            def __init__(self):
                self.graph_metadata = {}
                self.rope_cache = {}

            def _build(self, bs, seq_lens):
                lens = seq_lens.tolist()
                self.graph_metadata[bs] = lens

            def _rope_ids(self, positions):
                return int(positions.max().item())

            def replay(self, bs):
                seq_lens = torch.ones(bs, device="cuda")
                if bs not in self.graph_metadata:
                    self._build(bs, seq_lens)
                    return
                return self.graph_metadata[bs]

            def rope(self, key, positions):
                if key not in self.rope_cache or key not in self.graph_metadata:
                    self.rope_cache[key] = self._rope_ids(positions)
                return self.rope_cache[key]

            def forward(self, x):
                positions = torch.arange(8, device="cuda")
                self.replay(4)
                self.rope(4, positions)
                return x
        """,
}


def test_calls_made_where_a_key_is_missing_from_a_table_the_class_fills_are_cold(tmp_path):
    root = project(tmp_path / "proj", FILLED_TABLE)
    found = tiers(root, "backend.py")
    assert found[10] == ("cold", "reached only from cold code (Backend.replay [on a cold branch] -> _build)")
    assert found[14][0] == "cold" and "Backend.rope [on a cold branch]" in found[14][1]
    # A table nothing fills by key says nothing: the call stays on the step's path.
    files = {"backend.py": FILLED_TABLE["backend.py"].replace("self.graph_metadata[bs] = lens", "self.last = lens")}
    assert tiers(project(tmp_path / "unfilled", files), "backend.py")[10][0] == "hot"


def test_a_defect_while_summarizing_one_module_adds_no_facts_and_the_run_goes_on(tmp_path, monkeypatch):
    # The index is context: a module it fails to summarize (a defect of synclint) gives no
    # facts; every file is still linted, and the other modules' facts still place values.
    root = project(tmp_path, {**METADATA, "odd.py": "import zlib as odd_marker\n"})
    real, raised = repo.summary._Summarizer.run, []

    def run(self, collected, classes):
        if "odd_marker" in self.imports:
            raised.append(True)
            raise TypeError("a defect")
        return real(self, collected, classes)

    monkeypatch.setattr(repo.summary._Summarizer, "run", run)
    assert findings(root, "backend.py", "odd.py") == [("backend.py", 3, "SL201", "medium")]
    assert raised


# A diffusion scheduler whose `step(..., timestep: int, ...)` is called from a pipeline's loop
# over the scheduler's device timesteps: the annotation says a number, the callers pass a
# 0-dim device tensor. Indexing the host table with it, and comparing it, read it back.
SCHEDULER = """\
    import numpy as np
    import torch


    class DDIMScheduler:
        def __init__(self, num_train_timesteps: int = 1000):
            betas = torch.linspace(0.0001, 0.02, num_train_timesteps, dtype=torch.float32)
            self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
            self.final_alpha_cumprod = torch.tensor(1.0)
            self.num_train_timesteps = num_train_timesteps
            self.timesteps = torch.from_numpy(np.arange(0, num_train_timesteps)[::-1].copy())

        def set_timesteps(self, num_inference_steps: int, device=None):
            self.num_inference_steps = num_inference_steps
            timesteps = (np.arange(0, num_inference_steps) * 100).round()[::-1].copy().astype(np.int64)
            self.timesteps = torch.from_numpy(timesteps).to(device)

        def _get_variance(self, timestep: int, prev_timestep: int) -> torch.Tensor:
            alpha_prod_t = self.alphas_cumprod[timestep]
            alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
            return (1 - alpha_prod_t_prev) / (1 - alpha_prod_t)

        def step(self, model_output: torch.Tensor, timestep: int, sample: torch.Tensor, eta: float = 0.0):
            prev_timestep = timestep - self.num_train_timesteps // self.num_inference_steps
            alpha_prod_t = self.alphas_cumprod[timestep]
            alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
            variance = self._get_variance(timestep, prev_timestep)
            if eta > 0:
                sample = sample + eta * variance
            return sample * alpha_prod_t_prev.sqrt() - model_output * (1 - alpha_prod_t).sqrt()
    """

PIPELINE = """\
    import torch


    def retrieve_timesteps(scheduler, num_inference_steps: int, device):
        scheduler.set_timesteps(num_inference_steps, device=device)
        timesteps = scheduler.timesteps
        return timesteps, num_inference_steps


    class Pipeline:
        def __call__(self, latents, num_inference_steps: int = 50, eta: float = 0.0):
            timesteps, num_inference_steps = retrieve_timesteps(self.scheduler, num_inference_steps, self.device)
            for i, t in enumerate(timesteps):
                noise_pred = self.unet(latents, t)
                latents = self.scheduler.step(noise_pred, t, latents, eta=eta)
            return latents
    """


def test_a_number_parameter_given_the_element_of_a_loop_over_device_timesteps(tmp_path):
    root = project(tmp_path / "proj", {"scheduling_ddim.py": SCHEDULER, "pipeline.py": PIPELINE})
    found = {(row, code) for name, row, code, _ in findings(root, "scheduling_ddim.py") if name == "scheduling_ddim.py"}
    # `self.alphas_cumprod[timestep]` (host table, 0-dim device index) and `prev_timestep >= 0`,
    # in step() and in _get_variance(), to which step() passes them on.
    assert {(25, "SL208"), (26, "SL203"), (19, "SL208"), (20, "SL203")} <= found
    # `eta` is a plain number the pipeline passes through: not a tensor.
    assert not any(row == 28 for row, _ in found)
    # Without the index the annotation is all there is: nothing.
    assert [f for f in findings(root, "scheduling_ddim.py", repository_index=False) if f[2] in ("SL208", "SL203")] == []
    # The explanation cites the caller's line, as every other fact of the index does.
    facts = repo.build(root.resolve(), use_cache=False)
    reasons = {key: reason for key, (_mask, reason) in facts.values.items() if "annotated a number" in reason}
    assert reasons[("p", "step", "timestep")].endswith("the element of a loop over a tensor that may be on the device (pipeline.py:15)")
    assert reasons[("p", "_get_variance", "timestep")].endswith("which may be a device tensor (scheduling_ddim.py:27)")


@pytest.mark.parametrize(
    "loop",
    [
        # A Python range: the step number is an int.
        "for i, t in enumerate(range(num_inference_steps)):",
        # The timesteps read back once as a list: Python ints.
        "for i, t in enumerate(timesteps.tolist()):",
        # A list of the loop's numbers: not a tensor.
        "for i, t in enumerate([int(x) for x in range(0, 1000, 100)]):",
    ],
)
def test_number_parameters_fed_host_numbers_stay_quiet(tmp_path, loop):
    pipeline = PIPELINE.replace("for i, t in enumerate(timesteps):", loop)
    root = project(tmp_path / "proj", {"scheduling_ddim.py": SCHEDULER, "pipeline.py": pipeline})
    assert [f for f in findings(root, "scheduling_ddim.py") if f[2] in ("SL208", "SL203")] == []


def test_a_host_only_schedule_stays_quiet(tmp_path):
    # The timesteps stay on the host (no device given): indexing and comparing host values.
    scheduler = SCHEDULER.replace("torch.from_numpy(timesteps).to(device)", "torch.from_numpy(timesteps)")
    root = project(tmp_path / "proj", {"scheduling_ddim.py": scheduler, "pipeline.py": PIPELINE})
    assert [f for f in findings(root, "scheduling_ddim.py") if f[2] in ("SL208", "SL203")] == []


def test_a_loop_over_a_parameter_annotated_a_python_sequence_stays_quiet(tmp_path):
    # The caller's own schedule, declared a list of ints: its elements are Python numbers,
    # even where the same name is also a device tensor in another loop of the method.
    pipeline = PIPELINE.replace(
        "def __call__(self, latents, num_inference_steps: int = 50, eta: float = 0.0):",
        "def __call__(self, latents, custom_timesteps: list[int], num_inference_steps: int = 50, eta: float = 0.0):",
    ).replace("for i, t in enumerate(timesteps):", "for i, t in enumerate(custom_timesteps):")
    root = project(tmp_path / "proj", {"scheduling_ddim.py": SCHEDULER, "pipeline.py": pipeline})
    assert [f for f in findings(root, "scheduling_ddim.py") if f[2] in ("SL208", "SL203")] == []


def test_a_sequence_parameter_rebound_to_the_schedulers_tensor_is_followed(tmp_path):
    # diffusers' pipelines declare `timesteps: list[int] = None` and rebind it to the
    # scheduler's device timesteps before the loop.
    pipeline = PIPELINE.replace(
        "def __call__(self, latents, num_inference_steps: int = 50, eta: float = 0.0):",
        "def __call__(self, latents, timesteps: list[int] = None, num_inference_steps: int = 50, eta: float = 0.0):",
    )
    root = project(tmp_path / "proj", {"scheduling_ddim.py": SCHEDULER, "pipeline.py": pipeline})
    found = {(row, code) for name, row, code, _ in findings(root, "scheduling_ddim.py")}
    assert {(25, "SL208"), (26, "SL203")} <= found


def test_the_index_does_not_import_libcst():
    # The index summarises every file with `ast` in worker processes; importing libcst there
    # would cost each worker its start-up time for nothing.
    import subprocess
    import sys

    code = "import sys, synclint.repo; sys.exit('libcst' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


STRAIGHT_LINE = {
    "vision.py": """\
        import torch

        from grids import grid_sizes, window_sizes


        class VisionTower:
            def forward(self, pixel_values: torch.Tensor, grid_thw: torch.Tensor):
                # The metadata is taken to the host once; every later read is the host copy.
                grid_thw = torch.as_tensor(grid_thw, dtype=torch.int64, device="cpu")
                sizes = grid_sizes(grid_thw)
                lens = torch.tensor(sizes)
                lens = lens.to(pixel_values.device)
                return window_sizes(lens)

            def merge(self, pixel_values: torch.Tensor, grid_thw: torch.Tensor, flat: bool):
                # Rebound only on a branch: either value may be read after it.
                if flat:
                    grid_thw = grid_thw.cuda()
                return grid_sizes(grid_thw)
        """,
    "grids.py": """\
        import torch


        def grid_sizes(grid: torch.Tensor):
            return grid.prod(-1).tolist()


        def window_sizes(lens: torch.Tensor):
            return int(lens.max())
        """,
}


def test_a_parameter_rebound_on_the_host_is_passed_on_as_host_data(tmp_path):
    root = project(tmp_path / "proj", STRAIGHT_LINE)
    found = findings(root, "grids.py", min_confidence="low", include_cold=True)
    # `grid_sizes()` is given the host copy in `forward` and, from `merge`, what may be the
    # device copy made on a branch: low; `window_sizes()` only the device copy made after
    # `lens` was rebound (not the host tensor it was first): medium.
    assert ("grids.py", 5, "SL202", "low") in found
    assert ("grids.py", 9, "SL204", "medium") in found


def test_only_the_rebinding_value_is_read_after_it():
    from synclint import screen
    from synclint.screen import places
    from synclint.screen.facts import FactReader

    text = textwrap.dedent(
        """\
        import torch


        def step(x: torch.Tensor, flag):
            y = x
            x = torch.as_tensor(x, device="cpu")
            z = x
            if flag:
                x = x.cuda()
            w = x
            return y, z, w
        """
    )
    tree = __import__("ast").parse(text)
    reader = FactReader(text.splitlines(keepends=True), places, frozenset(), None)
    units, classes = screen._units(tree, reader)
    imports = {name: tuple(paths) for name, paths in reader.imports.items()}
    model = places.PlaceModel(screen._definitions(units), screen._class_definitions(classes), imports)
    (unit,) = [u for u in units if getattr(u.node, "name", "") == "step"]
    func = unit.node
    values = {stmt.targets[0].id: stmt.value for stmt in func.body if type(stmt).__name__ == "Assign" and stmt.targets[0].id in "yzw"}
    assert model.place(values["y"], unit) & places.DEVICE  # the parameter, before the rebinding
    assert model.place(values["z"], unit) == places.HOST  # only the host copy
    assert model.place(values["w"], unit) & places.DEVICE and model.place(values["w"], unit) & places.HOST  # either, after the branch


def test_a_field_declared_python_data_is_no_device_field_whatever_else_it_is_given(tmp_path):
    # `entries: Optional[List[str]]` is declared a list of strings; one constructor call copies
    # a same-named device field into it. The declaration says what the field holds: mixed
    # data, not a device tensor.
    pool = """\
        from dataclasses import dataclass
        from typing import List, Optional

        import torch


        @dataclass
        class PoolTransfer:
            name: str
            entries: Optional[List[str]] = None


        @dataclass
        class DeviceBatch:
            entries: torch.Tensor


        def batch(n):
            return DeviceBatch(entries=torch.zeros(n, dtype=torch.int64, device="cuda"))


        def transfer_of(source: DeviceBatch):
            return PoolTransfer(name="kv", entries=source.entries)
        """
    reader = """\
        from pool import PoolTransfer


        def plan_transfer(transfer: PoolTransfer):
            return len(transfer.entries or [])
        """
    root = project(tmp_path / "proj", {"pool.py": pool, "reader.py": reader})
    assert findings(root, "reader.py") == []
    # Declared a tensor instead, the same flows make it a device field.
    root = project(tmp_path / "tensor", {"pool.py": pool.replace("Optional[List[str]]", "Optional[torch.Tensor]"),
                                         "reader.py": reader})
    assert ("reader.py", 5, "SL203", "medium") in findings(root, "reader.py")


def test_a_rebinding_inside_a_branch_holds_for_the_rest_of_that_branch():
    # Inside a block, a name rebound at the block's own level is only that value in the reads
    # after it; after the block, either value may be read. A loop's body may read what its
    # later statements bound in the previous iteration.
    from synclint import screen
    from synclint.screen import places
    from synclint.screen.facts import FactReader

    text = textwrap.dedent(
        """\
        import numpy as np
        import torch


        def schedule(self, sigmas, device, stretch):
            if stretch:
                t = torch.from_numpy(np.asarray(sigmas))
                a = t
                t = self.stretch(t)
            t = torch.from_numpy(np.asarray(sigmas)).to(device=device)
            b = t
            for step in range(3):
                c = t
                t = t.cpu()
            d = t
            return a, b, c, d
        """
    )
    tree = __import__("ast").parse(text)
    reader = FactReader(text.splitlines(keepends=True), places, frozenset(), None)
    units, classes = screen._units(tree, reader)
    imports = {name: tuple(paths) for name, paths in reader.imports.items()}
    model = places.PlaceModel(screen._definitions(units), screen._class_definitions(classes), imports)
    (unit,) = [u for u in units if getattr(u.node, "name", "") == "schedule"]
    values = {}
    for node in __import__("ast").walk(unit.node):
        if type(node).__name__ == "Assign" and node.targets[0].id in "abcd":
            values[node.targets[0].id] = node.value
    assert model.place(values["a"], unit) == places.HOST  # the host tensor of that branch only
    assert model.place(values["b"], unit) == places.DEVICE  # the unconditional rebinding after the branch
    c = model.place(values["c"], unit)
    assert c & places.DEVICE and c & places.HOST  # the loop carries its own rebinding round
    d = model.place(values["d"], unit)
    assert d & places.DEVICE and d & places.HOST  # the loop may not have run

NEXT_TOKEN = {
    "batch.py": """\
        from dataclasses import dataclass
        from typing import List, Optional

        import torch


        def next_prompt_token(prompt: List[int], filled: int) -> Optional[int]:
            if filled >= len(prompt):
                return None
            return int(prompt[filled])


        @dataclass
        class PrefillBatch:
            input_ids: torch.Tensor
            next_token: Optional[int] = None


        def build(prompt: List[int], filled: int, device):
            ids = torch.tensor(prompt[:filled], dtype=torch.int64).to(device, non_blocking=True)
            return PrefillBatch(input_ids=ids, next_token=next_prompt_token(prompt, filled))
        """,
    "tail.py": """\
        import torch

        from batch import PrefillBatch


        def tail_tokens(batch: PrefillBatch, n: int):
            tails = torch.zeros(n, dtype=torch.int64, device="cuda")
            token = batch.next_token
            if token is not None:
                tails[n - 1] = token
            return tails
        """,
}


def test_a_field_declared_a_python_number_is_a_python_number_where_it_is_read(tmp_path):
    # `next_token: Optional[int]`, given only `int(...)` or None: writing it into one element
    # of a device tensor is a blocking copy of a Python scalar, and `.fill_()` is a safe fix.
    root = project(tmp_path / "proj", NEXT_TOKEN)
    run = runner.lint_paths([root / "tail.py"], Settings(), jobs=1, use_cache=False)
    (found,) = [v for v in run.violations if v.code == "SL302"]
    assert (found.location.row, found.confidence.label) == (10, "high")
    assert found.message.startswith("a Python scalar assigned")
    assert found.fix is not None and found.fix.applicability.value == "safe"


def test_a_number_field_given_a_tensor_anywhere_is_no_python_number(tmp_path):
    files = dict(NEXT_TOKEN)
    files["spec.py"] = """\
        import torch

        from batch import PrefillBatch


        def carry(batch: PrefillBatch, logits: torch.Tensor):
            batch.next_token = torch.argmax(logits.to("cuda"), dim=-1)
        """
    root = project(tmp_path / "proj", files)
    run = runner.lint_paths([root / "tail.py"], Settings(), jobs=1, use_cache=False)
    (found,) = [v for v in run.violations if v.code == "SL302"]
    # a value that may be a tensor: the finding says so, and the fix is unsafe
    assert found.message.startswith("a value not known to be a tensor")
    assert found.fix is None or found.fix.applicability.value == "unsafe"


FUTURE_TOKENS = {
    # The model the overlap thread runs: its loop is the serving loop, not a worker's.
    "model.py": """\
        import torch
        from torch import nn


        class Model(nn.Module):
            def forward(self, batch):
                return batch.input_ids.float()
        """,
    "batch.py": """\
        from dataclasses import dataclass

        import torch


        @dataclass
        class WorkerBatch:
            input_ids: torch.Tensor


        def decode_batch(ids, device):
            return WorkerBatch(input_ids=torch.as_tensor(ids).to(device, non_blocking=True))


        def idle_batch(n: int):
            return WorkerBatch(input_ids=torch.full((n,), 0))
        """,
    "overlap.py": """\
        import threading
        from queue import Queue

        import torch


        class OverlapWorker:
            def __init__(self, worker, size: int, device):
                self.worker = worker
                self.future_map = torch.empty((size,), dtype=torch.int32, device=device)
                self.queue = Queue()
                self.stream = torch.cuda.Stream()
                self.thread = threading.Thread(target=self.run_forever)

            def run_forever(self):
                with torch.cuda.stream(self.stream):
                    self.loop()

            def loop(self):
                while True:
                    batch, count = self.queue.get()
                    input_ids = batch.input_ids
                    future = input_ids < 0
                    input_ids[future] = self.future_map[-input_ids[future]]
                    self.worker.forward(batch)
        """,
}


def test_a_local_of_unsaid_place_written_with_device_values_is_on_the_device(tmp_path):
    # `batch.input_ids` is given a device tensor in one place and a host tensor in another
    # (low); the masked write of a gather of a device buffer into it shows it is the device
    # tensor here: both boolean-mask readbacks are default findings.
    root = project(tmp_path / "proj", FUTURE_TOKENS)
    found = [f for f in findings(root, "overlap.py") if f[2] == "SL401"]
    assert found == [("overlap.py", 24, "SL401", "medium"), ("overlap.py", 24, "SL401", "medium")]


def test_a_local_of_unsaid_place_written_with_one_element_stays_low(tmp_path):
    # One element of a device buffer may be written into a host tensor: no evidence.
    files = dict(FUTURE_TOKENS)
    files["overlap.py"] = files["overlap.py"].replace("self.future_map[-input_ids[future]]", "self.future_map[0]")
    root = project(tmp_path / "proj", files)
    assert [f for f in findings(root, "overlap.py") if f[2] == "SL401"] == []
    assert [f[3] for f in findings(root, "overlap.py", min_confidence="low") if f[2] == "SL401"] == ["low"]


def test_a_summary_does_not_depend_on_the_hash_seed():
    # A name imported from two modules (a fallback import) may stand for either; the summary
    # lists both in one order whatever the interpreter's hash seed, so that summaries written
    # by different processes agree.
    import subprocess
    import sys

    text = textwrap.dedent(
        """\
        import torch


        class Worker:
            def __init__(self, encoder_only: bool):
                if encoder_only:
                    from runners.encoder import EncoderRunner as Runner
                else:
                    from runners.decoder import DecoderRunner as Runner
                self.runner = Runner(torch.device("cuda"))
                self.aux = Runner(torch.device("cuda"))

            def step(self, batch):
                out = self.runner.execute_model(batch)
                return self.aux.sample(out).tolist()
        """
    )
    code = "import sys, marshal, synclint.repo as r; sys.stdout.buffer.write(marshal.dumps(r.summarize(sys.stdin.read())))"
    outputs = {
        subprocess.run([sys.executable, "-c", code], input=text.encode(), capture_output=True,
                       env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}, check=True).stdout
        for seed in range(6)
    }
    assert len(outputs) == 1


def test_a_list_of_parts_concatenated_gives_no_host_vote(tmp_path):
    # The index reads a list as one value: `torch.cat(parts)` of a list it cannot see into
    # is unknown, not a host tensor that outvotes the device tensors the other calls pass.
    root = project(
        tmp_path / "proj",
        {
            "allocator.py": """\
                import torch


                class Allocator:
                    def free(self, free_index: torch.Tensor):
                        pages = torch.unique(free_index // 16)
                        return pages
                """,
            "cache.py": """\
                import torch


                class Cache:
                    def __init__(self, allocator, table):
                        self.allocator = allocator
                        self.table = table.cuda()

                    def release(self, row: int, start: int, end: int, floor: int):
                        kv_indices = self.table[row]
                        if end > floor:
                            parts = []
                            if floor > start:
                                parts.append(kv_indices[start:floor])
                            parts.append(kv_indices[end:])
                            self.allocator.free(torch.cat(parts))
                        else:
                            self.allocator.free(kv_indices[start:])

                    def drop(self, row: int):
                        self.allocator.free(self.table[row])
                """,
        },
    )
    assert ("allocator.py", 6, "SL402", "medium") in findings(root, "allocator.py")


def test_a_list_held_in_a_field_concatenated_gives_no_host_vote(tmp_path):
    # So of a list kept in a field and appended to elsewhere (an allocator's free group):
    # `torch.cat(self.free_group)` is unknown, not a host tensor.
    root = project(
        tmp_path / "proj",
        {
            "allocator.py": """\
                import torch


                class Allocator:
                    def __init__(self):
                        self.free_group = []
                        self.grouping = False

                    def free(self, free_index: torch.Tensor):
                        if self.grouping:
                            self.free_group.append(free_index)
                            return None
                        pages = torch.unique(free_index // 16)
                        return pages

                    def free_group_end(self):
                        self.grouping = False
                        if self.free_group:
                            self.free(torch.cat(self.free_group))
                """,
            "cache.py": """\
                import torch


                class Cache:
                    def __init__(self, allocator, table):
                        self.allocator = allocator
                        self.table = table.cuda()

                    def release(self, row: int, start: int):
                        self.allocator.free(self.table[row][start:])

                    def drop(self, row: int):
                        self.allocator.free(self.table[row])
                """,
        },
    )
    assert ("allocator.py", 13, "SL402", "medium") in findings(root, "allocator.py")


def test_a_flow_that_reads_its_own_field_back_votes_with_what_it_adds(tmp_path):
    # `to_cpu_nonblocking()` builds a copy whose field is the old field or its host copy: the
    # field's own value is no vote for the device, the host copy is a vote for the host, so
    # the one device constructor does not make the field a device field.
    root = project(
        tmp_path / "proj",
        {
            "shard.py": """\
                import torch

                from outputs import LogprobsTensors


                def build(logits: torch.Tensor, device):
                    ids = torch.topk(logits, 4, dim=-1).indices
                    cu = torch.zeros(5, dtype=torch.int32, device=device)
                    return LogprobsTensors(ids, logits.log_softmax(-1), cu)
                """,
            "outputs.py": """\
                from typing import NamedTuple

                import torch


                class LogprobsTensors(NamedTuple):
                    logprob_token_ids: torch.Tensor
                    logprobs: torch.Tensor
                    cu_counts: torch.Tensor | None = None

                    def tolists(self):
                        return self.cu_counts.tolist() if self.cu_counts is not None else None

                    def to_cpu_nonblocking(self) -> "LogprobsTensors":
                        cu_counts = self.cu_counts
                        if cu_counts is not None:
                            cu_counts = cu_counts.to("cpu", non_blocking=True)
                        return LogprobsTensors(
                            self.logprob_token_ids.to("cpu", non_blocking=True),
                            self.logprobs.to("cpu", non_blocking=True),
                            cu_counts,
                        )
                """,
        },
    )
    found = [f for f in findings(root, "outputs.py", min_confidence="low") if f[2] == "SL202"]
    assert found == [("outputs.py", 12, "SL202", "low")]


# A helper that joins the host tensors it appended to a local list returns a host tensor;
# a blocking `.to(device)` of its result in a forward is a sync. Look-alikes: a helper that
# appends device tensors, one that appends what nothing places, one that pins what it joins.
POSITIONS = """\
    import torch


    def host_positions(grid):
        parts = []
        for h, w in grid:
            parts.append(torch.arange(h * w))
        return torch.cat(parts)


    def device_positions(grid, device):
        parts = []
        for h, w in grid:
            parts.append(torch.arange(h * w, device=device))
        return torch.cat(parts)


    def unknown_positions(tables):
        parts = []
        for table in tables:
            parts.append(table.positions)
        return torch.cat(parts)


    def pinned_positions(grid):
        parts = []
        for h, w in grid:
            parts.append(torch.arange(h * w))
        return torch.cat(parts).pin_memory()
    """


def test_a_helper_joining_appended_host_tensors_returns_a_host_tensor(tmp_path):
    root = project(
        tmp_path / "proj",
        {
            "positions.py": POSITIONS,
            "tower.py": """\
                from torch import nn

                from positions import device_positions, host_positions, pinned_positions, unknown_positions


                class Tower(nn.Module):
                    def forward(self, x, grid, tables):
                        a = host_positions(grid).to(x.device)
                        b = device_positions(grid, x.device).to(x.device)
                        c = unknown_positions(tables).to(x.device)
                        d = pinned_positions(grid).to(x.device, non_blocking=True)
                        return x + a + b + c + d
                """,
        },
    )
    found = findings(root, "tower.py", min_confidence="low")
    assert [f[1:3] for f in found] == [(8, "SL103")]
    assert found[0][3] == "medium"
    # Without the index the helper's result is unknown: nothing is reported.
    assert findings(root, "tower.py", repository_index=False, min_confidence="low") == []


def test_a_joined_comprehension_is_host_only_where_it_gathers_the_objects_own_fields(tmp_path):
    # `torch.cat([item.pixels for item in items])` gathers what each request object holds (a
    # processor's host tensors); `torch.cat([buf[a:b] for a, b in spans])` slices a buffer
    # nothing places: no guess of "host" for it, so its `.to(device)` is not reported.
    root = project(
        tmp_path / "proj",
        {
            "gather.py": """\
                import torch


                def gather_pixels(items):
                    return torch.cat([item.pixels for item in items])


                def gather_slices(buf, spans):
                    return torch.cat([buf[a:b] for a, b in spans])
                """,
            "tower.py": """\
                from torch import nn

                from gather import gather_pixels, gather_slices


                class Tower(nn.Module):
                    def forward(self, x, items, buf, spans):
                        pixels = gather_pixels(items).to(x.device)
                        sliced = gather_slices(buf, spans).to(x.device)
                        return pixels, sliced
                """,
        },
    )
    assert [f[1:3] for f in findings(root, "tower.py", min_confidence="low")] == [(8, "SL103")]


def test_a_blocking_move_of_a_parameter_the_repository_gives_host_data_is_not_reported(tmp_path):
    # The tower's `x` is given the items' own fields (host by convention), yet a serving
    # engine often moved them to the device before: only a helper's result is reported.
    root = project(
        tmp_path / "proj",
        {
            "model.py": """\
                import torch
                from torch import nn


                class Tower(nn.Module):
                    def forward(self, x: torch.Tensor):
                        return x.to(self.device)


                class Model(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.tower = Tower()

                    def embed(self, items):
                        pixels = torch.cat([item.pixels for item in items])
                        return self.tower(pixels)
                """,
        },
    )
    assert [f for f in findings(root, "model.py", min_confidence="low") if f[2] == "SL103"] == []


HOLDERS = """\
    from dataclasses import dataclass

    import torch


    @dataclass
    class Holder:
        tensor: torch.Tensor


    def make_holder(n: int, device) -> Holder:
        return Holder(tensor=torch.zeros(n, device=device))
    """

FIELDS = """\
    from plugin.types import InputTypeEnum


    def field_config(definitions):
        fields = {}
        for name, spec in definitions.items():
            if spec.type == InputTypeEnum.tensor:
                fields[name] = "batched"
        return fields


    def stale(holder):
        if holder.tensor == 0:
            return True
        return False
    """


def test_an_attribute_of_a_class_itself_is_no_field_of_an_object(tmp_path):
    # `InputTypeEnum.tensor` is an enum's member (a library's class): what the repository
    # assigns to objects' `tensor` fields says nothing of it. `holder.tensor`, an object's
    # field of that name, is still read as the repository assigns it.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/holders.py": HOLDERS, "pkg/fields.py": FIELDS})
    assert [(f[1], f[2]) for f in findings(root, "pkg/fields.py")] == [(13, "SL203")]


SCATTER = """\
    import torch

    from pkg.platforms import current_platform


    def scatter_naive(rows: torch.Tensor, loc: torch.Tensor, values: torch.Tensor):
        keep = loc != 0
        rows[loc[keep]] = values[keep]


    def scatter(rows: torch.Tensor, loc: torch.Tensor, values: torch.Tensor):
        if not current_platform.capabilities.supports_triton:
            scatter_naive(rows, loc, values)
            return
        scatter_kernel(rows, loc, values)


    class KVPool(torch.nn.Module):
        def forward(self, loc: torch.Tensor, values: torch.Tensor):
            scatter(self.rows, loc.cuda(), values)
    """


def test_a_fallback_for_platforms_without_triton_is_cold_for_a_cuda_target(tmp_path):
    # The torch-native scatter runs only where the platform cannot launch Triton: for a CUDA
    # target it is reached only from that branch, and its mask indexing is cold.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/scatter.py": SCATTER})
    assert [f for f in findings(root, "pkg/scatter.py")] == []
    assert {f[1] for f in findings(root, "pkg/scatter.py", include_cold=True)} == {8}


TOKEN_FILTER = """\
    import torch

    from pkg.kernels import set_filter_kernel

    _is_hip = torch.version.hip is not None


    def set_filter_torch(vocab_mask: torch.Tensor, token_ids: list, row: int):
        ids = torch.tensor(token_ids, dtype=torch.long, device=vocab_mask.device)
        vocab_mask[row].index_fill_(0, ids, 0)


    class Grammar:
        @staticmethod
        def set_filter(vocab_mask: torch.Tensor, token_ids: list, row: int):
            if _is_hip or vocab_mask.device.type != "cuda":
                set_filter_torch(vocab_mask, token_ids, row)
            else:
                set_filter_kernel(vocab_mask, token_ids, row)
    """


def test_a_fallback_called_only_where_the_data_is_not_on_cuda_is_cold_for_a_cuda_target(tmp_path):
    # The torch fallback runs only for ROCm or for a mask that does not live on a CUDA device:
    # its copy from a list is not a CUDA sync. For a ROCm target it is.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/kernels.py": "def set_filter_kernel(m, t, r):\n    pass\n",
                              "pkg/grammar.py": TOKEN_FILTER})
    assert findings(root, "pkg/grammar.py") == []
    assert [f[:3] for f in findings(root, "pkg/grammar.py", include_cold=True)] == [("grammar.py", 9, "SL101")]
    assert [f[:3] for f in findings(root, "pkg/grammar.py", target_platforms=("rocm",))] == [("grammar.py", 9, "SL101")]


BASE_VL = """\
    from pkg.multimodal import MultiModalFieldConfig


    class BaseVLProcessor:
        def _get_mm_fields_config(self, hf_inputs):
            return dict(
                pixel_values=MultiModalFieldConfig.batched("image"),
                image_grid_thw=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
            )
    """

MID_VL = """\
    from pkg.multimodal import MultiModalFieldConfig
    from .base_vl import BaseVLProcessor


    class MidVLProcessor(BaseVLProcessor):
        def _get_mm_fields_config(self, hf_inputs):
            fields = super()._get_mm_fields_config(hf_inputs)
            return dict(**fields, timestamps=MultiModalFieldConfig.batched("video", keep_on_cpu=True))
    """

PANGU_VL = """\
    import torch
    from torch import nn
    from pkg.multimodal import MultiModalDataDict
    from pkg.models.mid_vl import MidVLProcessor


    class PanguProcessor(MidVLProcessor):
        pass


    class PanguVision(nn.Module):
        def forward(self, x: torch.Tensor, grid_thw: torch.Tensor, pixel_values: torch.Tensor):
            pos = [torch.arange(h * w, device=x.device).repeat(t, 1) for t, h, w in grid_thw]
            return torch.cat(pos), pixel_values.max().item()
    """


def test_a_model_reads_the_fields_its_processors_bases_keep_on_the_host(tmp_path):
    # The processor derives (through another model's) from the one that declares
    # `image_grid_thw` kept on the host: the vision tower's `grid_thw` is host data, and only
    # the readback of the device `pixel_values` is reported.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/models/base_vl.py": BASE_VL,
                              "pkg/models/mid_vl.py": MID_VL, "pkg/models/pangu_vl.py": PANGU_VL})
    assert [f[1:3] for f in findings(root, "pkg/models/pangu_vl.py")] == [(14, "SL201")]


REGISTERED_VL = """\
    import torch
    from torch import nn
    from pkg.multimodal import MULTIMODAL_REGISTRY
    from .common.preprocess import VLProcessor, VLInfo


    @MULTIMODAL_REGISTRY.register_processor(VLProcessor, info=VLInfo)
    class RegisteredVL(nn.Module):
        def forward(self, x: torch.Tensor, grid_thw: torch.Tensor, pixel_values: torch.Tensor):
            pos = [torch.arange(h * w, device=x.device).repeat(t, 1) for t, h, w in grid_thw]
            return torch.cat(pos), pixel_values.max().item()
    """

PREPROCESS_VL = """\
    from pkg.multimodal import MultiModalFieldConfig


    class VLInfo:
        pass


    class VLProcessor:
        def _get_mm_fields_config(self, hf_inputs):
            return dict(
                pixel_values=MultiModalFieldConfig.batched("image"),
                image_grid_thw=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
            )
    """


def test_a_model_reads_the_fields_the_processor_it_registers_keeps_on_the_host(tmp_path):
    # The model's class derives from nothing of the processor's module, but registers that
    # module's processor (`@MULTIMODAL_REGISTRY.register_processor(VLProcessor, ...)`): the
    # fields it declares kept on the host are host data in the model. Without the decorator
    # the model keeps its own reading.
    files = {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/models/vl/__init__.py": "",
             "pkg/models/vl/common/__init__.py": "", "pkg/models/vl/common/preprocess.py": PREPROCESS_VL,
             "pkg/models/vl/model.py": REGISTERED_VL}
    root = project(tmp_path / "registered", files)
    assert [f[1:3] for f in findings(root, "pkg/models/vl/model.py")] == [(11, "SL201")]
    files["pkg/models/vl/model.py"] = REGISTERED_VL.replace("    @MULTIMODAL_REGISTRY.register_processor(VLProcessor, info=VLInfo)\n", "")
    assert "register_processor" not in files["pkg/models/vl/model.py"]
    root = project(tmp_path / "plain", files)
    assert (9, "SL208") in [f[1:3] for f in findings(root, "pkg/models/vl/model.py")]


def test_a_model_does_not_inherit_host_fields_against_its_own_declarations_or_without_a_base(tmp_path):
    # A module that declares `grid_thw` for the device itself, and one whose classes derive
    # from nothing of the declaring module, keep their own reading of `grid_thw`.
    own = PANGU_VL.replace("class PanguProcessor(MidVLProcessor):\n        pass",
                           "class PanguProcessor(MidVLProcessor):\n        def fields(self):\n"
                           "            return dict(grid_thw=MultiModalFieldConfig.batched(\"image\"))")
    own = own.replace("from pkg.multimodal import MultiModalDataDict", "from pkg.multimodal import MultiModalFieldConfig")
    unrelated = PANGU_VL.replace("class PanguProcessor(MidVLProcessor):", "class PanguProcessor:")
    for text in (own, unrelated):
        root = project(tmp_path, {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/models/base_vl.py": BASE_VL,
                                  "pkg/models/mid_vl.py": MID_VL, "pkg/models/pangu_vl.py": text})
        row = textwrap.dedent(text).splitlines().index("        pos = [torch.arange(h * w, device=x.device).repeat(t, 1) for t, h, w in grid_thw]") + 1
        assert (row, "SL208") in [f[1:3] for f in findings(root, "pkg/models/pangu_vl.py")], text


def test_a_tree_without_a_project_marker_names_its_modules_as_one_with_one(tmp_path, monkeypatch):
    # An unpacked wheel has no `.git` or `pyproject.toml`: linted from its folder with relative
    # paths (`synclint check .`), its modules are still named from the folder above the top
    # package, so the index's module names and the linted file's agree and the base module's
    # host fields are found.
    # `srt/` and `srt/models/` are namespace folders (no `__init__.py`), as many are in real
    # wheels, between the top package and the models' own package.
    files = {"pkg/__init__.py": "", "pkg/srt/models/vl/__init__.py": "", "pkg/srt/models/vl/base_vl.py": BASE_VL,
             "pkg/srt/models/vl/mid_vl.py": MID_VL, "pkg/srt/models/vl/pangu_vl.py": PANGU_VL.replace("pkg.models.mid_vl", "pkg.srt.models.vl.mid_vl")}
    root = project(tmp_path / "wheel", files)
    (root / ".git").rmdir()
    monkeypatch.chdir(root)
    run = runner.lint_paths([Path(".")], Settings(), jobs=1, use_cache=False)
    assert [(Path(v.filename).name, v.location.row, v.code) for v in run.violations] == [("pangu_vl.py", 14, "SL201")]
    run = runner.lint_paths([Path("pkg/srt/models/vl/pangu_vl.py")], Settings(), jobs=1, use_cache=False)
    assert [(v.location.row, v.code) for v in run.violations] == [(14, "SL201")]


KIMI_TOWER = """\
    import torch
    from torch import nn


    class Tower(nn.Module):
        def forward(self, pixel_values: torch.Tensor, grid_hws: torch.Tensor) -> torch.Tensor:
            sizes = grid_hws.tolist()
            return pixel_values[: sizes[0][0]].sum().item()
    """

KIMI_MODEL = """\
    import torch
    from torch import nn
    from pkg.multimodal import MultiModalFieldConfig
    from pkg.tower import Tower


    class Processor:
        def _get_mm_fields_config(self, hf_inputs):
            return dict(
                pixel_values=MultiModalFieldConfig.batched("image"),
                image_grid_hws=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
            )


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.vision_tower = Tower()

        def _process_image_pixels(self, inputs) -> torch.Tensor:
            pixel_values = inputs["pixel_values"]
            image_grid_hws = inputs["image_grid_hws"]
            return self.vision_tower(pixel_values, image_grid_hws)

        def embed(self, **kwargs):
            return self._process_image_pixels(kwargs)
    """


def test_a_field_kept_on_the_host_stays_host_data_in_the_module_it_is_passed_to(tmp_path):
    # The model reads the `keep_on_cpu` field by its key and hands it to another module's
    # vision tower: the tower's `grid_hws` is given host data only, so its `.tolist()` is no
    # sync; the readback of the device `pixel_values` slice is.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/tower.py": KIMI_TOWER, "pkg/model.py": KIMI_MODEL})
    assert [f[1:3] for f in findings(root, "pkg/tower.py")] == [(8, "SL201")]
    # Declared for the device, the same grid is a device tensor there.
    root = project(tmp_path / "device", {"pkg/__init__.py": "", "pkg/tower.py": KIMI_TOWER,
                                         "pkg/model.py": KIMI_MODEL.replace(', keep_on_cpu=True', '')})
    assert [f[1:3] for f in findings(root, "pkg/tower.py")] == [(7, "SL202"), (8, "SL201")]
