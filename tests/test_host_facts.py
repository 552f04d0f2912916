"""Host facts: code that says its data is on the host (asserts, `is_cpu` / `is_cuda` tests,
`isinstance` normalisation, fields kept on the host), `.device` of an unplaced value (no proof
of a device), and syncs that do not happen (empty data, assert messages, compile-time
constants), each with the reason `--explain` shows."""

from __future__ import annotations

import textwrap

import pytest

from synclint.analysis.reveal import reveal_placements
from synclint.config import Settings
from synclint.engine import lint_source
from synclint.analysis.placement import Place
from synclint.violation import Confidence


def _reveal(code: str):
    return reveal_placements(textwrap.dedent(code))


def _one(code: str):
    answers = _reveal(code)
    assert len(answers) == 1
    return answers[0]


def _rows(code: str, select: str | None = None, filename: str = "m.py") -> list[tuple[int, str]]:
    settings = Settings(include_cold=True, select=(select,) if select else ("SL",))
    return [(v.location.row, v.code) for v in lint_source(textwrap.dedent(code), filename, settings).violations]


def test_assert_device_type_cpu():
    answer = _one("""
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                assert x.device.type == "cpu"
                reveal(x)
    """)
    assert answer.placement.describe() == "host tensor (pageable)"
    assert any("on the CPU" in step for step in answer.provenance)


def test_assert_is_cpu_and_not_is_cuda():
    for check in ("x.is_cpu", "not x.is_cuda", 'str(x.device) == "cpu"'):
        answer = _one(f"""
            import torch
            class M(torch.nn.Module):
                def forward(self, x: torch.Tensor):
                    assert {check}
                    reveal(x)
        """)
        assert not answer.placement.maybe_device, check


def test_is_cuda_else_branch_is_host():
    answers = _reveal("""
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                if x.is_cuda:
                    reveal(x)
                else:
                    reveal(x)
                if x.device.type != "cpu":
                    pass
                else:
                    reveal(x)
    """)
    assert [a.placement.maybe_device for a in answers] == [True, False, False]
    assert any("not on the GPU" in step for step in answers[1].provenance)


def test_not_isinstance_branch_is_python_data():
    answer = _one("""
        import torch
        class M(torch.nn.Module):
            def forward(self, grid: torch.Tensor):
                if not isinstance(grid, torch.Tensor):
                    reveal(grid)
    """)
    assert answer.placement.is_host_data
    assert any("not a tensor" in step for step in answer.provenance)


def test_after_the_tensor_case_returns_the_value_is_no_tensor():
    # The tensor case is handled and returns: below it `sigma` is a Python number, and
    # `float(sigma)` reads nothing back. A look-alike whose branch does not leave, and one
    # whose `else` leaves, keep what each path says.
    code = """
        import torch
        class Stage(torch.nn.Module):
            @staticmethod
            def velocity_to_x0(sample: torch.Tensor, velocity: torch.Tensor, sigma: float | torch.Tensor):
                if isinstance(sigma, torch.Tensor):
                    sigma = sigma.to(device=sample.device, dtype=torch.float32)
                    return sample - sigma * velocity
                return sample - float(sigma) * velocity

            def forward(self, sample: torch.Tensor, sigma: torch.Tensor):
                if isinstance(sigma, torch.Tensor):
                    sigma = sigma.to(sample.device)
                return sample * float(sigma)

            def scale(self, sample: torch.Tensor, sigma: torch.Tensor):
                if not isinstance(sigma, torch.Tensor):
                    return sample * sigma
                else:
                    sigma = sigma.to(sample.device)
                return sample * float(sigma)
    """
    assert _rows(code) == [(14, "SL203"), (21, "SL203")]


def test_isinstance_normalisation_means_host_data():
    answers = _reveal("""
        import torch
        class M(torch.nn.Module):
            def forward(self, grid_thw: torch.Tensor, lens: torch.Tensor, device):
                if not isinstance(grid_thw, torch.Tensor):
                    grid_thw = torch.tensor(grid_thw, dtype=torch.long)
                reveal(grid_thw)
                if not isinstance(lens, torch.Tensor):
                    lens = torch.tensor(lens, device=device)
                reveal(lens)
    """)
    assert answers[0].placement.describe() == "host tensor (pageable)"
    assert answers[0].placement.confidence == Confidence.MEDIUM
    assert any("expects host data" in step for step in answers[0].provenance)
    assert answers[1].placement.on_device  # built on a device: no host fact
    code = """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
                if not isinstance(grid_thw, torch.Tensor):
                    grid_thw = torch.tensor(grid_thw)
                sizes = grid_thw.tolist()
                return x
    """
    assert _rows(code) == []


