"""`target-platforms`: code that only runs on other platforms than the targets (by path,
class, function and `is_<platform>()` branch) is not reported; code for a target is."""

from __future__ import annotations

import textwrap

import pytest

from synclint.analysis import platforms
from synclint.config import ConfigError, Settings, settings_from_table
from synclint.engine import lint_source

SYNC = """
import torch

def step(n):
    return torch.zeros(n, device="cuda").sum().item()
"""


def _rows(code: str, filename: str = "m.py", targets=("cuda",)) -> list[int]:
    settings = Settings(target_platforms=tuple(targets), include_cold=True)
    return [v.location.row for v in lint_source(textwrap.dedent(code), filename, settings).violations]


@pytest.mark.parametrize(
    "path,platform",
    [
        ("vllm/v1/worker/xpu_model_runner.py", "xpu"),
        ("pkg/attention/backends/rocm_aiter_fa.py", "rocm"),
        ("pkg/ops/silu_hip.py", "rocm"),
        ("pkg/models/amd/deepseek.py", "rocm"),
        ("pkg/gemm/mxfp8_amd_gfx95.py", "rocm"),
        ("pkg/platforms/tpu.py", "tpu"),
        ("pkg/hardware_backend/npu/attention.py", "npu"),
        ("pkg/backends/ascend_backend.py", "npu"),
        ("pkg/comm/hpu_communicator.py", "hpu"),
        ("pkg/platforms/mps.py", "mps"),
        ("pkg/worker/cpu_model_runner.py", "cpu"),
        ("pkg/worker/cpu/model_runner.py", "cpu"),
        ("pkg/layers/attention/intel_amx_backend.py", "cpu"),
    ],
)
def test_paths_of_other_platforms_are_not_reported(path, platform):
    assert platforms.path_platforms(path) == {platform}
    assert _rows(SYNC, path) == []
    assert _rows(SYNC, path, targets=(platform,)) == [5]


@pytest.mark.parametrize(
    "path",
    [
        "pkg/worker/gpu_model_runner.py",
        "pkg/kv_offload/cpu/manager.py",  # CPU offloading runs on the accelerator platform
        "pkg/connector/simple_cpu_offload_connector.py",
        "pkg/shipping/hipster.py",  # words, not parts
        "pkg/ops/compute.py",
    ],
)
def test_generic_paths_are_reported(path):
    assert platforms.path_platforms(path) is None
    assert _rows(SYNC, path) == [5]


@pytest.mark.parametrize(
    "name,expected",
    [
        ("XPUModelRunner", {"xpu"}),
        ("AiterMLABackend", {"rocm"}),
        ("FusedMoENPU", {"npu"}),
        ("CPUModelRunner", {"cpu"}),
        ("TorchSDPABackendCPU", {"cpu"}),
        ("CpuGpuBuffer", None),  # a host mirror of a device buffer, used on CUDA
        ("CPUOffloadingManager", None),
        ("GEMMKernel", None),
    ],
)
def test_class_names(name, expected):
    assert platforms.class_platforms(name) == (frozenset(expected) if expected else None)


def test_class_and_function_names_in_code():
    code = """
        import torch

        class XPUWorker:
            def step(self, n):
                return torch.zeros(n, device="cuda").sum().item()

        class RMSNorm(torch.nn.Module):
            def forward_hip(self, n):
                return torch.zeros(n, device="cuda").sum().item()

            def forward_cuda(self, n):
                return torch.zeros(n, device="cuda").sum().item()
    """
    assert _rows(code) == [13]
    assert _rows(code, targets=("xpu",)) == [6]
    assert _rows(code, targets=("cuda", "rocm")) == [10, 13]


