from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import (
    DEVICE_ORIGIN_TRIGGERS,
    device_confidence,
    dtype_kind,
    literal_kind,
    python_list_index,
    simple_reference,
)
from synclint.rules.sl1xx_h2d import from_numpy_array, helper_call, index_on_device, plain_factory_data
from synclint.violation import Applicability, Confidence

_HOST_INDEX_PLACES = (Place.HOST, Place.PINNED, Place.NUMPY)


class HostIndex(Rule):
    """Flags a device tensor indexed by a CPU tensor, a numpy array or a Python list.

    ## What it does
    Reports `dev_t[cpu_idx]`, `dev_t[[1, 2, 3]]` and `dev_t[cpu_idx] = y`: advanced indexing
    of a tensor that lives on the device with an index that lives on the host. A list of
    slices (`x[[slice(a, b) for ...]]`, a sharding helper's) is basic indexing, read as a
    tuple of slices, and is not reported.

    ## Why it stalls
    PyTorch moves a host index to the indexed tensor's device with a blocking copy before
    it can launch the gather (or scatter) kernel, so the host waits until every kernel
    already queued has finished. Measured on an H200: `dev_t[cpu_index_tensor]` (even a
    pinned one), `dev_t[[1, 2, 3]]` and `x[cpu_idx] = y` each waited for the whole queue
    (stall ratio ~1.0). `x[gpu_idx]`, `x[int]` and `x[cpu_bool_mask]` did not stall, nor
    did a 2-D table's rows by a CPU bool mask with a slice or an integer (`table[mask, :k]`,
    `table[mask, 0]`, also after `mask |= ...; mask &= ...`: docs/stall-checks.json).

    ## Example
    ```python
    import torch

    def gather_rows(hidden, num_reqs: int):
        hidden = hidden.cuda()
        rows = torch.arange(num_reqs, dtype=torch.long)
        return hidden[rows]
    ```

    ## Use instead
    Cheapest first: build the index on the device (`torch.arange(n, device=...)`) or keep
    a per-device copy; else copy it pinned and non-blocking, as the fix does (with torch
    alone, or the `h2d-helper`, see SL101):
    ```python
    import torch

    def gather_rows(hidden, num_reqs: int):
        hidden = hidden.cuda()
        rows = torch.arange(num_reqs, dtype=torch.long)
        return hidden[(rows.pin_memory() if torch.cuda.is_available() else rows).to(hidden.device, non_blocking=torch.cuda.is_available())]
    ```

    ## Fix safety
    Offered only when the index is visibly an integer tensor (a bool CPU mask does not
    stall, and moving it to the device would make it a device mask, which does) and the
    indexed tensor is a plain name or attribute. A proven pageable index (a plain name or
    attribute, `torch.from_numpy(a)`, `torch.tensor(data)`) is copied into pinned memory at
    the call and then non-blocking: same values and dtype, and later writes to the index
    cannot reach the copy: safe. An index that may be pinned gets `.to(dev_t.device,
    non_blocking=True)`: unsafe, because the copy then reads the index when the stream
    reaches it, and an in-place write to the index after this line would change the result.
    A list literal of integers is copied pinned and non-blocking as an int64 tensor, which
    indexes exactly as the list does (safe; the list is copied into pinned memory first).
    Other lists are reported without a fix: their contents decide between integer and mask
    indexing.

    ## Known false positives
    A CPU index whose dtype the code does not show may be a bool mask (no stall): such
    findings are `medium` confidence at most. `x[cpu_idx]` where `x` is in fact on the host.
    """

    code = "SL301"
    name = "host-index"
    summary = "a device tensor indexed by a host index (blocking index copy)"
    fix_availability = FixAvailability.SOMETIMES
    triggers = DEVICE_ORIGIN_TRIGGERS
    device_only = True
    device_sites = ("index",)

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        if self._is_scalar_list_assignment(node, ctx):
            return  # `t[:, lst] = scalar` is SL303's
        base = ctx.placement(node.value)
        if not base.maybe_device:
            return
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                continue
            index = element.slice.value
            if python_list_index(index, ctx):
                if literal_kind(index) == "bool":
                    continue  # a list of bools is a host mask: no wait
                fix = self._list_fix(node, index, ctx) if literal_kind(index) == "integer" else None
                self._report(ctx, node, "a Python list", device_confidence(base), base, fix)
                return
            value = ctx.placement(index)
            if not value.is_(*_HOST_INDEX_PLACES):
                continue
            kind = dtype_kind(index, ctx)
            if kind == "bool":
                continue  # measured: `x[cpu_bool_mask]` does not stall
            confidence = min(device_confidence(base), value.confidence)
            if kind is None:
                confidence = min(confidence, Confidence.MEDIUM)
            what = "a numpy array" if value.is_(Place.NUMPY) else "a CPU tensor"
            fix = self._fix(node, index, value, ctx) if kind == "integer" else None
            self._report(ctx, node, what, confidence, value, fix)
            return

    def _is_scalar_list_assignment(self, node: cst.Subscript, ctx) -> bool:
        statement = ctx.parent(node)
        if not (isinstance(statement, cst.AssignTarget) and statement.target is node):
            return False
        assign = ctx.parent(node, 2)
        if not isinstance(assign, cst.Assign):
            return False
        has_list = any(
            isinstance(e.slice, cst.Index) and python_list_index(e.slice.value, ctx) for e in node.slice
        )
        return has_list and ctx.placement(assign.value).is_(Place.SCALAR)

    def _report(self, ctx, node, what: str, confidence, placement, fix) -> None:
        ctx.report(
            self,
            node,
            f"device tensor indexed by {what}: the index is copied to the device with a blocking copy",
            confidence=confidence,
            placement=placement,
            fix=fix,
        )

    def _list_fix(self, node: cst.Subscript, index, ctx) -> FixSpec | None:
        """`dev_t[[1, 2, 3]]` -> `dev_t[<pinned non-blocking int64 copy of [1, 2, 3]>]`:
        a list of integers indexes exactly as the int64 tensor of the same values."""
        built = index_on_device(ctx, self.settings, index, node.value)
        if built is None:
            return None
        return FixSpec(
            f"Copy the index with {built.label}",
            replacements=((index, built.node),),
            applicability=Applicability.SAFE,
            imports=built.imports,
        )

    def _fix(self, node: cst.Subscript, index, value, ctx) -> FixSpec | None:
        if not simple_reference(node.value) or value.is_(Place.NUMPY):
            return None
        if not isinstance(index, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            return None  # `a + b` would need parentheses before `.to(...)`
        device = cst.Attribute(value=node.value, attr=cst.Name("device"))
        if value.is_(Place.HOST):
            # Pageable: copy it pinned and non-blocking (a non_blocking copy straight from
            # pageable memory still waits from ~4 MiB, SL102). Same values and dtype.
            array = from_numpy_array(index, ctx)
            factory = plain_factory_data(index, ctx) if isinstance(index, cst.Call) and array is None else None
            if array is not None:
                pinned = helper_call(ctx, self.settings, array, device=device)
            elif factory is not None:
                pinned = helper_call(ctx, self.settings, factory[0], dtype=factory[1], device=device)
            else:
                pinned = helper_call(ctx, self.settings, index, device=device, tensor_data=True)
            if pinned is None:
                return None
            return FixSpec(
                message=f"Copy the index with {pinned.label}",
                replacements=((index, pinned.node),),
                applicability=Applicability.SAFE,
                imports=pinned.imports,
            )
        moved = cst.Call(
            func=cst.Attribute(value=index, attr=cst.Name("to")),
            args=(
                cst.Arg(cst.Attribute(value=node.value, attr=cst.Name("device"))),
                cst.Arg(
                    cst.Name("True"),
                    keyword=cst.Name("non_blocking"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                ),
            ),
        )
        # A pageable source is staged before the copy call returns; a pinned one is read
        # when the stream reaches the copy, so a later in-place write could change it.
        safe = value.is_(Place.HOST)
        return FixSpec(
            message="Move the index to the device with a non-blocking copy",
            replacements=((index, moved),),
            applicability=Applicability.SAFE if safe else Applicability.UNSAFE,
        )
