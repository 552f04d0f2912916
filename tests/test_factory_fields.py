"""A submodule built by a factory method that each subclass overrides
(`self.resampler = self.init_resampler(...)`), and a list that a flattening helper returns:
the shapes of a multimodal model whose grid sizes stay on the host."""

from __future__ import annotations

from pathlib import Path

from synclint import repo
from tests.index_projects import findings, project

ITEMS = """\
    import dataclasses
    from typing import Any, Dict, Optional

    import torch


    @dataclasses.dataclass
    class MultimodalDataItem:
        modality: str
        feature: Optional[torch.Tensor] = None
        model_specific_data: Dict[str, Any] = dataclasses.field(default_factory=dict)

        def __getattr__(self, name: str):
            if name in self.model_specific_data:
                return self.model_specific_data[name]
            raise AttributeError(name)


    def flatten_nested_list(nested_list):
        if isinstance(nested_list, list):
            return [item for sublist in nested_list for item in flatten_nested_list(sublist)]
        return [nested_list]
    """

MODEL = """\
    from typing import List

    import torch
    from torch import nn

    from mm.items import MultimodalDataItem, flatten_nested_list


    class Resampler(nn.Module):
        def forward(self, x: torch.Tensor, tgt_sizes: torch.Tensor) -> torch.Tensor:
            max_h = tgt_sizes[:, 0].max().item()
            return x[:max_h]


    class WideResampler(nn.Module):
        def forward(self, x: torch.Tensor, tgt_sizes: torch.Tensor) -> torch.Tensor:
            return x[: tgt_sizes[:, 1].max().item()]


    class BaseModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.resampler = self.init_resampler(16)

        def init_resampler(self, dim: int) -> nn.Module:
            raise NotImplementedError

        def forward(self, input_ids: torch.Tensor, items: List[MultimodalDataItem]) -> torch.Tensor:
            return self.get_image_feature(items)


    class ModelV2(BaseModel):
        def init_resampler(self, dim: int) -> nn.Module:
            with torch.device("meta"):
                resampler = Resampler()
            return resampler.to(device="cuda", dtype=torch.float16)

        def get_image_feature(self, items: List[MultimodalDataItem]) -> torch.Tensor:
            pixel_values = torch.cat([item.feature for item in items])
            tgt_sizes = torch.stack(flatten_nested_list([item.tgt_size for item in items]), dim=0)
            return self.resampler(pixel_values, tgt_sizes)


    class ModelV4(BaseModel):
        def init_resampler(self, dim: int) -> nn.Module:
            return WideResampler().to("cuda")

        def get_image_feature(self, items: List[MultimodalDataItem]) -> torch.Tensor:
            pixel_values = torch.cat([item.feature for item in items])
            tgt_sizes = torch.stack(flatten_nested_list([item.tgt_size for item in items]), dim=0)
            return self.resampler(pixel_values, tgt_sizes.to(pixel_values.device))
    """


def _files(model: str = MODEL) -> dict[str, str]:
    return {"mm/__init__.py": "", "mm/items.py": ITEMS, "mm/model.py": model}


def test_a_field_a_factory_method_builds_is_of_the_class_the_object_s_own_override_returns(tmp_path: Path):
    root = project(tmp_path / "proj", _files())
    facts = repo.build(root, use_cache=False)
    # Each subclass's override decides (`return resampler.to(...)` of a local built as
    # `Resampler(...)` in a `with` block, `return WideResampler().to("cuda")`), not the
    # base's `-> nn.Module`.
    assert facts.types.field_type("ModelV2", "resampler") == "Resampler"
    assert facts.types.field_type("ModelV4", "resampler") == "WideResampler"
    # The base's own factory returns nothing the index can name.
    assert facts.types.field_type("BaseModel", "resampler") is None