def test_branches():
    code = """
        import torch
        from pkg.platforms import current_platform

        _is_npu = is_npu()
        _is_hip = is_hip()

        def step(n, flag):
            t = torch.zeros(n, device="cuda")
            if current_platform.is_xpu():
                a = t.sum().item()
            elif current_platform.is_rocm():
                a = t.max().item()
            else:
                a = t.min().item()
            if _is_npu and flag:
                b = t.sum().item()
            if not _is_hip:
                c = t.sum().item()
            if current_platform.is_cuda_alike():
                d = t.sum().item()
            if current_platform.is_cuda():
                pass
            else:
                e = t.sum().item()
            if t.is_cpu:
                f = t.sum().item()
            return a
    """
    assert _rows(code) == [15, 19, 21]
    assert _rows(code, targets=("rocm",)) == [13, 21, 25]
    assert _rows(code, targets=("npu",)) == [15, 17, 19, 25]


def test_triton_is_a_capability_of_the_gpu_platforms():
    # `if not current_platform.capabilities.supports_triton:` guards the torch-native fallback
    # of the platforms without Triton; `if HAS_TRITON:` the GPU path.
    code = """
        import torch
        from pkg.platforms import current_platform
        from pkg.triton_utils import HAS_TRITON

        def scatter(rows, loc, values):
            loc = loc.cuda()
            if not current_platform.capabilities.supports_triton:
                keep = loc != 0
                rows[loc[keep]] = values[keep]
                return
            if HAS_TRITON:
                n = int(loc.max())
            return n
    """
    assert _rows(code) == [13]
    assert set(_rows(code, targets=("cpu",))) == {10}


def test_a_dispatch_on_a_tensors_device_type_is_a_platform_branch():
    # `x.device.type != "cuda"` picks the torch fallback of the platforms where the data is
    # not on a CUDA (or ROCm, which PyTorch also calls `cuda`) device, as `t.is_cuda` does.
    code = """
        import torch

        def fill(mask, ids, device_type):
            if mask.device.type != "cuda":
                a = torch.tensor(ids, device=mask.device)
            if mask.device.type == "cuda":
                b = torch.tensor(ids, device=mask.device)
            if device_type in ("npu", "xpu"):
                c = torch.tensor(ids, device=mask.device)
            if "cuda" == mask.device.type:
                d = torch.tensor(ids, device=mask.device)
            if mask.device.kind != "cuda":
                e = torch.tensor(ids, device=mask.device)
            return a
    """
    assert _rows(code) == [8, 12, 14]
    assert _rows(code, targets=("rocm",)) == [8, 12, 14]
    assert _rows(code, targets=("npu",)) == [6, 10, 14]


def test_the_code_after_a_platform_branch_that_returns_is_the_else():
    # `if t.device.type == "cuda": <kernel>; return` and then the reference path of the
    # other devices: what follows the `if` runs where its test fails.
    code = """
        import torch

        def block_map(block_index, counts, ids):
            if block_index.device.type == "cuda":
                a = torch.tensor(ids, device=block_index.device)
                return a
            b = torch.tensor(ids, device=block_index.device)
            if counts.device.type == "cuda":
                c = torch.tensor(ids, device=counts.device)
            d = torch.tensor(ids, device=counts.device)
            return b, c, d
    """
    assert _rows(code) == [6]
    assert _rows(code, targets=("cpu",)) == [8, 11]


def test_predicates_that_are_not_platforms():
    for test in ("self.is_cuda_graph", "use_cuda_graph", "is_cuda_available()", "use_cpu_offload", "is_flashinfer_available()"):
        assert platforms.branch_sets(__import__("libcst").parse_expression(test)) == (None, None), test


def test_host_preprocessing_is_not_reported_for_an_accelerator():
    code = """
        import torch

        class MyImageProcessor(BaseImageProcessorFast):
            def resize(self, n):
                return torch.zeros(n, device="cuda").sum().item()

        class ParakeetExtractor:
            def __call__(self, n):
                return torch.zeros(n, device="cuda").sum().item()

        class MinPLogitsProcessor(LogitsProcessor):
            def apply(self, n):
                return torch.zeros(n, device="cuda").sum().item()
    """
    assert _rows(code) == [14]
    assert _rows(code, "pkg/models/image_processing_foo.py") == []
    assert _rows(code, "pkg/multimodal/processors/foo.py") == []
    assert _rows(code, targets=("cpu",)) == [6, 10, 14]


