"""Tiers: every finding says how often its code runs (hot, cold, unknown) and why; cold ones
are hidden unless `--include-cold`; a repository verdict plugs in through `function_tiers`."""

from __future__ import annotations

import json
import textwrap

import pytest

from synclint.analysis.tier import Tier, TierVerdict, file_tier, worker_functions
from synclint.config import ConfigError, Settings, settings_from_table
from synclint.engine import lint_source
from synclint.report import render

ALL = Settings(include_cold=True)


def _findings(code: str, filename: str = "m.py", settings: Settings = ALL, **kwargs):
    return lint_source(textwrap.dedent(code), filename, settings, **kwargs).violations


def _tiers(code: str, filename: str = "m.py", **kwargs) -> list[tuple[str, str]]:
    return [(v.tier, v.tier_reason) for v in _findings(code, filename, **kwargs)]


def _tier(code: str, filename: str = "m.py", **kwargs) -> tuple[str, str]:
    found = _findings(code, filename, **kwargs)
    assert len(found) == 1, [(v.code, v.location.row) for v in found]
    return found[0].tier, found[0].tier_reason


# Each case holds exactly one finding (SL201: `.item()` of a device tensor).
CASES = [
    ("forward-hot", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                return x.sum().item()
    """, "hot", "in forward()"),
    ("init-cold", """
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                t = torch.zeros(4, device="cuda")
                self.n = t.sum().item()
    """, "cold", "__init__"),
    ("load-weights-cold", """
        import torch
        def load_weights(model, weights):
            t = torch.zeros(4, device="cuda")
            return t.sum().item()
    """, "cold", "load_weights"),
    ("post-load-weights-cold", """
        import torch
        class Model(torch.nn.Module):
            def post_load_weights(self):
                scale = torch.ones(4, device="cuda")
                self.alpha = scale.max().item()
    """, "cold", "post_load_weights"),
    ("weights-by-name-cold", """
        import torch
        class Model(torch.nn.Module):
            def get_weights_by_name(self, name: str, truncate_size: int = 100):
                weight = torch.zeros(8, device="cuda")
                return weight[:truncate_size].tolist()
    """, "cold", "get_weights_by_name"),
    ("trainer-weight-sync-cold", """
        import torch
        def update_weights_from_tensor(model, named_tensors):
            flat = torch.zeros(4, device="cuda")
            return flat.sum().item()
    """, "cold", "update_weights_from_tensor"),
    ("apply-weights-is-no-weight-management", """
        import torch
        class Fp8LinearMethod:
            def apply_weights(self, layer, x: torch.Tensor):
                amax = torch.ones(4, device="cuda")
                return x * amax.max().item()
    """, "unknown", ""),
    ("process-weights-cold", """
        import torch
        class Method:
            def process_weights_after_loading(self, layer):
                t = torch.zeros(4, device="cuda")
                layer.scale = t.max().item()
    """, "cold", "process_weights_after_loading"),
    ("create-weights-cold", """
        import torch
        class Method:
            def create_moe_weights(self, layer):
                t = torch.zeros(4, device="cuda")
                layer.n = t.max().item()
    """, "cold", "create_*weights*"),
    ("nested-in-weight-loader", """
        import torch
        class Method:
            def get_weight_loader(self, layer):
                def convert(tensor):
                    t = torch.zeros(4, device="cuda")
                    return t.max().item()
                return convert
    """, "cold", "weight_loader"),
    ("warmup-cold", """
        import torch
        def _warm_kernels(n):
            t = torch.zeros(n, device="cuda")
            return t.sum().item()
    """, "cold", "_warm"),
    ("prewarm-cold", """
        import torch
        class ModelRunner:
            def prewarm_sampling(self):
                logits = torch.zeros(2, 8, device="cuda")
                return int(logits.argmax(-1).max().item())
    """, "cold", "*prewarm*"),
    ("precompile-cold", """
        import torch
        def precompile_recompute_kernel(device):
            x = torch.zeros(4, device=device)
            return x.sum().item()
    """, "cold", "precompile*"),
    ("cached-property-cold", """
        import torch
        from functools import cached_property
        class Rope:
            @cached_property
            def max_len(self):
                t = torch.zeros(4, device="cuda")
                return t.sum().item()
    """, "cold", "memoised by @functools.cached_property"),
    ("lru-cache-cold", """
        import functools
        import torch
        @functools.lru_cache(maxsize=8)
        def table(n):
            t = torch.zeros(n, device="cuda")
            return t.sum().item()
    """, "cold", "memoised"),
    ("memo-hit-cold", """
        import torch
        class Cache:
            def get(self, key):
                if key in self._cache:
                    return self._cache[key]
                t = torch.zeros(4, device="cuda")
                return t.sum().item()
    """, "cold", "memo hit"),
    ("lazy-attribute-cold", """
        import torch
        class Cache:
            def get(self):
                if self._value is not None:
                    return self._value
                t = torch.zeros(4, device="cuda")
                return t.sum().item()
    """, "cold", "memo hit"),
    ("cache-miss-branch-cold", """
        import torch
        def lookup(key, cache):
            if key not in cache:
                t = torch.zeros(4, device="cuda")
                cache[key] = t.sum().item()
            return cache[key]
    """, "cold", "cache on a miss"),
    ("cache-get-is-none-cold", """
        import torch
        _LUT_CACHE = {}
        def lut(device):
            t = _LUT_CACHE.get(device)
            if t is None:
                t = torch.zeros(16, device="cuda")
                _LUT_CACHE[device] = t.sum().item()
            return t
    """, "cold", "cache on a miss"),
    ("lazy-attribute-init-cold", """
        import torch
        class Stage:
            def decode(self, latents):
                if self._latents_mean is None:
                    self._latents_mean = torch.tensor(self.mean).to("cuda")
                return latents * self._latents_mean
    """, "cold", "first use"),
    ("fill-table-on-miss-cold", """
        import torch
        class Rope:
            def coords(self, grid):
                if grid.device not in self._constants:
                    self._constants[grid.device] = torch.tensor(self.patch, device="cuda")
                return self._constants[grid.device]
    """, "cold", "first use"),
    ("except-handler-cold", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                try:
                    return torch.repeat_interleave(x, 2)
                except RuntimeError:
                    return x[: x.sum().item()]
    """, "cold", "exception"),
    ("shutdown-cold", """
        import torch
        class Worker:
            def shutdown(self):
                t = torch.zeros(4, device="cuda")
                t.sum().item()
    """, "cold", "shutdown"),
    ("asserted-not-none-branch-cold", """
        import torch
        def shrink(inputs: torch.Tensor, a_scale, use_fp8: bool):
            inputs = inputs.cuda()
            if use_fp8:
                assert a_scale is not None, "a_scale required for FP8"
                return a_scale if a_scale is not None else torch.tensor(1.0, device=inputs.device)
            return inputs
    """, "cold", "never runs"),
    ("asserted-then-rebound-stays", """
        import torch
        def shrink(inputs: torch.Tensor, a_scale, table):
            inputs = inputs.cuda()
            assert a_scale is not None
            a_scale = table.get("scale")
            return a_scale if a_scale is not None else torch.tensor(1.0, device=inputs.device)
    """, "unknown", "no signal"),
    ("retraction-cold", """
        import torch
        class ScheduleBatch:
            def retract_decode(self, server_args):
                seq_lens = torch.zeros(4, device="cuda")
                return seq_lens.tolist()
    """, "cold", "*retract*"),
    ("preemption-cold", """
        import torch
        class OffloadWorker:
            def handle_preemptions(self, preempted_ids):
                slots = torch.zeros(4, device="cuda")
                return slots.tolist()
    """, "cold", "*preempt*"),
    ("weight-update-cold", """
        import torch
        class Worker:
            def finish_weight_update(self, names):
                flags = torch.zeros(4, device="cuda")
                return flags.tolist()
    """, "cold", "*weight_update*"),
    ("private-teardown-cold", """
        import torch
        def _teardown_borrow_pool(state):
            live = torch.zeros(4, device="cuda")
            return live.sum().item()
    """, "cold", "_teardown*"),
    ("abort-cold", """
        import torch
        class Scheduler:
            def abort_request(self, req):
                slots = torch.zeros(4, device="cuda")
                return slots.sum().item()
    """, "cold", "abort_*"),
    ("autotune-inputs-cold", """
        import torch
        def generate_silu_mul_inputs():
            return torch.zeros(4, device="cuda").sum().item()
    """, "cold", "generate_*inputs*"),
    ("reference-implementation-cold", """
        import torch
        def build_csr_torch_reference(n):
            return torch.zeros(n, device="cuda").sum().item()
    """, "cold", "*_reference"),
    ("rope-cache-cold", """
        import torch
        class Rope:
            def _compute_cos_sin_cache(self):
                t = torch.zeros(4, device="cuda")
                return t.sum().item()
    """, "cold", "cos_sin_cache"),
    ("training-branch-cold", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                if self.training:
                    print(x.sum().item())
                return x
    """, "cold", "training only"),
    ("not-training-else-cold", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                if not self.training:
                    return x
                else:
                    return x.sum().item()
    """, "cold", "training only"),
    ("raise-message-cold", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                grids = torch.ones(4, device=x.device)
                if x.shape[0] % 2:
                    raise AssertionError(f"bad grids {grids.sum().item()}")
                return x
    """, "cold", "runs only when it is raised"),
    ("raise-condition-hot", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                grids = torch.ones(4, device=x.device)
                if grids.sum().item() > 1:
                    raise AssertionError("bad grids")
                return x
    """, "hot", "runs every step"),
    ("debug-attribute-branch-cold", """
        import torch
        class Allocator:
            def alloc_decode(self, seq_lens: torch.Tensor):
                out = torch.empty(4, dtype=torch.int64, device="cuda")
                if self.debug_mode:
                    assert len(torch.unique(out)) == len(out)
                return out
    """, "cold", "runs only while debugging"),
    ("debug-env-branch-cold", """
        import os
        import torch
        def write(active: torch.Tensor):
            x = torch.zeros(4, device="cuda")
            if os.environ.get("ENGINE_KPOOL_DEBUG_BOUNDS") == "1":
                max_chunk = int(x.max().item())
            return x
    """, "cold", "runs only while debugging"),
    ("invariant-check-switch-cold", """
        import torch
        class Checker:
            def self_check(self, envs, num_pages: int):
                owners = torch.zeros(num_pages, dtype=torch.int64, device="cuda")
                if envs.ENGINE_CHECK_KV_PAGE_INVARIANTS.get():
                    assert owners.max().item() < num_pages
    """, "cold", "runs only while debugging"),
    ("debug-local-branch-cold", """
        import torch
        class SwaAllocator:
            def free_swa_pages(self, pages: torch.Tensor, page_size: int):
                check_page_mappings = page_size > 1 and self.allocator.debug_mode
                swa_pages = torch.empty(4, dtype=torch.int64, device="cuda")
                if check_page_mappings:
                    assert len(torch.unique(swa_pages)) == len(swa_pages)
                return swa_pages
    """, "cold", "runs only while debugging"),
    ("local-bound-twice-branch-unknown", """
        import torch
        class SwaAllocator:
            def free_swa_pages(self, pages: torch.Tensor, page_size: int, strict: bool):
                check = page_size > 1 and self.allocator.debug_mode
                if strict:
                    check = True
                swa_pages = torch.empty(4, dtype=torch.int64, device="cuda")
                if check:
                    assert len(torch.unique(swa_pages)) == len(swa_pages)
                return swa_pages
    """, "unknown", "no signal says how often"),
    ("local-not-a-switch-branch-unknown", """
        import torch
        class SwaAllocator:
            def free_swa_pages(self, pages: torch.Tensor, page_size: int):
                check = page_size > 1 and self.allocator.paged
                swa_pages = torch.empty(4, dtype=torch.int64, device="cuda")
                if check:
                    assert len(torch.unique(swa_pages)) == len(swa_pages)
                return swa_pages
    """, "unknown", "no signal says how often"),
    ("capture-conditional-expression-cold", """
        import torch
        class Backend:
            def init_forward_metadata_out_graph(self, batch, in_capture: bool = False):
                seq_lens = batch.seq_lens.to("cuda")
                seq_lens_cpu = seq_lens.cpu() if in_capture else batch.seq_lens_cpu
                return seq_lens_cpu
    """, "cold", "capturing a CUDA graph"),
    ("conditional-expression-unknown", """
        import torch
        class Backend:
            def init_forward_metadata_out_graph(self, batch, in_decode: bool = False):
                seq_lens = batch.seq_lens.to("cuda")
                seq_lens_cpu = seq_lens.cpu() if in_decode else batch.seq_lens_cpu
                return seq_lens_cpu
    """, "unknown", "no signal says how often"),
    ("sanity-check-branch-cold", """
        import torch
        def insert(keys, sanity_check: bool = False):
            value = torch.zeros(4, device="cuda")
            if sanity_check:
                assert value.sum().item() == 0
            return value
    """, "cold", "runs only while debugging"),
    ("graph-capture-branch-cold", """
        import torch
        class Backend:
            def init_forward_metadata_out_graph(self, batch, in_capture: bool = False):
                seq_lens = batch.seq_lens.cuda()
                if in_capture:
                    return seq_lens.sum().item()
                return None
    """, "cold", "runs only while debugging, profiling, warming up, scaling or capturing a CUDA graph"),
    ("current-stream-capturing-branch-cold", """
        import torch
        def plan(lens: torch.Tensor):
            lens = lens.cuda()
            if torch.cuda.is_current_stream_capturing():
                return int(lens.max().item())
            return 0
    """, "cold", "runs only while debugging"),
    ("not-capturing-branch-is-not-cold", """
        import torch
        def plan(lens: torch.Tensor, in_capture: bool = False):
            lens = lens.cuda()
            if not in_capture:
                return int(lens.max().item())
            return 0
    """, "unknown", "no signal"),
    ("capture-hidden-mode-is-not-a-capture", """
        import torch
        def keep(hidden: torch.Tensor, capture_hidden_mode):
            hidden = hidden.cuda()
            if capture_hidden_mode:
                return int(hidden.max().item())
            return 0
    """, "unknown", "no signal"),
    ("canary-switch-cold", """
        import torch
        class Batch:
            def rooms(self, envs, rooms: list):
                if envs.ENGINE_KV_CANARY_ENABLE_TOKEN_ORACLE.get():
                    return torch.tensor(rooms, device="cuda")
                return None
    """, "cold", "runs only while debugging"),
    ("comparison-test-switch-cold", """
        import torch
        def mm(a, b, envs):
            out = torch.mm(a.cuda(), b.cuda())
            if envs.ENGINE_BATCH_INVARIANT_OPS_ENABLE_MM_COMPARISON_TEST.get():
                assert (out - torch.mm(a, b).cuda()).abs().max().item() < 1e-4
            return out
    """, "cold", "runs only while debugging"),
    ("checksum-switch-cold", """
        import torch
        def send(pages: torch.Tensor, enable_kv_checksum: bool = False):
            pages = pages.cuda()
            if enable_kv_checksum:
                return int(pages.sum().item())
            return 0
    """, "cold", "runs only while debugging"),
    ("trace-switch-cold", """
        import torch
        def logits(hidden: torch.Tensor, envs):
            hidden = hidden.cuda()
            if envs.ENGINE_TRACE_LOGITS_E2E_SYNC.get():
                torch.cuda.synchronize()
                print("synced", hidden.max().item())
            return hidden
    """, "cold", "runs only while debugging"),
    ("trace-local-early-return-cold", """
        import os
        import torch
        def moe(hidden: torch.Tensor):
            trace_e2e = os.environ.get("ENGINE_TRACE_MOE") == "1"
            hidden = hidden.cuda()
            if not trace_e2e:
                return hidden
            print("max", hidden.max().item())
            return hidden
    """, "cold", "runs only while debugging"),
    ("tracing-query-is-not-a-trace-switch", """
        import torch
        def pick(x: torch.Tensor, tracer):
            x = x.cuda()
            if torch.jit.is_tracing() or tracer:
                return x.max().item()
            return 0
    """, "unknown", ""),
    ("latest-is-not-a-test-switch", """
        import torch
        def pick(latest_tokens: bool):
            x = torch.zeros(4, device="cuda")
            if latest_tokens:
                return x.max().item()
            return 0
    """, "unknown", ""),
    ("batch-invariant-mode-is-not-debug", """
        import torch
        def matmul(a, b, envs):
            scale = torch.ones(4, device="cuda")
            if envs.ENGINE_BATCH_INVARIANT:
                return a * scale.max().item()
            return a @ b
    """, "unknown", ""),
    ("debug-log-level-branch-cold", """
        import logging
        import torch
        logger = logging.getLogger(__name__)
        def step(n):
            x = torch.zeros(n, device="cuda")
            if logger.isEnabledFor(logging.DEBUG) and n > 1:
                logger.debug("max %s", x.max().item())
            return x
    """, "cold", "runs only while debugging"),
    ("not-debug-else-cold", """
        import torch
        def step(n, debug):
            x = torch.zeros(n, device="cuda")
            if not debug:
                return x
            else:
                return x.sum().item()
    """, "cold", "runs only while debugging"),
    ("debugger-word-is-not-debug", """
        import torch
        def helper(n, debugger_attached):
            x = torch.zeros(n, device="cuda")
            if debugger_attached:
                return x.sum().item()
            return x
    """, "unknown", "no signal"),
    ("not-debug-body-is-not-cold", """
        import torch
        def helper(n, debug):
            x = torch.zeros(n, device="cuda")
            if not debug:
                return x.sum().item()
            return x
    """, "unknown", "no signal"),
    ("first-use-through-local-alias-cold", """
        import torch
        class Backend:
            def forward_q8(self, q):
                dev = q.device
                scale = self._identity_scale
                if scale is None:
                    scale = torch.tensor([1.0], dtype=torch.float32, device=dev)
                    self._identity_scale = scale
                return q * scale
    """, "cold", "first use"),
    ("alias-none-branch-not-stored-is-not-cold", """
        import torch
        class Backend:
            def forward_q8(self, q):
                dev = q.device
                scale = self._identity_scale
                if scale is None:
                    scale = torch.tensor([1.0], dtype=torch.float32, device=dev)
                return q * scale
    """, "unknown", "no signal"),
    ("table-filled-on-a-get-miss-cold", """
        import torch
        _GEOMETRY = {}
        def slice_geometry(offsets, device):
            key = (tuple(offsets), device)
            geometry = _GEOMETRY.get(key)
            if geometry is None:
                geometry = torch.tensor(list(offsets), device=device)
                _GEOMETRY[key] = geometry
            return geometry
    """, "cold", "once per key"),
    ("get-miss-not-stored-is-not-cold", """
        import torch
        _DEFAULTS = {}
        def offsets_for(offsets, device):
            geometry = _DEFAULTS.get(len(offsets))
            if geometry is None:
                geometry = torch.tensor(list(offsets), device=device)
            return geometry
    """, "unknown", "no signal"),
    ("stale-pool-rebuilt-after-a-get-cold", """
        import torch
        class Exchange:
            def buffers(self, q, sizes):
                pool = self.pools.get(q.dtype)
                if pool is not None:
                    sizes = tuple(map(max, sizes, pool.sizes))
                if pool is None or pool.sizes != sizes:
                    fits = torch.tensor([sizes[0]], device=q.device)
                    pool = self.pools[q.dtype] = (sizes, fits)
                return pool
    """, "cold", "once per key"),
    ("get-rebound-before-the-test-is-not-cold", """
        import torch
        class Exchange:
            def buffers(self, q, sizes):
                pool = self.pools.get(q.dtype)
                pool = self.fallback(pool)
                if pool is None or pool.sizes != sizes:
                    fits = torch.tensor([sizes[0]], device=q.device)
                    pool = self.pools[q.dtype] = (sizes, fits)
                return pool
    """, "unknown", "no signal"),
    ("after-a-first-use-guard-cold", """
        import torch
        class Codebook(torch.nn.Module):
            def init_embed_(self, data):
                if self.inited:
                    return
                embed = data[:16].clone()
                self.embed.data.copy_(embed)
                self.inited.data.copy_(torch.Tensor([True]).to("cuda"))
    """, "cold", "runs until it is set, once"),
    ("after-a-lazy-init-guard-on-a-layer-cold", """
        import torch
        def ensure_wrapper(layer: torch.nn.Module) -> None:
            if layer._wrapper is not None:
                return
            scale = torch.tensor([layer.scale], device=layer.weight.device)
            layer._wrapper = (scale, layer.weight.shape)
    """, "cold", "runs until it is set, once"),
    ("after-a-readiness-guard-on-a-singleton-cold", """
        import torch
        def transport_ready(group):
            if STATE.failed:
                return False
            if STATE.inited:
                return True
            STATE.init(group)
            agreed = torch.tensor([1], device="cuda")
            return agreed
    """, "cold", "`if STATE.inited: return`"),
    ("a-guard-on-a-per-call-object-is-not-a-first-use-guard", """
        import torch
        def prepare(batch) -> None:
            if batch.prepared:
                return
            batch.lens = torch.tensor(batch.lens_list, device="cuda")
            batch.prepared = True
    """, "unknown", "no signal"),
    ("after-a-lookup-of-a-key-the-code-then-stores-cold", """
        import torch
        class AdapterManager:
            def activate(self, adapter_id: int):
                if adapter_id in self._active:
                    return False
                slot = torch.tensor([adapter_id], device="cuda")
                self._active[adapter_id] = slot
                return True
    """, "cold", "once per key"),
    ("a-lookup-of-a-key-never-stored-is-not-a-memo", """
        import torch
        class AdapterManager:
            def activate(self, adapter_id: int, slot_id: int):
                if adapter_id in self._active:
                    return False
                slot = torch.tensor([adapter_id], device="cuda")
                self._active[slot_id] = slot
                return True
    """, "unknown", "no signal"),
    ("a-guard-the-code-never-sets-is-not-cold", """
        import torch
        class Codebook(torch.nn.Module):
            def forward(self, data):
                if self.frozen:
                    return
                self.embed.data.copy_(torch.Tensor([1.0]).to("cuda"))
    """, "hot", "forward()"),
    ("a-guard-that-returns-a-value-is-not-a-first-use-guard", """
        import torch
        class Codebook(torch.nn.Module):
            def forward(self, data):
                if self.ready:
                    return data
                out = torch.Tensor([1.0]).to("cuda")
                self.ready = True
                return out
    """, "hot", "forward()"),
    ("worker-thread-cold", """
        import threading
        import torch
        class Sender:
            def start(self):
                threading.Thread(target=self._loop, daemon=True).start()
            def _loop(self):
                t = torch.zeros(4, device="cuda")
                t.sum().item()
    """, "cold", "worker thread"),
    ("executor-submit-cold", """
        import torch
        def _finish(n):
            return torch.zeros(n, device="cuda").sum().item()
        def run(pool, n):
            pool.submit(_finish, n)
            return _finish_now(n)
        def _finish_now(n):
            return torch.zeros(n, device="cuda").sum().item()
    """, None, None),  # two findings: checked in test_executor_submit
    ("unknown", """
        import torch
        def helper(n):
            t = torch.zeros(n, device="cuda")
            return t.sum().item()
    """, "unknown", "no signal"),
    ("compiled-hot", """
        import torch
        @torch.compile
        def fused(n):
            t = torch.zeros(n, device="cuda")
            return t.sum().item()
    """, "hot", "torch.compile"),
]