def test_device_of_an_unplaced_value_is_no_proof():
    code = """
        import torch
        def pad(lens, x):
            return torch.tensor([0, 1], device=x.device)
        def build(self, n):
            return torch.tensor([0, n], device=self.model.device)
        class M(torch.nn.Module):
            def forward(self, h: torch.Tensor):
                return torch.tensor([0, 1], device=h.device)
    """
    assert _rows(code, "SL101") == [(4, "SL101"), (6, "SL101"), (9, "SL101")]
    answer = _one("""
        import torch
        def pad(x: torch.Tensor):
            reveal(x.device)
    """)
    # A tensor of unknown place: its device may be the CPU (not a proof of an accelerator).
    assert answer.placement.places == {Place.ACCEL_DEVICE, Place.CPU_DEVICE}
    assert answer.placement.confidence == Confidence.MEDIUM
    assert any("an accelerator or the CPU" in step for step in answer.provenance)
    assert not answer.device_target.on_device and answer.device_target.maybe_device


def test_fields_kept_on_the_host():
    code = """
        import torch
        class Processor:
            def _get_mm_fields_config(self, hf_inputs):
                return dict(
                    pixel_values=MultiModalFieldConfig.batched("image"),
                    image_sizes=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
                    "num_patches": MultiModalFieldConfig.batched(
                        "image", keep_on_cpu=True
                    ),
                )

        class Model(torch.nn.Module):
            def forward(self, pixel_values: torch.Tensor, image_sizes: torch.Tensor, **kwargs):
                sizes = image_sizes.tolist()
                patches = kwargs.pop("num_patches").tolist()
                more = kwargs["image_sizes"].tolist()
                return pixel_values.sum().item()
    """
    # (dict(...) with a string key is not valid Python; use a dict literal for that one)
    code = code.replace('"num_patches": MultiModalFieldConfig', 'num_patches=MultiModalFieldConfig')
    assert _rows(code) == [(18, "SL201")]
    answer = _one("""
        import torch
        FIELDS = dict(image_grid_thw=FieldConfig.batched("image", keep_on_cpu=True))
        class Encoder(torch.nn.Module):
            def forward(self, grid_thw: torch.Tensor):
                reveal(grid_thw)
    """)
    assert not answer.placement.maybe_device  # `image_grid_thw` arrives as `grid_thw`
    answer = _one("""
        import torch
        FIELDS = {"grid": FieldConfig.batched("image", keep_on_cpu=True)}
        class Model(torch.nn.Module):
            def forward(self, grid: torch.Tensor):
                reveal(grid)
    """)
    assert not answer.placement.maybe_device
    assert any("kept on the host (`keep_on_cpu=True`)" in step for step in answer.provenance)


def test_a_multimodal_input_read_by_a_declared_fields_name():
    # The model parses its `**kwargs` into an input object and reads it back by the field's
    # name: the runner moved `image_grid_thw` (declared without `keep_on_cpu`) to the device,
    # and kept `image_sizes` on the host.
    code = """
        import torch
        from torch import nn
        from vllm.multimodal.inputs import MultiModalFieldConfig

        class Processor:
            def _get_mm_fields_config(self, hf_inputs, hf_processor_mm_kwargs):
                return dict(
                    image_grid_thw=MultiModalFieldConfig.batched("image"),
                    image_sizes=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
                )

        class Model(nn.Module):
            def _process_image_input(self, image_input):
                sizes = [tuple(s.tolist()) for s in image_input["image_sizes"]]
                out = []
                for thw in image_input["image_grid_thw"]:
                    out.append(tuple(thw.cpu().numpy().tolist()))
                return sizes, out, image_input["mode"].tolist()
    """
    assert _rows(code) == [(18, "SL202")]


