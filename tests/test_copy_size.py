"""SL102 reports a pageable `non_blocking` copy only where it may reach the ~4 MiB from
which it blocks: copies whose shape the code bounds by small counts (layers, requests,
draft tokens, literals), integer positions from `arange`, and arrays named like ids or
positions are low confidence (hidden by default) with the reason; images, hidden states
and shapes with an unbounded dimension stay reported."""

from __future__ import annotations

import textwrap

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Confidence


def _sl102(code: str):
    settings = Settings(select=("SL102",), include_cold=True, min_confidence=Confidence.LOW)
    return {v.location.row: v for v in lint_source(textwrap.dedent(code), "m.py", settings).violations}


def _default_rows(code: str) -> list[int]:
    settings = Settings(select=("SL102",), include_cold=True)
    return [v.location.row for v in lint_source(textwrap.dedent(code), "m.py", settings).violations]


def _small(found, row: int, reason: str) -> None:
    v = found[row]
    assert v.confidence == Confidence.LOW, (row, v.message)
    assert "this one is small" in v.message and reason in v.message, (row, v.message)
    assert any("below the ~4 MiB" in p for p in v.provenance), v.provenance


def _unknown(found, row: int) -> None:
    v = found[row]
    assert v.confidence > Confidence.LOW and "size here is unknown" in v.message, (row, v.message)


PER_LAYER_SCALES = """
    import torch

    class KVScaleStore:
        def __init__(self, num_layers: int, device: str):
            self.device = device
            self.k_scales_gpu = torch.ones(num_layers, dtype=torch.float32, device=device)

        def load_scales(self, attn_layers):
            max_global_id = max(layer.layer_id for layer in attn_layers)
            required_size = max_global_id + 1
            if required_size > len(self.k_scales_gpu):
                self.k_scales_gpu = torch.ones(required_size, dtype=torch.float32, device=self.device)
            k_scales_cpu = self.k_scales_gpu.cpu().clone()
            for layer in attn_layers:
                k_scales_cpu[layer.layer_id] = float(layer.k_scale)
            self.k_scales_gpu.copy_(k_scales_cpu, non_blocking=True)

    class HostMirror:
        def __init__(self, size: int, hidden_size: int, device: str):
            self.buf = torch.zeros(size, hidden_size, device=device)

        def rescale(self):
            host = self.buf.cpu().clone()
            host.mul_(2)
            self.buf.copy_(host, non_blocking=True)

    class ResizedElsewhere:
        def __init__(self, num_layers: int, device: str):
            self.scales = torch.ones(num_layers, device=device)

        def grow(self, n_rows: int, device: str):
            self.scales = torch.ones(n_rows, 4096, device=device)

        def refresh(self):
            host = self.scales.cpu()
            self.scales.copy_(host, non_blocking=True)
"""


def test_a_field_sized_by_the_layer_count_is_small_in_every_assignment():
    found = _sl102(PER_LAYER_SCALES)
    _small(found, 17, "`self.k_scales_gpu` (the largest of its 2 assignments in the class")
    assert "required_size <= 1025" in found[17].message
    _unknown(found, 26)  # [size, hidden_size]: hidden_size is no small count
    _unknown(found, 37)  # one assignment has an unbounded row count
    assert _default_rows(PER_LAYER_SCALES) == [26, 37]


DRAFT_TREE = """
    import torch

    class TreeDrafter:
        def __init__(self, draft_token_num: int, device):
            self.draft_token_num = draft_token_num
            self.device = device

        def verify(self, bs: int, corpus, ones_masks):
            req_drafts, mask = corpus.batch_get()
            mask = mask.reshape(bs, self.draft_token_num, self.draft_token_num)
            tree_mask = []
            for i in range(bs):
                req_mask = torch.cat(
                    (ones_masks[i], torch.from_numpy(mask[i]).to(device=self.device, non_blocking=True)),
                    dim=1,
                )
                tree_mask.append(req_mask.flatten())
            return tree_mask

        def embed(self, bs: int, corpus, hidden_size: int):
            states = corpus.get().reshape(bs, self.draft_token_num, hidden_size)
            return [torch.from_numpy(states[i]).to(self.device, non_blocking=True) for i in range(bs)]

        def rows(self, bs: int, corpus, picked):
            mask = corpus.get().reshape(bs, self.draft_token_num, self.draft_token_num)
            return torch.from_numpy(mask[picked]).to(self.device, non_blocking=True)
"""


def test_a_draft_tree_mask_row_is_small_a_hidden_state_row_is_not():
    found = _sl102(DRAFT_TREE)
    _small(found, 15, "`reshape(bs <= 4096, draft_token_num <= 64, draft_token_num <= 64)` with an element taken")
    _unknown(found, 23)  # hidden_size bounds nothing
    _unknown(found, 27)  # an index of unknown kind (a list or array of rows) keeps the size unknown
    assert _default_rows(DRAFT_TREE) == [23, 27]