@pytest.mark.parametrize("name,code,tier,why", [c for c in CASES if c[2] is not None], ids=[c[0] for c in CASES if c[2] is not None])
def test_tier_and_reason(name, code, tier, why):
    got, reason = _tier(code)
    assert got == tier
    assert why in reason


def test_executor_submit():
    code = dict((c[0], c[1]) for c in CASES)["executor-submit-cold"]
    tiers = {v.location.row: v.tier for v in _findings(code)}
    assert tiers == {4: "cold", 9: "unknown"}


def test_tests_and_benchmarks_are_cold():
    code = """
        import torch
        def check(n):
            return torch.zeros(n, device="cuda").sum().item()
    """
    for path in ("pkg/tests/ops/check.py", "pkg/benchmarks/kernels.py", "pkg/ops/test_check.py", "pkg/ops/bench_utils.py", "pkg/kv/decode_bench_connector.py"):
        assert _tier(code, path)[0] == "cold", path
    for path in ("pkg/kernels/testing.py", "pkg/kv/hf3fs_mock_client.py", "pkg/kv/fake_store.py"):
        assert _tier(code, path)[0] == "cold", path
    assert _tier(code, "pkg/ops/checker.py")[0] == "unknown"
    # Examples are what a user runs the linter on first: not hidden.
    assert _tier(code, "pkg/examples/run.py")[0] == "unknown"
    assert _tier(code, "pkg/ops/mockingbird_attn.py")[0] == "unknown"
    assert _tier(code, "pkg/ops/test_utilsx/attesting.py")[0] == "unknown"
    for path in ("pkg/model_loader/utils.py", "pkg/distributed/weight_transfer/packed.py", "pkg/model_executor/weight_utils.py"):
        assert _tier(code, path) == ("cold", "in model or weight loading code (by its folder or file name)"), path
    assert file_tier("pkg/contest/x.py") is None


