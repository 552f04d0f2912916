from __future__ import annotations

import libcst as cst

from synclint.rules import select_codes
from synclint.rules.base import Rule
from synclint.apis.torch_api import TENSOR_CHECK_FUNCTIONS
from synclint.rules.helpers import DEVICE_ORIGIN_TRIGGERS, device_confidence, kwarg, method_name, named_like_a_vector, positional, receiver
from synclint.violation import Confidence
from synclint.rules.sl204_sizing_readback import sizing_readback

# Builtins that turn their argument into a Python value, which for a device tensor means a
# copy to the host: the number conversions (and `range()`, which calls `__index__`), text.
_CONVERSIONS = {
    "int": "`int()`", "float": "`float()`", "bool": "`bool()`", "complex": "`complex()`",
    "range": "`range()`", "str": "`str()`", "repr": "`repr()`", "format": "`format()`",
}
# Builtins that compare or truth-test the elements of their arguments on the host.
_COMPARING_BUILTINS = {"max": "Python `max()`", "min": "Python `min()`", "any": "Python `any()`", "all": "Python `all()`"}
# torch functions and tensor methods that return a Python bool.
_BOOL_RESULT = frozenset({"equal", "allclose", "is_nonzero"})
# torch functions and tensor methods that answer from metadata, on the host: a truth test
# of their result reads nothing back (`if torch.is_floating_point(t):`).
_METADATA_PREDICATES = frozenset(
    {"is_floating_point", "is_complex", "is_tensor", "is_storage", "is_nonzero", "numel", "is_grad_enabled",
     "is_inference_mode_enabled", "is_contiguous", "is_pinned", "dim", "is_signed", "equal", "allclose"}
)
# Methods that give a boolean tensor: an index built with them is a mask.
_MASK_METHODS = frozenset(
    {"bool", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "logical_and",
     "logical_or", "logical_not", "logical_xor", "isin", "isclose", "isneginf", "isposinf"}
)
# torch functions and tensor methods whose result, tested, is a tensor's value: a truth test
# of one of them reads a tensor back even when where its input lives is not known.
_TENSOR_TESTS = frozenset(
    {"any", "all", "sum", "max", "min", "amax", "amin", "count_nonzero", "isin", "eq", "ne", "gt", "lt",
     "ge", "le", "logical_and", "logical_or", "logical_not", "isnan", "isinf", "isfinite", "isclose"}
)
_TENSOR_TEST_METHODS = frozenset({"any", "all", "sum", "max", "min", "amax", "amin", "count_nonzero", "isnan", "isinf", "isfinite"})
# Statement and expression kinds whose `test` is truth-tested, with the words for the message.
_TESTS = {cst.If: "`if`", cst.While: "`while`", cst.Assert: "`assert`", cst.IfExp: "a conditional expression", cst.CompIf: "a comprehension `if`"}

# f-string prefixes are words too: the prefilter must see `f"{t}"`.
_FSTRING_PREFIXES = ("f", "F", "rf", "fr", "Rf", "fR", "RF", "FR", "rF", "Fr")
# `"%s" % t` has no word of its own; the device tensor it formats needs a device origin
# (or a tensor annotation, which the analysis reads as "maybe on the device").
_TENSOR_ANNOTATIONS = ("Tensor", "LongTensor", "FloatTensor", "BoolTensor", "IntTensor")


