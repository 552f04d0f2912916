from __future__ import annotations

from functools import cached_property

import libcst as cst

from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import append_keyword, kwarg, positional
from synclint.rules.sl1xx_h2d import (
    HOST_EITHER,
    PAGEABLE,
    PINNED,
    STRIDED_PINNED,
    device_expr,
    explained,
    from_numpy_array,
    goes_to_device,
    helper_call,
    host_memory,
    move_target,
    plain_factory_data,
    read_move,
)
from synclint.rules.sl104_scalar_tensor_operand import covers as scalar_operand_covers
from synclint.analysis.values import Place
from synclint.violation import Applicability, Confidence

# torch factories whose values do not depend on where they are computed: building them on the
# device gives the same tensor with no copy at all (random factories would draw differently).
_DETERMINISTIC_FACTORIES = frozenset({"zeros", "ones", "full", "empty", "eye"})
_INTEGER_DTYPES = frozenset({"int8", "int16", "short", "int32", "int", "int64", "long", "uint8", "uint16", "uint32", "uint64", "bool"})
# Calls whose result is a Python int: `torch.arange(len(x))` counts exactly on any device.
_INT_CALLS = frozenset({"len", "int"})
_INT_METHODS = frozenset({"size", "numel", "dim"})


class BlockingHostToDeviceMove(Rule):
    """Flags `.to(device)` / `.cuda()` of host data without `non_blocking=True`.

    ## What it does
    Reports a copy of a host tensor (pageable or pinned, `torch.from_numpy(a)`, a
    `torch.arange(n)` built on the host, a `torch.cat`/`torch.stack` of a sequence one of whose
    elements is a host tensor, since all inputs of a concatenation share one device, or of a
    local list that the function filled with `parts.append(host_tensor)`; a host tensor that a
    helper in another file returns, pinned or not) to an
    accelerator with `.to(device)` or `.cuda()` and no `non_blocking=True`. A field moved in
    place (`self.x = self.x.to(self.device)`) counts as host data when the class builds it
    only on the host (`self.x = torch.tensor(n)` in `__init__`): each new object (a cache
    made per request, a layer initialised lazily) copies it with a blocking copy.

    ## Why it stalls
    A blocking host-to-device copy waits until every kernel already queued on the stream
    has finished, even from pinned memory. Measured on an H200: `torch.from_numpy(a).to(cuda)`
    and `.cuda()` stalled for the whole queue (ratio ~1.0, caught by
    `torch.cuda.set_sync_debug_mode`), while `pinned.to(cuda, non_blocking=True)` did not.

    ## Example
    ```python
    import torch

    def forward(self, hidden_states, seq_len, device):
        position_ids = torch.arange(seq_len).to(device)
        return hidden_states + position_ids
    ```

    ## Use instead
    The cheapest exact form first: no data movement (a scalar operand stays a Python
    scalar: SL104) > built on the device > a constant cached per device (SL106) > a pinned,
    non-blocking copy (written with torch alone, or the `h2d-helper`, see SL101).
    ```python
    import torch

    def forward(self, hidden_states, seq_len, device):
        position_ids = torch.arange(seq_len, device=device)
        scale = torch.arange(seq_len, device=device).float()  # was torch.arange(seq_len).float().to(device)
        return hidden_states + position_ids * scale
    ```

    ## Fix safety
    - `torch.zeros/ones/full/empty/eye(...).to(d)` becomes the factory with `device=d`: the
      values cannot differ, safe. `torch.arange(...).to(d)` likewise when it counts whole
      numbers from 0 by 1 (`torch.arange(n)`) or its arguments are integers (literals,
      `len()`, `.size()`, an integer `dtype=`); with other arguments float steps could
      round differently on the device: unsafe. Dtype conversions between the factory and
      the move stay after it: `torch.arange(n).float().to(d)` becomes
      `torch.arange(n, device=d).float()` (the same integers, the same cast), safe.
    - A scalar tensor moved to be the operand of `torch.maximum`/`minimum` or a `clamp`
      bound (`torch.maximum(x, torch.tensor(1e-5).to(d))`) is SL104's, whose fix keeps the
      scalar on the host (`torch.clamp(x, min=1e-5)`).
    - `torch.from_numpy(a).to(d)` / `torch.tensor(data).to(d)` become a pinned copy, which
      copies the data into pinned memory at the call and queues the copy: safe (unsafe when
      the `.to()` also converts the dtype, which then happens on the host). For
      `from_numpy(a).to(d)` only when `d` is proven an accelerator (or the move is `.cuda()`):
      where `d` is the CPU at run time `.to(d)` returns a tensor sharing `a`'s memory, so a
      later write to `a` shows through it, and the copy would not: unsafe.
    - Other pageable host tensors (a plain name or attribute) become `(x.pin_memory() if
      torch.cuda.is_available() else x).to(d, non_blocking=...)` (or the helper), unsafe:
      a helper copies data, not autograd history, where `.to()` stays differentiable.
    - A field moved in place (`self.x = self.x.to(d)`) gets no fix: once moved it is a
      device tensor, which `.pin_memory()` would reject the next time the line runs.
    - A pinned source gets `non_blocking=True`: unsafe, because the copy now runs later, and
      an in-place write to the pinned source before it runs (refilling a reused staging
      buffer) changes what the device receives.

    ## Known false positives
    A `device` that is the CPU at run time (the move is then free): `medium` confidence when
    the device is only named like one; `low` (hidden by default, `--explain` names the
    callers) for a helper's `device` parameter that every call outside cold code gives the
    CPU, by the repository's call graph. One-time copies at load time stall too, but cost
    little; the finding says when it is on a hot path.
    """

    code = "SL103"
    name = "blocking-host-to-device-move"
    summary = "host tensor moved to the device with a blocking copy"
    fix_availability = FixAvailability.SOMETIMES
    triggers = ("to", "cuda")
    shape_words = ("to", "cuda")
    device_only = True
    device_sites = ("move",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        move = read_move(node, ctx)
        if move is None or move.is_non_blocking:
            return
        target = move_target(move, ctx)
        if not goes_to_device(target):
            return
        kind, source = host_memory(move.source, ctx)
        moved_field = False
        if kind is None:
            kind, source = _field_built_on_host(move, ctx, kind, source)
            moved_field = kind is not None
        if kind not in (PAGEABLE, PINNED, STRIDED_PINNED, HOST_EITHER):
            return
        if kind == HOST_EITHER and move.non_blocking is not None:
            return  # `non_blocking=torch.cuda.is_available()` beside a conditional pin: the pinned-copy idiom
        if self._scalar_operand_rule_enabled and scalar_operand_covers(node, ctx):
            return  # SL104 reports it, with the better fix (the scalar stays on the host)
        confidence = min(source.confidence, target.confidence)
        if not target.on_device:
            confidence = min(confidence, Confidence.MEDIUM)
        spelled = ".cuda()" if move.method == "cuda" else ".to(device)"
        memory = "pinned" if kind == PINNED else "host"
        ctx.report(
            self,
            node,
            f"`{spelled}` of a {memory} tensor is a blocking copy that waits for all queued GPU work; "
            + ("pass `non_blocking=True`" if kind == PINNED else "build it on the device or copy it pinned and non-blocking"),
            confidence=confidence,
            placement=explained(source, target),
            # No fix for a field moved in place: once moved it is a device tensor, which
            # `.pin_memory()` would reject the next time the line runs.
            fix=self._fix(move, kind, ctx) if move.simple and move.non_blocking is None and not moved_field and kind != HOST_EITHER else None,
        )

    @cached_property
    def _scalar_operand_rule_enabled(self) -> bool:
        from synclint.rules import select_codes

        codes = select_codes(self.settings.select, self.settings.extend_select, self.settings.ignore)
        return "SL104" in codes

    def _fix(self, move, kind: str, ctx) -> FixSpec | None:
        if kind == PINNED:
            return self._non_blocking_fix(move, ctx)
        if kind != PAGEABLE:
            return None
        source = move.source
        if isinstance(source, cst.Call):
            built_on_device = self._factory_fix(move, source, ctx)
            if built_on_device is not None:
                return built_on_device
            if _is_built_on_host(source, ctx):
                return None  # `torch.arange(..., dtype=int).to(d, dtype=float)`: the remedy is device=, not a copy
        array = from_numpy_array(source, ctx)
        factory = plain_factory_data(source, ctx) if isinstance(source, cst.Call) and array is None else None
        tensor_data = False
        if array is not None:
            # `.to(d)` of `from_numpy(a)` returns `a`'s memory itself when d is the CPU at
            # run time; the helper copies. Safe only where d is proven an accelerator.
            data, dtype, safe = array, None, _proven_device(move_target(move, ctx))
        elif factory is not None:
            data, dtype = factory
            safe = True
        else:
            # Autograd: `.to()` keeps the graph, the copy takes the data. Values are the same.
            data, dtype, safe, tensor_data = source, None, False, True
        if dtype is not None and move.dtype is not None:
            return None
        safe = safe and move.dtype is None
        new = helper_call(ctx, self.settings, data, dtype=dtype or move.dtype, device=device_expr(move), tensor_data=tensor_data)
        if new is None:
            return None
        return FixSpec(
            message=new.message,
            replacements=((move.call, new.node),),
            applicability=Applicability.SAFE if safe else Applicability.UNSAFE,
            imports=new.imports,
        )

    def _factory_fix(self, move, factory: cst.Call, ctx) -> FixSpec | None:
        """`torch.arange(n).to(d)` -> `torch.arange(n, device=d)`, and through dtype
        conversions: `torch.arange(n).float().to(d)` -> `torch.arange(n, device=d).float()`
        (the same integers converted by the same cast, on the device)."""
        casts = []
        while _is_cast(factory, ctx):
            casts.append(factory)
            factory = factory.func.value
            if not isinstance(factory, cst.Call):
                return None
        qual = ctx.qualname(factory.func) or ""
        name = qual[6:] if qual.startswith("torch.") else ""
        if name not in _DETERMINISTIC_FACTORIES and name != "arange":
            return None
        if move.dtype is not None or any(a.star for a in factory.args):
            return None
        if any(a.keyword is not None and a.keyword.value not in ("dtype", "layout") for a in factory.args):
            return None
        safe = name != "arange" or _integer_arange(factory, ctx)
        built = append_keyword(factory, "device", device_expr(move))
        for cast in reversed(casts):
            built = cast.with_changes(func=cast.func.with_changes(value=built))
        return FixSpec(
            message=f"Build it on the device: `torch.{name}(..., device=...)`",
            replacements=((move.call, built),),
            applicability=Applicability.SAFE if safe else Applicability.UNSAFE,
        )

    def _non_blocking_fix(self, move, ctx) -> FixSpec:
        return FixSpec(
            message="Pass `non_blocking=True` (the source is pinned)",
            replacements=((move.call, append_keyword(move.call, "non_blocking", cst.Name("True"))),),
            applicability=Applicability.UNSAFE,
        )


# Methods that convert a tensor's dtype and nothing else.
_CAST_METHODS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char"})


def _is_cast(call: cst.BaseExpression, ctx) -> bool:
    """`t.float()`, `t.long()`, `t.to(torch.float16)`, `t.type(torch.float32)`: a dtype conversion."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or any(a.star for a in call.args):
        return False
    method = call.func.attr.value
    if method in _CAST_METHODS:
        return not call.args
    if method in ("to", "type") and len(call.args) == 1 and call.args[0].keyword is None:
        qual = ctx.qualname(call.args[0].value) or ""
        from synclint.apis.torch_api import DTYPES

        return qual.startswith("torch.") and qual[6:] in DTYPES
    return False


def _is_built_on_host(call: cst.Call, ctx) -> bool:
    """A torch factory other than the data ones: it could be built on the device instead."""
    from synclint.apis.torch_api import DATA_FACTORIES, TENSOR_FACTORIES

    qual = ctx.qualname(call.func) or ""
    name = qual[6:] if qual.startswith("torch.") else ""
    return name in TENSOR_FACTORIES and name not in DATA_FACTORIES and name != "from_numpy"


def _integer_arange(call: cst.Call, ctx) -> bool:
    """`torch.arange` counts in integers: an integer dtype, or only integer-valued arguments."""
    dtype = kwarg(call, "dtype")
    if dtype is not None:
        qual = ctx.qualname(dtype.value) or ""
        return qual.startswith("torch.") and qual[6:] in _INTEGER_DTYPES
    args = positional(call)
    if len(args) == 1 and len(call.args) == 1:
        # `torch.arange(n)` counts 0, 1, ... with step 1 from 0: whole numbers, exact in
        # int64 and, for a float `n`, in the default float dtype below 2**24, on any device.
        return True
    return all(_is_integer(a.value) for a in args)


def _is_integer(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _is_integer(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)):
        return _is_integer(expr.left) and _is_integer(expr.right)
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Name) and expr.func.value in _INT_CALLS:
            return True
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _INT_METHODS:
            return True
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        return True
    return False


def _proven_device(target) -> bool:
    return target is not None and target.on_device and target.confidence >= Confidence.HIGH


def _field_built_on_host(move, ctx, kind, source):
    """`self.x = self.x.to(device)` where the class builds `self.x` on the host (`torch.tensor(n)`
    in `__init__`): the field is on the device only after this very move, so the move copies
    host memory (each time a new object runs it: a cache or a layer made per request)."""
    from synclint.analysis.flow import is_self_move

    expr = move.source
    if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
        return kind, source
    name = expr.attr.value
    statement = ctx.statement
    chain = tuple(ctx.chain)
    if statement is None or len(chain) < 2 or not isinstance(chain[-2], cst.ClassDef) or not is_self_move(statement, name):
        return kind, source
    built = ctx.placements.attribute_as_built(chain[:-1], name)
    if built is None or not built.is_(Place.HOST):
        return kind, source
    return PAGEABLE, built.because(move.call, f"`self.{name}` is built on the host; this line moves it to the device")