def test_debugging_tools_are_cold():
    code = """
        import torch
        def compare(n):
            return torch.zeros(n, device="cuda").abs().max().item()
    """
    reason = "in debugging tools (by its folder or file name): runs only while debugging"
    for path in ("pkg/debug_utils/dump_comparator.py", "pkg/debug/dumper.py", "pkg/utils/gpu_sync_debug.py", "pkg/ops/debug.py"):
        assert _tier(code, path) == ("cold", reason), path
    # A word that only contains it, or a serving module with a debug flag in another word: not tools.
    for path in ("pkg/ops/debugless_attn.py", "pkg/layers/attn_debugs.py", "pkg/models/nodebug_attn.py"):
        assert _tier(code, path)[0] == "unknown", path


def test_post_processing_and_offline_tools_are_cold():
    code = """
        import torch
        class Upscaler(torch.nn.Module):
            def forward(self, frame):
                return torch.from_numpy(frame).to("cuda") * 2
    """
    for path in ("pkg/runtime/postprocess/upscaler.py", "pkg/post_processing/interp.py"):
        assert _tier(code, path) == ("cold", "in a post-processing folder: runs once per output, after generation"), path
    for path in ("pkg/tools/build_cache.py", "pkg/scripts/convert.py"):
        assert _tier(code, path) == ("cold", "in a folder of offline tools or scripts: run by hand, not while serving"), path
    # The file's own name, or a word that only contains one: the module's forward stays hot.
    for path in ("pkg/models/postprocess.py", "pkg/tool_parsers/hermes.py", "pkg/postprocessors_x/a.py"):
        assert _tier(code, path)[0] == "hot", path


