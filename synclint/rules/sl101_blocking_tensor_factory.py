from __future__ import annotations

from functools import cached_property

import libcst as cst

from synclint.analysis.placement import Place, Placement
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import (
    is_empty_literal,
    kwarg,
    positional,
    split_helper_path,
    traced_as_constant,
)
from synclint.violation import Applicability, Confidence

# Keyword arguments the helper accepts; any other (requires_grad=, pin_memory=) means no fix.
_HELPER_KEYWORDS = frozenset({"dtype", "device"})


class BlockingTensorFactory(Rule):
    """Flags `torch.tensor(data, device=...)` / `torch.as_tensor(data, device=...)` that build
    a device tensor from host data.

    ## What it does
    Reports a tensor factory that takes host data (a Python list or scalar, a numpy array, a
    CPU tensor) and an accelerator `device=`.

    ## Why it stalls
    PyTorch stages the data in pageable host memory and copies it with a blocking copy: the
    host waits until every kernel already queued on the stream has finished. Measured on an
    H200: stall ratio ~1.0 (the call returned only after a 50 ms queued kernel), and one such
    call per step made a pipelined step 1.26x-1.54x slower.

    ## Example
    ```python
    import torch

    def _prepare_inputs(self, token_ids: list[int], device):
        return torch.tensor(token_ids, dtype=torch.long, device=device)
    ```

    ## Use instead
    ```python
    import torch
    from synclint.runtime import async_tensor_h2d

    def _prepare_inputs(self, token_ids: list[int], device):
        return async_tensor_h2d(token_ids, dtype=torch.long, device=device)
    ```

    ## Fix safety
    Safe: the helper copies the data into pinned memory on the host (so later changes to the
    list cannot leak into the copy) and queues a `non_blocking` copy; the result has the same
    values, dtype and device. `torch.as_tensor(array, device=d)` of a numpy array or CPU tensor
    shares its memory when `d` is the CPU at run time, where the helper copies: unsafe unless
    `d` is proven an accelerator. `torch.tensor(range(...), device=d)` becomes
    `torch.arange(..., device=d)`: the same int64 values, safe when a `dtype=` is given or the
    range is of literals and not empty; otherwise unsafe, because an empty range gives
    `torch.tensor` a float32 tensor and `torch.arange` an int64 one. Not offered when other keyword arguments are present
    (`requires_grad=`, `pin_memory=`) or when the data may already be a device tensor.

    ## Known false positives
    A `device` that is in fact the CPU at run time (the copy is then free): the finding has
    `medium` confidence when the device is only named like one.
    """

    code = "SL101"
    name = "blocking-tensor-factory"
    summary = "host data copied to the device with a blocking copy"
    fix_availability = FixAvailability.SOMETIMES
    triggers = ("tensor", "as_tensor", "asarray")
    shape_words = ("tensor", "as_tensor", "asarray")
    device_only = True
    device_sites = ("factory",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func)
        if qual not in ("torch.tensor", "torch.as_tensor", "torch.asarray"):
            return
        device_arg = kwarg(node, "device")
        args = positional(node)
        if device_arg is None or not args:
            return
        if is_empty_literal(args[0].value):
            return  # `torch.tensor([], device=d)`: no data, nothing is copied
        if traced_as_constant(args[0].value, ctx):
            return  # a constant of the compiled graph: copied once, when it is built
        target = ctx.device_target(device_arg.value)
        if target is None and not ctx.placement(device_arg.value).known:
            # `device=d` with nothing showing what `d` is: it may be an accelerator. Reported
            # at low confidence (hidden by default), never guessed into a higher one.
            target = Placement(frozenset({Place.DEVICE, Place.HOST}), Confidence.LOW).because(
                device_arg.value, "`device=` of a value nothing in this file places"
            )
        if target is None or not target.may_be(Place.DEVICE):
            return
        data = ctx.placement(args[0].value)
        if data.may_be(Place.DEVICE) or data.may_be(Place.PINNED):
            return  # a device-to-device copy, or an already pinned source: no host wait
        if self._scalar_operand_rule_enabled and _scalar_operand(node, data, ctx):
            return  # SL104 reports it, with the better fix (the scalar stays on the host)
        if data.known:
            confidence = min(data.confidence, target.confidence)
        elif qual == "torch.tensor":
            # torch.tensor() of a tensor warns ("use sourceTensor.clone().detach()"), so its
            # data is host data in practice: an inference, not a proof.
            confidence = min(Confidence.MEDIUM, target.confidence)
        else:
            confidence = Confidence.LOW  # as_tensor(x) is a no-op for device tensors
        if not target.on_device:
            confidence = min(confidence, Confidence.MEDIUM)
        func = qual.split(".")[-1]
        ctx.report(
            self,
            node,
            f"`torch.{func}(..., device=...)` copies host data with a blocking copy; use a pinned, non-blocking copy",
            confidence=confidence,
            placement=data,
            fix=self._fix(node, data, qual, target, ctx),
        )

    @cached_property
    def _scalar_operand_rule_enabled(self) -> bool:
        from synclint.rules import select_codes

        codes = select_codes(self.settings.select, self.settings.extend_select, self.settings.ignore)
        return "SL104" in codes

    def _fix(self, node: cst.Call, data, qual: str, target, ctx) -> FixSpec | None:
        if any(a.keyword is not None and a.keyword.value not in _HELPER_KEYWORDS for a in node.args):
            return None
        if len(positional(node)) != 1 or any(a.star for a in node.args):
            return None
        arange = self._arange_fix(node, ctx)
        if arange is not None:
            return arange
        if qual != "torch.tensor" and not data.known:
            return None
        module, name = split_helper_path(self.settings.h2d_helper)
        # `as_tensor(array_or_cpu_tensor, device=d)` shares memory when d is the CPU at run
        # time; the helper always copies. Unless d is proven an accelerator, that can change
        # what a later in-place write sees.
        shares = qual != "torch.tensor" and (data.may_be(Place.NUMPY) or data.may_be(Place.HOST))
        proven = target.on_device and target.confidence >= Confidence.HIGH
        applicability = Applicability.UNSAFE if shares and not proven else Applicability.SAFE
        # Only the callee changes: the data and the dtype=/device= keywords stay as written
        # (comments and layout too), and both helper signatures take them by those keywords.
        return FixSpec(
            message=f"Use `{name}` (pinned, non-blocking copy)",
            replacements=((node.func, cst.Name(name)),),
            applicability=applicability,
            imports=((module, name),),
        )

    def _arange_fix(self, node: cst.Call, ctx) -> FixSpec | None:
        """`torch.tensor(range(a, b), device=d)` (or `list(range(...))`) ->
        `torch.arange(a, b, device=d)`: built on the device, nothing to copy. range() only
        takes ints, so the int64 values are the same."""
        rng = _range_call(positional(node)[0].value)
        if rng is None:
            return None
        keywords = [a for a in node.args if a.keyword is not None]
        args = [*(a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in rng.args), *keywords]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        func = node.func.with_changes(attr=cst.Name("arange")) if isinstance(node.func, cst.Attribute) else None
        if func is None:
            return None
        # An empty range gives torch.tensor() a float32 tensor (an empty list) and arange an
        # int64 one: the same only with a dtype= or a range proven non-empty.
        exact = kwarg(node, "dtype") is not None or _non_empty_literal_range(rng)
        return FixSpec(
            message="Use `torch.arange(..., device=...)` (built on the device, no copy)",
            replacements=((node, node.with_changes(func=func, args=args)),),
            applicability=Applicability.SAFE if exact else Applicability.UNSAFE,
        )