def test_multimodal_fields_not_kept_on_the_host_are_moved_to_the_device():
    # vLLM's model runner moves a batch's multimodal fields to the device, except those
    # declared `keep_on_cpu=True`: a model's `**kwargs` hold them.
    code = """
        import torch
        from torch import nn
        from vllm.multimodal.inputs import MultiModalFieldConfig

        class OcrProcessor:
            def _get_mm_fields_config(self, hf_inputs, hf_processor_mm_kwargs):
                return dict(
                    pixel_values=MultiModalFieldConfig.batched("image"),
                    images_spatial_crop=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
                )

        class OcrModel(nn.Module):
            def _parse_and_validate_image_input(self, **kwargs: object):
                pixel_values = kwargs.pop("pixel_values", None)
                images_spatial_crop = kwargs.pop("images_spatial_crop", None)
                if pixel_values is None:
                    return None
                if torch.sum(pixel_values).item() == 0:
                    return None
                return pixel_values, images_spatial_crop.tolist()

            def embed(self, options: dict, **kwargs: object):
                sizes = options.pop("pixel_values")  # not the model's `**kwargs`
                return sizes.tolist()
    """
    assert _rows(code) == [(19, "SL201")]
    answer = _one("""
        import torch
        def encode(**kwargs):
            reveal(kwargs.pop("pixel_values"))
    """)
    assert not answer.placement.maybe_device or answer.placement.confidence == Confidence.LOW  # no declaration
    answer = _one("""
        import torch
        FIELDS = dict(pixel_values=MultiModalFieldConfig.batched("image"))
        def encode(**kwargs):
            reveal(kwargs.get("pixel_values"))
    """)
    assert answer.placement.on_device and answer.placement.confidence == Confidence.MEDIUM
    assert any("moved to the device by vLLM's model runner" in step for step in answer.provenance)
    # A field config of another framework says nothing of where its fields go.
    answer = _one("""
        import torch
        FIELDS = dict(pixel_values=FieldConfig.batched("image"))
        def encode(**kwargs):
            reveal(kwargs.get("pixel_values"))
    """)
    assert not answer.placement.on_device


def test_empty_data_copies_nothing():
    code = """
        import torch
        def step(device, x: torch.Tensor):
            a = torch.tensor([], device=device)
            b = torch.tensor((), dtype=torch.long, device="cuda")
            c = x.new_tensor([])
            return torch.tensor([0], device="cuda")
    """
    assert _rows(code, "SL101") == [(7, "SL101")]


def test_assert_message_is_evaluated_only_on_failure():
    code = """
        import torch
        class M(torch.nn.Module):
            def forward(self, x: torch.Tensor, n: int):
                assert n > 0, f"bad {x.sum().item()} / {x}"
                assert x.shape[0] == n, f"{x}"
                return f"{x}"
    """
    assert _rows(code) == [(7, "SL203")]


def test_code_after_an_unconditional_exit_of_its_block_never_runs():
    # After `raise NotImplementedError(...)` the rest of the method is dead; after a `continue`
    # or a `return` under an `if`, the code that follows the `if` still runs.
    code = """
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.ones(4, device="cuda")

            def should_skip(self, enable: bool) -> bool:
                if not enable:
                    return False
                raise NotImplementedError("not supported yet")
                return bool(self.scale.sum().item() > 1)

            def forward(self, x: torch.Tensor):
                for i in range(3):
                    if i == 1:
                        continue
                    y = x.sum().item()
                    break
                    z = x.max().item()
                if x.numel() == 0:
                    return x
                return x * self.scale.max().item()
    """
    assert _rows(code, "SL201") == [(18, "SL201"), (23, "SL201")]


def test_constants_under_torch_compile_are_graph_constants():
    code = """
        import torch

        @torch.compile
        def fused(x: torch.Tensor):
            scale = torch.tensor([0.5, 2.0], device=x.device)
            return x * scale

        def eager(h, device):
            return h * torch.tensor([0.5, 2.0], device="cuda")

        E2M1 = [0.0, 0.5, 1.0, 1.5]

        @torch.compile
        def dequant(q: torch.Tensor, host: torch.Tensor):
            values = q.new_tensor(E2M1[:2], dtype=torch.float32)
            moved = torch.tensor(host.numpy(), device="cuda")
            return values, moved
    """
    assert _rows(code, "SL101") == [(10, "SL101"), (17, "SL101")]
    assert _rows(code, "SL105") == []