def test_vae_code_runs_once_per_generation():
    # A VAE decodes after the denoise loop (and encodes before it): once per generation.
    code = """
        import torch
        class Flux3VideoVAE(torch.nn.Module):
            def decode(self, z):
                scale = torch.tensor(0.18, device=z.device)
                return z / scale
        class DecoderBlock(torch.nn.Module):
            def forward(self, z):
                return z * torch.tensor(2.0, device=z.device)
    """
    for path in ("pkg/models/vaes/wan.py", "pkg/models/autoencoders/autoencoder_kl.py", "pkg/models/hunyuan3d_vae.py"):
        assert {t for t, _ in _tiers(code, path)} == {"cold"}, path
    # By the class name alone: the VAE's method is cold, the transformer block beside it is not.
    assert [t for t, _ in _tiers(code, "pkg/models/flux3.py")] == ["cold", "hot"]
    assert file_tier("pkg/models/vaedit/x.py") is None


def test_a_diffusion_models_condition_encoders_run_once_per_generation(tmp_path):
    # A model zoo with encoders beside VAEs (and the denoisers): the text and image encoders
    # encode the prompt once per generation, before the denoise loop.
    code = """
        import torch
        class Qwen2VLTextEncoder(torch.nn.Module):
            def forward(self, input_ids, image_grid_thw):
                remaining = torch.tensor(0, device=input_ids.device)
                return input_ids + remaining
    """
    zoo = tmp_path / "runtime" / "models"
    for folder in ("encoders/vision", "vaes", "dits"):
        (zoo / folder).mkdir(parents=True)
    for path in (zoo / "encoders" / "qwen_vl.py", zoo / "encoders" / "vision" / "siglip.py"):
        assert {t for t, _ in _tiers(code, str(path))} == {"cold"}, path
    assert "condition encoder" in file_tier(str(zoo / "encoders" / "qwen_vl.py")).reason
    # The denoiser beside them is not; nor is a serving engine's `encoders` folder with no
    # VAE folder beside it (its vision encoders run in every prefill step).
    assert file_tier(str(zoo / "dits" / "flux.py")) is None
    serving = tmp_path / "engine" / "models"
    (serving / "encoders").mkdir(parents=True)
    assert file_tier(str(serving / "encoders" / "clip.py")) is None
    assert {t for t, _ in _tiers(code, str(serving / "encoders" / "clip.py"))} == {"hot"}


