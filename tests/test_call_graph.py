"""The call graph's calls are resolved through classes (synclint/repo/callgraph.py `_CallGraph`): a
method reached from a model's forward is hot, its namesake in another class that only
`__init__` calls is cold, on real-shaped multi-file projects."""

from __future__ import annotations

import textwrap
from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence


def _edited(root: Path, files: dict[str, str], path: str, old: str, new: str) -> Path:
    """A project of `files` with `old` replaced by `new` in the file at `path`."""
    changed = dict(files)
    changed[path] = files[path].replace(old, new)
    return project(root, changed)


def tiers(root: Path, name: str, **settings) -> dict[int, tuple[str, str | None]]:
    settings = Settings(include_cold=True, min_confidence=Confidence.LOW, **settings)
    run = runner.lint_paths([root / name], settings, jobs=1, use_cache=False)
    return {v.location.row: (v.tier, v.tier_reason) for v in run.violations}


STAGES = {
    "engine/preprocess.py": """\
        import torch


        class TokenizerStage:
            def __init__(self, table: torch.Tensor):
                self.limit = self.process(table)

            def process(self, table: torch.Tensor):
                return int(table.max().item())
        """,
    "engine/model.py": """\
        import torch
        from torch import nn


        class LogitsStage:
            def process(self, logits: torch.Tensor):
                return int(logits.argmax().item())


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.stage = LogitsStage()

            def forward(self, logits: torch.Tensor):
                return self.stage.process(logits)
        """,
}


def test_a_method_is_reached_through_its_class_not_through_a_namesake(tmp_path):
    root = project(tmp_path / "proj", STAGES)
    # `self.process(table)` in TokenizerStage.__init__ reaches TokenizerStage.process only;
    # `self.stage.process(...)` in a forward reaches the class the field holds.
    assert tiers(root, "engine/preprocess.py")[9] == ("cold", "reached only from cold code (TokenizerStage.__init__ -> process)")
    assert tiers(root, "engine/model.py")[7] == ("hot", "runs every step (called from Head.forward: Head.forward -> LogitsStage.process)")
    # The default report leaves the once-only call out.
    default = runner.lint_paths([root / "engine/preprocess.py"], Settings(), jobs=1, use_cache=False)
    assert default.violations == []