def test_sl102_small_sources_are_not_reported():
    code = """
        import numpy as np
        import torch

        def _prepare_inputs(self, seq_lens_np: np.ndarray, embeds_np: np.ndarray, reqs, n: int):
            a = torch.from_numpy(seq_lens_np[:n]).to("cuda", non_blocking=True)
            cu = np.cumsum(seq_lens_np)
            b = torch.from_numpy(cu).to("cuda", non_blocking=True)
            c = torch.tensor([r.top_k for r in reqs]).to("cuda", non_blocking=True)
            d = torch.from_numpy(self.query_start_loc_np[: n + 1]).to("cuda", non_blocking=True)
            e = torch.from_numpy(embeds_np).to("cuda", non_blocking=True)
            return a, b, c, d, e
    """
    rows = _rows(code, "SL102")
    assert rows == [(11, "SL102")]
    low = lint_source(textwrap.dedent(code), "m.py", Settings(select=("SL102",), min_confidence=Confidence.LOW)).violations
    assert [v.location.row for v in low] == [6, 8, 9, 10, 11]
    assert all(v.confidence == Confidence.LOW for v in low[:-1])
    assert "this one is small" in low[0].message and any("below the ~4 MiB" in p for p in low[0].provenance)
    message = lint_source(textwrap.dedent(code), "m.py", Settings(select=("SL102",))).violations[0].message
    assert "~4 MiB" in message and "size here is unknown" in message


def test_a_contiguous_view_of_pinned_memory_stays_pinned():
    # A slice of a pinned pool viewed as another dtype and reshaped shares the pinned
    # storage: its non_blocking copy does not block. A transpose (not contiguous) and a
    # computed result (`.float()` makes a new pageable tensor) are pageable again.
    code = """
        import torch

        class TransferBuffer:
            def __init__(self, size: int):
                self._pool = torch.empty(size, dtype=torch.uint8, pin_memory=True)

            def read(self, offset: int, nbytes: int, shape, dtype, device):
                raw = self._pool[offset : offset + nbytes]
                src = raw.view(dtype).reshape(shape)
                return src.to(device, non_blocking=True)

            def read_transposed(self, offset: int, nbytes: int, shape, dtype, device):
                raw = self._pool[offset : offset + nbytes]
                src = raw.view(dtype).reshape(shape).t()
                return src.to(device, non_blocking=True)
    """
    assert _rows(code, "SL102") == [(16, "SL102")]


def test_a_container_of_field_declarations_is_no_field():
    from synclint.analysis.host_fields import host_fields

    # `FIELDS = dict(...)`: the keep_on_cpu belongs to the inner call, whose key is the field.
    text = 'FIELDS = dict(image_grid_thw=FieldConfig.batched("image", keep_on_cpu=True), pixel_values=FieldConfig.batched("image"))'
    assert host_fields(text) == {"image_grid_thw", "grid_thw"}
    # The keyword of the call itself still counts, over several lines.
    assert host_fields('x = dict(\n    sizes=FieldConfig.batched(\n        "image",\n        keep_on_cpu=True,\n    ),\n)') == {"sizes"}


# A vision tower whose forward moves sizes derived from its `grid_thw` input to the device
# itself: the grid is the processor's host tensor, whatever "the inputs of forward() live where
# the module runs" would say.
MOVED_GRID = """\
    import torch
    from torch import nn


    class VisionTransformer(nn.Module):
        def forward(self, x: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
            cu_seqlens = (
                torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0])
                .to(torch.int32)
                .to(x.device)
            )
            lengths = grid_thw.prod(-1).tolist()
            return self.blocks(x, cu_seqlens, lengths)
    """


def test_a_forward_that_moves_its_input_to_the_device_holds_host_data():
    assert _rows(MOVED_GRID) == []


@pytest.mark.parametrize(
    "move",
    [
        # Only a cast: no move to the device.
        ".to(torch.int32)\n                .to(x.dtype)",
        # What is moved is built from the inputs' shapes, not from their data.
        ".to(torch.int32)\n            )\n            positions = (\n                torch.arange(grid_thw.shape[0] * x.size(0)).to(x.device)",
    ],
)
def test_a_cast_or_a_read_of_the_device_is_no_move(move):
    code = MOVED_GRID.replace(".to(torch.int32)\n                .to(x.device)", move)
    row = next(i for i, line in enumerate(textwrap.dedent(code).splitlines(), 1) if "lengths = grid_thw" in line)
    assert (row, "SL202") in _rows(code)


# A vision tower whose forward moves to the device what its own helper method makes of the
# `grid_thw` input (`rotary = self.rot_pos_emb(grid_thw)`, then `rotary.to(x.device)`): the
# helper builds host data from the grid, so the grid is host data too, in the forward and in
# the helper it is passed to.
MOVED_BY_A_HELPER = """\
    import torch
    from torch import nn


    class VisionModel(nn.Module):
        def rot_pos_emb(self, grid_thw: torch.Tensor) -> torch.Tensor:
            pos_ids = []
            for t, h, w in grid_thw:
                pos_ids.append(torch.arange(h * w).repeat(t))
            return torch.cat(pos_ids)

        def forward(self, x: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
            rotary = self.rot_pos_emb(grid_thw)
            rotary = rotary.to(x.device)
            windows, lengths = self.blocks(grid_thw), int(grid_thw[:, 1].max())
            return x + rotary[:lengths]
    """


