"""Structural evidence that a value is a device tensor (synclint/analysis/evidence.py): a host
mirror beside a parameter, a readback bound to a host-named target, and device-only uses
(arithmetic with a device tensor, `torch.cat` beside one, a Triton launch, a custom op). Each
gives `medium` confidence with its reason; each has look-alikes that must stay unplaced."""

from __future__ import annotations

import textwrap

from synclint.analysis.reveal import reveal_placements
from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Confidence


def _one(code: str):
    answers = reveal_placements(textwrap.dedent(code))
    assert len(answers) == 1
    return answers[0]


def _device(code: str, reason: str) -> None:
    answer = _one(code)
    assert answer.placement.on_device, answer.placement.describe()
    assert answer.placement.confidence == Confidence.MEDIUM
    assert any(reason in step for step in answer.provenance), answer.provenance


def _unplaced(code: str) -> None:
    answer = _one(code)
    assert not answer.placement.on_device, answer.provenance


def _findings(code: str, select: str) -> list[tuple[int, str, str]]:
    settings = Settings(include_cold=True, select=(select,))
    result = lint_source(textwrap.dedent(code), "m.py", settings)
    return [(v.location.row, v.code, v.confidence.label) for v in result.violations]


# --- host mirrors ----------------------------------------------------------------------------


def test_parameter_beside_its_host_mirror_is_the_device_copy():
    _device("""
        import torch
        def max_len(seq_lens_cpu, seq_lens: torch.Tensor) -> int:
            reveal(seq_lens)
    """, "sits beside its host mirror `seq_lens_cpu`")


def test_mirror_without_annotation_and_other_suffixes():
    for mirror in ("positions_np", "positions_host", "positions_cpu_tensor"):
        _device(f"""
            def step(positions, {mirror}):
                reveal(positions)
        """, f"host mirror `{mirror}`")


def test_no_mirror_no_promotion():
    _unplaced("""
        import torch
        def max_len(lens_cpu, seq_lens: torch.Tensor) -> int:
            reveal(seq_lens)
    """)


def test_a_mirror_does_not_override_an_annotation_that_places():
    answer = _one("""
        def step(positions: list[int], positions_cpu):
            reveal(positions)
    """)
    assert not answer.placement.maybe_device


# --- a readback into a host-named target --------------------------------------------------


def test_readback_into_host_named_target_places_the_source():
    for target, call in (("seq_lens_cpu", "seq_lens.tolist()"), ("last_host", "seq_lens.cpu()"),
                         ("cpu_data", "seq_lens[:, :2].cpu()"), ("lens_cpu", 'seq_lens.to("cpu")')):
        _device(f"""
            import torch
            def plan(seq_lens: torch.Tensor):
                {target} = {call}
                reveal(seq_lens)
        """, f"host-named `{target}`")


def test_the_readback_itself_is_reported_at_medium():
    found = _findings("""
        import torch
        def plan(seq_lens: torch.Tensor):
            seq_lens_cpu = seq_lens.tolist()
            return seq_lens_cpu
    """, "SL202")
    assert found == [(4, "SL202", "medium")]


def test_readback_lookalikes_stay_unplaced():
    # `_np` / `_list` say what type the copy is, not where it came from; `.numpy()` works
    # only on host tensors; a value placed on the host stays there.
    for line in ("lens_np = seq_lens.numpy()", "lens_list = seq_lens.tolist()", "lens = seq_lens.cpu()"):
        _unplaced(f"""
            import torch
            def plan(seq_lens: torch.Tensor):
                {line}
                reveal(seq_lens)
        """)
    answer = _one("""
        import torch
        def plan(n: int):
            seq_lens = torch.arange(n)
            seq_lens_cpu = seq_lens.cpu()
            reveal(seq_lens)
    """)
    assert not answer.placement.maybe_device


# --- device-only uses -------------------------------------------------------------------------