def test_grid_sizes_a_model_stacks_from_its_items_stay_on_the_host_in_the_submodule_it_hands_them_to(tmp_path: Path):
    root = project(tmp_path / "proj", _files())
    found = findings(root, "mm/model.py")
    rows = {row for _, row, code in found if code == "SL201"}
    # `Resampler` gets the host-stacked sizes from its one caller: its `.item()` reads host
    # data, whatever "inputs of forward() live on the device" would say.
    assert 11 not in rows, found
    # `WideResampler` gets them moved to the device first: its `.item()` syncs.
    assert 17 in rows, found


def test_a_list_only_a_flattening_helper_rewraps_keeps_its_elements(tmp_path: Path):
    # Look-alike: a helper not named for flattening may move what it is given; the stack of
    # its result says nothing, and the forward's input is read as the device tensor.
    model = MODEL.replace(
        "tgt_sizes = torch.stack(flatten_nested_list([item.tgt_size for item in items]), dim=0)\n"
        "            return self.resampler(pixel_values, tgt_sizes)",
        "tgt_sizes = torch.stack(to_device([item.tgt_size for item in items]), dim=0)\n"
        "            return self.resampler(pixel_values, tgt_sizes)",
    ).replace("from mm.items import MultimodalDataItem, flatten_nested_list",
              "from mm.items import MultimodalDataItem, flatten_nested_list, to_device")
    assert model != MODEL
    items = ITEMS + "\n\ndef to_device(values):\n    return [v.cuda() for v in values]\n"
    root = project(tmp_path / "proj", {"mm/__init__.py": "", "mm/items.py": items, "mm/model.py": model})
    rows = {row for _, row, code in findings(root, "mm/model.py") if code == "SL201"}
    assert 11 in rows


def test_a_class_the_code_names_for_a_field_wins_over_a_factory_that_names_none(tmp_path: Path):
    # `self.cache = Cache()` in `__init__`, `self.cache = self._fresh()` on a reset: the
    # factory returns nothing the index can name, and the field stays a `Cache`.
    model = """\
        class Cache:
            def lookup(self, key):
                return key


        class Holder:
            def __init__(self):
                self.cache = Cache()

            def _fresh(self):
                return make_cache()

            def reset(self):
                self.cache = self._fresh()
        """
    root = project(tmp_path / "proj", {"h/__init__.py": "", "h/holder.py": model})
    facts = repo.build(root, use_cache=False)
    assert facts.types.field_type("Holder", "cache") == "Cache"


PACKED = """\
    import torch
    from torch import nn


    class Projector(nn.Module):
        def forward(self, feats: torch.Tensor, shapes: torch.Tensor) -> torch.Tensor:
            lengths = (shapes[:, 0] * shapes[:, 1]).tolist()
            return feats[: lengths[0]]


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.projector = Projector()

        def _pack(self, items):
            parts = []
            for item in items:
                parts.append(self._shape_of(item).cpu())
            return torch.cat([item.pixels for item in items]).cuda(), torch.cat(parts, dim=0)

        def _shape_of(self, item):
            return item.shape

        def feature(self, items) -> torch.Tensor:
            packed, shapes = self._pack(items)
            return self.projector(packed, shapes)
    """


def test_an_element_a_method_of_the_object_s_own_class_returns_is_what_that_method_returns_there(tmp_path: Path):
    # `packed, shapes = self._pack(items)`: the second element is the host `torch.cat` of
    # `.cpu()` copies, whatever the first is; the projector's `forward` is given host sizes.
    root = project(tmp_path / "proj", {"mm/__init__.py": "", "mm/packed.py": PACKED})
    assert ("packed.py", 7, "SL202") not in findings(root, "mm/packed.py")
    # Look-alike: the sizes moved to the device before the call are a device tensor there.
    moved = PACKED.replace("return self.projector(packed, shapes)", "return self.projector(packed, shapes.cuda())")
    root = project(tmp_path / "proj2", {"mm/__init__.py": "", "mm/packed.py": moved})
    assert ("packed.py", 7, "SL202") in findings(root, "mm/packed.py")
