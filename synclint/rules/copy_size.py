"""An upper bound on the bytes of a host tensor, read from the shape the code gives it.

A pageable `non_blocking` host-to-device copy blocks the host only from ~4 MiB (SL102);
smaller ones do not. Most such copies move metadata whose shape the code states in counts
that are small in any model server: one value per layer (`torch.ones(num_layers)`), per
request (`[... for r in reqs]`, `range(batch_size)`, a list that one loop over the
requests appends one number to per pass), per draft token of speculative
decoding (`mask.reshape(bs, draft_token_num, draft_token_num)`), or a literal size
(`torch.zeros(0)`). Each count gets a generous nominal maximum; the product of the
dimensions times the element size is an upper bound on the bytes copied. A dimension that
is not such a count (`hidden_size`, `num_tokens`, an image's height) makes the size
unknown: the copy stays reported.

Shapes are followed through local assignments, views and conversions (`.cpu()`, `.clone()`,
`.reshape()`, `torch.from_numpy()`), integer indexing (`mask[i]` drops one dimension), and
through every `self.x = ...` of the enclosing class (all of them must be bounded)."""

from __future__ import annotations

import math

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.helpers import _assignment_index, _binding, kwarg, positional

# Nominal maxima of the counts (generous: real servers run far below them).
LAYERS = ("layers", 1024)
REQUESTS = ("requests", 4096)
DRAFT_TOKENS = ("draft tokens", 64)
# Bytes below which a pageable non_blocking copy was measured not to block (1 MiB copies
# did not stall on an H200; ~4 MiB ones did).
SMALL_BYTES = 1 << 20

_COUNT_WORDS = frozenset({"num", "n", "count", "total", "max", "size", "len"})
_LAYER_WORDS = frozenset({"layer", "layers"})
_REQUEST_WORDS = frozenset({"reqs", "requests", "seqs", "sequences"})
_DRAFT_WORDS = frozenset({"draft", "drafts", "speculative", "spec"})
# An id or index of a layer is below the layer count (`max(l.layer_id for l in ls) + 1`).
_ID_WORDS = frozenset({"id", "idx", "ids", "index"})

_TORCH_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})
_NUMPY_FACTORIES = frozenset({"zeros", "ones", "empty", "full"})
_WRAPPERS = frozenset(
    {"torch.tensor", "torch.as_tensor", "torch.asarray", "torch.from_numpy", "numpy.array", "numpy.asarray", "numpy.ascontiguousarray"}
)
# Methods whose result has the receiver's shape (moves, copies, conversions).
_SHAPE_KEEPING = frozenset(
    {"cpu", "cuda", "to", "clone", "contiguous", "detach", "pin_memory", "numpy", "copy", "float", "half",
     "bfloat16", "double", "int", "long", "bool", "short", "byte", "char", "astype", "type"}
)  # fmt: skip
_ITEMSIZE = {
    "bool": 1, "uint8": 1, "int8": 1, "byte": 1, "char": 1, "bool_": 1,
    "float16": 2, "half": 2, "bfloat16": 2, "int16": 2, "short": 2,
    "float32": 4, "float": 4, "int32": 4, "int": 4, "uint32": 4,
    "float64": 8, "double": 8, "int64": 8, "long": 8, "uint64": 8,
}  # fmt: skip
_DEFAULT_ITEMSIZE = 8


def count_bound(name: str) -> tuple[str, int] | None:
    """The kind and nominal maximum of a count named `name`: `num_layers`, `layer_id`,
    `bs`, `batch_size`, `num_reqs`, `draft_token_num`, `num_speculative_tokens`."""
    words = set(name.lower().strip("_").split("_"))
    counted = bool(words & _COUNT_WORDS)
    if words & _LAYER_WORDS and (counted or words & _ID_WORDS or words <= _LAYER_WORDS):
        return LAYERS
    if words & _DRAFT_WORDS and (counted or words & {"token", "tokens", "steps"}) and not words & _ID_WORDS:
        return DRAFT_TOKENS
    if "bs" in words or ("batch" in words and counted):
        return REQUESTS
    if words & _REQUEST_WORDS and (counted or words <= _REQUEST_WORDS):
        return REQUESTS
    return None


