from __future__ import annotations

from functools import cached_property

import libcst as cst

from synclint.analysis.placement import Place, Placement
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import (
    is_empty_literal,
    kwarg,
    positional,
    traced_as_constant,
)
from synclint.rules.sl1xx_h2d import explained, helper_call, inline_factory
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
    The cheapest exact form first: no data movement (a Python scalar operand: SL104) >
    built on the device > a per-device constant cached once (SL106) > a pinned,
    non-blocking copy.
    ```python
    import torch

    def _prepare_inputs(self, token_ids: list[int], device):
        eps = torch.full((), 1e-5, device=device)  # a literal scalar: filled on the device
        positions = torch.arange(4, 12, device=device)  # torch.tensor(range(4, 12), device=...)
        ids = torch.tensor(token_ids, dtype=torch.long, pin_memory=torch.cuda.is_available()).to(
            device, non_blocking=torch.cuda.is_available()
        )
        return ids, positions, eps
    ```
    The copy is written with torch alone by default (no import of synclint or anything else
    the project lacks); `h2d-helper` names a helper to call instead, and a file that already
    imports a known helper (vLLM's `async_tensor_h2d`, SGLang's `async_h2d`) keeps calling it
    with its own signature. Pinning is asked for only where CUDA is available
    (`torch.cuda.is_available()`), so the same line runs unchanged on a machine without it.
    The pinned temporary can be dropped as soon as the call returns: it comes from
    PyTorch's caching host allocator, which records an event on the copy's stream and
    hands the block out again only after the copy has completed.

    ## Fix safety
    - A number literal, `torch.tensor(1e-5, device=d)`, becomes `torch.full((), 1e-5,
      device=d)`: safe, because `torch.full` infers the dtype of a Python scalar as
      `torch.tensor` does (bool -> bool, int -> int64, float -> the default float dtype,
      complex -> the default complex dtype; checked in the tests). With `dtype=` a value the
      analysis proves a Python scalar (`len(x)`, `.item()`) is filled too; any other value
      is copied (a numpy scalar keeps its own dtype in `torch.tensor`, a list cannot fill).
    - A list (or a rectangular list of lists) of one repeated number literal,
      `torch.tensor([-1], device=d)`, becomes `torch.full((1,), -1, device=d)`: safe, the
      dtype `torch.tensor` infers from such a list is the one `torch.full` infers from the
      literal.
    - `torch.tensor(range(a, b), device=d)` becomes `torch.arange(a, b, device=d)`: the
      same int64 values, safe when a `dtype=` is given or the range is of literals and not
      empty; otherwise unsafe, because an empty range gives `torch.tensor` a float32 tensor
      and `torch.arange` an int64 one.
    - Otherwise the pinned, non-blocking copy: safe. The data is copied into pinned memory
      at the call (so later changes to the list cannot leak into the copy), with the same
      values, dtype and device. `torch.as_tensor(array, device=d)` of a numpy array or CPU
      tensor shares its memory when `d` is the CPU at run time, where the copy copies:
      unsafe unless `d` is proven an accelerator. Not offered when other keyword arguments
      are present (`requires_grad=`, `pin_memory=`) or when the data may already be a
      device tensor.
    - A source that may be a pinned host tensor (`torch.tensor(lens_cpu, device=d)`) gets
      no fix: the copy is blocking even from pinned memory (`torch.tensor` never copies
      with `non_blocking`), but pinning a copy of it again is not the cheapest fix; move
      it with `lens_cpu.to(d, non_blocking=True)` where the dtype already matches.

    ## Known false positives
    A `device` that is in fact the CPU at run time (the copy is then free): the finding has
    `medium` confidence when the device is only named like one.
    A helper's `device` parameter that every call outside cold code gives the CPU (the
    repository's call graph says so) is the CPU at `low` confidence: hidden by default, and
    `--explain` names the callers.
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
        if data.may_be(Place.DEVICE):
            return  # a device-to-device copy: no host wait
        # A pinned source waits too: `torch.tensor()` / `as_tensor()` copy with a blocking
        # `.to(device)` (never `non_blocking`), and a blocking copy waits for the queue even
        # from pinned memory.
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
            placement=explained(data, target),
            fix=self._fix(node, data, qual, target, ctx),
        )

    @cached_property
    def _scalar_operand_rule_enabled(self) -> bool:
        from synclint.rules import select_codes

        codes = select_codes(self.settings.select, self.settings.extend_select, self.settings.ignore)
        return "SL104" in codes

    def _fix(self, node: cst.Call, data, qual: str, target, ctx) -> FixSpec | None:
        if data.may_be(Place.PINNED):
            return None  # pinning a copy of a pinned tensor again is not the cheapest fix
        if any(a.keyword is not None and a.keyword.value not in _HELPER_KEYWORDS for a in node.args):
            return None
        if len(positional(node)) != 1 or any(a.star for a in node.args):
            return None
        arange = self._arange_fix(node, ctx)
        if arange is not None:
            return arange
        filled = _scalar_fill_fix(node, ctx)
        if filled is not None:
            return filled
        if qual != "torch.tensor" and not data.known:
            return None
        # `as_tensor(array_or_cpu_tensor, device=d)` shares memory when d is the CPU at run
        # time; the copy always copies. Unless d is proven an accelerator, that can change
        # what a later in-place write sees.
        shares = qual != "torch.tensor" and (data.may_be(Place.NUMPY) or data.may_be(Place.HOST))
        proven = target.on_device and target.confidence >= Confidence.HIGH
        applicability = Applicability.UNSAFE if shares and not proven else Applicability.SAFE
        # The data and dtype= stay as written (comments and layout too); only the callee
        # changes (a helper taking dtype=/device=) or device= moves to `.to()` (inline).
        new = inline_factory(ctx, self.settings, node)
        if new is None:
            dtype = kwarg(node, "dtype")
            new = helper_call(ctx, self.settings, positional(node)[0].value, dtype=dtype.value if dtype else None, device=kwarg(node, "device").value)
        if new is None:
            return None
        return FixSpec(message=new.message, replacements=((node, new.node),), applicability=applicability, imports=new.imports)

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