def test_a_modular_model_definition_beside_its_generated_modeling_file_is_cold(tmp_path):
    # transformers' `modular_llama.py` is expanded into `modeling_llama.py` by a code
    # generator; the library imports the generated file, never the modular one.
    code = """
        import torch
        class LlamaRouter(torch.nn.Module):
            def forward(self, hidden_states, router_logits):
                hit = router_logits.cuda().sum(0).nonzero()
                return hidden_states[hit]
    """
    model = tmp_path / "models" / "llama"
    model.mkdir(parents=True)
    (model / "modeling_llama.py").write_text("")
    assert {t for t, _ in _tiers(code, str(model / "modular_llama.py"))} == {"cold"}
    assert "generates `modeling_llama.py`" in file_tier(str(model / "modular_llama.py")).reason
    # The generated file runs; a modular file with no modeling file beside it says nothing
    # (a project's own `modular_blocks.py`), nor does a file that merely starts so.
    assert {t for t, _ in _tiers(code, str(model / "modeling_llama.py"))} == {"hot"}
    assert file_tier(str(model / "modular_mistral.py")) is None
    assert file_tier(str(model / "modularity.py")) is None


def test_the_blocks_of_a_modular_pipeline_around_its_denoise_loop_are_cold(tmp_path):
    # diffusers' modular pipelines: `encoders.py`, `before_denoise.py`, `denoise.py` and
    # `decoders.py` side by side; only the denoise block runs every step.
    code = """
        import torch
        def shift_latents(latents, mean):
            return latents - torch.tensor(mean).to(latents.device)
    """
    blocks = tmp_path / "modular_pipelines" / "wan"
    blocks.mkdir(parents=True)
    (blocks / "denoise.py").write_text("")
    for name in ("encoders.py", "before_denoise.py", "decoders.py"):
        assert {t for t, _ in _tiers(code, str(blocks / name))} == {"cold"}, name
    assert file_tier(str(blocks / "denoise.py")) is None
    # An `encoders.py` with no denoise block beside it (a serving engine's vision encoders).
    serving = tmp_path / "engine" / "models"
    serving.mkdir(parents=True)
    assert file_tier(str(serving / "encoders.py")) is None


@pytest.mark.parametrize(
    "path,cold",
    [
        ("transformers/loss/loss_rt_detr.py", True),
        ("models/esm/openfold_utils/loss.py", True),
        ("pkg/training/focal_loss.py", True),
        ("pkg/losses/dice.py", True),
        ("pkg/codecs/lossless_codec.py", False),
        ("pkg/kv/glossary.py", False),
    ],
)
def test_training_losses_are_cold_by_folder_or_file_name(path, cold):
    assert (file_tier(path) is not None) is cold
    if cold:
        assert "training losses" in file_tier(path).reason


def test_a_routers_load_balancing_loss_is_cold_by_its_name():
    # Computed only when router logits are returned for training; the router itself runs
    # every step.
    code = """
        import torch
        def load_balancing_loss_func(gate_logits, num_experts):
            routing = gate_logits.cuda().argmax(-1)
            return torch.bincount(routing)
        def route(gate_logits):
            return gate_logits.cuda().argmax(-1).nonzero()
    """
    found = _tiers(code, "pkg/models/moe.py")
    assert [t for t, _ in found] == ["cold", "unknown"]
    assert "`*loss_func`" in found[0][1]


def test_a_generation_pipeline_runs_once_per_request_and_its_loop_every_step():
    code = """
        import torch
        class FluxPipeline:
            def __call__(self, prompt_ids, steps: int, device):
                ids = torch.tensor(prompt_ids, device=device)
                latents = torch.randn(1, 16, device=device)
                for t in torch.linspace(1.0, 0.0, steps):
                    if torch.isnan(latents).any():
                        break
                    latents = latents - 0.1 * t
                return latents
        class DecodingStage:
            def forward(self, batch, device):
                return torch.tensor(batch.sizes, device=device)
        class TextEncoder(torch.nn.Module):
            def forward(self, ids, device):
                return torch.tensor(ids, device=device)
    """
    assert [(t, r.split(" (")[0]) for t, r in _tiers(code, "pkg/pipelines/flux.py")] == [
        ("cold", "`FluxPipeline.__call__()` runs once per request"),
        ("hot", "runs every step"),
        ("cold", "`DecodingStage.forward()` runs once per request"),
        ("hot", "runs every step"),
    ]