def test_setting():
    assert Settings().target_platforms == ("cuda",)
    assert settings_from_table({"target-platforms": ["ROCm", "cuda"]}, "p.toml").target_platforms == ("rocm", "cuda")
    with pytest.raises(ConfigError, match="unknown platform"):
        settings_from_table({"target-platforms": ["gpu"]}, "p.toml")
    with pytest.raises(ConfigError):
        settings_from_table({"target-platforms": []}, "p.toml")


def test_code_that_uses_a_name_imported_only_for_another_platform():
    # `ms` and `torch_npu` exist only where `_is_npu` holds: a function that uses one runs
    # only there. A function that uses them only inside its own platform branch, and one
    # that does not use them, run everywhere; a name also bound for the other platforms
    # (`else: npu_ops = None`) says nothing.
    code = """
        import torch
        from engine.utils import is_npu

        _is_npu = is_npu()

        if _is_npu:
            import mindspore as ms
            import torch_npu
            from mindspore import mint

        if _is_npu:
            import npu_ops
        else:
            npu_ops = None


        class MindSporeForCausalLM(torch.nn.Module):
            def prepare_inputs(self, forward_batch):
                batch_valid_length = forward_batch.seq_lens.cuda().cpu().numpy()
                return ms.Tensor(batch_valid_length, dtype=ms.int32)

            def forward(self, forward_batch):
                lengths = forward_batch.seq_lens.cuda().cpu()
                if _is_npu:
                    torch_npu.npu.synchronize()
                return lengths

            def helper(self, x):
                return x.cuda().cpu()

            def with_optional_ops(self, x):
                y = x.cuda().cpu()
                return npu_ops.fold(y) if npu_ops is not None else y
    """
    assert _rows(code) == [24, 30, 33]
    assert _rows(code, targets=("npu",)) == [20, 24, 30, 33]


def test_a_class_whose_constructor_uses_a_name_imported_only_for_another_platform_runs_only_there():
    # `ms` exists only where `_is_npu` holds, and the constructor calls it unconditionally:
    # no object of the class exists elsewhere, so none of its methods run on CUDA. A
    # constructor that uses the name only under a condition of its own, or only inside its
    # platform branch, says nothing.
    code = """
        import torch
        from engine.utils import is_npu

        _is_npu = is_npu()

        if _is_npu:
            import mindspore as ms


        class MindSporeForCausalLM(torch.nn.Module):
            def __init__(self, config):
                super().__init__()
                ms.set_context(graph_kernel_flags="--disable_pass=fusion")
                self.config = config

            def is_prefill(self, forward_batch):
                return forward_batch.extend_prefix_lens.cuda().sum().item() == 0


        class MaybeMindSpore(torch.nn.Module):
            def __init__(self, config, use_ms):
                super().__init__()
                if use_ms:
                    ms.set_context(graph_kernel_flags="--disable_pass=fusion")
                if _is_npu:
                    ms.set_kernel_launch_capture(False)

            def is_prefill(self, forward_batch):
                return forward_batch.extend_prefix_lens.cuda().sum().item() == 0
    """
    assert _rows(code) == [30]
    assert _rows(code, targets=("npu",)) == [18, 30]


def test_guarded_imports_read_a_module_with_loops_withs_and_one_line_suites():
    # A module-level `for`/`with` block (its body is a block, not a list of statements) made
    # the reading of platform-guarded imports raise a TypeError; a one-line suite binds too.
    import libcst as cst

    from synclint.analysis.platforms import guarded_imports

    module = cst.parse_module(
        "import torch\n"
        "if current_platform.is_npu():\n"
        "    import torch_npu\n"
        "for name in ('a', 'b'):\n"
        "    pass\n"
        "with open('x') as handle:\n"
        "    import json\n"
        "if current_platform.is_xpu(): import intel_extension_for_pytorch as ipex\n"
        "if flag: import ipex\n"
    )
    guarded = guarded_imports(module)
    assert set(guarded) == {"torch_npu"} and guarded["torch_npu"] == frozenset({"npu"})


