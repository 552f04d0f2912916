from __future__ import annotations

import math

import libcst as cst

from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import (
    device_confidence,
    is_empty_literal,
    kwarg,
    method_name,
    positional,
    receiver,
    traced_as_constant,
)
from synclint.violation import Applicability, Confidence

# Keyword arguments that `new_zeros`/`new_ones`/`new_full` accept as `new_tensor` does.
_CARRIED_KEYWORDS = frozenset({"dtype", "device", "requires_grad", "layout", "pin_memory"})


class NewTensorConstant(Rule):
    """Flags `x.new_tensor(data)` with host data on a device tensor `x`.

    ## What it does
    Reports `x.new_tensor([...])` / `x.new_tensor(scalar)` where `x` lives on an
    accelerator: the new tensor is built on `x`'s device from Python data.

    ## Why it stalls
    `new_tensor` stages the Python data on the host and copies it with a blocking copy that
    waits for every queued kernel. Measured on an H200: `x.new_tensor([0])` stalled (ratio
    ~1.0); `x.new_zeros(1)` fills on the device and did not.

    ## Example
    ```python
    import torch

    def forward(self, input_ids):
        cu_seqlens = input_ids.new_tensor([0])
        return torch.cat([cu_seqlens, input_ids.cumsum(0)])
    ```

    ## Use instead
    ```python
    import torch

    def forward(self, input_ids):
        cu_seqlens = input_ids.new_zeros(1)
        return torch.cat([cu_seqlens, input_ids.cumsum(0)])
    ```

    ## Fix safety
    Data whose elements are all one number literal has a fill that needs no copy:
    `[0]`/`[0, 0]` -> `x.new_zeros(n)`, `[1]` -> `x.new_ones(n)`, `[c, c]` -> `x.new_full((n,), c)`,
    a scalar `0`/`1`/`c` -> `new_zeros(())`/`new_ones(())`/`new_full((), c)`. Like `new_tensor`
    they take `x`'s dtype and device (or the `dtype=`/`device=` given); the values are the
    same, including the cast of a float literal into an integer dtype (checked for every
    dtype in the tests): safe. `-0.0` is not offered a fill: `new_zeros` would give `+0.0`,
    which differs in sign (`1 / x`, `copysign`, `atan2`). Other data (`[0, 2048, 4096]`, `[1 - alpha, alpha]`) is
    reported only: build it once and cache it per device, or use the H2D helper.

    ## Known false positives
    `x` on the host at run time. The rule follows `x`'s placement; when it is unknown (or
    host-or-device) the finding has `low` confidence, hidden by default, except on a hot
    path (`forward`, a loop), where it has `medium`.
    """

    code = "SL105"
    name = "new-tensor-constant"
    summary = "`x.new_tensor(data)` copies host data to the device"
    fix_availability = FixAvailability.SOMETIMES
    triggers = ("new_tensor",)
    shape_words = ("new_tensor",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if method_name(node) != "new_tensor":
            return
        args = positional(node)
        if len(args) != 1 or any(a.star for a in node.args):
            return
        if is_empty_literal(args[0].value):
            return  # `x.new_tensor([])`: no data, nothing is copied
        if traced_as_constant(args[0].value, ctx):
            return  # a constant of the compiled graph: copied once, when it is built
        owner = ctx.placement(receiver(node))
        device = kwarg(node, "device")
        if device is not None:
            from synclint.rules.sl1xx_h2d import device_target, explained, goes_to_device

            target = device_target(ctx, device.value)
            if not goes_to_device(target):
                return
            confidence = target.confidence if target.on_device else min(target.confidence, Confidence.MEDIUM)
            owner = explained(owner, target)
        else:
            if owner.known and not owner.maybe_device:
                return  # a host tensor: new_tensor is a host copy, nothing waits
            confidence = device_confidence(owner)
            if not owner.on_device and ctx.hot_path is not None:
                # new_tensor is a method of a tensor; on a hot path of model code a tensor
                # that may be on the device (or whose place is unknown) is, in practice.
                confidence = max(confidence, Confidence.MEDIUM)
        data = args[0].value
        data_place = ctx.placement(data)
        if data_place.known and data_place.maybe_device:
            return  # a device tensor as data: a device-to-device copy
        ctx.report(
            self,
            node,
            "`new_tensor(...)` copies host data to the device with a blocking copy; "
            + ("use a fill (`new_zeros`/`new_ones`/`new_full`)" if _constant_fill(data) else "build it once and cache it, or copy it pinned"),
            confidence=confidence,
            placement=owner,
            fix=self._fix(node, data, ctx),
        )

    def _fix(self, node: cst.Call, data: cst.BaseExpression, ctx) -> FixSpec | None:
        fill = _constant_fill(data)
        if fill is None:
            return None
        if any(a.keyword is not None and a.keyword.value not in _CARRIED_KEYWORDS for a in node.args):
            return None
        value, length = fill  # length None: a 0-dim scalar
        number = _number(value)
        # The data argument is replaced in place (its comma and any comment after it stay);
        # the keywords stay as written.
        data_arg = next(a for a in node.args if a.keyword is None)
        if number == 0 and math.copysign(1.0, number) < 0:
            return None  # `-0.0`: new_zeros would lose the sign (1 / x gives -inf, not inf)
        if number in (0, 1):
            method = "new_zeros" if number == 0 else "new_ones"
            new_first = [data_arg.with_changes(value=_size(length, tuple_form=False))]
        else:
            method = "new_full"
            size = cst.Arg(_size(length, tuple_form=True), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            new_first = [size, data_arg.with_changes(value=value)]
        args = [*new_first, *(a for a in node.args if a is not data_arg)]
        func = node.func.with_changes(attr=cst.Name(method))
        return FixSpec(
            message=f"Use `{method}` (filled on the device, no copy)",
            replacements=((node, node.with_changes(func=func, args=args)),),
            applicability=Applicability.SAFE,
        )


def _constant_fill(data: cst.BaseExpression):
    """(literal, length) when `data` is a number literal (length None) or a flat list/tuple
    of one repeated number literal, else None."""
    if _number(data) is not None:
        return data, None
    if isinstance(data, (cst.List, cst.Tuple)) and data.elements:
        values = [e.value for e in data.elements]
        if any(isinstance(e, (cst.StarredElement,)) for e in data.elements):
            return None
        numbers = [_number(v) for v in values]
        if numbers[0] is not None and all(
            n is not None and n == numbers[0] and type(n) is type(numbers[0]) and math.copysign(1, n) == math.copysign(1, numbers[0])
            for n in numbers
        ):
            return values[0], len(values)
    return None


def _number(expr: cst.BaseExpression):
    """The value of an int/float literal (a leading minus allowed), else None. Bools are not
    numbers here: `new_tensor([True])` keeps meaning a bool mask in a bool-less tensor."""
    negative = False
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        negative, expr = True, expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        value = expr.evaluated_value
        return -value if negative else value
    return None


def _size(length: int | None, *, tuple_form: bool) -> cst.BaseExpression:
    if length is None:
        return cst.Tuple(elements=[])
    if tuple_form:
        return cst.Tuple(elements=[cst.Element(cst.Integer(str(length)), comma=cst.Comma())])
    return cst.Integer(str(length))