class _Shape:
    __slots__ = ("dims", "itemsize", "why")

    def __init__(self, dims: tuple[int, ...], itemsize: int | None, why: str) -> None:
        self.dims = dims
        self.itemsize = itemsize
        self.why = why

    @property
    def nbytes(self) -> int:
        return math.prod(self.dims) * (self.itemsize or _DEFAULT_ITEMSIZE)


def bounded_size(expr: cst.BaseExpression, ctx) -> str | None:
    """Why the host data `expr` is below `SMALL_BYTES`, or None when its shape is not
    bounded by small counts."""
    shape = _Sizer(ctx).shape(expr)
    if shape is None or shape.nbytes > SMALL_BYTES:
        return None
    return f"its shape is bounded by {shape.why}: at most {_human(shape.nbytes)}"


def _human(nbytes: int) -> str:
    return f"{nbytes} B" if nbytes < 1024 else f"{nbytes // 1024} KiB"


def _minus_one(expr) -> bool:
    return (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
        and expr.expression.value == "1"
    )


def _dtype_itemsize(expr: cst.BaseExpression | None) -> int | None:
    if isinstance(expr, cst.Attribute):
        return _ITEMSIZE.get(expr.attr.value)
    if isinstance(expr, cst.Name):
        return {"bool": 1, "int": 8, "float": 8}.get(expr.value)
    return None