def test_a_readback_of_a_host_named_source_places_nothing():
    # `host_idx = host_indices[i].item()`: both names say host (a host pool's indices read
    # one by one), so the readback shows no device copy; `cpu_` prefixes the same.
    for source in ("host_indices", "cpu_offsets", "lens_cpu"):
        _unplaced(f"""
            def write_page(transfer, {source}, page_size, i):
                host_idx = {source}[i * page_size].item()
                reveal({source})
        """)
    found = _findings("""
        def write_pages(host_indices, page_size, n):
            for i in range(n):
                host_idx = host_indices[i * page_size].item()
    """, "SL201")
    assert found == []  # `low`: hidden at the default confidence
    _device("""
        def write_page(indices, page_size, i):
            host_idx = indices[i * page_size].item()
            reveal(indices)
    """, "read back into the host-named `host_idx`")


def test_comparison_with_a_device_tensor_places_the_parameter():
    _device("""
        import torch
        class Worker:
            def __init__(self, device):
                self.device = device
            def gather(self, lengths: torch.Tensor):
                lengths = lengths.to(torch.int64)
                reveal(lengths.max())
                offsets = torch.arange(8, device=self.device)
                mask = offsets < lengths.unsqueeze(1)
                return mask
    """, "used with a device tensor in one operation")


def test_cat_with_a_device_field_places_a_value_computed_from_the_parameter():
    _device("""
        import torch
        class Allocator:
            def __init__(self, size, device):
                self.release_pages = torch.zeros(size, dtype=torch.int64, device=device)
            def free(self, free_index: torch.Tensor):
                pages = torch.unique(free_index // 16)
                reveal(pages)
                self.release_pages = torch.cat((pages, self.release_pages))
    """, "used with a device tensor in one operation")


def test_triton_launch_and_custom_op_place_parameters():
    _device("""
        import torch
        import triton

        @triton.jit
        def fill_kernel(out, lens):
            pass

        def plan(out: torch.Tensor, lens: torch.Tensor):
            reveal(lens)
            fill_kernel[(8,)](out, lens)
    """, "passed to a GPU kernel launch")
    _device("""
        import torch
        def plan(out: torch.Tensor, lens: torch.Tensor):
            reveal(lens)
            torch.ops.mylib.fill(out, lens)
    """, "passed to a custom op")


def test_unannotated_parameter_counts_for_a_launch_only_when_indexed():
    _device("""
        import torch
        def call_begin_forward(wrapper, kv_indptr, bs):
            kv_indptr = kv_indptr[: bs + 1]
            reveal(kv_indptr)
            create_indices_triton[(bs,)](kv_indptr, bs)
    """, "indexed and passed to a GPU kernel launch")
    # `bs` is a launch argument too, but never indexed: a Python number as often as not.
    _unplaced("""
        import torch
        def call_begin_forward(wrapper, kv_indptr, bs):
            reveal(bs)
            create_indices_triton[(bs,)](kv_indptr[: bs + 1], bs)
    """)


def test_device_use_lookalikes_stay_unplaced():
    # A 0-dim host tensor beside a device tensor is allowed; `copy_` and indexing cross
    # devices; a list of modules is not a kernel launch; `torch.where(cond)` has one operand.
    for body in (
        "torch.minimum(lens, torch.tensor(4))",
        "buf.copy_(lens)",
        "buf[lens] = 0",
        "self.layers[i](lens)",
        "torch.where(lens > 0)",
        "lens + 1",
    ):
        _unplaced(f"""
            import torch
            class M:
                def __init__(self, device):
                    self.device = device
                def plan(self, lens: torch.Tensor, i: int):
                    buf = torch.zeros(8, device=self.device)
                    reveal(lens)
                    {body}
        """)