def test_a_class_deriving_a_stage_base_is_a_stage():
    # A stage named for its model (`...AR`) is read by its base: its `forward` runs once per
    # request. A class deriving neither (an `nn.Module`, whatever its name) runs every step.
    code = """
        import torch
        from gen import stages
        class ImageGenAR(PipelineStage):
            def forward(self, batch, device):
                return torch.tensor(batch.sizes, device=device)
        class VideoPrep(stages.PipelineStage):
            def forward(self, batch, device):
                for i, t in enumerate(batch.timesteps):
                    batch.t = torch.tensor([t], device=device)
                return torch.tensor(batch.sizes, device=device)
        class StageEmbed(torch.nn.Module):
            def forward(self, ids, device):
                return torch.tensor(ids, device=device)
    """
    assert [(t, r.split(" (")[0]) for t, r in _tiers(code, "pkg/stages/gen.py")] == [
        ("cold", "`ImageGenAR.forward()` runs once per request"),
        ("hot", "runs every step"),
        ("cold", "`VideoPrep.forward()` runs once per request"),
        ("hot", "runs every step"),
    ]


def test_only_the_denoise_loop_of_a_stage_runs_every_step():
    code = """
        import torch
        class TextEncodingStage:
            def forward(self, batch, device):
                for prompt in batch.prompts:
                    batch.ids.append(torch.tensor(prompt, device=device))
                return batch
        class ChunkedStage:
            def forward(self, batch, device):
                for i, t in enumerate(batch.timesteps):
                    batch.t = torch.tensor([t], device=device)
                return batch
        class WanDenoisingStage:
            def forward(self, batch, device):
                while batch.pending:
                    batch.t = torch.tensor(batch.pending.pop(), device=device)
                return batch
        class Decoder:
            def vae_decode(self, latents, device):
                return latents / torch.tensor(0.18, device=device)
        class GlmBeforeDenoisingStage:
            def forward(self, batch, device):
                for image in batch.images:
                    batch.ids.append(torch.tensor(image.grid, device=device))
                return batch
        class PreDenoisingRolloutStage:
            def forward(self, batch, device):
                for chunk in batch.chunks:
                    batch.t = torch.tensor(chunk, device=device)
                return batch
    """
    assert [(t, r.split(" (")[0]) for t, r in _tiers(code, "pkg/stages/wan.py")] == [
        ("cold", "`TextEncodingStage.forward()` runs once per request"),
        ("hot", "runs every step"),
        ("hot", "runs every step"),
        ("cold", "VAE code: encodes or decodes once per generation, not per denoise step"),
        # A stage named for what runs before the denoise loop loops over images, once per
        # request; one whose name still holds a loop word of its own (`Rollout`) loops every step.
        ("cold", "`GlmBeforeDenoisingStage.forward()` runs once per request"),
        ("hot", "runs every step"),
    ]


def test_default_hides_cold_and_include_cold_shows_it():
    code = textwrap.dedent("""
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                self.n = torch.zeros(4, device="cuda").sum().item()
            def forward(self, x: torch.Tensor):
                return x.sum().item()
    """)
    default = lint_source(code, "m.py", Settings()).violations
    assert [(v.location.row, v.tier) for v in default] == [(7, "hot")]
    every = lint_source(code, "m.py", Settings(include_cold=True)).violations
    assert [(v.location.row, v.tier) for v in every] == [(5, "cold"), (7, "hot")]
    assert settings_from_table({"include-cold": True}, "pyproject.toml").include_cold is True
    with pytest.raises(ConfigError):
        settings_from_table({"include-cold": "yes"}, "pyproject.toml")


ONE_OF_EACH_TIER = """
    import torch
    class M(torch.nn.Module):
        def __init__(self):
            self.n = torch.zeros(4, device="cuda").sum().item()
        def forward(self, x: torch.Tensor):
            return x.sum().item()
    def helper(x: torch.Tensor):
        return x.cuda().sum().item()
"""


def test_only_hot_hides_unknown_and_cold():
    code = textwrap.dedent(ONE_OF_EACH_TIER)
    default = lint_source(code, "m.py", Settings()).violations
    assert [(v.location.row, v.tier) for v in default] == [(7, "hot"), (9, "unknown")]
    hot = lint_source(code, "m.py", Settings(only_hot=True)).violations
    assert [(v.location.row, v.tier) for v in hot] == [(7, "hot")]
    # A suppression comment on a line the setting hides is no unused suppression (SL003).
    quiet = code.replace("x.cuda().sum().item()", "x.cuda().sum().item()  # noqa: SL201")
    assert [v.code for v in lint_source(quiet, "m.py", Settings(only_hot=True)).violations] == ["SL201"]


def test_only_hot_and_include_cold_in_configuration():
    assert settings_from_table({"only-hot": True}, "pyproject.toml").only_hot is True
    with pytest.raises(ConfigError, match="contradict"):
        settings_from_table({"only-hot": True, "include-cold": True}, "pyproject.toml")
    # A file that extends another replaces its choice of tiers.
    base = settings_from_table({"include-cold": True}, "base.toml")
    child = settings_from_table({"only-hot": True}, "pyproject.toml", base)
    assert (child.only_hot, child.include_cold) == (True, False)
    back = settings_from_table({"include-cold": True}, "pyproject.toml", child)
    assert (back.only_hot, back.include_cold) == (False, True)


def test_cli_only_hot(tmp_path, capsys):
    from synclint.cli import main

    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(ONE_OF_EACH_TIER))
    (tmp_path / "pyproject.toml").write_text("[tool.synclint]\ninclude-cold = true\n")
    main(["check", str(path), "--no-cache", "--statistics", "--exit-zero"])
    assert "(1 hot, 1 unknown, 1 cold)" in capsys.readouterr().out
    # The command line's choice replaces the file's.
    main(["check", str(path), "--no-cache", "--statistics", "--exit-zero", "--only-hot"])
    assert "(1 hot)" in capsys.readouterr().out
    assert main(["check", str(path), "--no-cache", "--only-hot", "-q"]) == 1
    assert main(["check", str(path), "--only-hot", "--include-cold"]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_summary_counts_the_findings_the_tiers_hide(tmp_path, capsys):
    from synclint.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.synclint]\n")
    path = project / "m.py"
    path.write_text(textwrap.dedent(ONE_OF_EACH_TIER))

    def summary(*options):
        main(["check", str(path), *options])
        return capsys.readouterr().out.splitlines()[-1]

    assert summary() == "Not shown: 1 finding in cold code (shown by `--include-cold`)."
    # The same from the cache (nothing changed), and after an edit whose findings are reused.
    assert summary() == "Not shown: 1 finding in cold code (shown by `--include-cold`)."
    path.write_text(textwrap.dedent(ONE_OF_EACH_TIER) + "# a comment\n")
    assert summary() == "Not shown: 1 finding in cold code (shown by `--include-cold`)."
    assert summary("--only-hot") == (
        "Not shown: 1 finding in cold code (shown by `--include-cold`); "
        "1 finding of tier unknown (shown without `--only-hot`)."
    )
    assert summary("--include-cold") == "Found 3 findings."
    # A run that fixes counts them as well (what it lints again after fixing).
    assert summary("--fix", "--no-cache") == "Not shown: 1 finding in cold code (shown by `--include-cold`)."
    # A finding its comment suppresses is not one the tiers hid.
    path.write_text(textwrap.dedent(ONE_OF_EACH_TIER).replace('"cuda").sum().item()', '"cuda").sum().item()  # noqa: SL201'))
    assert summary("--no-cache") == "Found 2 findings."
    # Every finding hidden: the run passes, and says what it did not show.
    path.write_text(textwrap.dedent(ONE_OF_EACH_TIER).replace("return x.sum().item()", "return x"))
    assert main(["check", str(path), "--only-hot"]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "All checks passed!",
        "Not shown: 1 finding in cold code (shown by `--include-cold`); 1 finding of tier unknown (shown without `--only-hot`).",
    ]
    assert main(["check", str(path), "--only-hot", "-q"]) == 0
    assert capsys.readouterr().out == ""