class _Sizer:
    """Follows one expression to a shape; `local` is False while reading a value assigned
    in another method (its names are then read by their words only, never by bindings of
    the function being linted)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.depth = 0

    # --- shapes ------------------------------------------------------------------------
    def shape(self, expr, local: bool = True, before: int | None = None) -> _Shape | None:
        if self.depth > 12:
            return None
        self.depth += 1
        try:
            return self._shape(expr, local, before)
        finally:
            self.depth -= 1

    def _shape(self, expr, local: bool, before: int | None) -> _Shape | None:
        if isinstance(expr, cst.ListComp):
            return self._list_comp(expr, local, before)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, local, before)
        if isinstance(expr, cst.Call):
            return self._call(expr, local, before)
        if isinstance(expr, cst.Name) and local:
            found = _binding(expr.value, self.ctx, before)
            if found is not None and isinstance(found[1], cst.List) and not found[1].elements:
                return self._appended(expr.value, local, before)
            if found is not None and found[1] is not None and not isinstance(found[1], (cst.List, cst.Tuple)):
                return self.shape(found[1], local, found[0])
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return self._field(expr.attr.value)
        return None

    def _call(self, call: cst.Call, local: bool, before: int | None) -> _Shape | None:
        qual = self.ctx.qualname(call.func) or ""
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        module = qual.rpartition(".")[0]
        if (module == "torch" and name in _TORCH_FACTORIES) or (module == "numpy" and name in _NUMPY_FACTORIES):
            args = positional(call)
            if not args or any(a.star for a in call.args) or kwarg(call, "size") is not None:
                return None
            first = args[0].value
            if isinstance(first, (cst.Tuple, cst.List)):
                if any(isinstance(e, cst.StarredElement) for e in first.elements):
                    return None
                shape_exprs = [e.value for e in first.elements]
            else:  # `torch.zeros(a, b)`; `torch.full(n, v)` and numpy take the shape first
                shape_exprs = [first] if name == "full" or module == "numpy" else [a.value for a in args]
            dims = self._dims(shape_exprs, local, before)
            dtype = kwarg(call, "dtype")
            if dtype is None and len(args) > (1 if name != "full" else 2) and module == "numpy":
                dtype = args[-1]
            itemsize = _dtype_itemsize(dtype.value if dtype is not None else None)
            if dims is None:
                return None
            return _Shape(dims[0], itemsize, f"`{name}({dims[1]})`")
        if qual in _WRAPPERS and call.args:
            inner = self.shape(call.args[0].value, local, before)
            dtype = kwarg(call, "dtype")
            if inner is not None and dtype is not None:
                return _Shape(inner.dims, _dtype_itemsize(dtype.value), inner.why)
            return inner
        if not isinstance(func, cst.Attribute) or qual:
            return None
        method = func.attr.value
        if method in ("reshape", "view") and call.args:
            args = [a.value for a in positional(call)]
            if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
                args = [e.value for e in args[0].elements]
            base = self.shape(func.value, local, before)
            starred = any(a.star for a in call.args)
            dims = None if starred or any(_minus_one(a) for a in args) else self._dims(args, local, before)
            if dims is not None:
                return _Shape(dims[0], base.itemsize if base is not None else None, f"`{method}({dims[1]})`")
            # `x.view(-1, 1)`, `x.view(*shape)`: as many elements as `x`
            return None if base is None else _Shape((math.prod(base.dims),), base.itemsize, base.why)
        if method in _SHAPE_KEEPING:
            base = self.shape(func.value, local, before)
            if base is None:
                return None
            dtype = kwarg(call, "dtype")
            itemsize = _ITEMSIZE.get(method, base.itemsize) if method not in ("to", "astype", "type") else None
            if dtype is not None:
                itemsize = _dtype_itemsize(dtype.value)
            return _Shape(base.dims, itemsize, base.why)
        if method in ("flatten", "ravel", "t", "transpose", "permute", "squeeze", "unsqueeze", "flip"):
            # as many elements as the receiver (the dimensions move: only their product is kept)
            base = self.shape(func.value, local, before)
            return None if base is None else _Shape((math.prod(base.dims),), base.itemsize, base.why)
        return None

    def _subscript(self, expr: cst.Subscript, local: bool, before: int | None) -> _Shape | None:
        """`x[i]` drops a dimension, `x[:n]` keeps its bound; anything else (a tensor or
        list index, `...`, `None`) gives up."""
        base = self.shape(expr.value, local, before)
        if base is None:
            return None
        dropped = 0
        for element in expr.slice:
            if isinstance(element.slice, cst.Slice):
                continue
            index = element.slice.value
            if isinstance(index, cst.Integer) or (local and isinstance(index, cst.Name) and self.ctx.placement(index).is_(Place.SCALAR)):
                dropped += 1
                continue
            return None
        if len(expr.slice) > len(base.dims):
            return None
        dims = tuple(d for k, d in enumerate(base.dims) if not (k < len(expr.slice) and not isinstance(expr.slice[k].slice, cst.Slice)))
        return _Shape(dims, base.itemsize, base.why + (" with an element taken" if dropped else ""))

    def _list_comp(self, expr: cst.ListComp, local: bool, before: int | None) -> _Shape | None:
        """`[f(i) for i in range(num_layers)]`, `[r.top_k for r in reqs]`: one number per
        counted thing (a nested list or a comprehension of tensors is not one number)."""
        if expr.for_in.inner_for_in is not None or isinstance(expr.elt, (cst.List, cst.ListComp, cst.Tuple)):
            return None
        dim = self._iterable_count(expr.for_in.iter, local, before)
        if dim is None:
            return None
        return _Shape((dim[0],), None, f"a list with one value per element of {dim[1]}")

    def _appended(self, name: str, local: bool, before: int | None) -> _Shape | None:
        """`sizes = []`, then `sizes.append(n)` once per pass of one loop over counted things
        (`for i, req in enumerate(batch.reqs):`): one number per counted thing. Any other
        change of the list (`extend`, `+=`, an item set, an append outside that loop or in a
        loop inside it) leaves the size unknown."""
        function = self.ctx.function
        if function is None:
            return None
        appends = _Appends(name)
        function.body.visit(appends)
        loops = {id(loop): loop for loop in appends.loops}
        if appends.other or len(loops) != 1 or None in appends.loops:
            return None
        if not all(_number_like(value, self.ctx) for value in appends.values):
            return None
        loop = next(iter(loops.values()))
        dim = self._iterable_count(loop.iter, local, before)
        if dim is None:
            return None
        return _Shape((dim[0],), None, f"a list with one value appended per element of {dim[1]}")

    def _iterable_count(self, iterable, local: bool, before: int | None) -> tuple[int, str] | None:
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate":
            args = positional(iterable)
            return self._iterable_count(args[0].value, local, before) if len(args) == 1 else None
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range":
            args = positional(iterable)
            if len(args) == 1:
                found = self._dim(args[0].value, local, before)
                return None if found is None else (found[0], f"`range({found[2]})`")
            return None
        name = iterable.attr.value if isinstance(iterable, cst.Attribute) else getattr(iterable, "value", None)
        if isinstance(iterable, (cst.Name, cst.Attribute)) and isinstance(name, str):
            found = count_bound(name)
            if found is not None:
                return found[1], f"`{name}` ({found[0]} <= {found[1]})"
        return None

    def _field(self, attr: str) -> _Shape | None:
        """`self.x`: the largest of every value the enclosing class assigns it; None when
        one of them is not bounded."""
        values = _field_assignments(self.ctx, attr)
        if not values:
            return None
        current = self.ctx.function
        index = _assignment_index(self.ctx)
        shapes = []
        for function, assign, value in values:
            # a value assigned in this function reads its names as they were at that line
            here = function is current and id(assign) in index.order
            shape = self.shape(value, local=here, before=index.order[id(assign)] if here else None)
            if shape is None:
                return None
            shapes.append(shape)
        largest = max(shapes, key=lambda s: s.nbytes)
        every = "its only assignment" if len(shapes) == 1 else f"the largest of its {len(shapes)} assignments in the class"
        return _Shape(largest.dims, largest.itemsize, f"`self.{attr}` ({every}: {largest.why})")

    # --- dimensions --------------------------------------------------------------------
    def _dims(self, exprs, local: bool, before: int | None) -> tuple[tuple[int, ...], str] | None:
        dims, texts = [], []
        for expr in exprs:
            found = self._dim(expr, local, before)
            if found is None:
                return None
            dims.append(found[0])
            texts.append(found[2])
        return tuple(dims), ", ".join(texts)

    def _dim(self, expr, local: bool, before: int | None, _depth: int = 0) -> tuple[int, str, str] | None:
        """(nominal maximum, what it counts, how it reads) of one dimension."""
        if _depth > 6:
            return None
        if isinstance(expr, cst.Integer):
            value = int(expr.evaluated_value)
            return value, "literal", str(value)
        if isinstance(expr, (cst.Name, cst.Attribute)):
            name = expr.value if isinstance(expr, cst.Name) else expr.attr.value
            found = count_bound(name)
            if found is not None:
                return found[1], found[0], f"{name} <= {found[1]}"
            if isinstance(expr, cst.Name) and local:
                bound = _binding(expr.value, self.ctx, before)
                if bound is not None and bound[1] is not None:
                    inner = self._dim(bound[1], local, bound[0], _depth + 1)
                    return None if inner is None else (inner[0], inner[1], f"{name} <= {inner[0]}")
            return None
        if isinstance(expr, cst.BinaryOperation):
            left = self._dim(expr.left, local, before, _depth + 1)
            right = self._dim(expr.right, local, before, _depth + 1)
            if left is None or right is None:
                return None
            op = expr.operator
            if isinstance(op, cst.Add):
                value = left[0] + right[0]
            elif isinstance(op, cst.Multiply):
                value = left[0] * right[0]
            elif isinstance(op, (cst.Subtract, cst.FloorDivide)):
                value = left[0]
            else:
                return None
            kind = left[1] if left[1] != "literal" else right[1]
            return value, kind, f"{value}"
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("max", "min", "len", "int"):
            args = [a.value for a in expr.args]
            if len(args) == 1 and isinstance(args[0], (cst.GeneratorExp, cst.ListComp)):
                return self._dim(args[0].elt, local, before, _depth + 1)
            if expr.func.value == "len" and len(args) == 1:
                found = self._iterable_count(args[0], local, before)
                return None if found is None else (found[0], found[1], f"len(...) <= {found[0]}")
            found = [self._dim(a, local, before, _depth + 1) for a in args]
            known = [f for f in found if f is not None]
            if expr.func.value == "min" and known:
                return min(known)
            if known and len(known) == len(found):
                return max(known)
        return None


# What an appended value must be for the list to hold one number per append: a number, a
# loop's index, a count, an index, a length or an offset by its name (`num_rows`, `req_idx`,
# `seq_len`, `start`), `int(...)` / `len(...)`, or arithmetic of them; never a list, a
# tuple, a field of unsaid meaning (`req.token_ids`) or a call that builds anything.
_NUMBER_CALLS = frozenset({"int", "len", "float", "min", "max"})
_NUMBER_WORDS = frozenset({
    "num", "n", "count", "len", "lens", "length", "size", "idx", "index", "id", "offset", "start", "end",
    "width", "pos", "position", "rank", "step", "i", "j", "k",
})  # fmt: skip


class _Appends(cst.CSTVisitor):
    """The loops around each `name.append(x)` of a function (None: not in exactly one `for`
    loop), and whether the function changes the list any other way."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loops: list[cst.For | None] = []
        self.values: list[cst.BaseExpression] = []
        self.other = False
        self._open: list[cst.CSTNode] = []

    def visit_For(self, node: cst.For) -> None:
        self._open.append(node)

    def leave_For(self, node: cst.For) -> None:
        self._open.pop()

    def visit_While(self, node: cst.While) -> None:
        self._open.append(node)

    def leave_While(self, node: cst.While) -> None:
        self._open.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's loops are its own

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.name:
            if func.attr.value != "append" or len(node.args) != 1 or node.args[0].star:
                self.other = True
                return
            single = len(self._open) == 1 and isinstance(self._open[0], cst.For)
            self.loops.append(self._open[0] if single else None)
            self.values.append(node.args[0].value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.other = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == self.name:
            self.other = True


def _number_like(value: cst.BaseExpression, ctx, depth: int = 0) -> bool:
    """Whether an appended `value` is one number (`_NUMBER_WORDS`); a local name is read
    through its latest binding before the statement being visited."""
    if depth > 3:
        return False
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _number_like(value.expression, ctx, depth + 1)
    if isinstance(value, cst.BinaryOperation):
        return _number_like(value.left, ctx, depth + 1) and _number_like(value.right, ctx, depth + 1)
    if isinstance(value, cst.Call):
        return isinstance(value.func, cst.Name) and value.func.value in _NUMBER_CALLS
    if isinstance(value, (cst.Name, cst.Attribute)):
        name = value.value if isinstance(value, cst.Name) else value.attr.value
        if set(name.lower().strip("_").split("_")) & _NUMBER_WORDS:
            return True
        if isinstance(value, cst.Name):
            bound = _binding(name, ctx)
            return bound is not None and bound[1] is not None and _number_like(bound[1], ctx, depth + 1)
    return False


def _field_assignments(ctx, attr: str) -> list[tuple[cst.FunctionDef, cst.CSTNode, cst.BaseExpression]] | None:
    """Every `self.<attr> = value` in the methods of the class enclosing the function being
    linted, with its method; None when one of them is not a plain assignment (`+=`, a
    tuple target) or the function is not a method."""
    chain = ctx.chain
    if len(chain) < 2 or not isinstance(chain[-1], cst.FunctionDef) or not isinstance(chain[-2], cst.ClassDef):
        return None
    class_def = chain[-2]
    cache = ctx.__dict__.setdefault("_field_assignments", {})
    key = (id(class_def), attr)
    if key not in cache:
        collector = _FieldCollector(attr)
        for statement in class_def.body.body:
            if isinstance(statement, cst.FunctionDef):
                collector.function = statement
                statement.visit(collector)
        cache[key] = None if collector.unknown else collector.values
    return cache[key]


class _FieldCollector(cst.CSTVisitor):
    def __init__(self, attr: str) -> None:
        self.attr = attr
        self.function: cst.FunctionDef | None = None
        self.values: list[tuple[cst.FunctionDef, cst.CSTNode, cst.BaseExpression]] = []
        self.unknown = False

    def _is_field(self, target) -> bool:
        return (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
            and target.attr.value == self.attr
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if self._is_field(target.target):
                self.values.append((self.function, node, node.value))
            elif isinstance(target.target, (cst.Tuple, cst.List)) and any(self._is_field(e.value) for e in target.target.elements):
                self.unknown = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self._is_field(node.target) and node.value is not None:
            self.values.append((self.function, node, node.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._is_field(node.target):
            self.unknown = True

    def visit_Call(self, node: cst.Call) -> None:
        # `setattr(self, "x", v)`: a value not seen
        if isinstance(node.func, cst.Name) and node.func.value == "setattr":
            self.unknown = True