def _number_literal(expr: cst.BaseExpression) -> bool:
    """`1`, `1.0`, `1e-5`, `2j`, `-3`, `True`: a Python scalar whose type the code shows."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    return isinstance(expr, cst.Name) and expr.value in ("True", "False")


def _scalar_fill_fix(node: cst.Call, ctx) -> FixSpec | None:
    """`torch.tensor(1e-5, device=d)` -> `torch.full((), 1e-5, device=d)`: filled on the
    device by a kernel, nothing copied. Exact: for a Python scalar `torch.full` infers the
    dtype as `torch.tensor` does (bool -> bool, int -> int64, float -> the default float
    dtype, complex -> the default complex dtype), and with `dtype=` both convert the same
    scalar. Offered for a number literal, or for a value the analysis proves a Python scalar
    when `dtype=` is given (without it a numpy scalar would keep its own dtype in
    `torch.tensor` and not in `torch.full`)."""
    first = positional(node)[0]
    data = first.value
    if not isinstance(node.func, cst.Attribute) or first is not node.args[0]:
        return None
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if isinstance(data, (cst.List, cst.Tuple)):
        return _uniform_list_fill(node, data, comma)
    if not _number_literal(data):
        if kwarg(node, "dtype") is None:
            return None
        placement = ctx.placement(data)
        if not (placement.is_(Place.SCALAR) and placement.confidence >= Confidence.HIGH):
            return None
    args = [cst.Arg(cst.Tuple(elements=[]), comma=comma), *node.args]
    return FixSpec(
        message="Build it on the device: `torch.full((), value, device=...)` (no copy)",
        replacements=((node, node.with_changes(func=node.func.with_changes(attr=cst.Name("full")), args=args)),),
        applicability=Applicability.SAFE,
    )


def _uniform_list_fill(node: cst.Call, data, comma) -> FixSpec | None:
    """`torch.tensor([-1], device=d)` and any list (or rectangular list of lists) of one
    repeated number literal -> `torch.full((n,), -1, device=d)`: the dtype `torch.tensor`
    infers from a list of one literal kind is the one `torch.full` infers from that
    literal. (An empty list is not reported: nothing is copied.)"""
    rest = list(node.args[1:])
    shape, values = [], []

    def walk(expr, depth):
        if isinstance(expr, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in expr.elements):
            if len(shape) <= depth:
                shape.append(len(expr.elements))
            elif shape[depth] != len(expr.elements):
                return False
            return bool(expr.elements) and all(walk(e.value, depth + 1) for e in expr.elements)
        if len(shape) != depth or not _number_literal(expr):
            return False
        values.append(cst.Module([]).code_for_node(expr))
        return True

    if not walk(data, 0) or len(set(values)) != 1 or len(values) > 64:
        return None
    size = cst.Tuple(elements=[cst.Element(cst.Integer(str(n))) for n in shape]) if len(shape) > 1 else cst.Tuple(
        elements=[cst.Element(cst.Integer(str(shape[0])), comma=cst.Comma())]
    )
    literal = cst.parse_expression(values[0])
    args = [cst.Arg(size, comma=comma), cst.Arg(literal, comma=comma if rest else cst.MaybeSentinel.DEFAULT), *rest]
    new = node.with_changes(func=node.func.with_changes(attr=cst.Name("full")), args=args)
    return FixSpec(
        message="Build it on the device: `torch.full(shape, value, device=...)` (no copy)",
        replacements=((node, new),),
        applicability=Applicability.SAFE,
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