def test_a_forward_that_moves_what_its_own_helper_makes_of_an_input_holds_it_on_the_host():
    # No readback of the grid; the move itself is a blocking copy of host data.
    assert _rows(MOVED_BY_A_HELPER) == [(14, "SL103")]


@pytest.mark.parametrize(
    "change",
    [
        # a submodule (a field, not a method of the class) makes it: device data moved between devices
        ("rotary = self.rot_pos_emb(grid_thw)", "rotary = self.rotary(grid_thw)"),
        # the helper's result is only cast
        ("rotary = rotary.to(x.device)", "rotary = rotary.to(x.dtype)"),
    ],
)
def test_a_submodules_result_or_a_cast_says_nothing_of_the_input(change):
    code = MOVED_BY_A_HELPER.replace(*change)
    row = next(i for i, line in enumerate(textwrap.dedent(code).splitlines(), 1) if "int(grid_thw" in line)
    assert (row, "SL204") in _rows(code)


@pytest.mark.parametrize(
    "snippet",
    [
        "y = torch.repeat_interleave(g[:, 1], g[:, 0]).to(torch.int32).to(x.device)",
        "y = self.encode(h.size(0), dim=d).to(h.device)\nz = w.to(torch.bfloat16)",
        "y = [a.cuda() for a in batch]\nz = mask.to(device=dev, non_blocking=True)",
        "def inner(q):\n    return q.to('cuda')\ny = k.to(dtype)",
        "y = w.to('cpu')\nz = k.to(device='cpu')\nv = h.to(torch.device('cpu'))",
        # a host copy moved back: the copy is what is moved, not `w` or `k`
        "y = w.type(torch.BoolTensor).flatten(0, 1).to(dev)\nz = k.cpu().to(dev)",
        # what an own method makes of `g` is moved (`self.blocks` is no method: a submodule)
        "a, b = self.helper(g, n=d)\na = a.to(h.device)\nc = self.blocks(w)\nc = c.to(h.device)",
        # what is computed from `g` is moved (`self.proj(w)` is a submodule's, `y = k` an alias)
        "n = g[:, 0] * g.prod(-1)\nn = n.to(h.device)\nz = self.proj(w) + 1\nz = z.to(h.device)\ny = k\ny = y.cuda()",
    ],
)
def test_the_screen_and_the_analysis_read_the_same_moves(snippet):
    import ast

    import libcst as cst

    from synclint.analysis.flow import moved_inputs as analysis_moves
    from synclint.screen.facts import moved_inputs as screen_moves

    code = "def forward(self, x, g, h, d, w, batch, mask, dev, k, dtype):\n" + textwrap.indent(snippet, "    ") + "\n"
    screen = screen_moves(ast.parse(code).body[0], frozenset({"helper"}))
    analysis = analysis_moves(cst.parse_module(code).body[0].body, frozenset({"helper"}))
    assert screen == analysis
    assert "x" not in screen and "h" not in screen and "w" not in screen and "k" not in screen and "q" not in screen


HOST_FIELD_WITH_A_DEVICE_FALLBACK = """
    import torch
    FIELDS = dict(
        lengths=MultiModalFieldConfig.batched("audio"),
        counts=MultiModalFieldConfig.batched("audio", keep_on_cpu=True),
    )
    class Model(torch.nn.Module):
        def forward(self, features: torch.Tensor, **kwargs):
            lengths = kwargs["lengths"]
            counts = kwargs["counts"]
            if counts is None:
                counts = lengths.new_tensor([features.shape[0]])
            else:
                counts = counts.to(dtype=torch.long)
            offsets = torch.cumsum(counts, dim=0)
            return offsets.tolist(), int(counts.sum().item())
"""


def test_a_device_fallback_for_a_missing_host_field_is_low():
    # `counts` is kept on the host; only the fallback for a missing value builds it on the
    # device: what follows the join reads host data on the common path. The fallback's own
    # blocking copy is still reported.
    assert _rows(HOST_FIELD_WITH_A_DEVICE_FALLBACK) == [(12, "SL105")]
    settings = Settings(include_cold=True, min_confidence=Confidence.LOW)
    found = lint_source(textwrap.dedent(HOST_FIELD_WITH_A_DEVICE_FALLBACK), "m.py", settings).violations
    late = [v for v in found if v.location.row == 16]
    assert late and all(v.confidence is Confidence.LOW for v in late)
    assert any("only the fallback for `counts is None` puts it on the device" in step
               for v in late for step in v.provenance)