def _scalar_operand(node: cst.Call, data, ctx) -> bool:
    """`node` is the scalar-tensor operand of `torch.maximum/minimum/max/min` or a `clamp`
    bound, as SL104 matches it."""
    from synclint.rules.sl104_scalar_tensor_operand import BOUND_OF, CLAMPS

    if data.known and not data.is_(Place.SCALAR):
        return False
    arg = ctx.parent(node)
    call = ctx.parent(node, 2)
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call):
        return False
    qual = ctx.qualname(call.func)
    if qual in BOUND_OF:
        return arg.keyword is None and len(call.args) == 2 and all(a.keyword is None and not a.star for a in call.args)
    return qual in CLAMPS and arg.keyword is not None and arg.keyword.value in ("min", "max")


def _range_call(expr: cst.BaseExpression) -> cst.Call | None:
    """`range(...)` or `list(range(...))` with plain positional arguments, else None."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "list" and len(expr.args) == 1:
        expr = expr.args[0].value
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value == "range"
        and 1 <= len(expr.args) <= 3
        and all(a.keyword is None and not a.star for a in expr.args)
    ):
        return expr
    return None


def _non_empty_literal_range(rng: cst.Call) -> bool:
    """`range(...)` of integer literals with at least one element."""
    values = []
    for arg in rng.args:
        expr, sign = arg.value, 1
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            expr, sign = expr.expression, -1
        if not isinstance(expr, cst.Integer):
            return False
        values.append(sign * int(expr.evaluated_value))
    try:
        return len(range(*values)) > 0
    except (TypeError, ValueError):
        return False