class ImplicitReadback(Rule):
    """Flags Python operations that read a device tensor back to the host without saying so.

    ## What it does
    Reports, where the value may be a device tensor:
    - `int(t)`, `float(t)`, `bool(t)`, `complex(t)`, `range(t)`, `str(t)`, `repr(t)`,
      `format(t)`, `print(t)`, f-strings `f"{t}"`, `"%s" % t` and `"{}".format(t)`;
    - truth tests: `if t:`, `while t:`, `assert t`, `x if t else y`, comprehension `if t`,
      `not t`, the operands of `and`/`or` that Python truth-tests, and the value returned
      by a function annotated `-> bool` (its callers test it);
    - Python `max()`/`min()`/`any()`/`all()` over tensors, `torch.equal`, `torch.allclose`,
      `torch.is_nonzero` (they return a Python bool);
    - `torch._check_tensor_all(cond)` / `torch._check_tensor_all_with(error_type, cond, msg)`,
      which read `cond` with `.item()` whether the check passes or not (a condition not
      proven on the host is reported at `medium`: these checks test a tensor the model
      just computed);
    - `len(t[mask])` with a device boolean mask, when SL401 (which reports the mask
      indexing itself) is not selected.

    A truth test of a tensor result whose input's placement is not known (`if
    batch.track_mask.any():`, `if not torch.all(p == 1.0):`, `x and lens.sum() == 0`) is
    reported at `low` confidence (hidden by default): numpy arrays answer `.any()` too.
    So is Python `any(x)` / `all(x)` of an unplaced value named like a per-request vector
    (`any(batch.extend_prefix_lens)`).

    Host-only look-alikes are not reported: `len(t)`, `int(t.shape[0])`, `bool(x is None)`,
    `if t is not None:`, `if t.numel():`. A conversion that sizes something
    (`int(t.max()) + 1`) is SL204's, and `int(t.item())` is SL201's, so each expression gets
    one finding.

    ## Why it stalls
    Each of these needs the tensor's value as a Python object, so PyTorch copies it to the
    host and waits for every queued kernel first. Measured on an H200: `int(t)`, `float(t)`,
    `bool(t)`, `if t:`, `assert t.all()`, `print(t)`, Python `max(a, b)` on tensors,
    `torch.allclose` and `torch.equal` each waited for a queued 40 ms kernel (stall ratio
    ~1.0); `len(t[m])` stalls in the mask indexing.

    ## Example
    ```python
    import torch

    def forward(self, input_ids, device):
        input_ids = input_ids.to(device)
        if (input_ids < 0).any():
            raise ValueError("negative token id")
        return input_ids
    ```

    ## Use instead
    Keep the check on the device (or do it on host data before the copy):
    ```python
    import torch

    def forward(self, input_ids, device):
        input_ids = input_ids.to(device)
        torch._assert_async((input_ids >= 0).all())
        return input_ids
    ```

    ## Fix safety
    No fix: what the host needs the value for decides the rewrite.

    ## Known false positives
    Error messages are not reported: an f-string in a `raise` or in a `lambda:` passed as a
    lazy message is formatted only when the check fails.
    Checks that run once (validation at load time) are reported like hot code:
    put them in an allowed function or an allow-context (`extend-allow-contexts`, for
    example vLLM's `gpu_sync_allowed`), or use `# noqa: SL203`.
    Python `sum()` over a device tensor is not reported: it adds tensors on the device and
    does not sync.
    """

    code = "SL203"
    name = "implicit-readback"
    summary = "a Python conversion, truth test or print reads a device tensor back"
    triggers = (
        *_CONVERSIONS, *_COMPARING_BUILTINS, *_BOOL_RESULT, "len", "print",
        "if", "while", "assert", "and", "or", "not", *_FSTRING_PREFIXES,
        *DEVICE_ORIGIN_TRIGGERS, *_TENSOR_ANNOTATIONS, *TENSOR_CHECK_FUNCTIONS,
    )
    device_only = True
    device_sites = ("truth", "convert", "text", "tensor_check")

    # --- conversions, builtins and bool-returning functions ---------------------------------
    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        builtin = func.value if isinstance(func, cst.Name) and func.value not in ctx.imports.aliases else None
        if builtin in _CONVERSIONS:
            args = positional(node)
            if args and sizing_readback(node, ctx) is None:
                self._report_if_device(node, args[0].value, f"{_CONVERSIONS[builtin]} of a device tensor", ctx)
        elif builtin == "print":
            for arg in node.args:
                if arg.keyword is None and self._report_if_device(arg.value, arg.value, "`print()` of a device tensor", ctx):
                    break
        elif builtin in _COMPARING_BUILTINS:
            values = [a.value for a in node.args if a.keyword is None]
            # `any(batch.prefix_lens)`: one unplaced value named like a per-request vector
            # is reported at `low` confidence (a list of lengths is as common).
            shaped = builtin in ("any", "all") and len(values) == 1 and named_like_a_vector(values[0])
            if not self._report_first_device(node, values, f"{_COMPARING_BUILTINS[builtin]} over device tensors", ctx) and shaped:
                self._report_if_device(node, values[0], f"{_COMPARING_BUILTINS[builtin]} over device tensors", ctx, tensor_shaped=True)
        elif builtin == "len" and not _mask_rule_enabled(ctx):
            self._len_of_masked(node, ctx)
        else:
            qual = ctx.qualname(func) or ""
            if qual.startswith("torch.") and qual[6:] in TENSOR_CHECK_FUNCTIONS:
                self._tensor_check(node, qual, ctx)
            elif qual.startswith("torch.") and qual[6:] in _BOOL_RESULT:
                values = [a.value for a in node.args if a.keyword is None]
                self._report_first_device(node, values, f"`{qual}()` of device tensors returns a Python bool", ctx)
            elif method_name(node) in _BOOL_RESULT and not qual.startswith("torch."):
                self._report_if_device(node, receiver(node), f"`.{method_name(node)}()` of a device tensor returns a Python bool", ctx)
            elif method_name(node) == "format" and isinstance(receiver(node), (cst.SimpleString, cst.ConcatenatedString)):
                values = [a.value for a in node.args if not a.star]
                self._report_first_device(node, values, "`str.format()` of a device tensor", ctx)

    def _tensor_check(self, node: cst.Call, qual: str, ctx) -> None:
        """`torch._check_tensor_all(cond)`: reads `cond` with `.item()`. Its condition is a
        tensor by contract; one not proven on the host is reported at `medium` (such checks
        test the values a model just computed, on its device)."""
        args = positional(node)
        position = TENSOR_CHECK_FUNCTIONS[qual[6:]]
        cond = kwarg(node, "cond")
        cond = cond.value if cond is not None else args[position].value if len(args) > position else None
        if cond is None:
            return
        value = ctx.placement(cond)
        if value.known and not value.maybe_device:
            return
        ctx.report(
            self,
            node,
            f"`{qual}()` reads the condition tensor back with `.item()`, waiting for all queued GPU work",
            confidence=max(Confidence.MEDIUM, device_confidence(value)),
            placement=value,
        )

    def _len_of_masked(self, node: cst.Call, ctx) -> None:
        args = positional(node)
        if len(args) != 1 or not isinstance(args[0].value, cst.Subscript):
            return
        subscript = args[0].value
        if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
            return
        index = subscript.slice[0].slice.value
        if not _looks_like_mask(index):
            return
        if ctx.placement(index).maybe_device:
            self._report_if_device(node, subscript.value, "`len(t[mask])` with a device mask has a data-dependent size", ctx)

    # --- truth tests ---------------------------------------------------------------------
    def visit_If(self, node: cst.If, ctx) -> None:
        self._truth_test(node.test, True, _TESTS[cst.If], ctx)

    def visit_While(self, node: cst.While, ctx) -> None:
        self._truth_test(node.test, True, _TESTS[cst.While], ctx)

    def visit_Assert(self, node: cst.Assert, ctx) -> None:
        self._truth_test(node.test, True, _TESTS[cst.Assert], ctx)

    def visit_IfExp(self, node: cst.IfExp, ctx) -> None:
        self._truth_test(node.test, True, _TESTS[cst.IfExp], ctx)

    def visit_CompIf(self, node: cst.CompIf, ctx) -> None:
        self._truth_test(node.test, True, _TESTS[cst.CompIf], ctx)

    def visit_Return(self, node: cst.Return, ctx) -> None:
        # `def no_absorb(...) -> bool: return mode.is_extend() and lens.sum() == 0`: the
        # tensor returned is truth-tested by every caller.
        if node.value is not None and _returns_bool(ctx):
            self._truth_test(node.value, True, "a `-> bool` return", ctx)

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx) -> None:
        if not _in_tested_position(node, ctx):
            self._truth_test(node, False, "`and`/`or`", ctx)

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx) -> None:
        if isinstance(node.operator, cst.Not) and not _in_tested_position(node, ctx):
            self._truth_test(node, True, "`not`", ctx)

    def _truth_test(self, expr: cst.BaseExpression, tested: bool, what: str, ctx) -> None:
        """Report the parts of `expr` that Python calls `bool()` on. `tested`: whether the
        value of `expr` itself is truth-tested (an `and`/`or` result assigned is not)."""
        if isinstance(expr, cst.BooleanOperation):
            self._truth_test(expr.left, True, what, ctx)
            self._truth_test(expr.right, tested, what, ctx)
        elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            self._truth_test(expr.expression, True, what, ctx)
        elif tested and not _python_bool_call(expr, ctx):
            self._report_if_device(expr, expr, f"{what} on a device tensor", ctx, tensor_shaped=_tensor_shaped(expr, ctx))

    # --- text ----------------------------------------------------------------------------
    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression, ctx) -> None:
        if _only_formatted_on_failure(ctx):
            return
        self._report_if_device(node.expression, node.expression, "an f-string of a device tensor", ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        # "%s" % t, "%d, %d" % (a, t)
        if isinstance(node.operator, cst.Modulo) and isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString)):
            right = node.right
            values = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
            self._report_first_device(node, values, "`%` formatting of a device tensor", ctx)

    # --- reporting -----------------------------------------------------------------------
    def _report_first_device(self, node, values, what: str, ctx) -> bool:
        for value in values:
            if self._report_if_device(node, value, what, ctx):
                return True
        return False

    def _report_if_device(
        self, node: cst.CSTNode, value_expr: cst.BaseExpression | None, what: str, ctx, tensor_shaped: bool = False
    ) -> bool:
        if value_expr is None:
            return False
        value = ctx.placement(value_expr)
        if not value.maybe_device and not (tensor_shaped and not value.known):
            return False  # host data, or unknown: `if x:` is too common to guess about
        ctx.report(
            self,
            node,
            f"{what}: the value is copied to the host, waiting for all queued GPU work",
            confidence=device_confidence(value),
            placement=value,
        )
        return True