def test_hidden_tiers_line():
    from synclint.terminal import hidden_tiers_line

    assert hidden_tiers_line({}) is None
    assert hidden_tiers_line({"cold": 0}) is None
    assert hidden_tiers_line({"unknown": 2, "cold": 1}) == (
        "Not shown: 1 finding in cold code (shown by `--include-cold`); 2 findings of tier unknown (shown without `--only-hot`)."
    )


def test_outputs_carry_the_tier():
    code = """
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                self.n = torch.zeros(4, device="cuda").sum().item()
    """
    found = _findings(code)
    data = json.loads(render("json", found))
    assert data[0]["tier"] == "cold" and "__init__" in data[0]["tier_reason"]
    sarif = json.loads(render("sarif", found))
    properties = sarif["runs"][0]["results"][0]["properties"]
    assert properties["tier"] == "cold" and "__init__" in properties["tierReason"]
    text = render("full", found, {"m.py": textwrap.dedent(code)}, explain=True)
    assert "= tier: cold (in __init__()" in text
    assert "tier: cold" not in render("full", found, {"m.py": textwrap.dedent(code)}, explain=False)


def test_cli_statistics_and_include_cold(tmp_path, capsys):
    from synclint.cli import main

    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                self.n = torch.zeros(4, device="cuda").sum().item()
            def forward(self, x: torch.Tensor):
                return x.sum().item()
    """))
    main(["check", str(path), "--no-cache", "--statistics", "--exit-zero"])
    assert "(1 hot)" in capsys.readouterr().out
    main(["check", str(path), "--no-cache", "--statistics", "--exit-zero", "--include-cold"])
    assert "(1 hot, 1 cold)" in capsys.readouterr().out


def test_repository_verdict_hook():
    code = """
        import torch
        class Runner:
            def _compute_slot_mapping(self, n):
                t = torch.zeros(n, device="cuda")
                return t.sum().item()
    """
    asked = []

    def verdicts(filename, qualname):
        asked.append((filename, qualname))
        return TierVerdict(Tier.HOT, "reached from execute_model -> _compute_slot_mapping")

    tier, reason = _tier(code, "r.py", function_tiers=verdicts)
    assert (tier, reason) == ("hot", "reached from execute_model -> _compute_slot_mapping")
    assert asked == [("r.py", "Runner._compute_slot_mapping")]
    # No verdict from the repository: the local signals decide.
    assert _tier(code, "r.py", function_tiers=lambda f, q: None)[0] == "unknown"
    # A branch signal inside the function wins over the repository's verdict.
    training = """
        import torch
        class M(torch.nn.Module):
            def step(self, x: torch.Tensor):
                if self.training:
                    t = torch.zeros(4, device="cuda")
                    return t.sum().item()
    """
    assert _tier(training, function_tiers=verdicts)[0] == "cold"


def test_cold_functions_setting():
    code = """
        import torch
        def rebuild_tables(n):
            return torch.zeros(n, device="cuda").sum().item()
    """
    settings = settings_from_table({"extend-cold-functions": ["rebuild_*"], "include-cold": True}, "pyproject.toml")
    assert _tier(code, settings=settings)[0] == "cold"
    assert "__init__" in settings.cold_functions


def test_worker_functions_reads_the_whole_text():
    text = """
        t = threading.Thread(
            target=self._send_loop, daemon=True)
        fut = executor.submit(self.flush, x)
        loop.run_in_executor(None, blocking_read)
        await asyncio.to_thread(save_checkpoint, path)
    """
    assert worker_functions(text) == {"_send_loop", "flush", "blocking_read", "save_checkpoint"}
    assert worker_functions("x = 1") == frozenset()


def test_a_memoised_function_is_cold_whatever_the_repository_says():
    # `_cached_tensor` is reached from a hot root, but `@lru_cache` builds each value once.
    code = """
        import torch
        from functools import lru_cache

        @lru_cache
        def _cached_tensor(n, device):
            return torch.zeros(n, device=device).sum().item()
    """
    hot = lambda f, q: TierVerdict(Tier.HOT, "runs every step (called from forward)")  # noqa: E731
    tier, reason = _tier(code, function_tiers=hot)
    assert tier == "cold" and "memoised" in reason
    # Without the decorator the repository's verdict stands.
    assert _tier(code.replace("        @lru_cache\n", ""), function_tiers=hot)[0] == "hot"


WALRUS_MEMO = """
    import torch
    _PTRS = {}

    def scale_ptrs(weights, device):
        key = tuple(w.data_ptr() for w in weights)
        if values := _PTRS.get(key):
            return values
        t = torch.tensor([w.data_ptr() for w in weights], device=device)
        n = int(t.max().item())
        _PTRS[key] = (t, n)
        return t, n