def test_a_method_of_a_base_class_and_the_overrides_of_subclasses(tmp_path):
    files = {
        "engine/attention.py": """\
            import torch


            class AttentionBackend:
                def forward(self, q: torch.Tensor):
                    return self.plan(q)

                def plan(self, q: torch.Tensor):
                    return int(q.shape[0])


            class FlashBackend(AttentionBackend):
                def plan(self, q: torch.Tensor):
                    return int(q.sum().item())


            class Loader:
                def __init__(self, weights: torch.Tensor):
                    self.scale = self.plan(weights)

                def plan(self, weights: torch.Tensor):
                    return float(weights.abs().max().item())
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/attention.py")
    # `self.plan(q)` in the base's forward runs a subclass's override.
    assert found[14] == ("hot", "runs every step (called from AttentionBackend.forward: AttentionBackend.forward -> FlashBackend.plan)")
    assert found[22] == ("cold", "reached only from cold code (Loader.__init__ -> plan)")


def test_a_submodule_call_reaches_its_forward(tmp_path):
    files = {
        "engine/blocks.py": """\
            import torch
            from torch import nn


            class Adapter(nn.Module):
                def __init__(self, scale: float = 2.0):
                    super().__init__()
                    self.scale = scale

                def forward(self, x: torch.Tensor):
                    return x * self.scale


            class ScaledAdapter(Adapter):
                def forward(self, x: torch.Tensor):
                    return super().forward(x) + 1


            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.adapter = Adapter()

                def encode(self, x: torch.Tensor):
                    return self.adapter(x)
            """,
    }
    root = project(tmp_path / "proj", files)
    facts = repo.build(root, use_cache=False)
    # `self.adapter` holds an Adapter, or a subclass: both forwards.
    assert facts.callers["Adapter.forward"] == ("Encoder.encode", "ScaledAdapter.forward")
    assert facts.callers["ScaledAdapter.forward"] == ("Encoder.encode",)
    assert "adapter" not in facts.callers
    # `super().__init__()` runs the base's constructor, not every subclass's of nn.Module.
    assert not any(name.endswith("__init__") for name in facts.callers if not name.startswith(repo.MARK_CALLER))


def test_a_cycle_of_methods_is_searched_once(tmp_path):
    files = {
        "engine/sched.py": """\
            import torch


            class Scheduler:
                def __init__(self, budget: torch.Tensor):
                    self.left = self.schedule(budget, 3)

                def schedule(self, budget: torch.Tensor, depth: int):
                    return self._retry(budget, depth)

                def _retry(self, budget: torch.Tensor, depth: int):
                    if depth and bool(budget.sum().item()):
                        return self.schedule(budget, depth - 1)
                    return depth
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/sched.py")
    assert found[12] == ("cold", "reached only from cold code (Scheduler.__init__ -> schedule -> _retry)")


def test_by_name_where_no_class_is_known(tmp_path):
    files = {
        "engine/runner.py": """\
            import torch


            class Runner:
                def execute_model(self, batch, planner):
                    return planner.plan_slots(batch.lengths)
            """,
        "engine/planner.py": """\
            import torch


            class SlotPlanner:
                def plan_slots(self, lengths: torch.Tensor):
                    return int(lengths.max().item())
            """,
    }
    root = project(tmp_path / "proj", files)
    # `planner` has no class the index knows: the one class defining `plan_slots` is reached.
    assert tiers(root, "engine/planner.py")[6] == ("hot", "runs every step (called from Runner.execute_model: Runner.execute_model -> SlotPlanner.plan_slots)")


GENERIC = {
    "engine/stages.py": """\
        import torch


        class Prefetch:
            def run(self, x: torch.Tensor):
                return x


        class Upload:
            def run(self, x: torch.Tensor):
                return x


        class Flush:
            def run(self, x: torch.Tensor):
                return x


        class Checker:
            def __init__(self, table: torch.Tensor):
                self.ok = self.run(table)

            def run(self, table: torch.Tensor):
                return bool(table.isfinite().all().item())


        class Drain:
            def run(self, x: torch.Tensor):
                return int(x.sum().item())
        """,
    "engine/model.py": """\
        import torch


        class Model:
            def forward(self, job, x: torch.Tensor):
                return job.run(x)
        """,
}


def test_a_name_many_unrelated_classes_define_makes_nothing_hot_by_name(tmp_path):
    root = project(tmp_path / "proj", GENERIC)
    # `job.run(x)` may be any of five unrelated classes' `run`: Checker.run, called by its
    # own class only from __init__, is not made hot by it, and not cold either.
    found = tiers(root, "engine/stages.py")
    assert found[24] == ("unknown", "no signal says how often this code runs")
    # Drain.run, which no call naming its class reaches, may run every step: `unknown`, with
    # the way in by name shown (a name so many classes define is no evidence that it is hot).
    assert found[29] == ("unknown", "may run every step: called by name from Model.forward: Model.forward -> Drain.run, "
                                    "a name many unrelated classes define")
    # With fewer unrelated classes defining the name, the call reaches them all.
    fewer = dict(GENERIC)
    fewer["engine/stages.py"] = GENERIC["engine/stages.py"].replace("class Upload:", "class Upload(Prefetch):").replace("class Flush:", "class Flush(Prefetch):")
    other = project(tmp_path / "other", fewer)
    assert tiers(other, "engine/stages.py")[24][0] == "hot"


def test_what_a_function_says_of_itself_outranks_a_way_in_by_name(tmp_path):
    # `Drain.run` compiled with torch.compile is hot by its own decorator, whatever way in
    # the call graph found; the way in by name only speaks where nothing else does.
    files = dict(GENERIC)
    files["engine/stages.py"] = GENERIC["engine/stages.py"].replace(
        "        class Drain:\n            def run(", "        class Drain:\n            @torch.compile\n            def run(")
    assert files["engine/stages.py"] != GENERIC["engine/stages.py"]
    root = project(tmp_path / "proj", files)
    assert tiers(root, "engine/stages.py")[30][0] == "hot"


def test_a_function_imported_from_a_library_is_not_the_repositorys_namesake(tmp_path):
    files = {
        "engine/model.py": """\
            import torch
            from einops import rearrange


            class Model:
                def forward(self, x: torch.Tensor):
                    return rearrange(x, "b n -> n b")
            """,
        "engine/balance.py": """\
            import torch


            def rearrange(load: torch.Tensor):
                return int(load.argmax().item())


            class Balancer:
                def __init__(self, load: torch.Tensor):
                    self.first = rearrange(load)
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "engine/balance.py")[5] == ("cold", "reached only from cold code (Balancer.__init__ -> rearrange)")


def test_a_field_given_another_class_re_lints_the_namesakes_file(tmp_path):
    # The verdict on TokenizerStage.process depends on which class `self.stage` holds in
    # another file: a cached result is checked by that answer.
    root = project(tmp_path / "proj", STAGES)
    settings = Settings(include_cold=True, min_confidence=Confidence.LOW, cache_dir=str(tmp_path / "cache"))
    first = runner.lint_paths([root], settings, jobs=1, use_cache=True)
    assert {(Path(v.filename).name, v.tier) for v in first.violations} == {("preprocess.py", "cold"), ("model.py", "hot")}
    model = root / "engine/model.py"
    text = model.read_text().replace("from torch import nn\n", "from torch import nn\nfrom engine.preprocess import TokenizerStage\n")
    model.write_text(text.replace("self.stage = LogitsStage()", "self.stage = TokenizerStage(torch.zeros(2))"))
    changed = runner.lint_paths([root], settings, jobs=1, use_cache=True)
    assert {Path(name).name for name in changed.linted_files} == {"model.py", "preprocess.py"}
    found = {(Path(v.filename).name, v.location.row): (v.tier, v.tier_reason) for v in changed.violations}
    assert found[("preprocess.py", 9)] == ("hot", "runs every step (called from Head.forward: Head.forward -> TokenizerStage.process)")
    assert found[("model.py", 8)][0] == "unknown"


def test_what_a_pipeline_stage_calls_outside_its_loop_runs_once_per_request(tmp_path):
    files = {
        "gen/stages.py": """\
            import torch

            from gen.helpers import prepare_cond, predict


            class DenoisingStage:
                def forward(self, batch, timesteps, device):
                    cond = prepare_cond(batch.sizes, device)
                    latents = batch.latents
                    for t in timesteps:
                        latents = predict(latents, cond, t)
                    return latents
            """,
        "gen/helpers.py": """\
            import torch


            def prepare_cond(sizes, device):
                return torch.tensor(sizes, device=device)


            def predict(latents: torch.Tensor, cond: torch.Tensor, t):
                if torch.isnan(latents).any():
                    latents = torch.nan_to_num(latents)
                return latents - cond.mean() * t
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "gen/helpers.py")
    assert found[5] == ("cold", "reached only from cold code (DenoisingStage.forward [on a cold branch] -> prepare_cond)")
    assert found[9][0] == "hot"


def test_a_stage_named_for_its_model_is_read_by_its_base(tmp_path):
    files = {
        "gen/base.py": """\
            class PipelineStage:
                def forward(self, batch):
                    raise NotImplementedError
            """,
        "gen/ar.py": """\
            import torch

            from gen.base import PipelineStage
            from gen.helpers import prepare_cond


            class ImageTokensAR(PipelineStage):
                def forward(self, batch, device):
                    return prepare_cond(batch.sizes, device)
            """,
        "gen/helpers.py": """\
            import torch


            def prepare_cond(sizes, device):
                return torch.tensor(sizes, device=device)
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "gen/helpers.py")[5] == ("cold", "reached only from cold code (ImageTokensAR.forward [on a cold branch] -> prepare_cond)")


SEGMENTS = {
    "gen/stages.py": """\
        import torch

        from gen.helpers import build_clip_cond, decode_clip, predict


        class ClipDenoisingStage:
            def forward(self, batch, device):
                frames = []
                for clip in batch.schedule:
                    cond = build_clip_cond(clip.sizes, device)
                    latents = self._denoise_clip(batch, cond)
                    frames.append(decode_clip(latents, device))
                    last = int(latents[0, 0].item())
                return frames, last

            def _denoise_clip(self, batch, cond):
                self.scheduler.set_timesteps(batch.steps)
                return self._run_denoising_loop(batch, cond)

            def _run_denoising_loop(self, batch, cond):
                latents = batch.latents
                for t in self.scheduler.timesteps:
                    latents = predict(latents, cond, t)
                return latents
        """,
    "gen/helpers.py": """\
        import torch


        def build_clip_cond(sizes, device):
            return torch.tensor(sizes, device=device)


        def decode_clip(latents: torch.Tensor, device):
            scale = torch.tensor([0.5, 0.5], device=device)
            return latents * scale


        def predict(latents: torch.Tensor, cond: torch.Tensor, t):
            if torch.isnan(latents).any():
                latents = torch.nan_to_num(latents)
            return latents - cond.mean() * t
        """,
}


def test_a_stage_loop_over_segments_runs_its_body_once_per_segment(tmp_path):
    # `for clip in batch.schedule:` calls the method that holds the denoise loop: the rest
    # of its body (the clip's conditioning, its decoding, a readback) runs once per clip.
    root = project(tmp_path / "proj", SEGMENTS)
    found = tiers(root, "gen/helpers.py")
    assert found[5][0] == "cold" and "ClipDenoisingStage.forward [on a cold branch]" in found[5][1]
    assert found[9][0] == "cold"
    assert found[14][0] == "hot"
    local = tiers(root, "gen/stages.py")
    assert local[13][0] == "cold" and "once per segment" in local[13][1]
    # A header that names denoising but counts no steps goes over segments too.
    root = _edited(tmp_path / "named", SEGMENTS, "gen/stages.py", "for clip in batch.schedule:", "for clip in batch.denoising_schedule:")
    assert tiers(root, "gen/helpers.py")[9][0] == "cold"
    # A loop whose header names the steps is the denoise loop, whatever it calls.
    root = _edited(tmp_path / "steps", SEGMENTS, "gen/stages.py", "for clip in batch.schedule:", "for step in batch.steps:")
    assert tiers(root, "gen/helpers.py")[5][0] == "hot"
    assert tiers(root, "gen/stages.py")[13][0] == "hot"
    # A loop that calls no method holding a loop is the denoise loop of this stage.
    root = _edited(tmp_path / "flat", SEGMENTS, "gen/stages.py",
                   "latents = self._denoise_clip(batch, cond)", "latents = predict(batch.latents, cond, clip.t)")
    assert tiers(root, "gen/helpers.py")[5][0] == "hot"
    assert tiers(root, "gen/stages.py")[13][0] == "hot"


def test_a_branch_of_a_segment_loop_that_runs_the_steps_is_read_inside(tmp_path):
    # `if two_stage: self._refine(...) else: build_cond(...); self._denoise_clip(...)`: the
    # branch calls the method holding the denoise loop, but what sits beside that call in
    # it (the clip's conditioning, a scheduler's setup) runs once per clip, here and in the
    # helpers it calls; the call graph and the local tier agree.
    branched = {
        **SEGMENTS,
        "gen/stages.py": SEGMENTS["gen/stages.py"].replace(
            """                    cond = build_clip_cond(clip.sizes, device)
                    latents = self._denoise_clip(batch, cond)
""",
            """                    if batch.two_stage:
                        latents = self._denoise_clip(batch, None)
                    else:
                        cond = build_clip_cond(clip.sizes, device)
                        ready = int(cond[0].item())
                        latents = self._denoise_clip(batch, cond)
""",
        ),
    }
    assert branched["gen/stages.py"] != SEGMENTS["gen/stages.py"]
    root = project(tmp_path / "proj", branched)
    found = tiers(root, "gen/helpers.py")
    assert found[5][0] == "cold" and "ClipDenoisingStage.forward [on a cold branch]" in found[5][1]
    assert found[14][0] == "hot"
    local = tiers(root, "gen/stages.py")
    assert local[14][0] == "cold" and "once per segment" in local[14][1]
    assert local[17][0] == "cold"


def test_a_text_encoding_stage_loop_and_a_memoised_caller_run_once(tmp_path):
    files = {
        "gen/stages.py": """\
            import functools

            import torch

            from gen.helpers import encode, layout


            class TextEncodingStage:
                def forward(self, batch, device):
                    for prompt in batch.prompts:
                        batch.embeds.append(encode(prompt, device))
                    return batch


            class Attention(torch.nn.Module):
                def forward(self, x: torch.Tensor, lengths):
                    return x + varlen_meta(tuple(lengths), x.device)


            @functools.lru_cache(maxsize=16)
            def varlen_meta(lengths, device):
                return layout(lengths, device)
            """,
        "gen/helpers.py": """\
            import torch


            def encode(prompt, device):
                return torch.tensor(prompt, device=device)


            def layout(lengths, device):
                return torch.tensor(lengths, device=device)
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "gen/helpers.py")
    # The loop of a text-encoding stage goes over prompts, once per request.
    assert found[5] == ("cold", "reached only from cold code (TextEncodingStage.forward [on a cold branch] -> encode)")
    # What an `lru_cache` function calls runs on a cache miss, once per key.
    assert found[9] == ("cold", "reached only from cold code (varlen_meta [on a cold branch] -> layout)")


ARGUMENT_GUARDS = {
    "serve/ops.py": """\
        import torch


        def scaled(q: torch.Tensor, k_scale=None):
            if k_scale is None:
                k_scale = torch.tensor(1.0, device=q.device)
            return q * k_scale


        def flush(event: torch.cuda.Event, wait=False):
            if wait:
                event.synchronize()


        def lengths(x: torch.Tensor, lengths_cpu=None):
            return lengths_cpu if lengths_cpu is not None else x.tolist()


        def split(x: torch.Tensor, sizes_cpu=None):
            return inner_split(x, sizes_cpu=sizes_cpu)


        def inner_split(x: torch.Tensor, sizes_cpu=None):
            if sizes_cpu is None:
                sizes_cpu = x.tolist()
            return sizes_cpu
        """,
    "serve/model.py": """\
        import torch
        from torch import nn

        from serve.ops import flush, lengths, scaled, split


        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.k_scale = torch.ones(1)

            def forward(self, q: torch.Tensor, event, sizes):
                out = scaled(q, self.k_scale.float())
                flush(event)
                n = lengths(q)
                parts = split(q, sizes_cpu=list(sizes))
                return out, n, parts

            def shutdown(self, event):
                flush(event, wait=True)
        """,
}


def test_a_branch_no_hot_call_takes_is_cold(tmp_path):
    root = project(tmp_path / "proj", ARGUMENT_GUARDS)
    found = tiers(root, "serve/ops.py")
    # Every call on a hot path passes `k_scale`: the fallback never runs in steady state.
    assert found[6] == ("cold", "runs only when `k_scale` is None, and no call of `scaled()` outside cold code passes that")
    # `wait=True` comes only from shutdown (cold); the forward leaves the default False.
    assert found[12] == ("cold", "runs only when `wait` is true, and no call of `flush()` outside cold code passes that")
    # The forward leaves `lengths_cpu` out: the `.tolist()` fallback runs every step.
    assert found[16][0] == "hot"
    # `sizes_cpu` passed on by `split()` from a forward that gives it: followed up the calls.
    assert found[25] == ("cold", "runs only when `sizes_cpu` is None, and no call of `inner_split()` outside cold code passes that")


def test_an_unknown_argument_leaves_the_branch_as_it_was(tmp_path):
    files = dict(ARGUMENT_GUARDS)
    # A field may hold None (`self.k_scale = None` where the layer drops its scale); a flag
    # read from a field may be true.
    files["serve/model.py"] = files["serve/model.py"].replace("scaled(q, self.k_scale.float())", "scaled(q, self.k_scale)").replace(
        "flush(event)", "flush(event, wait=self.blocking)").replace("split(q, sizes_cpu=list(sizes))", "split(q, sizes_cpu=sizes.get('cpu'))").replace(
        "    def shutdown(self, event):", "    def drop_scale(self):\n                self.k_scale = None\n\n            def shutdown(self, event):")
    root = project(tmp_path / "proj", files)
    found = tiers(root, "serve/ops.py")
    assert found[6][0] == "hot" and found[12][0] == "hot"
    # The fallback for a host copy that a caller may or may not hand over: it may run every
    # step, and nothing says it does.
    assert found[25] == ("unknown", "the fallback for when host copy `sizes_cpu` is None, which may not run every step; "
                                    "the code around it runs every step (called from Attention.forward: Attention.forward -> "
                                    "split -> inner_split)")


KEYWORD_DICT_GUARDS = {
    "dit/attention.py": """\
        import torch


        def varlen(q: torch.Tensor, *, cu_seqlens: torch.Tensor, cu_seqlens_host=None, window: int = 0):
            bounds = cu_seqlens_host if cu_seqlens_host is not None else tuple(cu_seqlens.tolist())
            return q, bounds


        def varlen_eager(q: torch.Tensor, out: torch.Tensor, **kwargs):
            result, _ = varlen(q, **kwargs)
            out.copy_(result)
        """,
    "dit/model.py": """\
        import torch
        from torch import nn

        from dit.attention import varlen, varlen_eager


        class Block(nn.Module):
            def forward(self, q: torch.Tensor, cu_seqlens: torch.Tensor, lengths: list, eager: bool):
                core = dict(cu_seqlens=cu_seqlens, cu_seqlens_host=tuple(lengths), window=4)
                if eager:
                    varlen_eager(q, out=q.new_empty(q.shape), **core)
                    return q
                out, _ = varlen(q, **core)
                return out
        """,
}


def test_keywords_passed_through_a_local_dict_and_a_forwarding_wrapper(tmp_path):
    # `varlen(q, **core)` with `core = dict(..., cu_seqlens_host=tuple(lengths))`, and the same
    # dict through a wrapper that forwards its `**kwargs`: every call gives the host bounds.
    root = project(tmp_path / "proj", KEYWORD_DICT_GUARDS)
    found = tiers(root, "dit/attention.py")
    assert found[5] == (
        "cold", "runs only when `cu_seqlens_host` is None, and no call of `varlen()` outside cold code passes that")
    # A dict that leaves the keyword out: the fallback runs.
    files = dict(KEYWORD_DICT_GUARDS)
    files["dit/model.py"] = files["dit/model.py"].replace(", cu_seqlens_host=tuple(lengths)", "")
    found = tiers(project(tmp_path / "other", files), "dit/attention.py")
    assert found[5][0] == "hot"


ADAPTER_SLOTS = {
    "lora/layers.py": """\
        import torch


        class HeadWithAdapters(torch.nn.Module):
            def __init__(self, slots: int, device):
                super().__init__()
                self.enabled = torch.zeros(slots, dtype=torch.bool, device=device)

            def set_slot(self, index: int):
                self.enabled[index] = True
        """,
    "lora/manager.py": """\
        from lora.layers import HeadWithAdapters


        class AdapterManager:
            def __init__(self, device):
                self.head = HeadWithAdapters(8, device)
                self._active = {}

            def activate(self, adapter_id: int, index: int) -> bool:
                if adapter_id in self._active:
                    return False
                self.head.set_slot(index)
                self._active[adapter_id] = index
                return True

            def execute_model(self, batch):
                for adapter_id, index in batch.adapters:
                    self.activate(adapter_id, index)
                return batch
        """,
}


def test_calls_after_a_lookup_of_a_key_the_code_then_stores_run_once_per_key(tmp_path):
    # `if adapter_id in self._active: return False`, then `self._active[adapter_id] = ...`:
    # what `activate` calls after the lookup runs once per adapter, not every step.
    root = project(tmp_path / "proj", ADAPTER_SLOTS)
    found = tiers(root, "lora/layers.py")
    assert found[10][0] == "cold" and "AdapterManager.activate [on a cold branch]" in found[10][1], found
    # The look-alike: a table filled under another key says nothing of this one.
    files = dict(ADAPTER_SLOTS)
    files["lora/manager.py"] = files["lora/manager.py"].replace("self._active[adapter_id] = index", "self._active[index] = adapter_id")
    assert tiers(project(tmp_path / "other", files), "lora/layers.py")[10][0] == "hot"


def test_a_device_kernel_calls_no_host_code(tmp_path):
    files = {
        "quant/lm_head.py": """\
            import torch


            def quantize(weight: torch.Tensor):
                return weight / weight.abs().max().item()


            class Method:
                def process_weights_after_loading(self, layer):
                    layer.weight = quantize(layer.weight)
            """,
        "quant/kernels.py": """\
            import triton


            @triton.jit
            def quantize(x, BLOCK: triton.language.constexpr):
                return x


            @triton.jit
            def prepare_kernel(x_ptr, BLOCK: triton.language.constexpr):
                quantize(x_ptr, BLOCK)
            """,
    }
    root = project(tmp_path / "proj", files)
    # The kernel's call of its own device function is not a way into the host `quantize`.
    assert tiers(root, "quant/lm_head.py")[5] == (
        "cold", "reached only from cold code (Method.process_weights_after_loading -> quantize)")


def test_a_call_of_a_submodule_field_is_not_a_call_of_a_method_of_its_name(tmp_path):
    files = {
        "srv/reward.py": """\
            import torch
            from torch import nn


            class RewardModel(nn.Module):
                def __init__(self, hidden: int):
                    super().__init__()
                    self.score = nn.Linear(hidden, 1)

                def forward(self, h: torch.Tensor):
                    return self.score(h)
            """,
        "srv/engine.py": """\
            import torch


            class ScoreMixin:
                def score(self, request, device):
                    return torch.tensor(request.token_ids, device=device)
            """,
    }
    root = project(tmp_path / "proj", files)
    # `self.score(h)` runs the `nn.Linear` the field holds, not `ScoreMixin.score`.
    assert tiers(root, "srv/engine.py")[6][0] == "unknown"
    # Also from a subclass, where the field is assigned in its base's `__init__`.
    files["srv/reward.py"] += """

            class NormalizedReward(RewardModel):
                def forward(self, h: torch.Tensor):
                    return self.score(h / h.norm())
            """
    files["srv/reward.py"] = files["srv/reward.py"].replace("return self.score(h)\n", "return h\n")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/engine.py")[6][0] == "unknown"


def test_calls_of_a_crowded_name_that_cannot_reach_the_function_say_nothing_of_its_branch(tmp_path):
    # `filter_batch` is defined by many classes; the relay's is reached by name only. The calls
    # that name a keyword it lacks, or leave out its required `new_indices`, are not its calls.
    pools = "".join(
        f"""
            class Batch{i}:
                def filter_batch(self, keep_indices=None, reqs_to_exclude=None):
                    return keep_indices
            """
        for i in range(4)
    )
    files = {
        "srv/batches.py": "import torch\n" + pools,
        "srv/relay.py": """\
            import torch


            class Relay:
                def filter_batch(self, new_indices: torch.Tensor, new_indices_cpu=None):
                    keep = new_indices_cpu if new_indices_cpu is not None else new_indices.tolist()
                    return keep
            """,
        "srv/model.py": """\
            import torch
            from torch import nn


            class Model(nn.Module):
                def forward(self, batch, spec, idx: torch.Tensor, keep: list):
                    batch.filter_batch(reqs_to_exclude=keep)
                    batch.filter_batch()
                    spec.filter_batch(idx.cuda(), new_indices_cpu=list(keep))
                    return idx
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "srv/relay.py")[6] == (
        "cold", "runs only when `new_indices_cpu` is None, and no call of `filter_batch()` outside cold code passes that")
    # A call that could be the relay's and leaves the hint out: the fallback may run.
    files["srv/model.py"] = files["srv/model.py"].replace("batch.filter_batch()", "batch.filter_batch(idx)")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/relay.py")[6][0] == "hot"


# A platform object with the predicates of the common platform classes.
PLATFORM_MODULE = """\
    class Platform:
        def is_cpu(self) -> bool:
            return False


    current_platform = Platform()
    """


def test_a_flag_passed_as_a_platform_check_decides_by_the_target_platforms(tmp_path):
    files = {
        "srv/sampler.py": """\
            import torch

            from srv.platform import current_platform


            def top_k_only(logits: torch.Tensor, k: torch.Tensor, allow_cpu_sync=False):
                if allow_cpu_sync:
                    return logits.topk(int(k.max().item())).values
                return logits


            class Sampler(torch.nn.Module):
                def forward(self, logits: torch.Tensor, k: torch.Tensor):
                    return top_k_only(logits, k, allow_cpu_sync=current_platform.is_cpu())
            """,
        "srv/platform.py": PLATFORM_MODULE,
    }
    root = project(tmp_path / "proj", files)
    # On a CUDA target, `current_platform.is_cpu()` is false: the branch never runs.
    assert tiers(root, "srv/sampler.py")[8] == (
        "cold", "runs only when `allow_cpu_sync` is true, and no call of `top_k_only()` outside cold code passes that")
    # For the CPU platform it does.
    assert tiers(root, "srv/sampler.py", target_platforms=("cpu",))[8][0] == "hot"


def test_a_parameter_filled_where_it_is_none_is_given_when_passed_on(tmp_path):
    files = {
        "srv/relay.py": """\
            import torch


            class Relay:
                def filter(self, new_indices: torch.Tensor, new_indices_cpu=None):
                    return new_indices_cpu if new_indices_cpu is not None else new_indices.tolist()
            """,
        "srv/batch.py": """\
            import torch

            from srv.relay import Relay


            class Batch:
                def __init__(self):
                    self.relay = Relay()

                def filter_batch(self, reqs, keep_indices=None):
                    if keep_indices is None:
                        keep_indices = [i for i, r in enumerate(reqs) if not r.finished]
                    device_indices = torch.tensor(keep_indices).cuda()
                    self.relay.filter(device_indices, new_indices_cpu=keep_indices)


            class Model(torch.nn.Module):
                def forward(self, batch: Batch, reqs):
                    batch.filter_batch(reqs)
            """,
    }
    root = project(tmp_path / "proj", files)
    # `keep_indices` is None only before the fill: the relay always gets the host list.
    assert tiers(root, "srv/relay.py")[6] == (
        "cold", "runs only when `new_indices_cpu` is None, and no call of `filter()` outside cold code passes that")
    # Without the fill, the caller's callers leave it None.
    files["srv/batch.py"] = "".join(
        line for line in files["srv/batch.py"].splitlines(keepends=True) if "keep_indices is None" not in line and "r.finished" not in line)
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/relay.py")[6][0] == "hot"


def test_a_call_made_only_on_a_branch_no_call_takes_is_no_way_in(tmp_path):
    files = {
        "srv/sampler.py": """\
            import torch

            from srv.platform import current_platform


            def top_k_only(logits: torch.Tensor, k: torch.Tensor):
                return logits.topk(int(k.max().item())).values


            def top_k_top_p(logits: torch.Tensor, k: torch.Tensor, p, allow_cpu_sync=False):
                if p is None:
                    if allow_cpu_sync:
                        return top_k_only(logits, k)
                return logits


            class Sampler(torch.nn.Module):
                def forward(self, logits: torch.Tensor, k: torch.Tensor):
                    is_cpu = current_platform.is_cpu()
                    return top_k_top_p(logits, k, None, allow_cpu_sync=is_cpu)
            """,
        "srv/platform.py": PLATFORM_MODULE,
    }
    root = project(tmp_path / "proj", files)
    # `top_k_only` is called only when `allow_cpu_sync` is true: never on a CUDA target.
    assert tiers(root, "srv/sampler.py")[7] == (
        "cold", "reached only from cold code (top_k_top_p [on a branch no call outside cold code takes] -> top_k_only)")
    assert tiers(root, "srv/sampler.py", target_platforms=("cpu",))[7][0] == "hot"


def test_what_only_a_host_side_processor_calls_runs_on_the_cpu_per_request(tmp_path):
    files = {
        "engine/multimodal/video_utils.py": """\
            import torch


            def build_frame_mask(grids: torch.Tensor, device):
                mask = torch.zeros(int(grids.prod()), dtype=torch.bool, device=device)
                mask[0] = True
                return mask


            def count_tokens(grids: torch.Tensor):
                return int(grids.prod(-1).sum().item())
            """,
        "engine/models/video_model.py": """\
            import torch
            from torch import nn
            from engine.multimodal.base import BaseMultiModalProcessor
            from engine.multimodal.video_utils import build_frame_mask, count_tokens


            class VideoMultiModalProcessor(BaseMultiModalProcessor):
                def _apply_hf_processor(self, outputs):
                    grids = outputs.pop("video_grids")
                    return build_frame_mask(grids, grids.device), count_tokens(grids)


            class VideoModel(nn.Module):
                def forward(self, grids: torch.Tensor):
                    return count_tokens(grids)
            """,
        "engine/multimodal/base.py": """\
            class BaseMultiModalProcessor:
                def apply(self, outputs):
                    return self._apply_hf_processor(outputs)
            """,
        # A scheduler's mixin named like a processor is a part of the scheduler.
        "engine/scheduler.py": """\
            import torch
            from engine.multimodal.video_utils import build_frame_mask


            class SchedulerOutputProcessorMixin:
                def process_batch_result(self, result):
                    return result.next_token_ids.tolist()


            class Scheduler(SchedulerOutputProcessorMixin):
                def event_loop(self):
                    while True:
                        result = self.run_batch()
                        self.process_batch_result(result)
                        build_frame_mask(result.grids, result.grids.device)
            """,
    }
    root = project(tmp_path / "proj", dict(files, **{"engine/scheduler.py": ""}))
    found = tiers(root, "engine/multimodal/video_utils.py")
    tier, reason = found[6]
    assert tier == "cold"
    assert reason.startswith("reached only from cold code or host-side pre-processing, which runs on the CPU per request (VideoMultiModalProcessor._apply_hf_processor")
    # What the model's forward also calls stays hot.
    assert found[11][0] == "hot"
    # The scheduler's loop also calls the helper: no longer cold; and the mixin's own
    # readback is reported (not taken for host-side pre-processing).
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "engine/multimodal/video_utils.py")[6][0] != "cold"
    assert 7 in tiers(root, "engine/scheduler.py")


def test_a_call_made_on_another_platforms_branch_is_no_way_in(tmp_path):
    files = {
        "engine/ops.py": """\
            import torch


            def gather_context_fallback(src: torch.Tensor, cu_seq_lens: torch.Tensor):
                seq_lens = cu_seq_lens[1:] - cu_seq_lens[:-1]
                return [src[: int(n)] for n in seq_lens.tolist()]


            def gather_context_fast(src: torch.Tensor, cu_seq_lens: torch.Tensor):
                return src[: int(cu_seq_lens[-1].item())]
            """,
        "engine/attention.py": """\
            import torch
            from torch import nn
            from engine import ops
            from engine.platforms import current_platform


            class MLAAttention(nn.Module):
                def forward(self, src: torch.Tensor, cu_seq_lens: torch.Tensor):
                    if self.fp8:
                        return src
                    elif current_platform.is_cpu():
                        return ops.gather_context_fallback(src, cu_seq_lens)
                    return ops.gather_context_fast(src, cu_seq_lens)
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/ops.py")
    tier, reason = found[6]
    assert tier == "cold" and "MLAAttention.forward [on a branch no call outside cold code takes]" in reason
    assert found[10][0] == "hot"
    # For the CPU platform the fallback is what runs.
    assert tiers(root, "engine/ops.py", target_platforms=("cpu",))[6][0] == "hot"


def test_a_call_after_a_platform_branch_that_returns_runs_on_the_others(tmp_path):
    # `if t.is_cuda: return <kernel>` and then the torch reference path: what that path
    # calls runs on the other platforms only, as the `else` of the branch would.
    files = {
        "engine/ops.py": """\
            import torch


            def reference_topk(logits: torch.Tensor, k: int):
                return int(logits.max().item()), k


            def launch_topk(logits: torch.Tensor, k: int):
                return logits.topk(k)
            """,
        "engine/sampler.py": """\
            import torch
            from torch import nn
            from engine import ops


            class Sampler(nn.Module):
                def forward(self, logits: torch.Tensor, k: int):
                    if logits.is_cuda:
                        return ops.launch_topk(logits, k)
                    return ops.reference_topk(logits, k)
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/ops.py")
    assert found[5][0] == "cold" and "Sampler.forward [on a branch no call outside cold code takes]" in found[5][1]
    # For the CPU platform the reference path is what runs.
    assert tiers(root, "engine/ops.py", target_platforms=("cpu",))[5][0] == "hot"


def test_a_branch_that_runs_once_every_n_steps_is_cold(tmp_path):
    files = {
        "engine/eplb.py": """\
            import torch


            class ExpertBalancer:
                def step(self, expert_load: torch.Tensor):
                    self.expert_rearrangement_step += 1
                    if self.expert_rearrangement_step >= self.expert_rearrangement_step_interval:
                        self.expert_rearrangement_step = 0
                        self.rearrange(expert_load)
                    if self.forward_ct % self.log_interval == 0:
                        print(int(expert_load.cuda().sum().item()))
                    if self.expert_rearrangement_step >= self.warmup_steps:
                        return int(expert_load.cuda().max().item())
                    return 0

                def rearrange(self, expert_load: torch.Tensor):
                    end_event = torch.cuda.Event()
                    end_event.synchronize()
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/eplb.py")
    assert found[11] == ("cold", "in a branch that runs once every N calls (a step counter it tests and resets, or `step % N == 0`)")
    # Tested but not reset there: a threshold, not a period.
    assert found[13][0] == "hot"
    assert found[18] == ("cold", "reached only from cold code (ExpertBalancer.step [on a cold branch] -> rearrange)")


def test_a_profiling_branch_is_cold(tmp_path):
    # A model runner's profiling run (made once at start-up) asks for a dummy rearrangement;
    # otherwise the rearrangement runs once every N steps: cold both ways. A profiler object's
    # step (`if self.profiler is not None:`) is no profiling switch.
    files = {
        "engine/eplb.py": """\
            import torch


            class ExpertBalancer:
                def step(self, expert_load: torch.Tensor, is_dummy: bool = False, is_profile: bool = False):
                    if is_profile:
                        self.rearrange(expert_load, is_profile=True)
                        return
                    self.expert_rearrangement_step += 1
                    if self.expert_rearrangement_step >= self.expert_rearrangement_step_interval:
                        self.expert_rearrangement_step = 0
                        self.rearrange(expert_load)
                    if self.profiler is not None:
                        return int(expert_load.cuda().max().item())
                    return 0

                def rearrange(self, expert_load: torch.Tensor, is_profile: bool = False):
                    return expert_load.cuda().tolist()
            """,
        "engine/runner.py": """\
            import torch

            from engine.eplb import ExpertBalancer


            class Runner:
                def __init__(self):
                    self.eplb = ExpertBalancer()

                def execute_model(self, load: torch.Tensor, is_profile: bool):
                    self.eplb.step(load, is_profile=is_profile)
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/eplb.py")
    assert found[14][0] == "hot"
    assert found[18][0] == "cold" and "reached only from cold code" in found[18][1], found[18]


def test_a_hint_filled_by_a_conditional_expression_is_given_when_passed_on(tmp_path):
    # `bounds = hint if hint is not None else <compute>` is never None: an implementation that
    # passes `bounds` on to its fallback gives the fallback its hint, whatever its own callers
    # passed. A conditional value that may be None (`hint if flag else None`) stays unknown.
    files = {
        "att/impls.py": """\
            import torch


            class DenseImpl:
                def forward_varlen(self, q: torch.Tensor, *, cu_seqlens: torch.Tensor, cu_seqlens_host=None):
                    bounds = cu_seqlens_host if cu_seqlens_host is not None else tuple(cu_seqlens.tolist())
                    return q, bounds


            class FastImpl:
                def __init__(self):
                    self.fallback = DenseImpl()

                def forward_varlen(self, q: torch.Tensor, *, cu_seqlens: torch.Tensor, cu_seqlens_host=None, fast=False):
                    bounds = cu_seqlens_host if cu_seqlens_host is not None else tuple(cu_seqlens.tolist())
                    if not fast:
                        return self.fallback.forward_varlen(q, cu_seqlens=cu_seqlens, cu_seqlens_host=bounds)
                    return q
            """,
        "att/layer.py": """\
            import torch

            from att.impls import FastImpl


            class Attention(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.impl = FastImpl()

                def forward(self, q: torch.Tensor, seq_lens: list):
                    bounds = [0]
                    for n in seq_lens:
                        bounds.append(bounds[-1] + n)
                    cu = torch.tensor(bounds, device=q.device)
                    return self.impl.forward_varlen(q, cu_seqlens=cu, cu_seqlens_host=tuple(bounds))
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "att/impls.py")
    assert found[6][0] == "cold"
    assert found[15][0] == "cold"
    files["att/impls.py"] = files["att/impls.py"].replace(
        "cu_seqlens_host=bounds)", "cu_seqlens_host=bounds if fast else None)")
    root = project(tmp_path / "proj2", files)
    # Not cold; a fallback for a host copy a caller may leave out: `unknown`, not `hot`.
    tier, reason = tiers(root, "att/impls.py")[6]
    assert tier == "unknown" and reason.startswith("the fallback for when host copy `cu_seqlens_host` is None"), reason


def test_each_function_is_matched_against_the_patterns_once(tmp_path, monkeypatch):
    # The searches of the ways in ask the same callers again for every branch of a file (a
    # 3,500-line file asked 19 million pattern matches); a function's name decides, so each
    # is matched once per list of patterns.
    seen = []
    matches = repo.tiers._CallGraphTiers._matches

    def counting(node, patterns):
        seen.append((node, patterns))
        return matches(node, patterns)

    monkeypatch.setattr(repo.tiers._CallGraphTiers, "_matches", staticmethod(counting))
    root = project(tmp_path / "proj", ARGUMENT_GUARDS)
    found = tiers(root, "serve/ops.py")
    assert found[6][0] == "cold" and found[16][0] == "hot"  # the answers of the test above
    assert seen and len(seen) == len(set(seen))


def test_a_check_switched_on_only_while_debugging_is_cold(tmp_path):
    files = {
        "srv/kernels.py": """\
            import torch


            def clear_pages(pages: torch.Tensor, mapping: torch.Tensor, check_mappings: bool = False):
                if check_mappings:
                    assert torch.all(pages < mapping.numel())
                mapping[pages] = 0
                return pages
            """,
        "srv/allocator.py": """\
            import torch

            from srv.kernels import clear_pages


            class Allocator(torch.nn.Module):
                def __init__(self, debug_mode: bool):
                    super().__init__()
                    self.debug_mode = debug_mode

                def forward(self, pages: torch.Tensor, mapping: torch.Tensor, page_size: int):
                    check = page_size > 1 and self.debug_mode
                    clear_pages(pages, mapping, check)
                    return clear_pages(pages, mapping, check_mappings=self.debug_mode)
            """,
        "srv/strict.py": """\
            import torch

            from srv.kernels import clear_pages


            class StrictAllocator(torch.nn.Module):
                def forward(self, pages: torch.Tensor, mapping: torch.Tensor, strict: bool):
                    return clear_pages(pages, mapping, check_mappings=strict)
            """,
    }
    root = project(tmp_path / "proj", {k: v for k, v in files.items() if k != "srv/strict.py"})
    # Both calls pass a debug switch: the check runs only while debugging.
    assert tiers(root, "srv/kernels.py")[6] == (
        "cold", "runs only when `check_mappings` is true, and no call of `clear_pages()` outside cold code passes that")
    # A call that passes a flag of its own may take the branch.
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/kernels.py")[6][0] == "hot"


FIELD_GUARDS = {
    "gen/attention/backend.py": """\
        import torch


        class VarlenImpl:
            def forward_varlen(self, q: torch.Tensor, cu_seqlens: torch.Tensor, cu_seqlens_host=None):
                bounds = cu_seqlens_host if cu_seqlens_host is not None else tuple(cu_seqlens.tolist())
                return q[: bounds[-1]]

            def forward_padded(self, q: torch.Tensor, lens: torch.Tensor, lens_cpu=None):
                sizes = lens_cpu if lens_cpu is not None else lens.tolist()
                return q[: sum(sizes)]


        def decode(q: torch.Tensor, k_scale=None):
            if k_scale is None:
                k_scale = torch.tensor(1.0, device=q.device)
            return q * k_scale
        """,
    "gen/models/vision.py": """\
        from dataclasses import dataclass
        from typing import Optional

        import torch
        from torch import nn

        from gen.attention.backend import VarlenImpl, decode


        @dataclass(frozen=True)
        class PackedMeta:
            cu_seqlens: torch.Tensor
            cu_seqlens_host: tuple[int, ...]
            lens: torch.Tensor
            lens_cpu: Optional[list[int]] = None

            @classmethod
            def build(cls, cu_seqlens: torch.Tensor, lens: torch.Tensor):
                bounds = tuple(int(v) for v in cu_seqlens.tolist())
                return cls(cu_seqlens=cu_seqlens, cu_seqlens_host=bounds, lens=lens)


        class VisionAttention(nn.Module):
            def __init__(self):
                super().__init__()
                self.impl = VarlenImpl()
                self.register_buffer("_k_scale", torch.tensor(1.0))

            def forward(self, q: torch.Tensor, meta: PackedMeta):
                out = self.impl.forward_varlen(q, meta.cu_seqlens, cu_seqlens_host=meta.cu_seqlens_host)
                out = self.impl.forward_padded(out, meta.lens, lens_cpu=meta.lens_cpu)
                return decode(out, k_scale=self._k_scale)
        """,
}


def test_a_field_the_repository_never_makes_none_is_given(tmp_path):
    root = project(tmp_path / "proj", FIELD_GUARDS)
    found = tiers(root, "gen/attention/backend.py")
    # `meta.cu_seqlens_host`: a dataclass field declared `tuple[int, ...]`, built only from a
    # host tuple: the readback is the fallback of a call that never comes.
    assert found[6] == ("cold", "runs only when `cu_seqlens_host` is None, and no call of `forward_varlen()` outside cold code passes that")
    # `self._k_scale`: a registered buffer, always a tensor.
    assert found[16] == ("cold", "runs only when `k_scale` is None, and no call of `decode()` outside cold code passes that")
    # `meta.lens_cpu` is `Optional[...] = None`: the fallback may run every step, and
    # nothing says it does (`unknown`; the repository's way in is kept in the reason).
    assert found[10][0] == "unknown" and "the code around it runs every step" in found[10][1], found[10]


def test_a_field_assigned_none_anywhere_may_be_none(tmp_path):
    files = dict(FIELD_GUARDS)
    # An unrelated class's field of the same name may be None: says nothing of PackedMeta's.
    files["gen/batch.py"] = """\
        from typing import Optional


        class Batch:
            cu_seqlens_host: Optional[tuple] = None

            def merge(self, other):
                self.cu_seqlens_host = None
        """
    root = project(tmp_path / "proj", files)
    found = tiers(root, "gen/attention/backend.py")
    assert found[6][0] == "cold"
    # Code that drops the host bounds of an object of a class it does not say
    # (`meta.cu_seqlens_host = None`), or deletes the scale: the field may be None, so the
    # callers' argument may be too.
    files["gen/merge.py"] = """\
        def drop_host_bounds(meta, layer):
            meta.cu_seqlens_host = None
            del layer._k_scale
        """
    root = project(tmp_path / "proj2", files)
    found = tiers(root, "gen/attention/backend.py")
    # Not cold: the readback is a host copy's fallback (`unknown`), the scale's is hot.
    assert found[6][0] == "unknown" and found[16][0] == "hot"


REBOUND_AFTER = {
    "spec/probs.py": """\
        import torch


        def target_probs(logits: torch.Tensor, top_ks: torch.Tensor, max_top_k=None):
            if max_top_k is None:
                max_top_k = int(top_ks.max().item())
            else:
                max_top_k = int(max_top_k)
            if max_top_k < 1:
                max_top_k = 1
            return logits.topk(max_top_k)


        def clamped_probs(logits: torch.Tensor, top_ks: torch.Tensor, max_top_k=None):
            max_top_k = max_top_k or None
            if max_top_k is None:
                max_top_k = int(top_ks.max().item())
            return logits.topk(max_top_k)


        def looped_probs(logits: torch.Tensor, top_ks: torch.Tensor, max_top_k=None):
            for row in logits:
                if max_top_k is None:
                    max_top_k = int(top_ks.max().item())
                row.topk(max_top_k)
                max_top_k = None
        """,
    "spec/worker.py": """\
        from dataclasses import dataclass

        import torch

        from spec.probs import clamped_probs, looped_probs, target_probs


        @dataclass
        class DraftInput:
            max_top_k: int = 1


        class Verifier(torch.nn.Module):
            def forward(self, logits: torch.Tensor, top_ks: torch.Tensor, draft: DraftInput):
                a = target_probs(logits, top_ks, max_top_k=draft.max_top_k)
                b = clamped_probs(logits, top_ks, max_top_k=draft.max_top_k)
                c = looped_probs(logits, top_ks, max_top_k=draft.max_top_k)
                return a, b, c
        """,
}


def test_a_parameter_rebound_only_after_its_branch_keeps_the_callers_value(tmp_path):
    root = project(tmp_path / "proj", REBOUND_AFTER)
    found = tiers(root, "spec/probs.py")
    # The clamp after the test and the `else` cannot change what the test saw: the callers'.
    assert found[6] == ("cold", "runs only when `max_top_k` is None, and no call of `target_probs()` outside cold code passes that")
    # Rebound before the test, or later in a loop that comes back to it: the test reads that.
    assert found[17][0] == "hot"
    assert found[24][0] == "hot"


FIELD_TESTS = {
    "attn/indexer.py": """\
        from dataclasses import dataclass
        from typing import Optional

        import torch


        @dataclass
        class DecodeMeta:
            decode_lens: torch.Tensor
            host_lens: list
            padded_lens: Optional[torch.Tensor] = None


        def build_meta(lens: torch.Tensor, lens_cpu: list) -> DecodeMeta:
            return DecodeMeta(decode_lens=lens, host_lens=list(lens_cpu))


        def sparse_indexer(q: torch.Tensor, meta: DecodeMeta):
            host = meta.host_lens
            if host is not None:
                lmax = max(host)
            else:
                lmax = int(meta.decode_lens.max().item())
            if meta.padded_lens is None:
                pmax = int(meta.decode_lens.max().item())
            else:
                pmax = 0
            return q[:lmax], pmax


        class Indexer(torch.nn.Module):
            def forward(self, q: torch.Tensor, meta: DecodeMeta):
                return sparse_indexer(q, meta)
        """,
}


def test_a_branch_on_a_field_never_none_is_cold(tmp_path):
    root = project(tmp_path / "proj", FIELD_TESTS)
    found = tiers(root, "attn/indexer.py")
    # `host_lens` is always a list: its `is None` fallback never runs.
    assert found[23] == ("cold", "runs only when field `host_lens` is None, and the repository never assigns it None")
    # `padded_lens` defaults to None: the branch may run every step.
    assert found[25][0] == "hot"


def test_the_fields_never_none_are_read_once_per_index(tmp_path, monkeypatch):
    # Every file's lint that tests a field asks which fields are never None; the repository's
    # values are joined once per index, and each lint works out its own answers from them.
    from synclint.analysis import given_fields

    built = []
    real = given_fields.GivenFields.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(given_fields.GivenFields, "__init__", counting)
    files = dict(FIELD_TESTS)
    files["attn/copy.py"] = FIELD_TESTS["attn/indexer.py"].replace("class Indexer(", "class CopiedIndexer(")
    root = project(tmp_path / "proj", files)
    settings = Settings(include_cold=True, min_confidence=Confidence.LOW)
    run = runner.lint_paths([root / "attn/indexer.py", root / "attn/copy.py"], settings, jobs=1, use_cache=False)
    found = {(Path(v.filename).name, v.location.row): (v.tier, v.tier_reason) for v in run.violations}
    for name in ("indexer.py", "copy.py"):
        assert found[(name, 23)] == ("cold", "runs only when field `host_lens` is None, and the repository never assigns it None")
        assert found[(name, 25)][0] == "hot"
    assert len(built) == 1


def test_a_none_default_every_construction_fills_never_applies(tmp_path):
    # Every `DecodeMeta(...)` of the repository passes `padded_lens`: its `None` default never
    # applies, and the `is None` fallback never runs.
    files = dict(FIELD_TESTS)
    files["attn/indexer.py"] = FIELD_TESTS["attn/indexer.py"].replace(
        "return DecodeMeta(decode_lens=lens, host_lens=list(lens_cpu))",
        "return DecodeMeta(decode_lens=lens, host_lens=list(lens_cpu), padded_lens=lens[:8])")
    root = project(tmp_path / "proj", files)
    assert tiers(root, "attn/indexer.py")[25] == ("cold", "runs only when field `padded_lens` is None, and the repository never assigns it None")
    # One construction elsewhere that leaves it out, or passes `**kwargs`, keeps the branch open.
    for name, call in (("omits", "DecodeMeta(decode_lens=x, host_lens=[])"), ("kwargs", "DecodeMeta(decode_lens=x, **extra)")):
        other = {**files, "attn/dummy.py": f"from attn.indexer import DecodeMeta\n\n\ndef dummy(x, extra):\n    return {call}\n"}
        root = project(tmp_path / name, other)
        assert tiers(root, "attn/indexer.py")[25][0] == "hot", name


HOST_FOLDER = {
    "srt/layers/rope_index.py": """\
        import torch


        def get_rope_index(input_ids: torch.Tensor, grid_thw: torch.Tensor):
            positions = []
            for t in grid_thw:
                positions.append(torch.argwhere(input_ids == int(t[0])))
            return positions


        def get_positions(input_ids: torch.Tensor, image_mask: torch.Tensor):
            return input_ids[image_mask]
        """,
    "srt/multimodal/processors/omni.py": """\
        from srt.layers.rope_index import get_positions, get_rope_index


        class OmniProcessor:
            def process(self, input_ids, grid_thw):
                return get_rope_index(input_ids, grid_thw), get_positions(input_ids, input_ids > 0)
        """,
    "srt/multimodal/processors/video.py": """\
        import torch

        from srt.multimodal.base import BaseMultimodalProcessor
        from srt.layers.rope_index import get_rope_index


        class VideoProcessorInfo:
            pass


        class VideoMMProcessor(BaseMultimodalProcessor[VideoProcessorInfo]):
            def apply(self, input_ids, grid_thw):
                return get_rope_index(input_ids, grid_thw)
        """,
    "srt/multimodal/base.py": """\
        from typing import Generic, TypeVar

        I = TypeVar("I")


        class BaseMultimodalProcessor(Generic[I]):
            pass
        """,
    "srt/models/omni_model.py": """\
        import torch
        from torch import nn

        from srt.layers.rope_index import get_positions


        class OmniModel(nn.Module):
            def forward(self, input_ids: torch.Tensor, image_mask: torch.Tensor):
                return get_positions(input_ids, image_mask)
        """,
    "srt/serving/harness.py": """\
        def drive(engine, batch):
            return engine.process(batch.input_ids, batch.grid_thw)
        """,
}


def test_what_only_a_pre_processing_folder_calls_runs_on_the_cpu_per_request(tmp_path):
    root = project(tmp_path / "proj", HOST_FOLDER)
    found = tiers(root, "srt/layers/rope_index.py")
    # Called only from classes in a `processors` folder (however they are named): host-side.
    tier, reason = found[7]
    assert tier == "cold" and "host-side pre-processing" in reason
    # What a model's forward also calls stays hot.
    assert found[12][0] == "hot"


def test_a_generic_base_is_a_base(tmp_path):
    files = dict(HOST_FOLDER)
    # Not in a pre-processing folder, and a plain name: only the generic base `Base...Processor[Info]` says host-side.
    files["srt/mm/video.py"] = files.pop("srt/multimodal/processors/video.py")
    files["srt/mm/omni.py"] = files.pop("srt/multimodal/processors/omni.py").replace("OmniProcessor:", "OmniRunner:")
    files["srt/mm/omni.py"] = files["srt/mm/omni.py"].replace("get_rope_index(input_ids, grid_thw), ", "")
    root = project(tmp_path / "proj", files)
    tier, reason = tiers(root, "srt/layers/rope_index.py")[7]
    assert tier == "cold" and "VideoMMProcessor.apply" in reason



KERNEL_API = {
    "kern/api.py": """\
        import torch


        def _validate_inputs(work_range: torch.Tensor):
            work_cpu = work_range.cpu()
            assert (work_cpu >= 0).all()


        def _run(q: torch.Tensor, plan, out=None, check_input_valid: bool = False):
            if check_input_valid:
                _validate_inputs(plan)
            return q


        def run(q: torch.Tensor, plan, out=None, **kwargs):
            if plan is None:
                return _run(q, q, out=out, **kwargs)
            return _run(q, plan, out=out, **kwargs)
        """,
    "kern/layer.py": """\
        import torch
        from torch import nn

        from kern.api import _run, run


        class Indexer(nn.Module):
            def forward(self, q: torch.Tensor, plan: torch.Tensor):
                _run(q, plan, out=None)
                return run(q, plan, out=q)
        """,
}


def test_a_keyword_left_to_forwarded_kwargs_is_what_the_callers_pass(tmp_path):
    root = project(tmp_path / "proj", KERNEL_API)
    # No caller of `run` names `check_input_valid`: its `**kwargs` never hold it, so the
    # validation branch of `_run` never runs.
    assert tiers(root, "kern/api.py")[5] == (
        "cold", "reached only from cold code (_run [on a branch no call outside cold code takes] -> _validate_inputs)")


def test_a_keyword_a_caller_passes_through_forwarded_kwargs_takes_the_branch(tmp_path):
    files = dict(KERNEL_API)
    files["kern/layer.py"] = files["kern/layer.py"].replace("run(q, plan, out=q)", "run(q, plan, out=q, check_input_valid=True)")
    root = project(tmp_path / "proj", files)
    assert tiers(root, "kern/api.py")[5][0] == "hot"


def test_kwargs_changed_before_they_are_forwarded_are_unknown(tmp_path):
    files = dict(KERNEL_API)
    files["kern/api.py"] = files["kern/api.py"].replace(
        "            if plan is None:\n", "            kwargs.update(validate_flags())\n            if plan is None:\n")
    root = project(tmp_path / "proj", files)
    assert tiers(root, "kern/api.py")[5][0] == "hot"


def test_a_named_parameter_never_reaches_the_forwarded_kwargs(tmp_path):
    files = dict(KERNEL_API)
    # `run` takes `check_input_valid` itself and does not pass it on: `_run` gets its default.
    files["kern/api.py"] = files["kern/api.py"].replace("def run(q: torch.Tensor, plan, out=None, **kwargs)",
                                                        "def run(q: torch.Tensor, plan, out=None, check_input_valid=True, **kwargs)")
    files["kern/layer.py"] = files["kern/layer.py"].replace("run(q, plan, out=q)", "run(q, plan, out=q, check_input_valid=True)")
    root = project(tmp_path / "proj", files)
    assert tiers(root, "kern/api.py")[5][0] == "cold"


VISION = {
    "vis/encoder.py": """\
        import torch
        from torch import nn


        class VisionEncoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.warm_sizes = self.split_sizes(torch.ones(4, device="cuda"))

            def rot_pos_emb(self, grid_thw):
                grid_list = grid_thw if isinstance(grid_thw, list) else grid_thw.tolist()
                return [t * h * w for t, h, w in grid_list]

            def split_sizes(self, lens):
                if isinstance(lens, torch.Tensor):
                    lens = lens.tolist()
                return lens

            def forward(self, x: torch.Tensor, grid_thw):
                if isinstance(grid_thw, list):
                    grid_thw_list = grid_thw
                else:
                    grid_thw_list = grid_thw.tolist()
                sizes = [t * h * w for t, h, w in grid_thw_list]
                x.split(self.split_sizes(sizes))
                return self.rot_pos_emb(grid_thw_list)
        """,
    "vis/model.py": """        import torch
        from torch import nn

        from vis.encoder import VisionEncoder


        class VisionModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.visual = VisionEncoder()

            def forward(self, pixel_values: torch.Tensor, grid_thw: torch.Tensor):
                return self.visual(pixel_values.cuda(), grid_thw.cuda())
        """,
}


def test_a_tolist_branch_no_caller_takes_by_passing_a_list_is_cold(tmp_path):
    root = project(tmp_path / "proj", VISION)
    found = tiers(root, "vis/encoder.py")
    # Both callers pass Python lists (one bound under `isinstance(grid_thw, list)`, one a
    # comprehension): the `.tolist()` of a tensor never runs there.
    assert found[11] == ("cold", "runs only when `grid_thw` is not a list, and no call of `rot_pos_emb()` outside cold code passes that")
    # `__init__` passes a device tensor, but it is cold: `forward` passes only a list.
    assert found[16] == ("cold", "runs only when `lens` is a tensor, and no call of `split_sizes()` outside cold code passes that")
    # `forward`'s own fallback: its caller passes a device tensor.
    assert found[23][0] == "hot"


def test_a_caller_that_passes_a_tensor_takes_the_tolist_branch(tmp_path):
    files = dict(VISION)
    files["vis/encoder.py"] = files["vis/encoder.py"].replace(
        "return self.rot_pos_emb(grid_thw_list)", "self.split_sizes(grid_thw[:, 0])\n                return self.rot_pos_emb(grid_thw)")
    root = project(tmp_path / "proj", files)
    found = tiers(root, "vis/encoder.py")
    assert found[11][0] == "hot"
    assert found[16][0] == "hot"


def test_a_call_by_name_that_cannot_bind_to_a_method_does_not_reach_it(tmp_path):
    files = dict(GENERIC)
    # A quantisation scheme's post-load check, `run(self, layer, role)`: `job.run(x)` by
    # name passes one argument, and cannot be a call of it.
    files["engine/stages.py"] = GENERIC["engine/stages.py"].replace(
        "            def run(self, x: torch.Tensor):\n                return int(x.sum().item())",
        "            def run(self, weight_scale: torch.Tensor, role):\n                return int(weight_scale.isnan().any())")
    assert files["engine/stages.py"] != GENERIC["engine/stages.py"]
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/stages.py")
    assert found[29] == ("unknown", "no signal says how often this code runs")
    # A call by name that passes both does reach it: the way in is shown.
    files["engine/model.py"] = GENERIC["engine/model.py"].replace("return job.run(x)", "return job.run(x, role=0)")
    root = project(tmp_path / "other", files)
    assert tiers(root, "engine/stages.py")[29][1].startswith("may run every step: called by name from Model.forward")


STEP_CACHE = {
    "attn/backend.py": """\
        import torch
        from torch import nn


        class ChunkPlan:
            @classmethod
            def build(cls, seq_lens: torch.Tensor):
                offsets = torch.cumsum(seq_lens, dim=0)
                return cls(int(offsets[-1].item()))

            def __init__(self, total: int):
                self.total = total


        class Backend(nn.Module):
            def init_forward_metadata(self, seq_lens: torch.Tensor):
                self.forward_metadata = Metadata(seq_lens)

            def forward(self, q: torch.Tensor, seq_lens: torch.Tensor):
                plan = self.forward_metadata.chunk_plan
                if plan is None:
                    plan = ChunkPlan.build(seq_lens)
                    self.forward_metadata.chunk_plan = plan
                if self._table is None:
                    self._table = torch.zeros(int(seq_lens.max().item()), device=q.device)
                return q


        class Metadata:
            def __init__(self, seq_lens):
                self.seq_lens = seq_lens
                self.chunk_plan = None
        """,
}


def test_a_value_cached_on_a_step_object_is_built_every_step(tmp_path):
    root = project(tmp_path / "proj", STEP_CACHE)
    found = tiers(root, "attn/backend.py")
    # `self.forward_metadata` is rebuilt for each step: the plan cached on it too.
    assert found[9][0] == "hot"
    # A table the module itself keeps is filled once.
    assert found[25] == ("cold", "initialises a value on first use (`if self._x is None: self._x = ...`): runs once")


def test_a_super_call_into_a_library_base_reaches_nothing_of_the_repository(tmp_path):
    files = {
        "comp/backend.py": """\
            import torch


            class PiecewiseInterpreter(torch.fx.Interpreter):
                def run(self, *args):
                    return super().run(*args)


            class Backend:
                def __call__(self, graph, inputs):
                    return PiecewiseInterpreter(graph).run(*inputs)
            """,
        "comp/worker.py": """\
            import torch


            class SenderThread:
                def run(self, stream: torch.cuda.Stream):
                    stream.synchronize()
            """,
    }
    root = project(tmp_path / "proj", files)
    # `super().run(*args)` is torch.fx's `run`, not every `run` of the repository.
    assert tiers(root, "comp/worker.py", hot_functions=("__call__",))[6] == ("unknown", "no signal says how often this code runs")
    # An unknown object's `run` still goes by name: there the thread's `run` may be the one.
    files["comp/backend.py"] = files["comp/backend.py"].replace("return super().run(*args)", "return self.delegate.run(*args)")
    root = project(tmp_path / "other", files)
    assert tiers(root, "comp/worker.py", hot_functions=("__call__",))[6][0] == "hot"


HANDED_TO_A_POOL = {
    "engine/producer.py": """\
        from concurrent.futures import ThreadPoolExecutor


        class PushQueue:
            def submit_batches(self, executor: ThreadPoolExecutor, run_batch, *, wait: bool = False):
                for records in self.pending():
                    executor.submit(run_batch, records)
                return True

            def pending(self):
                return []
        """,
    "engine/worker.py": """\
        from concurrent.futures import ThreadPoolExecutor

        from engine.producer import PushQueue
        from engine.staging import stage


        class Worker:
            def __init__(self):
                self.pushes = PushQueue()
                self.io = ThreadPoolExecutor(2)

            def flush(self):
                self.pushes.submit_batches(self.io, self._push_batch)

            def _push_batch(self, records):
                for record in records:
                    stage(record)
        """,
    "engine/staging.py": """\
        import torch


        def stage(tensor: torch.Tensor):
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                out = tensor.to("cuda", non_blocking=True)
            stream.synchronize()
            return out
        """,
}


def test_a_function_handed_to_an_executor_through_a_helper_runs_off_the_serving_thread(tmp_path):
    root = project(tmp_path / "proj", HANDED_TO_A_POOL)
    assert tiers(root, "engine/staging.py")[8] == ("cold", "reached only from cold code (Worker._push_batch -> stage)")
    # A helper that calls what it is given runs it on the caller's thread: no signal.
    files = dict(HANDED_TO_A_POOL)
    files["engine/producer.py"] = files["engine/producer.py"].replace("executor.submit(run_batch, records)", "run_batch(records)")
    root = project(tmp_path / "called", files)
    assert tiers(root, "engine/staging.py")[8] == ("unknown", "no signal says how often this code runs")
    # Handed to a thread directly, in another file than the sync: off the serving thread too.
    files["engine/worker.py"] = files["engine/worker.py"].replace(
        "self.pushes.submit_batches(self.io, self._push_batch)", "threading.Thread(target=self._push_batch, args=([],)).start()")
    root = project(tmp_path / "thread", files)
    assert tiers(root, "engine/staging.py")[8][0] == "cold"
    # A process's target is often the serving loop itself: what it reaches is not cold for that.
    files["engine/worker.py"] = files["engine/worker.py"].replace("threading.Thread(", "multiprocessing.Process(")
    root = project(tmp_path / "process", files)
    assert tiers(root, "engine/staging.py")[8][0] == "unknown"


TENSOR_METHODS = {
    "engine/model.py": """\
        import torch
        from torch import nn


        class Block(nn.Module):
            def forward(self, x: torch.Tensor, pad: int):
                tail = x[:, :, -pad:].detach().clone()
                head = x.detach()
                return tail + head
        """,
    "engine/storage.py": """\
        import torch


        class StorageAttachment:
            def __init__(self, stream: torch.cuda.Stream):
                self.stream = stream

            def detach(self):
                self.stream.synchronize()
                return True
        """,
}


def test_a_tensor_method_does_not_reach_a_repository_method_of_its_name(tmp_path):
    root = project(tmp_path / "proj", TENSOR_METHODS)
    # `x[:, :, -pad:].detach()` and `x.detach()` of a parameter annotated a tensor are torch's.
    assert tiers(root, "engine/storage.py")[9] == ("unknown", "no signal says how often this code runs")
    # An object whose class the code does not say may be the attachment: by name, as before.
    files = dict(TENSOR_METHODS)
    files["engine/model.py"] = files["engine/model.py"].replace("head = x.detach()", "head = self.attachment.detach()")
    root = project(tmp_path / "other", files)
    assert tiers(root, "engine/storage.py")[9][0] == "hot"
    # A field of an object of unknown class whose `detach()` is read as an array
    # (`.cpu()`, `.float().tolist()`, `.shape`) was a tensor: torch's `detach` again.
    for read in ("batch.lens.detach().cpu()", "batch.lens.detach().float().tolist()", "batch.lens.detach().shape"):
        files["engine/model.py"] = TENSOR_METHODS["engine/model.py"].replace(
            "def forward(self, x: torch.Tensor, pad: int):", "def forward(self, x: torch.Tensor, pad: int, batch):").replace(
            "head = x.detach()", f"head = {read}")
        root = project(tmp_path / f"read{len(read)}", files)
        assert tiers(root, "engine/storage.py")[9] == ("unknown", "no signal says how often this code runs"), read
    # What a callable a field holds returns is a tensor: `self.embed(ids).detach()`.
    files["engine/model.py"] = '''\
        import torch


        class Sampler:
            def __init__(self, *, embed):
                self.embed = embed

            def forward(self, x: torch.Tensor, ids):
                return x + self.embed(ids).detach()
        '''
    root = project(tmp_path / "submodule", files)
    assert tiers(root, "engine/storage.py")[9] == ("unknown", "no signal says how often this code runs")
    # Read as something else (`.ok`), it may be the attachment's: by name.
    files["engine/model.py"] = TENSOR_METHODS["engine/model.py"].replace("head = x.detach()", "head = self.attachment.detach().ok")
    root = project(tmp_path / "field", files)
    assert tiers(root, "engine/storage.py")[9][0] == "hot"


def test_expert_rebalancing_reached_from_the_forward_is_cold(tmp_path):
    # The forward asks every step whether to rebalance; the rebalance itself (and what only
    # it calls) runs every few thousand steps or when a rank fails: rare maintenance.
    files = {
        "engine/eplb.py": """\
            import torch


            def compute_placement(load: torch.Tensor):
                return load.argsort().tolist()


            class Balancer:
                def maybe_rebalance(self, load: torch.Tensor, step: int):
                    if step % 1000:
                        return None
                    return compute_placement(load)

                def record(self, load: torch.Tensor):
                    return int(load.sum().item())
            """,
        "engine/model.py": """\
            import torch
            from torch import nn

            from engine.eplb import Balancer


            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.balancer = Balancer()

                def forward(self, load: torch.Tensor, step: int):
                    self.balancer.record(load)
                    return self.balancer.maybe_rebalance(load, step)
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/eplb.py")
    assert found[5][0] == "cold" and "maybe_rebalance" in found[5][1]
    assert found[15][0] == "hot"


LAMBDA_CALLS = {
    "enc/cache.py": """\
        def cached_call(key, compute):
            return compute()
        """,
    "enc/text.py": """\
        import torch
        from enc.cache import cached_call


        class TextStage:
            def _encode_prompt(self, prompt, device):
                return cached_call(prompt, lambda: self._encode_inputs(prompt, device))

            def _encode_inputs(self, prompt, device):
                mask = torch.ones(len(prompt), device=device)
                return int(mask.sum().item())
        """,
    "enc/model.py": """\
        import torch
        from torch import nn


        class Head(nn.Module):
            def forward(self, x: torch.Tensor):
                return sorted(range(4), key=lambda i: self._score(x, i))

            def _score(self, x: torch.Tensor, i: int):
                return x[i].sum().item()
        """,
}


def test_a_lambda_handed_to_a_call_calls_what_it_calls_from_its_function(tmp_path):
    # The prompt's encoding, computed through a cache helper, runs as often as the encoding
    # of the prompt (once per request); a sort key a forward hands to `sorted` runs every step.
    root = project(tmp_path, LAMBDA_CALLS)
    (text,) = tiers(root, "enc/text.py").values()
    assert text[0] == "cold" and "_encode_prompt" in text[1]
    (model,) = tiers(root, "enc/model.py").values()
    assert model[0] == "hot" and "Head.forward" in model[1]


RECEIVERS = {
    "engine/lora.py": """\
        import torch


        class LoRAManager:
            def __init__(self, ranks: list[int], device):
                self.init_state(max(ranks))
                self.device = device

            def init_state(self, max_rank=None):
                self.update_info(max_rank)

            def update_info(self, max_rank):
                self.ranks = torch.tensor([max_rank], device=self.device)
        """,
    "engine/heads.py": """\
        import torch
        from torch import nn


        class GatedMarkovHead(nn.Module):
            def init_state(self, hidden: torch.Tensor):
                return hidden.new_zeros(hidden.shape)
        """,
    "engine/draft.py": """\
        import torch


        def draft_block(*, markov_head, hidden: torch.Tensor):
            state = markov_head.init_state(hidden)
            return state


        class Drafter:
            def forward(self, hidden: torch.Tensor, head):
                return draft_block(markov_head=head, hidden=hidden)
        """,
}


def test_an_object_named_for_a_class_reaches_only_that_family_by_name(tmp_path):
    root = project(tmp_path / "proj", RECEIVERS)
    # `markov_head.init_state(h)` is a Markov head's, not the LoRA manager's, whose only
    # other way in is its constructor: what it calls is cold.
    assert tiers(root, "engine/lora.py")[13][0] == "cold"
    # So does one named by another word of the class's name (`markov` of `GatedMarkovHead`).
    root = _edited(tmp_path / "word", RECEIVERS, "engine/draft.py", "markov_head", "markov")
    assert tiers(root, "engine/lora.py")[13][0] == "cold"
    # An object named for no candidate's class (`drafter_state`) may be either: by name.
    root = _edited(tmp_path / "unnamed", RECEIVERS, "engine/draft.py", "markov_head", "drafter_state")
    assert tiers(root, "engine/lora.py")[13][0] == "hot"
    files = dict(RECEIVERS)
    # ... and so does one named for the manager, or for a base of its family.
    for name in ("lora_manager", "manager"):
        files["engine/draft.py"] = RECEIVERS["engine/draft.py"].replace("markov_head", name)
        root = project(tmp_path / name, files)
        assert tiers(root, "engine/lora.py")[13][0] == "hot", name
    files["engine/draft.py"] = RECEIVERS["engine/draft.py"].replace("markov_head", "state_mixin")
    files["engine/lora.py"] = RECEIVERS["engine/lora.py"].replace(
        "class LoRAManager:", "class StateMixin:\n            pass\n\n\n        class LoRAManager(StateMixin):")
    root = project(tmp_path / "mixin", files)
    assert tiers(root, "engine/lora.py")[17][0] == "hot"


def test_a_tensor_method_on_an_object_named_for_no_candidate_is_torchs(tmp_path):
    # `block.weight.detach()`: a module's parameter, whatever `block` is; torch's `detach`.
    files = dict(TENSOR_METHODS)
    files["engine/model.py"] = TENSOR_METHODS["engine/model.py"].replace(
        "def forward(self, x: torch.Tensor, pad: int):", "def forward(self, x: torch.Tensor, pad: int, block):").replace(
        "head = x.detach()", "head = block.weight.detach().chunk(2)[0]")
    root = project(tmp_path / "weight", files)
    assert tiers(root, "engine/storage.py")[9] == ("unknown", "no signal says how often this code runs")
    # Named for the attachment, it may be the attachment's.
    files["engine/model.py"] = files["engine/model.py"].replace("block.weight.detach()", "block.attachment.detach()")
    root = project(tmp_path / "attachment", files)
    assert tiers(root, "engine/storage.py")[9][0] == "hot"


def test_a_tensor_method_on_a_short_name_or_on_arithmetic_is_torchs(tmp_path):
    # A straight-through estimator in a VAE's quantizer: `(z_q - z_e).detach()` and
    # `z_q.detach()` of a local the code does not type are torch's, not the attachment's.
    files = dict(TENSOR_METHODS)
    files["engine/model.py"] = TENSOR_METHODS["engine/model.py"].replace(
        "def forward(self, x: torch.Tensor, pad: int):", "def forward(self, x, pad: int):").replace(
        "tail = x[:, :, -pad:].detach().clone()", "z_q, z_e = self.decode(x)\n                tail = z_e + (z_q - z_e).detach()").replace(
        "head = x.detach()", "head = z_q.detach()")
    root = project(tmp_path / "short", files)
    assert tiers(root, "engine/storage.py")[9] == ("unknown", "no signal says how often this code runs")
    # Each one alone, on an object named for its class, is still the attachment's by name.
    for reads in (("(z_q - z_e).detach()", "(z_q - z_e).attachment.detach()"), ("z_q.detach()", "z_q.attachment.detach()")):
        edited = files["engine/model.py"].replace(*reads)
        root = project(tmp_path / str(len(reads[1])), {**files, "engine/model.py": edited})
        assert tiers(root, "engine/storage.py")[9][0] == "hot", reads
    # A method that is no torch.Tensor member goes by name whatever the object is called.
    edited = files["engine/model.py"].replace("z_q.detach()", "z_q.release()")
    storage = TENSOR_METHODS["engine/storage.py"].replace("def detach(self):", "def release(self):")
    root = project(tmp_path / "member", {**files, "engine/model.py": edited, "engine/storage.py": storage})
    assert tiers(root, "engine/storage.py")[9][0] == "hot"

    # A field's tensor (`self.k = self.k.detach()` in a KV cache) is torch's too.
    edited = TENSOR_METHODS["engine/model.py"].replace("head = x.detach()", "self.k = self.k.detach()\n                head = x")
    root = project(tmp_path / "field", {**files, "engine/model.py": edited})
    assert tiers(root, "engine/storage.py")[9][0] == "unknown"
    edited = files["engine/model.py"].replace("head = z_q.detach()", "self.attachment.detach()\n                head = z_q")
    root = project(tmp_path / "field_named", {**files, "engine/model.py": edited})
    assert tiers(root, "engine/storage.py")[9][0] == "hot"


DISPATCH = {
    "server/scheduler.py": """\
        import torch

        from server.io_struct import FlushCacheReq, GenerateReq, PauseReq
        from server.pool import release_all


        class Dispatcher:
            def __init__(self, table):
                self.table = table


        class Scheduler:
            def __init__(self, pool):
                self.pool = pool
                self.dispatcher = Dispatcher(
                    [
                        (GenerateReq, self.handle_generate_request),
                        (PauseReq, self.pause_generation),
                        (FlushCacheReq, self.flush_cache),
                    ]
                )

            def handle_generate_request(self, req):
                self.pool.admit(req)

            def pause_generation(self, req):
                release_all(self.pool)

            def flush_cache(self, req):
                return torch.ones(2, device="cuda").sum().item()
        """,
    "server/pool.py": """\
        import torch


        def release_all(pool):
            return int(pool.free_slots.sum().item())
        """,
    "server/io_struct.py": """\
        class GenerateReq:
            pass


        class PauseReq:
            pass


        class FlushCacheReq:
            pass
        """,
}


def test_a_method_registered_in_a_table_of_message_types_runs_once_per_message(tmp_path):
    root = project(tmp_path / "proj", DISPATCH)
    # What only a pause command reaches runs when one arrives, not every step.
    ((tier, reason),) = tiers(root, "server/pool.py").values()
    assert tier == "cold" and "message handler" in reason and "Scheduler.pause_generation -> release_all" in reason, reason
    # A handler's own lines too.
    ((tier, reason),) = tiers(root, "server/scheduler.py").values()
    assert tier == "cold" and "`flush_cache()` is registered in a dispatch table" in reason, reason
    # Called from the step as well (a hot root's loop), the helper is hot.
    files = dict(DISPATCH)
    files["server/step.py"] = """\
        from server.pool import release_all


        def execute_model(pool):
            return release_all(pool)
        """
    root = project(tmp_path / "step", files)
    ((tier, _),) = tiers(root, "server/pool.py").values()
    assert tier == "hot"


def test_a_single_pair_or_a_table_keyed_by_strings_is_no_dispatch_table(tmp_path):
    # One (class, method) pair is no table; nor are keys that are no classes.
    for old, new in (
        ("""(GenerateReq, self.handle_generate_request),
                        (PauseReq, self.pause_generation),
                        (FlushCacheReq, self.flush_cache),""", "(PauseReq, self.pause_generation),"),
        ("""(GenerateReq, self.handle_generate_request),
                        (PauseReq, self.pause_generation),
                        (FlushCacheReq, self.flush_cache),""", """("generate", self.handle_generate_request),
                        ("pause", self.pause_generation),"""),
    ):
        root = _edited(tmp_path / str(len(new)), DISPATCH, "server/scheduler.py", old, new)
        ((tier, reason),) = tiers(root, "server/pool.py").values()
        assert tier == "unknown", (new, reason)


HELD_FUNCTIONS = {
    "gen/configs/qwen.py": """\
        from dataclasses import dataclass, field

        import torch


        def qwen_postprocess_text(outputs):
            return int(outputs.lengths.max().item())


        @dataclass
        class QwenImageConfig:
            postprocess_text_funcs: tuple = field(default_factory=lambda: (qwen_postprocess_text,))
        """,
    "gen/stages/text.py": """\
        class TextEncodingStage:
            def encode_text(self, outputs, config):
                postprocess_funcs = config.postprocess_text_funcs
                return [postprocess(outputs) for postprocess in postprocess_funcs]

            def forward(self, batch, config):
                batch.embeds = self.encode_text(batch.outputs, config)
                return batch
        """,
}


def test_a_function_stored_in_a_field_named_for_functions_runs_where_the_field_is_read(tmp_path):
    # A pipeline configuration's text post-processing runs where the text-encoding stage
    # reads its functions: once per request, outside the denoise loop.
    root = project(tmp_path / "proj", HELD_FUNCTIONS)
    ((tier, reason),) = tiers(root, "gen/configs/qwen.py").values()
    assert tier == "cold" and "TextEncodingStage.forward [on a cold branch] -> encode_text -> qwen_postprocess_text" in reason, reason
    # Stored by a keyword of a construction, and read every step (in a model's forward), it is hot.
    files = dict(HELD_FUNCTIONS)
    files["gen/configs/qwen.py"] = HELD_FUNCTIONS["gen/configs/qwen.py"].replace(
        "postprocess_text_funcs: tuple = field(default_factory=lambda: (qwen_postprocess_text,))", "postprocess_text_funcs: tuple = ()")
    files["gen/model.py"] = """\
        from torch import nn

        from gen.configs.qwen import QwenImageConfig, qwen_postprocess_text

        CONFIG = QwenImageConfig(postprocess_text_funcs=(qwen_postprocess_text,))


        class Head(nn.Module):
            def forward(self, outputs):
                return [f(outputs) for f in CONFIG.postprocess_text_funcs]
        """
    root = project(tmp_path / "hot", files)
    ((tier, reason),) = tiers(root, "gen/configs/qwen.py").values()
    assert tier == "hot" and "Head.forward -> qwen_postprocess_text" in reason, reason
    # A field whose name says nothing of functions (`postprocess_text`) links nothing: no caller.
    files = {path: text.replace("postprocess_text_funcs", "postprocess_text") for path, text in HELD_FUNCTIONS.items()}
    root = project(tmp_path / "plain", files)
    ((tier, _),) = tiers(root, "gen/configs/qwen.py").values()
    assert tier == "unknown"


def test_code_after_an_early_return_unless_a_rare_phase_is_cold(tmp_path):
    # An elastic expert-parallel join runs from the forward every step, but returns at once
    # unless a scale-up is in progress: what follows that return (and what it calls) runs only
    # while scaling. A warm-up request's branch likewise. Look-alikes stay hot: an early return
    # on a model option (`rope_scaling`), on a flag that is true in the steady state
    # (`warmup_done`), and on the positive test (`if is_scaling(): return`).
    files = {
        "engine/elastic.py": """\
            import torch


            class ElasticState:
                @classmethod
                def is_scaling(cls) -> bool:
                    return cls._pending is not None


            def rebuild_location_map(physical_to_logical: torch.Tensor):
                return physical_to_logical.cpu()
            """,
        "engine/runner.py": """\
            import torch
            from torch import nn

            from engine.elastic import ElasticState, rebuild_location_map


            class Runner(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.active_ranks = torch.ones(8, device="cuda")
                    self.mapping = torch.arange(64, device="cuda")

                def forward(self, batch, logits: torch.Tensor):
                    self.maybe_join_ranks()
                    self.sample(batch, logits)
                    return logits

                def maybe_join_ranks(self):
                    if not ElasticState.is_scaling():
                        return
                    timeout = self.active_ranks.new_tensor(1)
                    if timeout.item():
                        return
                    rebuild_location_map(self.mapping)

                def sample(self, batch, logits: torch.Tensor):
                    if batch.is_warmup:
                        print(int(self.mapping.max().item()))
                    if not self.rope_scaling:
                        return int(self.mapping.min().item())
                    if not self.warmup_done:
                        return int(self.mapping.sum().item())
                    if ElasticState.is_scaling():
                        return None
                    return self.mapping.tolist()
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "engine/runner.py")
    after = "after `if not ElasticState.is_scaling(): return`: runs only while debugging, profiling, warming up, scaling or capturing a CUDA graph"
    assert found[21] == ("cold", after)
    assert found[22] == ("cold", after)
    assert found[28] == ("cold", "in a branch of `batch.is_warmup`: runs only while debugging, profiling, warming up, scaling or capturing a CUDA graph")
    for row in (30, 32, 35):
        assert found[row][0] == "hot", (row, found[row])
    called = tiers(root, "engine/elastic.py")
    assert called[11][0] == "cold" and "reached only from cold code" in called[11][1], called[11]


CYCLE_OF_WRAPPERS = {
    "serve/varlen.py": """\
        import torch


        class DenseImpl:
            def forward_varlen(self, q: torch.Tensor, cu: torch.Tensor, cu_host=None):
                bounds = cu_host if cu_host is not None else cu.tolist()
                return q, bounds


        class WindowImpl:
            def __init__(self):
                self.dense = DenseImpl()

            def forward_varlen(self, q: torch.Tensor, cu: torch.Tensor, cu_host=None):
                if q.shape[0] > 4096:
                    return self.dense_varlen(q, cu, cu_host=cu_host)
                return self.dense.forward_varlen(q, cu, cu_host=cu_host)

            def dense_varlen(self, q: torch.Tensor, cu: torch.Tensor, cu_host=None):
                if q.shape[0] > 8192:
                    return self.forward_varlen(q[:8192], cu, cu_host=cu_host)
                return self.dense.forward_varlen(q, cu, cu_host=cu_host)
        """,
    "serve/layer.py": """\
        import torch
        from torch import nn

        from serve.varlen import WindowImpl


        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.impl = WindowImpl()

            def forward(self, q: torch.Tensor, cu: torch.Tensor, lengths: list):
                return self.impl.forward_varlen(q, cu, cu_host=tuple(lengths))
        """,
}


def test_a_cycle_of_wrappers_passing_an_argument_on_is_followed(tmp_path):
    # forward_varlen and dense_varlen pass `cu_host` to each other; the only call into the
    # cycle gives a host tuple: the `.tolist()` fallback never runs in steady state.
    root = project(tmp_path / "proj", CYCLE_OF_WRAPPERS)
    found = tiers(root, "serve/varlen.py")
    assert found[6] == (
        "cold", "runs only when `cu_host` is None, and no call of `forward_varlen()` outside cold code passes that")


def test_a_cycle_entered_by_a_call_that_leaves_the_argument_out_stays_hot(tmp_path):
    files = dict(CYCLE_OF_WRAPPERS)
    files["serve/layer.py"] = files["serve/layer.py"].replace("cu_host=tuple(lengths)", "")
    root = project(tmp_path / "proj", files)
    found = tiers(root, "serve/varlen.py")
    assert found[6][0] == "hot"


def test_a_cycle_no_call_enters_decides_nothing(tmp_path):
    # Only the wrappers of the cycle call each other: nothing says what they are given.
    files = dict(CYCLE_OF_WRAPPERS)
    files["serve/layer.py"] = files["serve/layer.py"].replace(
        "return self.impl.forward_varlen(q, cu, cu_host=tuple(lengths))", "return q")
    root = project(tmp_path / "proj", files)
    found = tiers(root, "serve/varlen.py")
    assert found[6][0] != "cold"


def _ring_of_wrappers(size: int) -> dict[str, str]:
    """`size` varlen wrappers around a ring, each handing the call on by what it is given (a
    split, a host copy of the bounds, neither: a backend's chain of fallbacks), entered once
    with both; the first one falls back to `cu.tolist()` without the host copy."""
    wrappers = []
    for i in range(size):
        fallback = "    bounds = cu_host if cu_host is not None else cu.tolist()\n" if i == 0 else ""
        wrappers.append(
            f"def varlen_{i}(q: torch.Tensor, cu: torch.Tensor, cu_host=None, split=None):\n{fallback}"
            "    if split is not None:\n"
            f"        return varlen_{(i + 1) % size}(q, cu, cu_host=cu_host, split=split)\n"
            "    if cu_host is not None:\n"
            f"        return varlen_{(i + 2) % size}(q, cu, cu_host=cu_host, split=split)\n"
            f"    return varlen_{(i + 3) % size}(q, cu, cu_host=cu_host)\n")
    layer = textwrap.dedent("""\
        import torch
        from torch import nn

        from serve.ring import varlen_0


        class Attention(nn.Module):
            def forward(self, q: torch.Tensor, cu: torch.Tensor, lengths: list):
                return varlen_0(q, cu, cu_host=tuple(lengths), split=lengths)
        """)
    return {"serve/__init__.py": "", "serve/ring.py": "import torch\n\n\n" + "\n\n".join(wrappers), "serve/layer.py": layer}


def test_a_ring_of_wrappers_works_out_each_question_a_bounded_number_of_times(tmp_path, monkeypatch):
    # Each wrapper's questions (what its callers pass for `cu_host`, for `split`) meet the
    # ring's open questions again. Such an answer is kept aside while they are open, not
    # worked out anew on every way round: 6 wrappers asked one question 1,172 times before.
    asked = []
    real = repo.tiers._CallGraphTiers._passed_by

    def counting(self, name, *args):
        asked.append(name)
        return real(self, name, *args)

    monkeypatch.setattr(repo.tiers._CallGraphTiers, "_passed_by", counting)
    size = 6
    root = project(tmp_path / "proj", _ring_of_wrappers(size))
    found = tiers(root, "serve/ring.py")
    assert found[5] == ("cold", "runs only when `cu_host` is None, and no call of `varlen_0()` outside cold code passes that")
    assert asked and max(asked.count(name) for name in set(asked)) <= 4 * size


# A fallback for a missing bound, passed down through wrappers that declare it an `int`: the
# entry forwards its `**options`, so what reaches the wrappers is not known from the calls.
DECLARED_BOUND = {
    "spec/probs.py": """\
        from typing import Optional

        import torch


        def verify_probs(logits: torch.Tensor, top_ks: torch.Tensor, max_top_k: Optional[int] = None):
            if max_top_k is None:
                max_top_k = int(top_ks.max().item())
            return torch.topk(logits, k=max_top_k, dim=-1)


        def dense_probs(logits: torch.Tensor, top_ks: torch.Tensor, *, max_top_k: int):
            return verify_probs(logits, top_ks, max_top_k=max_top_k)
        """,
    "spec/verifier.py": """\
        import torch
        from torch import nn

        from spec.probs import dense_probs


        class Verifier(nn.Module):
            def forward(self, logits: torch.Tensor, top_ks: torch.Tensor, **options):
                return self.sample(logits, top_ks, **options)

            def sample(self, logits: torch.Tensor, top_ks: torch.Tensor, max_top_k: int):
                return dense_probs(logits, top_ks, max_top_k=max_top_k)
        """,
}


def test_a_parameter_declared_never_none_is_given_where_its_callers_are_unknown(tmp_path):
    root = project(tmp_path / "proj", DECLARED_BOUND)
    found = tiers(root, "spec/probs.py")
    assert found[8] == (
        "cold", "runs only when `max_top_k` is None, and no call of `verify_probs()` outside cold code passes that")


def test_a_parameter_declared_optional_on_the_way_says_nothing(tmp_path):
    files = dict(DECLARED_BOUND)
    # No declaration on the way says never None: the wrapper's is Optional, the entry's missing.
    files["spec/probs.py"] = files["spec/probs.py"].replace("*, max_top_k: int)", "*, max_top_k: Optional[int])")
    files["spec/verifier.py"] = files["spec/verifier.py"].replace("max_top_k: int)", "max_top_k)")
    root = project(tmp_path / "proj", files)
    assert tiers(root, "spec/probs.py")[8][0] == "hot"


def test_a_none_passed_for_a_parameter_declared_never_none_still_counts(tmp_path):
    # The declaration says what is not known; a call that passes None says more.
    files = dict(DECLARED_BOUND)
    files["spec/verifier.py"] += textwrap.indent(textwrap.dedent("""\


        class Drafter(nn.Module):
            def __init__(self, verifier: Verifier):
                super().__init__()
                self.verifier = verifier

            def forward(self, logits: torch.Tensor, top_ks: torch.Tensor):
                return self.verifier.sample(logits, top_ks, max_top_k=None)
        """), "        ")
    root = project(tmp_path / "proj", files)
    assert tiers(root, "spec/probs.py")[8][0] == "hot"


def test_a_method_called_on_a_builtin_container_field_reaches_no_method_of_that_name(tmp_path):
    # `self._evictable.discard(key)` of a set is the builtin's, not `Allocator.discard`.
    files = {
        "srv/alloc.py": """\
            import torch


            class Allocator:
                def __init__(self):
                    self.buf = torch.zeros(4, device="cuda")

                def discard(self, tag):
                    return self.buf.sum().item()
            """,
        "srv/policy.py": """\
            class Policy:
                def __init__(self):
                    self._evictable: set[int] = set()

                def remove(self, key):
                    self._evictable.discard(key)


            class Runner:
                def __init__(self):
                    self.policy = Policy()

                def execute_model(self, key):
                    self.policy.remove(key)
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "srv/alloc.py")[9][0] == "unknown"
    # A field that holds an object of no known class still reaches the method by its name.
    files["srv/policy.py"] = files["srv/policy.py"].replace(": set[int] = set()", " = make_pool()")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/alloc.py")[9] == (
        "hot", "runs every step (called from Runner.execute_model: Runner.execute_model -> Policy.remove -> Allocator.discard)")


def test_calls_of_a_hot_roots_crowded_name_say_nothing_of_its_branch(tmp_path):
    # The layer's `forward` is reached only through `block(...)` of a loop, which the index does
    # not resolve; the calls by name of `forward` are other modules' (one passes None). The
    # layer's parameter is declared never None, and the fallback below it never runs.
    others = "".join(f"\n\nclass Other{i}(nn.Module):\n    def forward(self, x, cu, bounds=None):\n        return x\n" for i in range(5))
    files = {
        "srv/others.py": "from torch import nn\n" + others + "\n\ndef run(mod, x, cu):\n    return mod.forward(x, cu, None)\n",
        "srv/layer.py": """\
            from typing import Optional
            import torch
            from torch import nn


            def varlen(q, cu: torch.Tensor, *, bounds: Optional[tuple] = None):
                if bounds is None:
                    edges = cu.tolist()
                    bounds = tuple(zip(edges[:-1], edges[1:]))
                return torch.cat([q[a:b] for a, b in bounds])


            class Layer(nn.Module):
                def forward(self, x, cu: torch.Tensor, bounds: tuple):
                    return varlen(x, cu, bounds=bounds)


            class Tower(nn.Module):
                def __init__(self):
                    self.blocks = nn.ModuleList([Layer() for _ in range(4)])

                def forward(self, x, meta):
                    for block in self.blocks:
                        x = block(x, meta.cu, meta.bounds)
                    return x
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "srv/layer.py")[8] == (
        "cold", "runs only when `bounds` is None, and no call of `varlen()` outside cold code passes that")
    # Declared Optional, the parameter may be None wherever its callers are unknown.
    files["srv/layer.py"] = files["srv/layer.py"].replace("bounds: tuple)", "bounds: Optional[tuple])")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/layer.py")[8][0] == "hot"


def test_a_helper_called_after_a_first_use_guard_runs_once(tmp_path):
    # `if layer._wrapper is not None: return`, then the code that sets it: the helpers the
    # rest of the function calls run until it is set, once, whatever calls the function.
    files = {
        "srv/moe.py": """\
            import torch
            from torch import nn


            def resolve_scales(layer):
                return torch.tensor(layer.scale_value, device=layer.weight.device)


            def ensure_wrapper(layer) -> None:
                if layer._wrapper is not None:
                    return
                scales = resolve_scales(layer)
                layer._wrapper = (layer.weight, scales)


            class MoE(nn.Module):
                def forward(self, x: torch.Tensor):
                    ensure_wrapper(self)
                    return x
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "srv/moe.py")[6][0] == "cold"
    # A guard that returns data is a switch, not a first use: the helper runs every step.
    files["srv/moe.py"] = files["srv/moe.py"].replace("                    return\n", "                    return layer._wrapper\n")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/moe.py")[6][0] == "hot"


def test_the_run_of_a_thread_subclass_is_off_the_serving_thread(tmp_path):
    # `start()` runs a `threading.Thread` subclass's `run` on its own thread: what only it
    # reaches does not block the serving loop, even where a call by the name `run` reaches it.
    files = {
        "srv/sender.py": """\
            import queue
            import threading

            import torch


            class SendingThread(threading.Thread):
                def __init__(self):
                    super().__init__(daemon=True)
                    self.requests = queue.Queue()

                def run(self):
                    while True:
                        self._handle(self.requests.get())

                def _handle(self, job):
                    job.event.synchronize()
                    job.send()
            """,
        "srv/model.py": """\
            import torch
            from torch import nn


            class Model(nn.Module):
                def forward(self, x: torch.Tensor, runner):
                    runner.run()
                    return x
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "srv/sender.py")[17][0] == "cold"
    # A thread whose body runs the model is the serving loop moved off the main thread.
    files["srv/sender.py"] = files["srv/sender.py"].replace("job.send()", "job.model.forward(job.batch)")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/sender.py")[17][0] == "hot"


def test_a_scripts_main_is_run_by_hand(tmp_path):
    # What only the `if __name__ == "__main__":` block of a script reaches runs when someone
    # runs the script, not while serving.
    files = {
        "srv/example.py": """\
            import argparse

            import torch


            def make_inputs(values, device):
                return torch.tensor(values, device=device)


            def run(n):
                return make_inputs(list(range(n)), "cuda")


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--n", type=int, default=4)
                run(parser.parse_args().n)


            if __name__ == "__main__":
                main()
            """,
        "srv/model.py": """\
            import torch
            from torch import nn


            class Model(nn.Module):
                def forward(self, x: torch.Tensor):
                    return x
            """,
    }
    root = project(tmp_path / "proj", files)
    assert tiers(root, "srv/example.py")[7] == ("cold", "reached only from cold code (main -> run -> make_inputs)")
    # A helper the serving code calls too runs every step, script or not.
    files["srv/model.py"] = files["srv/model.py"].replace(
        "return x\n", "return x + run(4)\n").replace("from torch import nn\n", "from torch import nn\n\n            from srv.example import run\n")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/example.py")[7][0] == "hot"


def test_a_helper_called_on_the_branch_of_a_platform_field_runs_there(tmp_path):
    # `self._use_triton = is_cuda() or is_hip()` in `__init__`, then `if self._use_triton:
    # ... else: self._gather(...)`: the gather runs only on the platforms without Triton.
    files = {
        "srv/platform.py": """\
            def is_cuda():
                return True


            def is_hip():
                return False
            """,
        "srv/worker.py": """\
            import torch
            from torch import nn

            from srv.platform import is_cuda, is_hip


            class DraftWorker(nn.Module):
                def __init__(self):
                    self._use_triton = is_cuda() or is_hip()

                def _gather(self, rows: torch.Tensor, keep: torch.Tensor):
                    return rows[keep > 0]

                def forward(self, rows: torch.Tensor, keep: torch.Tensor):
                    rows = rows.cuda()
                    if self._use_triton:
                        return rows
                    else:
                        return self._gather(rows, keep.cuda())
            """,
    }
    root = project(tmp_path / "proj", files)
    tier, reason = tiers(root, "srv/worker.py")[12]
    assert tier == "cold" and "DraftWorker.forward [on a branch no call outside cold code takes]" in reason
    assert tiers(root, "srv/worker.py", target_platforms=("cpu",))[12][0] == "hot"
    # A field also set some other way decides nothing.
    files["srv/worker.py"] = files["srv/worker.py"].replace(
        "                def _gather", "                def disable(self):\n                    self._use_triton = False\n\n                def _gather")
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/worker.py")[15][0] == "hot"
    # True only on CUDA and only with a flag: false on CUDA too, so the `else` runs there.
    files["srv/worker.py"] = files["srv/worker.py"].replace(
        "                def disable(self):\n                    self._use_triton = False\n\n", "").replace(
        "is_cuda() or is_hip()", "is_cuda() and use_triton_flag()")
    root = project(tmp_path / "proj3", files)
    assert tiers(root, "srv/worker.py")[12][0] == "hot"
    # Set from a local bound once to the predicate (`supports = is_cuda() or is_hip()`, then
    # `self._use_triton = supports`): the same platform branch.
    files["srv/worker.py"] = files["srv/worker.py"].replace(
        "self._use_triton = is_cuda() and use_triton_flag()",
        "supports = is_cuda() or is_hip()\n                    self._use_triton = supports")
    root = project(tmp_path / "proj4", files)
    tier, reason = tiers(root, "srv/worker.py")[13]
    assert tier == "cold" and "DraftWorker.forward [on a branch no call outside cold code takes]" in reason


def test_a_held_tensor_moved_where_it_is_used_moves_once(tmp_path):
    # `if self._freqs.device != x.device: self._freqs = ...`: what the branch stores is kept,
    # so the next test finds it in place. The move in the branch (local reading) and the
    # helper it calls (call graph) run once; a result not kept makes both run every call.
    files = {
        "srv/rope.py": """\
            import torch
            from torch import nn


            def device_table(n: int, device):
                return torch.tensor([float(i) for i in range(n)], device=device)


            class Rope(nn.Module):
                def __init__(self):
                    super().__init__()
                    self._freqs = torch.zeros(4)
                    self._scale = torch.zeros(4)

                def forward(self, x: torch.Tensor):
                    if self._freqs.device != x.device:
                        self._freqs = device_table(4, x.device)
                    if self._scale.dtype != x.dtype:
                        self._scale = self._scale.to(x.device)
                    return x * self._freqs * self._scale
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "srv/rope.py")
    assert found[6][0] == "cold" and found[19][0] == "cold" and "first use" in found[19][1]
    files["srv/rope.py"] = files["srv/rope.py"].replace("self._freqs = device_table(4, x.device)", "freqs = device_table(4, x.device)")
    files["srv/rope.py"] = files["srv/rope.py"].replace("self._scale = self._scale.to(x.device)", "scale = self._scale.to(x.device)")
    root = project(tmp_path / "proj2", files)
    found = tiers(root, "srv/rope.py")
    assert found[6][0] == "hot" and found[19][0] == "hot"


def test_two_host_copies_read_through_locals_are_filled_once(tmp_path):
    # `g = self._g_int`, `l = self._l_int`, then `if g is None or l is None:` reading the
    # device counters and storing both copies: the readbacks (local) and the helper the
    # branch calls (call graph) run once; a branch that stores nothing runs every call.
    files = {
        "srv/cache.py": """\
            import torch


            def read_both(g: torch.Tensor, l: torch.Tensor):
                return int(g.item()), int(l.item())


            class CausalCache:
                def __init__(self):
                    self.global_end = torch.zeros(1, device="cuda")
                    self.local_end = torch.zeros(1, device="cuda")
                    self.global_end_int = None
                    self.local_end_int = None

                def read_indices(self):
                    global_end = self.global_end_int
                    local_end = self.local_end_int
                    if global_end is None or local_end is None:
                        global_end, local_end = read_both(self.global_end, self.local_end)
                        extra = int(self.global_end.item())
                        self.global_end_int = global_end
                        self.local_end_int = local_end
                    return global_end, local_end
            """,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "srv/cache.py")
    assert found[5][0] == "cold" and found[20][0] == "cold"
    files["srv/cache.py"] = files["srv/cache.py"].replace(
        "                        self.global_end_int = global_end\n                        self.local_end_int = local_end\n", "")
    root = project(tmp_path / "proj2", files)
    found = tiers(root, "srv/cache.py")
    assert found[5][0] != "cold" and found[20][0] != "cold"


NARROWED_GUARDS = {
    "serve/backend.py": """\
        import torch


        def host_lengths(seq_lens_cpu, seq_lens: torch.Tensor):
            if seq_lens_cpu is None:
                return seq_lens.cpu()
            return seq_lens_cpu


        def host_max(lens_cpu, lens: torch.Tensor) -> int:
            src = lens_cpu if lens_cpu is not None else lens.cpu()
            return int(src.max())


        def host_bounds(bounds_cpu, bounds: torch.Tensor):
            return bounds_cpu if bounds_cpu is not None else bounds.tolist()
        """,
    "serve/model.py": """\
        import torch
        from torch import nn

        from serve.backend import host_bounds, host_lengths, host_max


        class Attention(nn.Module):
            def forward(self, batch, q: torch.Tensor, bounds_cpu=None):
                if batch.seq_lens_cpu is None:
                    lens = None
                else:
                    lens = host_lengths(batch.seq_lens_cpu, batch.seq_lens)
                if batch.max_cpu is None:
                    return q
                top = host_max(batch.max_cpu, batch.seq_lens)
                edges = host_bounds(bounds_cpu, batch.cu_seqlens)
                return q, lens, top, edges
        """,
}


def test_an_argument_tested_not_none_around_the_call_takes_no_none_branch(tmp_path):
    root = project(tmp_path / "proj", NARROWED_GUARDS)
    found = tiers(root, "serve/backend.py")
    # Called only in the `else` of `if batch.seq_lens_cpu is None:`: the field is given there.
    assert found[6] == ("cold", "runs only when `seq_lens_cpu` is None, and no call of `host_lengths()` outside cold code passes that")
    # Called after `if batch.max_cpu is None: return`: given below it.
    assert found[11][0] == "cold"
    # A parameter passed on untested, which the forward's callers may leave None: not cold;
    # the fallback of a host copy that may or may not come (`unknown`).
    assert found[16][0] == "unknown"


def test_an_argument_not_tested_around_the_call_may_still_be_none(tmp_path):
    files = dict(NARROWED_GUARDS)
    # The same calls, made before the tests: the fields may be None there.
    files["serve/model.py"] = files["serve/model.py"].replace(
        "                if batch.seq_lens_cpu is None:\n                    lens = None\n                else:\n                    lens = host_lengths(batch.seq_lens_cpu, batch.seq_lens)\n",
        "                lens = host_lengths(batch.seq_lens_cpu, batch.seq_lens)\n",
    ).replace(
        "                if batch.max_cpu is None:\n                    return q\n                top = host_max(batch.max_cpu, batch.seq_lens)\n",
        "                top = host_max(batch.max_cpu, batch.seq_lens)\n                if batch.max_cpu is None:\n                    return q\n",
    )
    assert files["serve/model.py"] != NARROWED_GUARDS["serve/model.py"]
    # Another class sets the field None: it is not given anywhere.
    files["serve/other.py"] = "class Plain:\n    def reset(self):\n        self.seq_lens_cpu = None\n        self.max_cpu = None\n"
    root = project(tmp_path / "proj", files)
    found = tiers(root, "serve/backend.py")
    assert found[6][0] == "unknown" and found[11][0] == "unknown" and found[16][0] == "unknown"


DEBUG_LOCAL_CALLS = {
    "srv/checks.py": """\
        import torch


        def verify_pages(pages: torch.Tensor, mapping: torch.Tensor):
            assert torch.all(pages < mapping.numel()).item()
        """,
    "srv/allocator.py": """\
        import torch

        from srv.checks import verify_pages


        class Allocator(torch.nn.Module):
            def forward(self, pages: torch.Tensor, mapping: torch.Tensor, page_size: int):
                check_page_mappings = page_size > 1 and self.debug_mode
                if check_page_mappings:
                    verify_pages(pages, mapping)
                mapping[pages] = 0
                return pages
        """,
}


def test_a_call_under_a_local_bound_to_a_debug_switch_is_no_way_in(tmp_path):
    root = project(tmp_path / "proj", DEBUG_LOCAL_CALLS)
    # `check_page_mappings` holds only the debug switch: the check's call is cold.
    assert tiers(root, "srv/checks.py")[5][0] == "cold"
    # The same local also set from a flag of the caller's: the call may run every step.
    files = dict(DEBUG_LOCAL_CALLS)
    files["srv/allocator.py"] = files["srv/allocator.py"].replace(
        "                if check_page_mappings:\n",
        "                if page_size > 8:\n                    check_page_mappings = True\n                if check_page_mappings:\n")
    assert files["srv/allocator.py"] != DEBUG_LOCAL_CALLS["srv/allocator.py"]
    root = project(tmp_path / "proj2", files)
    assert tiers(root, "srv/checks.py")[5][0] == "hot"


# Two helpers of a sequence-length module: the first called only from a class built on one
# platform, the second from a class built anywhere.
SEQLEN = """\
    import torch


    def resolve_max_seqlen(cu_seqlens: torch.Tensor) -> int:
        return int((cu_seqlens[1:] - cu_seqlens[:-1]).max().item())


    def total_len(cu_seqlens: torch.Tensor) -> int:
        return int(cu_seqlens[-1].item())
    """


def test_what_only_a_class_importing_a_vendor_package_calls_runs_where_it_installs(tmp_path):
    # `WaveBackend.__init__` imports the Wave kernel language (AMD GPUs only): what its
    # methods call runs on ROCm alone. An import under `try` builds anywhere.
    files = {
        "srv/backends.py": """\
            import torch

            from srv.seqlen import resolve_max_seqlen, total_len


            class WaveBackend:
                def __init__(self, runner):
                    import wave_lang.kernel.wave.cache as cache
                    self.cache = cache

                def forward_decode(self, q: torch.Tensor, cu_seqlens: torch.Tensor):
                    return q[: resolve_max_seqlen(cu_seqlens)]


            class TritonBackend:
                def __init__(self, runner):
                    try:
                        import wave_lang
                    except ImportError:
                        pass

                def forward_decode(self, q: torch.Tensor, cu_seqlens: torch.Tensor):
                    return q[: total_len(cu_seqlens)]
            """,
        "srv/seqlen.py": SEQLEN,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "srv/seqlen.py")
    assert found[5] == ("cold", "reached only from cold code (WaveBackend.forward_decode [on a branch no call outside cold code takes] -> resolve_max_seqlen)")
    assert found[9][0] != "cold"
    assert tiers(root, "srv/seqlen.py", target_platforms=("rocm",))[5][0] == found[9][0]


def test_what_only_a_class_built_on_another_platform_calls_runs_there(tmp_path):
    # `VisionXPUAttention.__init__` raises unless `_is_xpu`: its forward runs only on XPU, and so
    # does the helper only it calls. A class whose constructor raises on no platform test keeps
    # its callee hot.
    files = {
        "srv/attention.py": """\
            import torch
            from torch import nn

            from srv.platform import current_platform
            from srv.seqlen import resolve_max_seqlen, total_len

            _is_xpu = current_platform.is_xpu()


            class VisionXPUAttention(nn.Module):
                def __init__(self, dim: int):
                    super().__init__()
                    if not _is_xpu:
                        raise RuntimeError("only available on XPU")
                    self.dim = dim

                def forward(self, q: torch.Tensor, cu_seqlens: torch.Tensor):
                    return q[: resolve_max_seqlen(cu_seqlens)]


            class VisionAttention(nn.Module):
                def __init__(self, dim: int):
                    super().__init__()
                    if dim <= 0:
                        raise ValueError("dim")

                def forward(self, q: torch.Tensor, cu_seqlens: torch.Tensor):
                    return q[: total_len(cu_seqlens)]
            """,
        "srv/seqlen.py": SEQLEN,
        "srv/platform.py": PLATFORM_MODULE,
    }
    root = project(tmp_path / "proj", files)
    found = tiers(root, "srv/seqlen.py")
    assert found[5] == ("cold", "reached only from cold code (VisionXPUAttention.forward [on a branch no call outside cold code takes] -> resolve_max_seqlen)")
    assert found[9][0] == "hot"
    assert tiers(root, "srv/seqlen.py", target_platforms=("xpu",))[5][0] == "hot"