def test_a_tensor_written_through_a_mask_with_device_values_is_on_the_device():
    # Placeholder ids (negative) resolved from a device table: PyTorch's indexed write puts
    # values only into a tensor on their device, so `input_ids` is a device tensor, and so is
    # the mask computed from it before the write.
    source = """
        import torch
        class FutureMap:
            def __init__(self, size: int, device):
                self.token_ids = torch.empty((size,), dtype=torch.int32, device=device)
            def resolve(self, input_ids: torch.Tensor):
                future_mask = input_ids < 0
                reveal(future_mask)
                input_ids[future_mask] = self.token_ids[-input_ids[future_mask]]
                return input_ids
    """
    _device(source, "written through a tensor index with a device tensor")
    found = _findings(source.replace("                reveal(future_mask)\n", ""), "SL4")
    assert found == [(8, "SL401", "medium"), (8, "SL401", "medium")]


def test_indexed_write_lookalikes_stay_unplaced():
    # Basic indexing (an int, a slice) copies across devices; a 0-dim or single value may be
    # on another device; a value that is no gather of a device tensor says nothing.
    for write in (
        "ids[0] = self.table[idx]",
        "ids[1:3] = self.table[idx]",
        "ids[mask] = self.table.sum()",
        "ids[mask] = self.table[0]",
        "ids[mask] = 0",
        "ids[mask] = other[mask]",
    ):
        _unplaced(f"""
            import torch
            class Table:
                def __init__(self, device):
                    self.table = torch.zeros(64, dtype=torch.int64, device=device)
                def resolve(self, ids: torch.Tensor, other: torch.Tensor, idx: torch.Tensor):
                    mask = ids < 0
                    reveal(ids)
                    {write}
        """)


def test_promoted_parameter_turns_a_readback_into_a_default_finding():
    found = _findings("""
        import torch
        class Worker:
            def __init__(self, device):
                self.device = device
            def gather(self, lengths: torch.Tensor):
                max_len = int(lengths.max().item())
                offsets = torch.arange(max_len, device=self.device)
                return offsets < lengths.unsqueeze(1)
    """, "SL2")
    assert found == [(7, "SL204", "medium")]


def test_passed_to_a_method_whose_parameter_is_a_device_tensor():
    _device("""
        import torch

        class IndicesUpdater:
            def update_sliding_window(self, seq_lens: torch.Tensor, window: int):
                lens = torch.minimum(seq_lens, torch.tensor(window + 1))
                reveal(lens.sum())
                self.call_begin_forward(lens, window)

            def call_begin_forward(self, paged_kernel_lens: torch.Tensor, window: int):
                create_kv_indices_triton[(8,)](paged_kernel_lens, window)
    """, "whose parameter `paged_kernel_lens` is a device tensor")
    # a callee whose parameter nothing places says nothing
    _unplaced("""
        import torch

        class IndicesUpdater:
            def update(self, seq_lens: torch.Tensor):
                reveal(seq_lens)
                self.plan(seq_lens)

            def plan(self, lens: torch.Tensor):
                return lens.sum()
    """)


# --- elements of lists of tensors ---------------------------------------------------------


def test_element_of_a_list_of_device_tensors():
    answers = reveal_placements(textwrap.dedent("""
        import torch
        class GraphState:
            def __init__(self, max_bs: int, device):
                self.query_start_loc_list = []
                for i in range(max_bs):
                    self.query_start_loc_list.append(torch.zeros(i + 2, device=device))
                self.positions = [torch.zeros(i + 1, device=device) for i in range(max_bs)]
                self.names = []
                self.names.append("decode")
            def replay(self, bs: int):
                reveal(self.query_start_loc_list[bs - 1][1:])
                reveal(self.positions[bs - 1])
                local = [torch.zeros(2, device="cuda")]
                reveal(local[0])
                reveal(self.names[0])
                reveal(self.positions[:bs])
                host = [torch.zeros(2)]
                reveal(host[0])
    """))
    described = [a.placement.describe() for a in answers]
    assert described[:3] == ["device tensor"] * 3
    assert all("an element of a list of tensors" in a.provenance[-1] for a in answers[:3])
    assert not answers[3].placement.maybe_device  # a list of strings
    assert not answers[4].placement.on_device  # a slice of the list is a list
    assert described[5] == "host tensor (pageable)"


