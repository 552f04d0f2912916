"""Values carried through containers inside one file (synclint/analysis/flow.py): the
elements of a tuple a helper returns (`emb, mask, ids = helper(...)`), a list grown with
`+=` or `extend` of a literal, and a loop over such a list (`for m in masks`, `zip`,
`enumerate`). Each has look-alikes whose elements nothing places."""

from __future__ import annotations

import dataclasses
import textwrap

from synclint.analysis.reveal import reveal_placements
from synclint.config import Settings
from synclint.engine import lint_source
from synclint.analysis.placement import Place
from synclint.violation import Confidence


def _answers(code: str):
    return reveal_placements(textwrap.dedent(code))


def _findings(code: str, **settings) -> list[tuple[int, str, str]]:
    result = lint_source(textwrap.dedent(code), "m.py", Settings(**settings))
    return [(v.location.row, v.code, v.confidence.label) for v in result.violations]


def _same_with_and_without_the_screen(code: str) -> None:
    text = textwrap.dedent(code)
    for settings in (Settings(), Settings(min_confidence=Confidence.LOW, include_cold=True)):
        screened = [dataclasses.astuple(v) for v in lint_source(text, "m.py", settings).violations]
        whole = [dataclasses.astuple(v) for v in lint_source(text, "m.py", settings.replace(screen=False)).violations]
        assert screened == whole


# A per-modality embedding step: a helper returns (embedding, mask, ids) or (None, None, ids);
# the caller collects the masks in a list and scatters each embedding where its mask is set.
_SCATTER = """
import torch


def embed_and_mask(encoder, items, input_ids: torch.Tensor, pad_ids: torch.Tensor, device):
    if not items:
        return None, None, input_ids
    embedding = encoder(items)
    mask = torch.isin(input_ids, pad_ids.to(device, non_blocking=True)).unsqueeze(-1)
    return embedding, mask, input_ids


def merge_embeddings(encoders: dict, items_by_kind: dict, input_ids: torch.Tensor, table, pad_ids, device):
    kinds, embeddings, masks = [], [], []
    for kind, items in items_by_kind.items():
        embedding, mask, input_ids = embed_and_mask(encoders[kind], items, input_ids, pad_ids[kind], device)
        kinds += [kind]
        embeddings += [embedding]
        masks += [mask]
    input_embeds = table(input_ids)
    for i, kind, embedding, mask in zip(range(len(embeddings)), kinds, embeddings, masks):
        if embedding is None or mask is None:
            continue
        indices = torch.where(mask.squeeze(dim=-1))[0]
        input_embeds[indices] = embedding
    return input_embeds
"""


def test_an_element_of_a_returned_tuple_and_of_a_list_grown_with_plus_equals():
    code = _SCATTER.replace("        indices = torch.where", "        reveal(mask)\n        indices = torch.where")
    code = code.replace("        masks += [mask]\n", "        reveal(mask)\n        masks += [mask]\n")
    at_helper, in_loop = _answers(code)
    for answer in (at_helper, in_loop):
        assert answer.placement.on_device and answer.placement.confidence == Confidence.MEDIUM, answer.provenance
    assert any("element 1 of the tuple `embed_and_mask()` returns" in step for step in at_helper.provenance)
    assert "an element of a list of tensors" in in_loop.provenance[-1]


def test_torch_where_of_a_collected_mask_is_reported_by_default():
    assert _findings(_SCATTER) == [(24, "SL402", "medium")]
    _same_with_and_without_the_screen(_SCATTER)


def test_every_loop_form_reads_the_elements():
    answers = _answers("""
        import torch
        def f(n: int, device):
            masks = []
            for i in range(n):
                masks.append(torch.arange(n, device="cuda") > i)
            for m in masks:
                reveal(m)
            for i, m in enumerate(masks):
                reveal(m)
            grown = []
            grown.extend([torch.zeros(n, device="cuda"), torch.ones(n, device="cuda")])
            for g in grown:
                reveal(g)
            host = []
            host += [torch.zeros(n)]
            for h in host:
                reveal(h)
    """)
    assert [a.placement.describe() for a in answers] == ["device tensor"] * 3 + ["host tensor (pageable)"]


def test_returned_tuples_per_position():
    answers = _answers("""
        import torch
        def split(n: int):
            lens = torch.zeros(n, dtype=torch.int32)
            return torch.ones(n, device="cuda"), lens, [n]
        def g(n: int):
            dev, host, sizes = split(n)
            reveal(dev)
            reveal(host)
            reveal(sizes)
    """)
    assert [a.placement.describe() for a in answers] == ["device tensor", "host tensor (pageable)", "Python list/tuple"]