def test_the_body_of_a_device_kernel_is_not_host_code():
    # A CuTe DSL / Triton kernel body is compiled for the device: its `if` on a value runs
    # there. A `torch.jit.script` function runs PyTorch ops from the host: reported.
    code = """\
        import cutlass.cute as cute
        import torch
        import triton


        class DecodeAttention:
            def __init__(self, device):
                self.splits = torch.zeros(1, dtype=torch.int32, device=device)

            @cute.jit
            def cluster_reduce(self, acc: cute.Tensor):
                if self.splits > 1:
                    acc.fill(0)

            def host_reduce(self, acc):
                if self.splits > 1:
                    acc.zero_()


        @triton.autotune(configs=[], key=["n"])
        @triton.jit
        def scale_kernel(x_ptr, n, flag):
            t = torch.zeros(1, device="cuda")
            if t:
                pass


        @torch.jit.script
        def scripted(x: torch.Tensor):
            y = torch.zeros(4, device="cuda")
            return int(y.sum())
        """
    assert _rows(code) == [16, 31]


def test_a_field_set_only_to_a_platform_predicate_is_a_platform_branch():
    code = """
        import torch
        from pkg.platforms import current_platform

        class DeepEPFinalize:
            def __init__(self, fp8: bool):
                self.sync_comm = current_platform.is_rocm()
                self.use_fp8 = fp8
                self.mixed = current_platform.is_rocm()

            def reset(self):
                self.mixed = False

            def finalize(self, x: torch.Tensor):
                if self.sync_comm and dbo_enabled():
                    torch.cuda.current_stream().synchronize()
                if self.use_fp8:
                    torch.cuda.current_stream().synchronize()
                if self.mixed:
                    torch.cuda.current_stream().synchronize()
                return x
    """
    # `sync_comm` is only ever ROCm's predicate: its branch runs on ROCm. `use_fp8` is no
    # predicate, and `mixed` is also set to something else: their branches run anywhere.
    assert _rows(code) == [18, 20]
    assert _rows(code, targets=("rocm",)) == [16, 18, 20]


def test_a_field_true_only_on_one_platform_may_be_false_there_too():
    # `self.enable_cg = _is_cuda and flag`: true only on CUDA, but false on CUDA as well where
    # the flag is off. The code after `if self.enable_cg: return ...` runs on CUDA too.
    code = """
        import torch
        from pkg.platforms import current_platform, flag

        class VisionTower:
            def __init__(self):
                self.enable_cg = current_platform.is_cuda() and flag()

            def forward(self, x: torch.Tensor, lens: list):
                if self.enable_cg:
                    return x
                seqlens = torch.tensor(lens, device=x.device)
                return x + seqlens.sum().item()
    """
    assert _rows(code) == [12, 13]


def test_a_field_set_from_a_local_bound_once_to_a_platform_predicate_is_a_platform_branch():
    # `supports = is_cuda() or is_hip()`, then `self.use_triton = supports`: the field holds
    # that predicate. A local bound twice says nothing.
    code = """
        import torch
        from pkg.platforms import is_cuda, is_hip

        class DraftWorker:
            def __init__(self, fallback: bool):
                supports = is_cuda() or is_hip()
                self.use_triton = supports
                either = is_cuda()
                if fallback:
                    either = False
                self.use_fused = either

            def rebuild(self, x: torch.Tensor, mask: torch.Tensor):
                if self.use_triton:
                    pass
                else:
                    torch.cuda.current_stream().synchronize()
                if self.use_fused:
                    pass
                else:
                    torch.cuda.current_stream().synchronize()
                return x
    """
    assert _rows(code) == [22]
    assert _rows(code, targets=("cpu",)) == [18, 22]