def test_list_element_lookalikes():
    # a list this scope did not build (a parameter) has elements nothing places
    _unplaced("""
        import torch
        def f(bufs, device):
            bufs.append(torch.zeros(2, device=device))
            reveal(bufs[0])
    """)


def test_device_use_sees_fields_assigned_in_later_methods():
    # `free` is written before `clear`, which places the field: the use is judged once the
    # whole class has been read.
    _device("""
        import torch
        class PagedAllocator:
            def free(self, free_index: torch.Tensor):
                pages = torch.unique(free_index // 16)
                reveal(pages)
                self.release_pages = torch.cat((pages, self.release_pages))

            def clear(self):
                self.release_pages = torch.empty((0,), dtype=torch.int64, device=self.device)
    """, "used with a device tensor in one operation")


# --- an input of a submodule ----------------------------------------------------------------


def test_a_tensor_given_to_a_submodule_of_an_nn_module_is_on_the_device():
    # A vision encoder's helper checks its patches, then runs its own SAM encoder on them.
    _device("""
        import torch
        from torch import nn

        class DeepEncoderModel(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.sam_model = build_sam_vit_b(config)
                self.projector = nn.Linear(config.hidden, config.hidden)

            def _encode_local_features(self, patches: torch.Tensor, crop_shape: torch.Tensor):
                reveal(torch.sum(patches))
                local_features = self.sam_model(patches)
                return self.projector(local_features)
    """, "passed to `self.sam_model`, a submodule of this nn.Module")


def test_the_submodule_input_turns_an_emptiness_check_into_a_default_finding():
    found = _findings("""
        import torch
        from torch import nn

        class DeepEncoderModel(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.sam_model = build_sam_vit_b(config)

            def _encode_local_features(self, patches: torch.Tensor):
                if torch.sum(patches).item() == 0:
                    return None
                return self.sam_model(patches)
    """, "SL2")
    assert found == [(11, "SL201", "medium")]