POSITIONS = """
    import numpy as np
    import torch

    class VisionTower:
        def rot_pos_ids(self, h: int, w: int, merge: int) -> torch.Tensor:
            hpos_ids = np.broadcast_to(np.arange(h).reshape(h, 1), (h, w)).flatten()
            wpos_ids = np.broadcast_to(np.arange(w).reshape(1, w), (h, w)).flatten()
            return torch.from_numpy(np.stack([hpos_ids, wpos_ids], axis=-1))

        def rot_pos_emb(self, grid_thw, device):
            pos_ids = [self.rot_pos_ids(h, w, 2) for t, h, w in grid_thw]
            pos_ids = torch.cat(pos_ids, dim=0).to(device, non_blocking=True)
            return pos_ids

        def grid(self, h: int, w: int, device):
            hpos = np.broadcast_to(np.arange(h).reshape(h, 1), (h, w))
            return torch.from_numpy(hpos).to(device, non_blocking=True)

        def add_pos_embeds(self, pos_embeds_np, device):
            return torch.from_numpy(pos_embeds_np).to(device, non_blocking=True)

        def frames(self, frames, device):
            t = torch.from_numpy(np.stack(frames, axis=0))
            return t.to(device, non_blocking=True)

        def pixels(self, image, device):
            return torch.from_numpy(np.array(image)).to(device, non_blocking=True)

    def block_positions(positions, device):
        return torch.tensor(positions, dtype=torch.int64).to(device, non_blocking=True)
"""


def test_positions_from_arange_and_ids_are_small_pixels_and_embeddings_are_not():
    found = _sl102(POSITIONS)
    _small(found, 13, "`pos_ids` is named like lengths, indices, ids or offsets")
    _small(found, 18, "integer positions from `arange()`")
    _unknown(found, 21)  # `pos_embeds`: positional *embeddings* are data, not positions
    _unknown(found, 25)  # video frames
    _unknown(found, 28)  # an image's pixels
    _small(found, 31, "`positions` is named like")
    assert _default_rows(POSITIONS) == [21, 25, 28]


COUNTED_SHAPES = """
    import numpy as np
    import torch

    def layer_update_mask(self_field, update_layer_ids, num_layers: int):
        mask_update = torch.tensor([i in update_layer_ids for i in range(num_layers)])
        mask_update = mask_update.view(*([-1] + [1] * (self_field.dim() - 1)))
        return mask_update.to(self_field.device, non_blocking=True)

    def empty_locs(device):
        return torch.zeros(0, dtype=torch.int64).to(device, non_blocking=True)

    def per_request(device, bs: int, num_layers: int):
        a = torch.full((bs,), -1, dtype=torch.int32).to(device, non_blocking=True)
        b = torch.zeros((num_layers, 2), dtype=torch.int32).to(device, non_blocking=True)
        return a, b

    def look_alikes(device, bs: int, num_tokens: int, hidden_size: int, shape):
        big = torch.zeros(4096, 4096).to(device, non_blocking=True)
        acts = torch.zeros(num_tokens, hidden_size).to(device, non_blocking=True)
        rows = np.zeros((bs, 8192), dtype=np.float32)
        staged = torch.from_numpy(rows).to(device, non_blocking=True)
        any_shape = torch.zeros(*shape).to(device, non_blocking=True)
        return big, acts, staged, any_shape
"""


def test_counted_and_literal_shapes_are_small_large_or_unbounded_ones_are_not():
    found = _sl102(COUNTED_SHAPES)
    _small(found, 8, "a list with one value per element of `range(num_layers <= 1024)`")
    _small(found, 11, "`zeros(0)`: at most 0 B")
    _small(found, 14, "`full(bs <= 4096)`: at most 16 KiB")
    _small(found, 15, "`zeros(num_layers <= 1024, 2)`: at most 8 KiB")
    for row in (19, 20, 22, 23):  # 64 MiB; activations; 4096 x 8192 floats = 128 MiB; any shape
        _unknown(found, row)
    assert _default_rows(COUNTED_SHAPES) == [19, 20, 22, 23]


def test_a_list_appended_once_per_request_is_small_other_lists_are_not():
    # One number appended per request of the batch (`i`, `num_rows`, through a local bound to
    # one): small. A field of unsaid meaning per request (`req.token_ids`, a list itself), a
    # loop over an unbounded count, appends in two loops, or an `extend` leave it unknown.
    code = """
        import torch


        def append_tail(batch):
            leader_idx = []
            widths = []
            for i, req in enumerate(batch.reqs):
                group = req.group
                if group is None:
                    continue
                m = group.num_member_rows
                leader_idx.append(i)
                widths.append(m)
            leader_dev = torch.tensor(leader_idx, dtype=torch.int64).to(batch.device, non_blocking=True)
            widths_dev = torch.tensor(widths, dtype=torch.int64).to(batch.device, non_blocking=True)
            rows = []
            for req in batch.reqs:
                rows.append(req.token_ids)
            rows_dev = torch.tensor(rows).to(batch.device, non_blocking=True)
            hidden = []
            for i in range(batch.hidden_size):
                hidden.append(i)
            hidden_dev = torch.tensor(hidden).to(batch.device, non_blocking=True)
            both = []
            for req in batch.reqs:
                both.append(req.start)
            for req in batch.reqs:
                both.append(req.end)
            both_dev = torch.tensor(both).to(batch.device, non_blocking=True)
            grown = []
            for req in batch.reqs:
                grown.append(req.start)
            grown.extend(batch.extra_offsets)
            grown_dev = torch.tensor(grown).to(batch.device, non_blocking=True)
            return leader_dev, widths_dev, rows_dev, hidden_dev, both_dev, grown_dev
    """
    found = _sl102(code)
    _small(found, 15, "one value appended per element of `reqs`")
    _small(found, 16, "one value appended per element of `reqs`")
    for row in (20, 24, 30, 35):
        _unknown(found, row)
