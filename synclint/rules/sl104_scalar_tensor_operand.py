from __future__ import annotations

import struct

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import kwarg, positional
from synclint.rules.sl1xx_h2d import device_target, goes_to_device, move_target, read_move
from synclint.violation import Applicability, Confidence

# torch.<name>(x, other) -> torch.clamp(x, <bound>=scalar)
BOUND_OF = {"torch.maximum": "min", "torch.max": "min", "torch.minimum": "max", "torch.min": "max", "torch.fmax": None, "torch.fmin": None}
# torch.clamp(x, min=t) / max=t with a scalar tensor built for it.
CLAMPS = frozenset({"torch.clamp", "torch.clip", "torch.clamp_min", "torch.clamp_max"})
# The largest literal whose clamp is exact in every dtype `x` may have (int8 holds 127; the
# smallest float type holds 65504): larger ones make `clamp` raise where `maximum` did not.
_SAFE_INT = 127
_SAFE_FLOAT = 65504.0


class ScalarTensorOperand(Rule):
    """Flags a device tensor built from a Python scalar only to be an operand of
    `torch.maximum`/`minimum`/`max`/`min` or a `clamp` bound.

    ## What it does
    Reports `torch.maximum(x, torch.tensor(s, device=d))` (and `minimum`, two-argument
    `torch.max`/`torch.min`, `torch.clamp(x, min=torch.tensor(s, device=d))`, and the same
    scalar tensor moved there: `torch.tensor(s).to(d)`, `.cuda()`) where `s` is a Python
    scalar.

    ## Why it stalls
    `torch.tensor(s, device=cuda)` copies the scalar from pageable memory with a blocking
    copy that waits for every queued kernel. Measured on an H200: stall ratio ~1.0 for a
    scalar tensor used as an operand; `torch.clamp(x, min=python_float)` passes the scalar as
    a kernel argument and did not stall.

    ## Example
    ```python
    import torch

    def forward(self, std):
        return torch.maximum(std, torch.tensor(1e-2, device=std.device))
    ```

    ## Use instead
    No data movement at all, the cheapest fix there is (before building the scalar on the
    device with `torch.full((), s, device=d)`, or copying it):
    ```python
    import torch

    def forward(self, std):
        return torch.clamp(std, min=1e-2)
    ```

    ## Fix safety
    `torch.clamp(x, min=s)` gives the same values and dtype as `torch.maximum(x,
    torch.tensor(s))` for every dtype of `x` (checked exhaustively on CPU in the tests; a
    float `s` with an integer `x` promotes to the default float type either way) when `s` is
    an integer literal in [-127, 127] or a float literal that float32 represents exactly
    within +-65504: safe. Otherwise unsafe: a scalar tensor holds `s` rounded to float32 while
    `clamp` uses the exact double (they differ for a float64 `x`), an out-of-range `s` makes
    `clamp` raise for small dtypes where `maximum` saturated, and a `dtype=` on the scalar
    tensor changes type promotion. `torch.fmax`/`fmin` (NaN-ignoring) and bool scalars are
    reported without a fix.

    ## Known false positives
    A `device=` that is the CPU at run time, at `medium` confidence.
    """

    code = "SL104"
    name = "scalar-tensor-operand"
    summary = "device tensor built from a Python scalar only to be an operand"
    fix_availability = FixAvailability.SOMETIMES
    # Every finding contains the scalar tensor factory (the bound-only clamp finding, too).
    triggers = ("tensor", "as_tensor", "scalar_tensor")
    # The operand is built with device= ("factory"), or built on the host and moved ("move").
    shape_words = ("tensor", "as_tensor", "scalar_tensor", "to", "cuda")
    device_only = True
    device_sites = ("factory", "move")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func)
        if qual in BOUND_OF:
            self._check_binary(node, qual, ctx)
        elif qual in CLAMPS:
            self._check_clamp(node, qual, ctx)

    def _check_binary(self, node: cst.Call, qual: str, ctx) -> None:
        args = positional(node)
        if len(args) != 2 or len(node.args) != 2:
            return
        for index in (0, 1):
            scalar = self._scalar_tensor(args[index].value, ctx)
            if scalar is None:
                continue
            other = args[1 - index].value
            value, confidence, exact = scalar
            fix = None
            bound = BOUND_OF[qual]
            if bound is not None and exact is not None and not _is_bool(value) and isinstance(node.func, cst.Attribute):
                clamp = cst.Call(
                    func=_torch_attr(node.func, "clamp"),
                    args=[cst.Arg(other, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), _keyword(bound, value)],
                )
                fix = FixSpec(
                    message=f"Use `torch.clamp(x, {bound}=...)` (the scalar stays on the host)",
                    replacements=((node, clamp),),
                    applicability=Applicability.SAFE if exact else Applicability.UNSAFE,
                )
            name = qual.split(".")[-1]
            ctx.report(
                self,
                node,
                f"`torch.{name}` with a scalar tensor built on the device copies the scalar with a blocking copy; "
                f"pass the Python scalar{f' to `torch.clamp({bound}=...)`' if bound else ''}",
                confidence=confidence,
                fix=fix,
            )
            return

    def _check_clamp(self, node: cst.Call, qual: str, ctx) -> None:
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value not in ("min", "max"):
                continue
            scalar = self._scalar_tensor(arg.value, ctx)
            if scalar is None:
                continue
            value, confidence, exact = scalar
            fix = None
            if exact is not None and not _is_bool(value):
                fix = FixSpec(
                    message="Pass the Python scalar",
                    replacements=((arg.value, value),),
                    applicability=Applicability.SAFE if exact else Applicability.UNSAFE,
                )
            ctx.report(
                self,
                arg.value,
                f"a scalar tensor built on the device as a `{arg.keyword.value}=` bound is a blocking copy; pass the Python scalar",
                confidence=confidence,
                fix=fix,
            )

    def _scalar_tensor(self, expr: cst.BaseExpression, ctx):
        """For `torch.tensor(s, device=d)` / `torch.as_tensor` / `torch.scalar_tensor` with a
        Python scalar `s` (or a value the analysis cannot see) and an accelerator `d`:
        (s, confidence, exact) where exact is None when no fix is sound, else None."""
        if not isinstance(expr, cst.Call):
            return None
        device_expr = None
        move = read_move(expr, ctx)
        if move is not None and isinstance(move.source, cst.Call):
            # `torch.tensor(s).to(d)` / `.cuda()`: the same scalar, copied by the move.
            if not move.simple or move.dtype is not None or move.non_blocking is not None:
                return None
            target = move_target(move, ctx)
            expr, device_expr = move.source, move.device if move.device is not None else cst.SimpleString('"cuda"')
            if kwarg(expr, "device") is not None:
                return None
        elif move is not None and isinstance(move.source, cst.Name):
            # `eps = torch.tensor(1e-5)` once in the function, `eps.to(d)` as the operand.
            bound = _single_binding(move.source.value, ctx)
            if bound is None or not move.simple or move.dtype is not None or move.non_blocking is not None:
                return None
            target = move_target(move, ctx)
            expr, device_expr = bound, move.device if move.device is not None else cst.SimpleString('"cuda"')
            if kwarg(expr, "device") is not None:
                return None
        if ctx.qualname(expr.func) not in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor"):
            return None
        args = positional(expr)
        device = kwarg(expr, "device") if device_expr is None else cst.Arg(device_expr)
        if len(args) != 1 or device is None or any(a.star for a in expr.args):
            return None
        if any(a.keyword is not None and a.keyword.value not in ("device", "dtype") for a in expr.args):
            return None
        value = args[0].value
        placement = ctx.placement(value)
        if placement.known and not placement.is_(Place.SCALAR):
            return None  # a list or a tensor: SL101's business
        target = device_target(ctx, device.value) if device_expr is None or move.device is not None else target
        if not goes_to_device(target):
            return None
        confidence = min(placement.confidence, target.confidence) if placement.known else min(Confidence.MEDIUM, target.confidence)
        if not target.on_device:
            confidence = min(confidence, Confidence.MEDIUM)
        if not placement.known:
            return value, confidence, None  # may not be a number: no fix that could fail
        exact = kwarg(expr, "dtype") is None and _exact_literal(value)
        return value, confidence, exact