def _only_formatted_on_failure(ctx) -> bool:
    """An error message: `raise ValueError(f"...{t}")`, or a lazy message callback
    `torch._check(cond, lambda: f"...{t}")`. It is formatted only when the check fails, which
    ends the step anyway; the check itself is reported where it reads the tensor."""
    for node in reversed(ctx.stack):
        if isinstance(node, cst.Raise):
            return True
        if isinstance(node, cst.Lambda):
            return isinstance(ctx.parent(node), cst.Arg)
        if isinstance(node, cst.BaseStatement):
            return False
    return False


def _tensor_shaped(expr: cst.BaseExpression, ctx) -> bool:
    """A tested value that is a tensor result whatever its input's placement: `m.any()`,
    `torch.all(p == 1.0)`, `lens.sum() == 0`. With an input of unknown placement the truth
    test is reported at `low` confidence (numpy arrays have `.any()` too)."""
    if isinstance(expr, cst.Comparison):
        return any(_tensor_shaped(e, ctx) for e in (expr.left, *(c.comparator for c in expr.comparisons)))
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        return _tensor_shaped(expr.left, ctx) or _tensor_shaped(expr.right, ctx)
    if not isinstance(expr, cst.Call):
        return False
    qual = ctx.qualname(expr.func) or ""
    if qual.startswith("torch."):
        return qual[6:] in _TENSOR_TESTS
    return method_name(expr) in _TENSOR_TEST_METHODS and not qual.startswith(("numpy.", "math."))


