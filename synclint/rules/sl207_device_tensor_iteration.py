from __future__ import annotations

import libcst as cst

from synclint.apis.torch_api import CLAMP_FUNCTIONS, NUMBER_ARGUMENT_FUNCTIONS, NUMBER_ARGUMENT_METHODS
from synclint.rules.base import Rule
from synclint.rules.helpers import DEVICE_ORIGIN_TRIGGERS, code, derived_from_a_vector, device_confidence, tensor_ndim
from synclint.violation import Confidence

# Builtins that read their argument as a Python value (a 0-dim tensor is read back).
_READING_BUILTINS = frozenset({"int", "float", "bool", "range", "str", "print", "round", "abs", "hash", "format"})
_NUMBER_CALLS = frozenset(
    {name.rpartition(".")[2] for name in (*NUMBER_ARGUMENT_FUNCTIONS, *NUMBER_ARGUMENT_METHODS, *CLAMP_FUNCTIONS)}
)


class DeviceTensorIteration(Rule):
    """Flags a Python loop over a 1-D device tensor whose elements are used as Python
    numbers: `for n in lens:`, `enumerate(sizes)`, `zip(t, ...)`, comprehensions, `list(t)`.

    ## What it does
    Reports `for x in t`, `for i, x in enumerate(t)`, `for a, b in zip(t, other)` and
    comprehensions over `t` where `t` may be a 1-D device tensor (its elements are 0-dim
    device tensors) and the loop uses the element as a Python value: an index or slice
    bound, a size or a `clamp` bound, `int()`/`float()`/`range()`/`print()`, an f-string,
    or a comparison in a test. Also `list(t)` / `tuple(t)` of a 1-D device tensor. The
    tensor is 1-D when the code shows it (`x.unique()`, `torch.arange`, an element of a
    `nonzero()` result, `torch.zeros(n, ...)`) or, at `medium` confidence at most, when its
    name says it is a per-request vector (`seq_lens`, `sizes`, `token_ids`, `indptr`), or the
    name it was made from by calls that keep its shape does (`tokens = sampled_ids.to(device)`).

    ## Why it stalls
    Iterating a tensor gives 0-dim tensors on its device; each use of one as a Python
    number reads it back with `aten._local_scalar_dense` (what `.item()` runs), which waits
    for every queued kernel, once per element. Measured on an H200: iterating a device
    tensor (`for n in lens:`) waited for the whole GPU queue once per element.

    ## Example
    ```python
    import torch

    def split_requests(hidden, query_lens: list[int], device):
        lens = torch.tensor(query_lens, device=device)
        out = []
        start = 0
        for n in lens:
            out.append(hidden[start:start + n])
            start += n
        return out
    ```

    ## Use instead
    Read the tensor once (`t.tolist()`), or iterate the host data it came from:
    ```python
    import torch

    def split_requests(hidden, query_lens: list[int], device):
        out = []
        start = 0
        for n in query_lens:
            out.append(hidden[start:start + n])
            start += n
        return out
    ```

    ## Fix safety
    No fix: `for n in t.tolist()` changes the element from a 0-dim tensor to a Python
    number, which changes what tensor arithmetic on it produces (dtype, device).

    ## Known false positives
    A loop whose uses of the element are themselves reported (an index `w[n]` by SL208, a
    conversion `int(n)` by SL203): the loop is the place to fix them all at once. A tensor
    named like a vector that is in fact 2-D (then the elements are rows, and using a row as
    a number raises).
    """

    code = "SL207"
    name = "device-tensor-iteration"
    summary = "a Python loop over a 1-D device tensor reads each element back"
    triggers = ("for", "list", "tuple", *DEVICE_ORIGIN_TRIGGERS)
    device_only = True
    device_sites = ("loop",)
    waits_in_loop_body = True

    def visit_For(self, node: cst.For, ctx) -> None:
        for target, iterable in _loop_parts(node.target, node.iter):
            if self._check(node.iter, iterable, ctx, lambda t=target: _used_as_number(t, node.body)):
                return

    def visit_CompFor(self, node: cst.CompFor, ctx) -> None:
        comp = ctx.parent(node)
        while isinstance(comp, cst.CompFor):
            comp = ctx.parent(comp)
        parts = [getattr(comp, "elt", None), getattr(comp, "key", None), getattr(comp, "value", None), *node.ifs]
        body = [p for p in parts if p is not None]
        for target, iterable in _loop_parts(node.target, node.iter):
            if self._check(node.iter, iterable, ctx, lambda t=target: any(_used_as_number(t, b) for b in body)):
                return

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in ("list", "tuple") or func.value in ctx.imports.aliases:
            return
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return
        iterable = node.args[0].value
        value = ctx.placement(iterable)
        if not value.maybe_device or tensor_ndim(iterable, ctx) != 1:
            return
        ctx.report(
            self,
            node,
            f"`{func.value}()` of a 1-D device tensor makes 0-dim device tensors; use `.tolist()` to read it once",
            confidence=min(device_confidence(value), Confidence.MEDIUM),
            placement=value,
        )

    def _check(self, report_node, iterable, ctx, uses) -> bool:
        value = ctx.placement(iterable)
        if not value.maybe_device:
            return False
        ndim = tensor_ndim(iterable, ctx)
        confidence = device_confidence(value)
        if ndim is None and derived_from_a_vector(iterable, ctx):
            confidence = min(confidence, Confidence.MEDIUM)
        elif ndim != 1:
            return False
        if not uses():
            return False
        ctx.report(
            self,
            report_node,
            f"iterating the device tensor `{code(iterable)}` reads each element back when it is used as a number"
            " (one wait for the GPU per element); iterate `.tolist()` once",
            confidence=confidence,
            placement=value,
        )
        return True