@pytest.mark.parametrize("change", [
    # the field is not kept on the host: a device tensor whichever branch ran
    ('counts=MultiModalFieldConfig.batched("audio", keep_on_cpu=True)', 'counts=MultiModalFieldConfig.batched("audio")'),
    # the given value is moved to the device on its own branch
    ("counts = counts.to(dtype=torch.long)", "counts = counts.to(features.device)"),
    # the test is not for a missing value
    ("if counts is None:", "if features.shape[0] > 1:"),
])
def test_look_alikes_of_a_missing_field_fallback_stay_reported(change):
    code = HOST_FIELD_WITH_A_DEVICE_FALLBACK.replace(*change)
    assert (16, "SL202") in _rows(code)


def test_a_factory_given_keyword_arguments_by_a_dict_may_build_anywhere():
    # `torch.arange(bs, **self.cuda_int32_kwargs)`: the dict may say `device=`, so the index is
    # no host tensor, and indexing a device table with it copies nothing. Without the dict, or
    # with `device=` left out of an explicit call, it is built on the host.
    code = """\
        import torch


        class Backend:
            def __init__(self, device):
                self.cuda_int32_kwargs = {"device": device, "dtype": torch.int32}
                self.table = torch.zeros(100, device=device)

            def step(self, bs: int, kw: dict):
                idx = torch.arange(bs, **self.cuda_int32_kwargs)
                other = torch.zeros(bs, dtype=torch.int64, **kw)
                host = torch.arange(bs, dtype=torch.int32)
                a = self.table[idx]
                b = self.table[other]
                c = self.table[host]
                return a + b + c
    """
    assert _rows(code, "SL301") == [(15, "SL301")]


def test_device_set_to_the_cpu_on_another_branch_is_low():
    # A collective's buffer on the device of the group it rides: NCCL's device on one branch,
    # the CPU of a gloo group on the other. Nothing says which configuration runs.
    code = """
        import torch
        class Gather:
            def __init__(self, group, use_nccl):
                if use_nccl:
                    self.device = group.device
                else:
                    self.device = "cpu"
                self.buffer = torch.empty((8, 6), dtype=torch.int64, device=self.device)

            def negotiate(self):
                info = self.buffer[:, 0]
                return info.min().item() > 0

        def sync_batch(group, use_nccl, local):
            device = group.device if use_nccl else torch.device("cpu")
            flags = torch.tensor(local, device=device)
            return flags.max().item()
    """
    settings = Settings(include_cold=True, select=("SL",), min_confidence=Confidence.LOW)
    found = lint_source(textwrap.dedent(code), "m.py", settings).violations
    assert [(v.location.row, v.code, v.confidence) for v in found if v.confidence > Confidence.LOW] == []
    assert {(v.location.row, v.code) for v in found} >= {(13, "SL201"), (17, "SL101"), (18, "SL201")}
    answer = _one("""
        import torch
        def f(group, use_nccl):
            device = group.device if use_nccl else "cpu"
            reveal(torch.zeros(2, device=device))
    """)
    assert answer.placement.confidence == Confidence.LOW
    assert any("sets to the CPU on another branch" in step for step in answer.provenance)


def test_device_chosen_by_availability_or_by_callers_stays_reported():
    # Look-alikes: an accelerator where one is available; a parameter whose default is the
    # CPU (its callers decide); the device of a tensor nothing places (may be either).
    code = """
        import torch
        DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

        def step(lens):
            t = torch.tensor(lens, device=DEVICE)
            return t.sum().item()

        def build(n, device="cpu"):
            return torch.zeros(n, device=device).sum().item()

        def pad(x: torch.Tensor, n):
            return torch.tensor(n, device=x.device).item()
    """
    settings = Settings(include_cold=True, select=("SL",))
    found = lint_source(textwrap.dedent(code), "m.py", settings).violations
    medium = {(v.location.row, v.code) for v in found if v.confidence >= Confidence.MEDIUM}
    assert {(6, "SL101"), (7, "SL201"), (10, "SL201"), (13, "SL201")} <= medium
    answer = _one("""
        import torch
        device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        reveal(torch.zeros(2, device=device))
    """)
    assert answer.placement.on_device and answer.placement.confidence == Confidence.MEDIUM
    assert any("where one is available" in step for step in answer.provenance)