def _python_bool_call(expr: cst.BaseExpression, ctx) -> bool:
    """`torch.equal(a, b)`, `torch.is_floating_point(t)`, `t.is_contiguous()`: the result is
    already a Python value (any readback happened in the call, which is reported itself)."""
    if not isinstance(expr, cst.Call):
        return False
    qual = ctx.qualname(expr.func) or ""
    if qual.startswith("torch."):
        return qual[6:] in _METADATA_PREDICATES
    return method_name(expr) in _METADATA_PREDICATES


def _mask_rule_enabled(ctx) -> bool:
    """`len(t[mask])` is SL401's when SL401 runs (the stall is in the mask indexing): one
    finding per expression. SL203 reports it only when SL401 is not selected."""
    settings = ctx.settings
    return "SL401" in select_codes(settings.select, settings.extend_select, settings.ignore)


def _returns_bool(ctx) -> bool:
    function = ctx.function
    returns = getattr(function, "returns", None)
    annotation = returns.annotation if returns is not None else None
    return isinstance(annotation, cst.Name) and annotation.value == "bool"


def _in_tested_position(node: cst.CSTNode, ctx) -> bool:
    """Whether an enclosing construct already truth-tests `node` (and reports for it)."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Return) and parent.value is node and _returns_bool(ctx):
        return True
    if isinstance(parent, (cst.BooleanOperation,)):
        return True
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return True
    return isinstance(parent, tuple(_TESTS)) and getattr(parent, "test", None) is node


def _looks_like_mask(index: cst.BaseExpression) -> bool:
    """A boolean index visible in the code: a comparison, `~m`, `a & b`, `x.isnan()`, or a
    name that says so (`mask`, `keep_mask`)."""
    if isinstance(index, cst.Comparison):
        return True
    if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.BitInvert):
        return _looks_like_mask(index.expression)
    if isinstance(index, cst.BinaryOperation) and isinstance(index.operator, (cst.BitAnd, cst.BitOr)):
        return _looks_like_mask(index.left) or _looks_like_mask(index.right)
    if isinstance(index, cst.Call):
        name = method_name(index) or (index.func.value if isinstance(index.func, cst.Name) else None)
        return name in _MASK_METHODS
    if isinstance(index, (cst.Name, cst.Attribute)):
        name = index.value if isinstance(index, cst.Name) else index.attr.value
        return "mask" in name.lower()
    return False