def test_a_class_whose_constructor_raises_on_other_platforms_runs_only_on_its_own():
    # `if not _is_xpu: raise ...` / `assert current_platform.is_npu()` at the top of `__init__`:
    # the class is built only there, and its methods run only there.
    code = """
        import torch
        from torch import nn
        from pkg.platforms import current_platform
        from pkg.utils import is_cpu, is_xpu

        _is_xpu = is_xpu()
        _is_cpu = is_cpu()


        class VisionAttentionA(nn.Module):
            def __init__(self):
                super().__init__()
                if not (_is_xpu):
                    raise Exception("only available for Intel XPU")

            def forward(self, q: torch.Tensor, cu_seqlens: torch.Tensor):
                return q[: cu_seqlens[-1].item()]


        class VisionAttentionB(nn.Module):
            def __init__(self, dim: int):
                super().__init__()
                assert current_platform.is_npu(), "NPU only"
                self.dim = dim

            def forward(self, q: torch.Tensor, cu_seqlens: torch.Tensor):
                return q[: cu_seqlens[-1].item()]


        class VisionAttentionC(nn.Module):
            def __init__(self, flag: bool, generator: torch.Generator):
                super().__init__()
                if not flag:
                    raise ValueError("needs flag")
                if _is_cpu:
                    self.fallback = True
                if generator.device.type != "cpu":
                    raise ValueError("needs a CPU generator")
                self.scale = 2

            def forward(self, q: torch.Tensor, cu_seqlens: torch.Tensor):
                return q[: cu_seqlens[-1].item()] * self.scale
    """
    # C's constructor raises on a test of no platform and on where an argument lives (not where the
    # class runs), and only sets a field on one platform: any platform.
    assert _rows(code) == [43]
    assert _rows(code, targets=("xpu",)) == [18, 43]
    assert _rows(code, targets=("npu",)) == [28, 43]


def test_a_class_whose_constructor_imports_a_vendor_package_runs_only_where_it_installs():
    # A backend that imports its kernel language lazily in `__init__` (to keep the import off
    # other platforms) can only be built where the package installs. An import inside a `try`
    # or under a branch of its own says nothing; nor does a package of no one vendor.
    code = """
        import torch
        from pkg.layers import AttentionBackend


        class WaveAttnBackend(AttentionBackend):
            def __init__(self, runner):
                super().__init__()
                import wave_lang.kernel.wave.cache as cache
                self.cache_dir = cache.CACHE_BASE_DIR

            def forward_decode(self, q: torch.Tensor):
                return q[: int(torch.zeros(4, device="cuda").max())]


        class TritonAttnBackend(AttentionBackend):
            def __init__(self, runner):
                super().__init__()
                try:
                    import wave_lang
                except ImportError:
                    wave_lang = None
                import triton

            def forward_decode(self, q: torch.Tensor):
                return q[: int(torch.zeros(4, device="cuda").max())]
    """
    assert _rows(code) == [26]
    assert _rows(code, targets=("rocm",)) == [13, 26]


@pytest.mark.parametrize(
    "imports,platform",
    [
        ("from aiter.ops.triton.gemm import gemm_a8w8", "rocm"),
        ("import aiter", "rocm"),
        ("import torch_npu", "npu"),
        ("from habana_frameworks.torch import core as htcore", "hpu"),
        ("import torch_xla.core.xla_model as xm", "tpu"),
    ],
)
def test_a_module_that_imports_a_vendor_package_at_its_top_level_runs_on_that_platform(imports, platform):
    # The package installs with one vendor's stack only: importing it unconditionally makes
    # the whole module that platform's, whatever the file is called.
    code = f"""
        import torch
        {imports}

        def decode(lens):
            return torch.zeros(4, device="cuda").sum().item()
    """
    assert _rows(code, "pkg/ops/decode.py") == []
    assert _rows(code, "pkg/ops/decode.py", targets=(platform,)) == [6]


@pytest.mark.parametrize(
    "imports",
    [
        # guarded, optional or relative: the module still imports elsewhere
        "try:\n            import aiter\n        except ImportError:\n            aiter = None",
        "if is_hip():\n            import aiter",
        "from .aiter import helpers",
        "import aitertools",
        "from triton_kernels import matmul",
    ],
)
def test_a_vendor_import_that_may_be_skipped_or_is_not_a_vendor_package_says_nothing(imports):
    code = f"""
        import torch
        from engine.utils import is_hip
        {imports}

        def decode(lens):
            return torch.zeros(4, device="cuda").sum().item()
    """
    assert len(_rows(code, "pkg/ops/decode.py")) == 1