def test_container_lookalikes_stay_unplaced():
    answers = _answers("""
        import torch
        def mixed(n: int):
            if n:
                return torch.ones(n, device="cuda"), n
            out = (torch.zeros(n), n)
            return out
        def three(n: int):
            return torch.ones(n, device="cuda"), n, n
        def g(n: int, masks: list, more):
            a, b = mixed(n)
            reveal(a)
            for m in masks:
                reveal(m)
            built = []
            built += [torch.ones(n, device="cuda")]
            built += more
            for m in built:
                reveal(m)
            starred = []
            starred.extend([*more, torch.ones(n, device="cuda")])
            for m in starred:
                reveal(m)
            names = []
            names += ["a"]
            for m in names:
                reveal(m)
    """)
    # a helper with a return that is not a tuple literal; a list received as a parameter; a
    # list grown by an iterable nothing places (twice); a list of strings
    assert [a.placement.on_device for a in answers] == [False] * 5


def test_lookalikes_are_not_reported():
    code = """
        import torch
        def f(masks: list, n: int):
            for m in masks:
                idx = torch.where(m)[0]
            host = []
            host += [torch.arange(n) > 2]
            for m in host:
                idx = torch.where(m)[0]
            return idx
    """
    assert [f for f in _findings(code) if f[1] == "SL402"] == []
    _same_with_and_without_the_screen(code)


# --- the elements of a comprehension concatenated ---------------------------------------------

# A vision transformer's positions: a helper concatenates a meshgrid per image, built with
# `torch.arange` and no device, and the forward moves the result with a blocking copy.
_MESHGRID = """
import torch
from torch import nn


def position_meshgrid(patch_embeds_list: list[torch.Tensor]) -> torch.Tensor:
    positions = torch.cat(
        [
            torch.stack(
                torch.meshgrid(torch.arange(p.shape[-2]), torch.arange(p.shape[-1]), indexing="ij"),
                dim=-1,
            ).reshape(-1, 2)
            for p in patch_embeds_list
        ]
    )
    return positions


class VisionTransformer(nn.Module):
    def forward(self, images: list[torch.Tensor]) -> torch.Tensor:
        patch_embeds_list = [self.patch_conv(img.unsqueeze(0)) for img in images]
        positions = position_meshgrid(patch_embeds_list).to(self.device)
        return self.freqs_cis[positions[:, 0], positions[:, 1]]
"""


def test_a_concatenated_comprehension_holds_what_its_element_says():
    assert (22, "SL103", "medium") in _findings(_MESHGRID)
    _same_with_and_without_the_screen(_MESHGRID)
    answers = _answers("""
        import torch
        def host_offsets(lens: list[int]):
            reveal(torch.cat([torch.arange(n) for n in lens]))
        def device_rows(rows: list[torch.Tensor]):
            reveal(torch.stack([r.cuda() for r in rows]))
    """)
    assert answers[0].placement.is_(Place.HOST) and answers[0].placement.confidence == Confidence.HIGH
    assert answers[1].placement.on_device


def test_comprehension_lookalikes_stay_unplaced():
    # The element is the loop variable itself, or computed from it: where it lives is the
    # list's business, not the comprehension's.
    answers = _answers("""
        import torch
        def gather(parts: list[torch.Tensor], ids: torch.Tensor):
            reveal(torch.cat([p for p in parts]))
            reveal(torch.cat([p * 2 for p in parts]))
            reveal(torch.stack([ids[i] for i in range(4)]))
    """)
    assert not answers[0].placement.known and not answers[1].placement.known
    assert not answers[2].placement.is_host_data  # `ids` may be on the device


def test_a_local_list_of_appended_host_tensors_joins_into_a_host_tensor():
    source = textwrap.dedent(
        """\
        import torch
        from torch import nn


        class Tower(nn.Module):
            def forward(self, x, grid, tables):
                host, device, unknown = [], [], []
                for h, w in grid:
                    host.append(torch.arange(h * w))
                    device.append(torch.arange(h * w, device=x.device))
                for table in tables:
                    unknown.append(table.positions)
                a = torch.cat(host).to(x.device)
                b = torch.cat(device).to(x.device)
                c = torch.cat(unknown).to(x.device)
                d = torch.stack(host, dim=0).to(x.device)
                return a, b, c, d
        """
    )
    found = [(v.location.row, v.code) for v in lint_source(source, "tower.py", Settings(min_confidence=Confidence.LOW)).violations]
    assert (13, "SL103") in found and (16, "SL103") in found
    assert not any(row in (14, 15) for row, _ in found)