"""


def test_a_walrus_memo_hit_makes_the_code_after_it_cold():
    tiers = {v.location.row: v.tier for v in _findings(WALRUS_MEMO)}
    assert tiers and set(tiers.values()) == {"cold"}, tiers
    # Look-alikes: a walrus on something that is not a lookup, or returning something else.
    not_lookup = WALRUS_MEMO.replace("if values := _PTRS.get(key):\n            return values", "if values := len(weights) == 0:\n            return values")
    assert {v.tier for v in _findings(not_lookup)} == {"unknown"}
    other = WALRUS_MEMO.replace("            return values\n", "            return None\n")
    assert {v.tier for v in _findings(other)} == {"unknown"}


def test_cache_fill_with_a_compound_statement_in_its_body():
    # A compound statement (for/if/with) in the body of `if self._x is None:` made the
    # cache-fill check iterate a block: an internal error that ended whole runs.
    code = """
        import torch
        class Scheduler:
            def step(self, values):
                if self._table is None:
                    for v in values:
                        if v is None:
                            continue
                    self._table = torch.tensor(values, device="cuda")
                return self._table
    """
    tier, reason = _tier(code)
    assert (tier, "first use" in reason) == ("cold", True), reason


@pytest.mark.parametrize("code", [
    """
        import torch
        class Rope:
            def cos_sin(self, n):
                cache = self._cache
                if cache is None:
                    for _ in range(2):
                        pass
                    cache = torch.tensor([n, n], device="cuda")
                    self._cache = cache
                return cache
    """,
    """
        import torch
        _GEOMETRY = {}
        def geometry(key, values):
            g = _GEOMETRY.get(key)
            if g is None:
                with torch.no_grad():
                    pass
                g = torch.tensor(values, device="cuda")
                _GEOMETRY[key] = g
            return g
    """,
], ids=["alias-fill", "get-miss-fill"])
def test_first_use_fills_with_a_compound_statement_in_their_body(code):
    # The same TypeError as above, in the two other first-use checks.
    tier, _ = _tier(code)
    assert tier == "cold"


def test_a_type_test_branch_a_known_tensor_never_takes_is_cold():
    # `if not isinstance(x, torch.Tensor): x = torch.tensor(x, device=d)` converts a list a
    # caller may pass. Where the code has just built `x` as a tensor, the branch never runs:
    # cold, with the reason. The `else` (the tensor's blocking `.to(device)`) is reported.
    code = """
        import numpy as np
        import torch

        def layout(grid):
            return torch.from_numpy(np.cumsum(grid)).to(torch.int32)

        class Encoder(torch.nn.Module):
            def forward(self, x, grid):
                cu_seqlens = layout(grid)
                if not isinstance(cu_seqlens, torch.Tensor):
                    cu_seqlens = torch.tensor(cu_seqlens, device=x.device, dtype=torch.int32)
                else:
                    cu_seqlens = cu_seqlens.to(device=x.device, dtype=torch.int32)
                sizes = torch.arange(4, device=x.device)
                if not torch.is_tensor(sizes) and sizes is not None:
                    sizes = torch.tensor(sizes, device=x.device)
                if isinstance(sizes, torch.Tensor):
                    pass
                else:
                    sizes = torch.tensor(sizes, device=x.device)
                if not isinstance(grid, torch.Tensor) and not isinstance(sizes, torch.Tensor):
                    sizes = torch.tensor(sizes, device=x.device)
                return x, cu_seqlens
    """
    got = {(v.location.row, v.code): (v.tier, v.tier_reason) for v in _findings(code)}
    assert got[(12, "SL101")][0] == "cold"
    assert "`cu_seqlens` is not a tensor" in got[(12, "SL101")][1] and "never runs" in got[(12, "SL101")][1]
    assert got[(14, "SL103")][0] == "hot"
    assert got[(17, "SL101")][0] == "cold"
    assert got[(21, "SL101")][0] == "cold"
    # the second part of an `and` (the first tests a value of unknown type)
    assert got[(23, "SL101")][0] == "cold"


def test_a_type_test_on_a_value_of_unknown_type_keeps_its_branch():
    # `lengths` may be a list (a caller builds one): the conversion is a real sync, and a
    # local built from a list is no tensor either.
    code = """
        import torch

        class Encoder(torch.nn.Module):
            def forward(self, x, lengths):
                if not isinstance(lengths, torch.Tensor):
                    lengths = torch.tensor(lengths, device=x.device)
                sizes = [1, 2]
                if isinstance(sizes, list):
                    sizes = torch.tensor(sizes, device=x.device)
                return lengths, sizes
    """
    got = {(v.location.row, v.code): v.tier for v in _findings(code)}
    assert got == {(7, "SL101"): "hot", (10, "SL101"): "hot"}


HOST_COPY_FALLBACKS = '''
    import torch
    class Attention(torch.nn.Module):
        def forward(self, q: torch.Tensor, meta, seq_lens_cpu=None, bounds_host=None, k_scale=None):
            lens = q.new_ones(4, device="cuda")
            if seq_lens_cpu is None:
                a = lens.tolist()                                   # 7: fallback
            if seq_lens_cpu is not None:
                b = seq_lens_cpu
            else:
                b = lens.tolist()                                   # 11: fallback (else)
            c = bounds_host if bounds_host is not None else lens.tolist()   # 12: fallback
            if meta.lens_list is None:
                d = lens.tolist()                                   # 14: a field named for the host
            if k_scale is None:
                e = lens.tolist()                                   # 16: not a host copy
            if meta.lens_gpu is None:
                f = lens.tolist()                                   # 18: named for the device
            if seq_lens_cpu is None:
                return lens.tolist()                                # 20: fallback
            g = lens.tolist()                                       # 21: runs when the copy is there
            return a, b, c, d, e, f, g

    class Planner(torch.nn.Module):
        def forward(self, q: torch.Tensor, lens_cpu=None):
            lens = q.new_ones(4, device="cuda")
            if lens_cpu is not None:
                return q[: int(lens_cpu.sum())]
            return lens.tolist()                                    # 29: after the copy's early return

        def step(self, q: torch.Tensor, batch):
            sizes = batch.extend_seq_lens_cpu
            if sizes is None:
                sizes = batch.extend_seq_lens.cuda().tolist()       # 34: a local bound to a host copy
            width = batch.width
            if width is None:
                width = batch.extend_seq_lens.cuda().tolist()       # 37: a local bound to anything else
            return sizes, width
'''


def test_the_fallback_of_a_missing_host_copy_is_unknown():
    found = {v.location.row: (v.tier, v.tier_reason) for v in _findings(HOST_COPY_FALLBACKS)}
    fallbacks = {7: "seq_lens_cpu", 11: "seq_lens_cpu", 12: "bounds_host", 14: "meta.lens_list", 20: "seq_lens_cpu", 29: "lens_cpu", 34: "sizes = batch.extend_seq_lens_cpu"}
    for row, name in fallbacks.items():
        tier, reason = found[row]
        assert tier == "unknown" and reason.startswith(f"the fallback for when host copy `{name}` is None"), (row, reason)
    # Look-alikes: a None test of a value not named for the host, or named for the device,
    # and the code that runs when the host copy is there, stay hot.
    for row in (16, 18, 21, 37):
        assert found[row][0] == "hot", (row, found[row])
    # A cold function's fallback stays cold: only `hot` is softened.
    cold = HOST_COPY_FALLBACKS.replace("class Planner(torch.nn.Module):\n        def forward(", "class Planner(torch.nn.Module):\n        def load_weights(")
    assert cold != HOST_COPY_FALLBACKS
    assert {v.location.row: v.tier for v in _findings(cold)}[29] == "cold"
