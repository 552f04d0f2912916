from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import (
    DEVICE_ORIGIN_TRIGGERS,
    device_confidence,
    dtype_kind,
    is_int_literal,
    known_ndim,
    method_name,
    python_list_index,
    simple_reference,
)
from synclint.violation import Applicability, Confidence

_SCALAR_BUILTINS = ("float", "int", "bool")


class ScalarElementAssignment(Rule):
    """Flags a Python scalar assigned to one element of a device tensor, or scattered into it
    through a device index: `t[0, 0] = v`, `x[gpu_idx] = 1.0`.

    ## What it does
    Reports an assignment of a Python number to a device tensor where the target is a single
    element (as many integer indices as the tensor has dimensions: `t[i, j] = float(...)`),
    or an advanced-index scatter with an integer device index (`x[gpu_idx] = 1.0`).

    ## Why it stalls
    For a 0-dim target PyTorch wraps the Python number in a CPU tensor and copies it to the
    device with a blocking copy; the scatter does the same with its value. Measured on an
    H200: `t[0, 0] = float(...)` on a 0-dim element and `x[gpu_idx] = 1.0` each waited for
    the whole GPU queue (stall ratio ~1.0). A slice target is not a stall (`t[2:5] = 1.0`
    becomes a `fill_` kernel), nor are `x[mask] = 1.0`, `x[0] = y_gpu` or
    `x[gpu_idx] = y_gpu`: none of those are flagged.

    ## Example
    ```python
    import torch

    def seed_state(batch: int, device):
        state = torch.zeros(batch, 2, device=device)
        state[0, 1] = float(batch)
        return state
    ```

    ## Use instead
    ```python
    import torch

    def seed_state(batch: int, device):
        state = torch.zeros(batch, 2, device=device)
        state[0, 1].fill_(float(batch))
        return state
    ```

    ## Fix safety
    Safe. With Python integers as indices, `t[i, j]` is a view of the element (basic
    indexing), so `t[i, j].fill_(v)` writes the same value into the same memory as the
    assignment, with the same dtype conversion, as one fill kernel and no copy. The fix is
    offered only when every index is a Python integer: a tensor index would make `t[idx]`
    a copy, and `fill_` on a copy would write nothing. For the scatter, the value becomes
    `x.new_full((), v)`: a 0-dim tensor of `x`'s dtype made on `x`'s device by a fill kernel,
    broadcast exactly as the number was; offered when `x` is a plain name or attribute.
    The result is the measured-clean form `x[gpu_idx] = y_gpu`.

    ## Known false positives
    `t[i, j] = v` where the tensor has more dimensions than indices (the target is then a
    slice, which does not stall): when the dimensions are not visible in the code the
    finding has `medium` confidence (`low` for a single index). A device index whose dtype
    is not visible may be a bool mask (`x[mask] = 1.0` does not stall): `low` confidence.
    """

    code = "SL302"
    name = "scalar-element-assignment"
    summary = "a Python scalar assigned to a 0-dim device element (blocking scalar copy)"
    fix_availability = FixAvailability.SOMETIMES
    triggers = DEVICE_ORIGIN_TRIGGERS
    device_only = True
    device_sites = ("store",)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Subscript):
            return
        target = node.targets[0].target
        if not ctx.placement(node.value).is_(Place.SCALAR):
            return
        base = ctx.placement(target.value)
        if not base.maybe_device:
            return
        elements = list(target.slice)
        if not all(isinstance(e.slice, cst.Index) and e.slice.star is None for e in elements):
            return  # a slice target becomes `fill_`: no copy
        indices = [e.slice.value for e in elements]
        if any(python_list_index(i, ctx) for i in indices):
            return  # SL303
        if all(self._python_int(i, ctx) for i in indices):
            self._element(node, target, indices, base, ctx)
        elif len(indices) == 1:
            self._scatter(node, target, indices[0], base, ctx)

    @staticmethod
    def _python_int(expr: cst.BaseExpression, ctx) -> bool:
        if is_int_literal(expr):
            return True
        if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False", "Ellipsis"):
            return False
        return ctx.placement(expr).is_(Place.SCALAR)

    def _element(self, node: cst.Assign, target: cst.Subscript, indices, base, ctx) -> None:
        ndim = known_ndim(target.value, ctx)
        confidence = device_confidence(base)
        if ndim is not None and ndim != len(indices):
            return  # fewer indices than dimensions: a slice, filled without a copy
        if ndim is None:
            explicit = self._explicit_scalar(node.value)
            confidence = min(confidence, Confidence.MEDIUM if len(indices) >= 2 and explicit else Confidence.LOW)
        fill = cst.Expr(
            cst.Call(func=cst.Attribute(value=target, attr=cst.Name("fill_")), args=(cst.Arg(node.value),))
        )
        ctx.report(
            self,
            target,
            "a Python scalar assigned to a 0-dim device element is copied with a blocking copy; use `.fill_()`",
            confidence=confidence,
            placement=base,
            fix=FixSpec("Write the element with `.fill_()`", replacements=((node, fill),), applicability=Applicability.SAFE),
        )

    def _scatter(self, node: cst.Assign, target: cst.Subscript, index, base, ctx) -> None:
        value = ctx.placement(index)
        if not value.maybe_device:
            return  # a host index is SL301's
        kind = dtype_kind(index, ctx)
        if kind == "bool":
            return  # measured: `x[mask] = 1.0` does not stall
        confidence = min(device_confidence(base), device_confidence(value))
        if kind is None:
            confidence = Confidence.LOW
        fix = None
        if simple_reference(target.value):
            full = cst.Call(
                func=cst.Attribute(value=target.value, attr=cst.Name("new_full")),
                args=(cst.Arg(cst.Tuple(elements=())), cst.Arg(node.value)),
            )
            fix = FixSpec(
                "Scatter a 0-dim device tensor made with `new_full`",
                replacements=((node.value, full),),
                applicability=Applicability.SAFE,
            )
        ctx.report(
            self,
            target,
            "a Python scalar scattered through a device index is copied with a blocking copy",
            confidence=confidence,
            placement=value,
            fix=fix,
        )

    @staticmethod
    def _explicit_scalar(value: cst.BaseExpression) -> bool:
        """`float(...)`, `int(...)`, `x.item()`: the common shape of an element write."""
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Name) and value.func.value in _SCALAR_BUILTINS:
            return True
        return method_name(value) == "item"