def _single_binding(name: str, ctx) -> cst.Call | None:
    """The `torch.tensor(...)` call that `name` is bound to, when the enclosing function
    binds it exactly once (an assignment of that call) and nothing else rebinds it."""
    function = next((s for s in reversed(ctx.chain) if isinstance(s, cst.FunctionDef)), None)
    if function is None:
        return None
    found: list = []

    class Bindings(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            pass

        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                if isinstance(t.target, cst.Name) and t.target.value == name:
                    found.append(node.value if len(node.targets) == 1 else None)
                elif _binds(t.target, name):
                    found.append(None)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if _binds(node.target, name):
                found.append(None)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if _binds(node.target, name):
                found.append(None)

        def visit_For(self, node: cst.For) -> None:
            if _binds(node.target, name):
                found.append(None)

        def visit_AsName(self, node: cst.AsName) -> None:
            if _binds(node.name, name):
                found.append(None)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            if _binds(node.target, name):
                found.append(None)

        def visit_Param(self, node: cst.Param) -> None:
            if node.name.value == name:
                found.append(None)

        def visit_Global(self, node: cst.Global) -> None:
            found.append(None)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            found.append(None)

    function.visit(Bindings())
    if len(found) != 1 or not isinstance(found[0], cst.Call):
        return None
    call = found[0]
    if ctx.qualname(call.func) not in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor"):
        return None
    return call


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    return False


def covers(node: cst.Call, ctx) -> bool:
    """Whether SL104 reports `node` (a scalar tensor built as the operand of a bound)."""
    arg = ctx.parent(node)
    call = ctx.parent(node, 2)
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call):
        return False
    qual = ctx.qualname(call.func)
    if qual in BOUND_OF:
        if not (arg.keyword is None and len(call.args) == 2 and all(a.keyword is None and not a.star for a in call.args)):
            return False
    elif not (qual in CLAMPS and arg.keyword is not None and arg.keyword.value in ("min", "max")):
        return False
    return ScalarTensorOperand._scalar_tensor(None, node, ctx) is not None


def _exact_literal(expr: cst.BaseExpression) -> bool:
    negative = False
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        negative, expr = True, expr.expression
    if isinstance(expr, cst.Integer):
        return abs(expr.evaluated_value) <= _SAFE_INT
    if isinstance(expr, cst.Float):
        value = float(expr.value)
        value = -value if negative else value
        return abs(value) <= _SAFE_FLOAT and struct.unpack("f", struct.pack("f", value))[0] == value
    return False


def _is_bool(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value in ("True", "False")


def _torch_attr(func: cst.Attribute, name: str) -> cst.Attribute:
    """`torch.clamp` spelled with the module the original call used (`torch`, `th`, ...)."""
    return func.with_changes(attr=cst.Name(name))


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    return cst.Arg(value=value, keyword=cst.Name(name), equal=equal)