def _loop_parts(target, iterable):
    """(target name, iterated tensor expression) pairs: `x in t`, `i, x in enumerate(t)`,
    `a, b in zip(t, u)`."""
    if isinstance(target, cst.Name):
        return [(target.value, iterable)]
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call):
        return []
    func = iterable.func
    names = [e.value for e in target.elements]
    args = [a.value for a in iterable.args if a.keyword is None and not a.star]
    if not isinstance(func, cst.Name) or len(args) != len(iterable.args):
        return []
    if func.value == "enumerate" and len(names) == 2 and len(args) == 1 and isinstance(names[1], cst.Name):
        return [(names[1].value, args[0])]
    if func.value == "zip" and len(names) == len(args):
        return [(n.value, a) for n, a in zip(names, args) if isinstance(n, cst.Name)]
    return []


def _used_as_number(name: str, body: cst.CSTNode) -> bool:
    """Whether `body` uses `name` where Python needs its value: an index or slice bound, an
    argument of a reading builtin or of a call that reads numbers, an f-string, a comparison
    (whose result is then tested)."""
    finder = _NumberUse(name)
    body.visit(finder)
    return finder.found


class _NumberUse(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def _mentions(self, expr) -> bool:
        if expr is None:
            return False
        if isinstance(expr, cst.Name):
            return expr.value == self.name
        if isinstance(expr, cst.BinaryOperation):
            return self._mentions(expr.left) or self._mentions(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self._mentions(expr.expression)
        return False

    def visit_FunctionDef(self, node) -> bool:
        return False  # a nested def does not run per element

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        s = node.slice
        if isinstance(s, cst.Index):
            self.found |= self._mentions(s.value)
        else:
            self.found |= any(self._mentions(b) for b in (s.lower, s.upper, s.step))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        if called in _READING_BUILTINS or called in _NUMBER_CALLS:
            for arg in node.args:
                value = arg.value
                values = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
                self.found |= any(self._mentions(v) for v in values)

    def visit_FormattedStringExpression(self, node) -> None:
        self.found |= self._mentions(node.expression)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.found |= self._mentions(node.left) or any(self._mentions(c.comparator) for c in node.comparisons)
