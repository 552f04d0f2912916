from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import (
    DEVICE_ORIGIN_TRIGGERS,
    append_keyword,
    derived_from_a_vector,
    device_confidence,
    dtype_kind,
    is_full_slice,
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
    an advanced-index scatter with an integer device index (`x[gpu_idx] = 1.0`,
    `x[:, dev_idx] = 0`), `t.copy_(number)`, and `t.copy_(host_value)` of a host tensor
    (often a 0-dim count: `buf[k:].copy_(bs - num_padding)` where `num_padding` was counted
    on the host) without `non_blocking=True`. A device index can only index a tensor on
    its device, so `self.cache.state[:, dev_idx] = 0` is reported even when where
    `self.cache.state` lives is not visible. A value whose placement is not known
    (`buf[i] = pool.get_id(name)`) is reported at `medium` confidence at most when the
    target is a proven 0-dim element, `low` for a scatter.

    ## Why it stalls
    For a 0-dim target PyTorch wraps the Python number in a CPU tensor and copies it to the
    device with a blocking copy; the scatter does the same with its value. Measured on an
    H200: `t[0, 0] = float(...)` on a 0-dim element and `x[gpu_idx] = 1.0` each waited for
    the whole GPU queue (stall ratio ~1.0), and so did `x[:, dev_idx] = 0` and `t.copy_(5)`
    (a Python number); a blocking copy from a host tensor waits the same way (even from
    pinned memory). A slice target is not a stall (`t[2:5] = 1.0`
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
    The result is the measured-clean form `x[gpu_idx] = y_gpu`. `t.copy_(v)` of a Python
    number becomes `t.fill_(v)`: both broadcast the number over `t` with `t`'s dtype, safe.
    `t.copy_(host_tensor)` of a pageable host tensor becomes `t.copy_(host_tensor,
    non_blocking=True)`: from pageable memory the data is staged before `copy_` returns, so
    the source may change afterwards and the result is the same; measured on an H200, such
    copies up to 1 MiB do not wait for the queue (SL102 reports the larger ones). A pinned
    source gets no fix: a non-blocking copy from it races with later writes to it.
    When the value's placement is not known the fixes are unsafe: `fill_` and `new_full`
    take a number or a 0-dim tensor, where the assignment also took a one-element tensor.

    ## Known false positives
    `t[i, j] = v` where the tensor has more dimensions than indices (the target is then a
    slice, which does not stall): when the dimensions are not visible in the code the
    finding has `medium` confidence, and `low` for a single index unless the tensor is named
    like a per-request vector (`seq_lens`, `sampled_ids`), directly or through the name it
    was made from by calls that keep its shape (`tokens = sampled_ids.to(torch.int64)`):
    a vector so named that is in fact a matrix is reported at `medium`. A device index whose dtype
    is not visible may be a bool mask (`x[mask] = 1.0` does not stall): `low` confidence.
    """

    code = "SL302"
    name = "scalar-element-assignment"
    summary = "a Python scalar assigned to a 0-dim device element (blocking scalar copy)"
    fix_availability = FixAvailability.SOMETIMES
    triggers = DEVICE_ORIGIN_TRIGGERS
    device_only = True
    device_sites = ("store", "mask", "copy")

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Subscript):
            return
        target = node.targets[0].target
        value = ctx.placement(node.value)
        if value.is_(Place.SCALAR) or value.may_be(Place.SCALAR) and value.is_(Place.SCALAR, Place.SEQUENCE, Place.NUMPY):
            number = True  # also Python or numpy data that is no tensor (`if not torch.is_tensor(v):`)
        elif value.known or value.maybe_device:
            return  # a tensor value is a device-side copy (`x[0] = y_gpu`): no stall
        else:
            number = False  # unknown: a Python number or a tensor; the finding says `medium` at most
        base = ctx.placement(target.value)
        elements = list(target.slice)
        if not all(isinstance(e.slice, cst.Index) and e.slice.star is None or is_full_slice(e) for e in elements):
            return  # a bounded slice target becomes `fill_`: no copy
        indices = [e.slice.value for e in elements if isinstance(e.slice, cst.Index)]
        if any(python_list_index(i, ctx) for i in indices):
            return  # SL303
        sliced = len(indices) != len(elements)
        if all(self._python_int(i, ctx) for i in indices):
            if not sliced and base.maybe_device:
                self._element(node, target, indices, base, number, value.is_(Place.SCALAR), ctx)
            return
        tensors = [i for i in indices if not self._python_int(i, ctx)]
        if len(tensors) == 1:
            self._scatter(node, target, tensors[0], base, number, value.is_(Place.SCALAR), ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """`t.copy_(5)`: the number becomes a CPU tensor, copied with a blocking copy; so is
        `t.copy_(host_tensor)` without `non_blocking=True`."""
        if method_name(node) != "copy_" or not node.args or node.args[0].keyword is not None:
            return
        source = node.args[0].value
        value = ctx.placement(source)
        if not value.is_(Place.SCALAR):
            if len(node.args) == 1 and value.known and value.is_(Place.HOST, Place.PINNED):
                self._host_tensor_copy(node, value, ctx)
            return
        if len(node.args) != 1:
            return
        base = ctx.placement(node.func.value)
        if not base.maybe_device:
            return
        fill = node.with_changes(func=node.func.with_changes(attr=cst.Name("fill_")))
        ctx.report(
            self,
            node,
            "`.copy_()` of a Python number copies it to the device with a blocking copy; use `.fill_()`",
            confidence=device_confidence(base),
            placement=base,
            fix=FixSpec("Write the number with `.fill_()`", replacements=((node, fill),), applicability=Applicability.SAFE),
        )

    def _host_tensor_copy(self, node: cst.Call, value, ctx) -> None:
        base = ctx.placement(node.func.value)
        if not base.on_device:
            return  # a host tensor copied into a tensor that may be on the host: nothing crosses
        fix = None
        if value.is_(Place.HOST):
            # From pageable memory the copy is staged before `copy_` returns: the source may
            # change afterwards, and nothing waits for the queue.
            fix = FixSpec(
                "Copy without waiting (`non_blocking=True`)",
                replacements=((node, append_keyword(node, "non_blocking", cst.Name("True"))),),
                applicability=Applicability.SAFE,
            )
        ctx.report(
            self,
            node,
            "`.copy_()` of a host tensor into a device tensor is a blocking host-to-device copy",
            confidence=min(device_confidence(base), value.confidence),
            placement=base,
            fix=fix,
        )

    @staticmethod
    def _python_int(expr: cst.BaseExpression, ctx) -> bool:
        if is_int_literal(expr):
            return True
        if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False", "Ellipsis"):
            return False
        return ctx.placement(expr).is_(Place.SCALAR)

    def _element(self, node: cst.Assign, target: cst.Subscript, indices, base, number: bool, scalar: bool, ctx) -> None:
        ndim = known_ndim(target.value, ctx)
        confidence = device_confidence(base)
        if ndim is not None and ndim != len(indices):
            return  # fewer indices than dimensions: a slice, filled without a copy
        if ndim is None:
            explicit = self._explicit_scalar(node.value)
            if not number:
                return  # neither the element nor the value is known: too common to guess about
            # One index into a per-request vector (`tail_tokens = next_token_ids.to(dtype)`,
            # then `tail_tokens[i] = token`) is an element, as two indices with an explicit
            # conversion are; otherwise the target may have more dimensions (a row is filled).
            element = len(indices) >= 2 and explicit or len(indices) == 1 and derived_from_a_vector(target.value, ctx)
            confidence = min(confidence, Confidence.MEDIUM if element else Confidence.LOW)
        elif not number:
            confidence = min(confidence, Confidence.MEDIUM)  # the value may be a 0-dim tensor
        fill = cst.Expr(
            cst.Call(func=cst.Attribute(value=target, attr=cst.Name("fill_")), args=(cst.Arg(node.value),))
        )
        ctx.report(
            self,
            target,
            ("a Python scalar" if number else "a value not known to be a tensor (a Python number?)")
            + " assigned to a 0-dim device element is copied with a blocking copy; use `.fill_()`",
            confidence=confidence,
            placement=base,
            fix=FixSpec(
                "Write the element with `.fill_()`",
                replacements=((node, fill),),
                applicability=Applicability.SAFE if scalar else Applicability.UNSAFE,  # (a Python scalar, not numpy data or a list)
            ),
        )

    def _scatter(self, node: cst.Assign, target: cst.Subscript, index, base, number: bool, scalar: bool, ctx) -> None:
        value = ctx.placement(index)
        if not value.maybe_device:
            return  # a host index is SL301's
        kind = dtype_kind(index, ctx)
        if kind == "bool":
            return  # measured: `x[mask] = 1.0` does not stall
        # A device index can only index a tensor on its device: when the tensor's placement
        # is not known (`self.cache.state[:, idx] = 0`), the index says where it is.
        confidence = min(device_confidence(base), device_confidence(value)) if base.maybe_device else device_confidence(value)
        if kind is None:
            confidence = Confidence.LOW
        if not number:
            # `x[idx] = expert_out` scatters a tensor as often as a number: a guess.
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
                applicability=Applicability.SAFE if scalar else Applicability.UNSAFE,  # (a Python scalar, not numpy data or a list)
            )
        ctx.report(
            self,
            target,
            ("a Python scalar" if number else "a value not known to be a tensor (a Python number?)")
            + " scattered through a device index is copied with a blocking copy",
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