def test_submodule_input_lookalikes_stay_unplaced():
    # Not an nn.Module: a processor's encoder may run anywhere.
    _unplaced("""
        import torch

        class ImageProcessor:
            def __init__(self):
                self.encoder = build_encoder()

            def run(self, pixels: torch.Tensor):
                reveal(pixels)
                return self.encoder(pixels)
    """)
    # A method of the class, not a submodule: it says nothing of its own.
    _unplaced("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)

            def prepare(self, ids: torch.Tensor):
                reveal(ids)
                return self.rope_index(ids)

            def rope_index(self, ids: torch.Tensor):
                return ids.cumsum(0)
    """)
    # A field assigned a function, not built by a call (a host-side callback).
    _unplaced("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self, postprocess):
                super().__init__()
                self.postprocess = postprocess

            def finish(self, ids: torch.Tensor):
                reveal(ids)
                return self.postprocess(ids)
    """)
    # A tensor the method never hands to a submodule.
    _unplaced("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)

            def count(self, ids: torch.Tensor, x: torch.Tensor):
                reveal(ids)
                return self.proj(x)
    """)


def test_only_the_input_of_a_submodule_is_placed():
    # A vision tower takes its grid sizes beside the pixels: often kept on the host.
    _unplaced("""
        import torch
        from torch import nn

        class VisionLanguageModel(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.visual = VisionTower(config)

            def _get_image_features(self, pixel_values: torch.Tensor, grid_thw: torch.Tensor):
                image_embeds = self.visual(pixel_values, grid_thw=grid_thw)
                reveal(grid_thw)
                return image_embeds
    """)


# --- the parameters of a submodule's submodule -------------------------------------------------


def test_the_weight_of_a_nested_submodule_is_on_the_module_device():
    # `device = self.embeddings.position_embedding.weight.device` in a vision transformer: the
    # parameters move with the module, however deep the submodule sits.
    _device(
        """
        import torch
        from torch import nn

        class VisionTransformer(nn.Module):
            def interpolate(self, grid):
                return reveal(self.embeddings.position_embedding.weight)
        """,
        "a parameter of a submodule moves with the module",
    )
    code = """
        import torch
        from torch import nn

        class VisionTransformer(nn.Module):
            def interpolate(self, grid):
                device = self.embeddings.position_embedding.weight.device
                for t, h, w in grid:
                    shapes = torch.tensor([[t, h, w]], device=device)
        """
    assert (9, "SL101", "medium") in _findings(code, "SL101")


def test_nested_weight_lookalikes_stay_unplaced():
    # Not in a module class, not rooted at `self`, a field that holds a placed host tensor:
    # nothing says these are a module's parameters on the device.
    _unplaced(
        """
        class Exporter:
            def dump(self):
                return reveal(self.state.layer.weight)
        """
    )
    _unplaced(
        """
        def dump(checkpoint):
            return reveal(checkpoint.layer.norm.weight)
        """
    )
    _unplaced(
        """
        import torch
        from torch import nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = torch.zeros(4)

            def read(self):
                return reveal(self.table.rows.weight)
        """
    )


# --- `getattr(obj, "device", default)` -------------------------------------------------------


def test_getattr_of_a_device_is_the_objects_device():
    # A flag all-reduced over the device group: `device` read with `getattr`, as `group.device`
    # would be, and `int(flag.item())` waits for the collective.
    code = """
        import torch

        def all_ranks_ready(group, has_result: int, fallback: torch.Tensor):
            device = getattr(group, "device", fallback.device)
            flag = torch.tensor((has_result,), dtype=torch.int32, device=device)
            torch.distributed.all_reduce(flag, group=group)
            return int(flag.item()) == group.size()
        """
    assert (8, "SL201", "medium") in _findings(code, "SL201")


def test_getattr_lookalikes():
    # The device of a host tensor is the CPU; another attribute, a name not a literal, or a
    # host default beside it: no accelerator is proven.
    host = """
        import torch

        def ready(has_result: int):
            cpu_flag = torch.zeros(1)
            flag = torch.tensor((has_result,), device=getattr(cpu_flag, "device"))
            return int(flag.item())
        """
    assert _findings(host, "SL201") == []
    for call in ('getattr(group, "rank", 0)', "getattr(group, name)", 'getattr(group, "device", "cpu")'):
        code = f"""
            import torch

            def ready(group, name, has_result: int):
                flag = torch.tensor((has_result,), device={call})
                return int(flag.item())
            """
        assert [f for f in _findings(code, "SL201") if f[2] != "low"] == [], call


ROUND_TRIP = """\
    from functools import cached_property

    import torch


    class ImageVocabularyMapping:
        def __init__(self, img2bpe: dict[int, int]):
            self.img2bpe = img2bpe

        @cached_property
        def img2bpe_mapping_tensor(self):
            mapping = torch.zeros(max(self.img2bpe.keys()) + 1, dtype=torch.int)
            for k, v in self.img2bpe.items():
                mapping[k] = v
            return mapping

        def convert_img2bpe(self, img_batch: torch.Tensor) -> torch.Tensor:
            device = img_batch.device
            img_tokens = self.img2bpe_mapping_tensor[img_batch.to("cpu")]
            return img_tokens.to(device)
    """


def test_a_round_trip_through_the_host_shows_a_device_tensor():
    rows = [(row, code) for row, code, _ in _findings(ROUND_TRIP, "SL")]
    assert (19, "SL202") in rows
    assert (20, "SL103") in rows


def test_a_copy_to_the_host_with_nothing_moved_back_shows_nothing():
    code = ROUND_TRIP.replace("return img_tokens.to(device)", "return img_tokens")
    assert [f for f in _findings(code, "SL") if f[1] in ("SL202", "SL103")] == []
    # moved to another tensor's device: says nothing of `img_batch`
    code = ROUND_TRIP.replace("device = img_batch.device", "device = self.weight.device")
    assert [f for f in _findings(code, "SL") if f[1] == "SL202"] == []
