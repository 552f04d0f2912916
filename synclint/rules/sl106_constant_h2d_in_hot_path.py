from __future__ import annotations

import libcst as cst

from synclint.rules.base import FixAvailability, Rule
from synclint.rules.helpers import compiled_by_torch_compile, kwarg, positional
from synclint.rules.sl1xx_h2d import device_target, explained, goes_to_device, helper_names, move_target, read_move
from synclint.rules.helpers import DEVICE_ORIGIN_TRIGGERS, device_confidence, literal_kind
from synclint.screen.places import LITERAL_LIST_INDEX
from synclint.violation import Confidence


class ConstantH2DInHotPath(Rule):
    """Flags constant host data (a literal list or tuple of numbers) copied to the device on
    every call of a hot function.

    ## What it does
    Reports `torch.tensor([...], device=d)`, `torch.as_tensor((...), device=d)`,
    `torch.tensor([...]).to(d)` / `.cuda()` and H2D helper calls (`async_tensor_h2d([...],
    device=d)`) whose data is a literal (or a module-level constant bound to one), and a
    device tensor indexed by a literal list of integers (`t[:, [0, 2, 7]]`, read or
    written: PyTorch copies the list to the device each time), inside a function that runs
    every step (`forward`, `execute_model`, the `hot-functions` setting,
    `@torch.compile`) or inside a loop.

    ## Why it stalls
    The data never changes, yet every call stages it on the host and copies it to the
    device. With `torch.tensor(..., device=)` or a plain `.to(device)` the copy is blocking:
    measured on an H200, it waits for the whole GPU queue (ratio ~1.0), and one such copy
    per step made a pipelined step 1.26x-1.54x slower. Even a pinned, non-blocking copy
    costs a host allocation, a memcpy and a copy launch per step, for the same bytes.

    ## Example
    ```python
    import torch

    class RotaryScaling(torch.nn.Module):
        def forward(self, positions):
            scale = torch.tensor([1.0, 0.5, 0.25], device=positions.device)
            return positions[..., None] * scale
    ```

    ## Use instead
    ```python
    import torch

    class RotaryScaling(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor([1.0, 0.5, 0.25]), persistent=False)

        def forward(self, positions):
            return positions[..., None] * self.scale
    ```

    ## Fix safety
    No fix: caching needs a home that outlives the call (a registered buffer, an attribute
    set in `__init__`, a per-device dictionary), which is a design choice. SL101/SL103 fix
    the blocking copy itself; this finding remains until the constant is cached.

    ## Known false positives
    A hot function that runs once in practice (a `forward` only called at load time).
    """

    code = "SL106"
    name = "constant-h2d-in-hot-path"
    summary = "constant host data copied to the device on every call"
    fix_availability = FixAvailability.NEVER
    # A literal index list of a device tensor needs a device origin: SL301's triggers.
    triggers = ("tensor", "as_tensor", "asarray", "async_tensor_h2d", "async_h2d", *DEVICE_ORIGIN_TRIGGERS)
    shape_words = ("tensor", "as_tensor", "asarray", "async_tensor_h2d", "async_h2d", LITERAL_LIST_INDEX)
    device_only = True
    device_sites = ("factory", "move", "list_index")

    def __init__(self, settings) -> None:
        super().__init__(settings)
        # The configured H2D helper is called by its own name (`my_h2d(...)`).
        self.shape_words = (*type(self).shape_words, *(name.rpartition(".")[2] for name in helper_names(settings)))

    def visit_Call(self, node: cst.Call, ctx) -> None:
        hot = ctx.hot_path
        if hot is None or compiled_by_torch_compile(ctx):
            return  # under torch.compile constant data becomes a graph constant, copied once
        found = self._constant_move(node, ctx)
        if found is None:
            return
        data, target = found
        confidence = target.confidence if target.on_device else min(target.confidence, Confidence.MEDIUM)
        ctx.report(
            self,
            node,
            f"constant data copied to the device on every call ({hot}); build it once per device and cache it",
            confidence=confidence,
            placement=explained(None, target),
        )

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        """`t[:, [0, 2, 7]]` (read or written) of a device tensor: the literal index list is
        copied to the device on every call, as `torch.tensor([0, 2, 7], device=...)` is."""
        hot = ctx.hot_path
        if hot is None:
            return
        if not any(isinstance(e.slice, cst.Index) and literal_kind(e.slice.value) == "integer" for e in node.slice):
            return
        base = ctx.placement(node.value)
        if not base.maybe_device:
            return
        ctx.report(
            self,
            node,
            f"a constant index list copied to the device on every call ({hot}); build the index tensor once per device and cache it",
            confidence=device_confidence(base),
            placement=base,
        )

    def _constant_move(self, node: cst.Call, ctx):
        """(data, device target) when `node` copies constant data to a device."""
        qual = ctx.qualname(node.func) or ""
        if qual in ("torch.tensor", "torch.as_tensor", "torch.asarray") or qual in helper_names(self.settings) or _helper_name(node, self.settings):
            args = positional(node)
            device = kwarg(node, "device")
            if not args or device is None or not _constant(args[0].value, ctx):
                return None
            target = device_target(ctx, device.value)
            return (args[0].value, target) if goes_to_device(target) else None
        move = read_move(node, ctx)
        if move is None or not isinstance(move.source, cst.Call):
            return None
        if ctx.qualname(move.source.func) not in ("torch.tensor", "torch.as_tensor", "torch.asarray"):
            return None
        args = positional(move.source)
        if len(args) != 1 or kwarg(move.source, "device") is not None or not _constant(args[0].value, ctx):
            return None
        target = move_target(move, ctx)
        return (args[0].value, target) if goes_to_device(target) else None


def _helper_name(node: cst.Call, settings) -> bool:
    """An unqualified call of the configured helper's name (imported under that name)."""
    name = settings.h2d_helper.rpartition(".")[2]
    return isinstance(node.func, cst.Name) and node.func.value == name


def _constant(expr: cst.BaseExpression, ctx) -> bool:
    if _literal(expr):
        return True
    if isinstance(expr, cst.Name):
        return _module_constant(expr.value, ctx) is not None
    return False


def _literal(expr: cst.BaseExpression) -> bool:
    """A non-empty list/tuple of number or bool literals, nested lists allowed."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return bool(expr.elements) and all(
            not isinstance(e, cst.StarredElement) and (_literal(e.value) or _scalar_literal(e.value)) for e in expr.elements
        )
    return False


def _scalar_literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float)) or (isinstance(expr, cst.Name) and expr.value in ("True", "False"))


def _module_constant(name: str, ctx) -> cst.BaseExpression | None:
    """The literal an UPPER_CASE module-level name is bound to, once and only once."""
    if not name.isupper():
        return None
    bound = []
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            targets = []
            if isinstance(small, cst.Assign):
                targets = [(t.target, small.value) for t in small.targets]
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                targets = [(small.target, small.value)]
            bound.extend(value for target, value in targets if isinstance(target, cst.Name) and target.value == name)
    if len(bound) == 1 and _literal(bound[0]):
        return bound[0]
    return None
