from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import (
    DEVICE_ORIGIN_TRIGGERS,
    device_confidence,
    is_full_slice,
    literal_kind,
    python_list_index,
)
from synclint.rules.sl1xx_h2d import index_on_device
from synclint.violation import Applicability


class ListIndexAssignment(Rule):
    """Flags `t[:, idx_list] = v`: a Python scalar written through a Python list index.

    ## What it does
    Reports an assignment of a Python number to a device tensor where one index is a Python
    list (`logits[:, bad_token_ids] = -float("inf")`).

    ## Why it stalls
    PyTorch turns the list into a CPU index tensor and copies it to the device with a
    blocking copy before the scatter kernel can run. Measured on an H200:
    `t[:, python_list] = scalar` waited for the whole GPU queue (stall ratio ~1.0), and
    `t.index_fill_(1, idx_on_device, v)` with the index already on the device did not.

    ## Example
    ```python
    import torch

    def compute_logits(self, hidden):
        logits = hidden.cuda() @ self.lm_head
        logits[:, [0, 2, 7]] = -float("inf")
        return logits
    ```

    ## Use instead
    ```python
    import torch

    def compute_logits(self, hidden):
        logits = hidden.cuda() @ self.lm_head
        index = torch.tensor([0, 2, 7], dtype=torch.long, pin_memory=torch.cuda.is_available())
        logits.index_fill_(1, index.to(logits.device, non_blocking=torch.cuda.is_available()), -float("inf"))
        return logits
    ```
    Better still, build the index once per device and keep it.

    ## Fix safety
    Safe where offered: the list is a literal of integers, every other index is a full
    slice `:` (so the list indexes dimension `dim`, its position), and the tensor is a plain
    name or attribute. Then `t.index_fill_(dim, idx, v)` writes `v` at exactly the same
    positions: negative indices count from the end in both, and a repeated index writes the
    same value twice. The index is copied pinned and non-blocking (inline with torch alone,
    or the `h2d-helper`), which copies the list into pinned memory first. A list held in a variable is
    reported without a fix: its contents may be bools (a mask) or nested lists.

    ## Known false positives
    A tensor that is in fact on the host (the copy is then free).
    """

    code = "SL303"
    name = "list-index-assignment"
    summary = "a Python scalar written through a Python list index (blocking index copy)"
    fix_availability = FixAvailability.SOMETIMES
    triggers = DEVICE_ORIGIN_TRIGGERS
    device_only = True
    device_sites = ("store",)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Subscript):
            return
        target = node.targets[0].target
        lists = [
            i for i, e in enumerate(target.slice) if isinstance(e.slice, cst.Index) and python_list_index(e.slice.value, ctx)
        ]
        if len(lists) != 1 or not ctx.placement(node.value).is_(Place.SCALAR):
            return
        index = target.slice[lists[0]].slice.value
        if literal_kind(index) == "bool":
            return  # a list of bools is a host mask: no index copy
        base = ctx.placement(target.value)
        if not base.maybe_device:
            return
        ctx.report(
            self,
            target,
            "a Python list index is copied to the device with a blocking copy; use `index_fill_` with a device index",
            confidence=device_confidence(base),
            placement=base,
            fix=self._fix(node, target, lists[0], index, ctx),
        )

    def _fix(self, node: cst.Assign, target: cst.Subscript, dim: int, index, ctx) -> FixSpec | None:
        others = [e for i, e in enumerate(target.slice) if i != dim]
        if not all(is_full_slice(e) for e in others) or literal_kind(index) != "integer":
            return None
        built = index_on_device(ctx, self.settings, index, target.value)
        if built is None:
            return None
        device_index, imports = built.node, built.imports
        call = cst.Call(
            func=cst.Attribute(value=target.value, attr=cst.Name("index_fill_")),
            args=(cst.Arg(cst.Integer(str(dim))), cst.Arg(device_index), cst.Arg(node.value)),
        )
        return FixSpec(
            f"Use `index_fill_` with the index copied by {built.label}",
            replacements=((node, cst.Expr(call)),),
            applicability=Applicability.SAFE,
            imports=imports,
        )
