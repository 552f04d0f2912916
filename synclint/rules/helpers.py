"""Small matchers the rule files share (argument lookup, method calls, fix building)."""

from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.analysis.sources import is_true, kwarg, positional  # noqa: F401 - the rules' matchers too
from synclint.violation import Confidence


def method_name(call: cst.Call) -> str | None:
    """`x.item()` -> "item"; None for calls that are not method calls."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def split_helper_path(path: str) -> tuple[str, str]:
    """"pkg.mod.func" -> ("pkg.mod", "func")."""
    module, _, name = path.rpartition(".")
    return module, name


def weakest(*confidences: Confidence) -> Confidence:
    return min(confidences)


def device_confidence(value) -> Confidence:
    """How sure we are that `value` (a Placement) is on the device: its own confidence when
    proven, at most MEDIUM when it may also be on the host, LOW when unknown."""
    if value.on_device:
        return value.confidence
    if value.maybe_device:
        return min(value.confidence, Confidence.MEDIUM)
    return Confidence.LOW


# --- indexing and dtype matchers (SL3xx, SL4xx) -------------------------------------------

# Every way the placement analysis can prove or suspect that a value lives on the device
# needs one of these words in the source: `device=`, `.cuda()`, `"cuda:0"`, `.to(...)`, a
# registered buffer, a parameter named like a device, a `torch.Tensor` annotation (host or
# device), an nn.Module's `weight`/`bias` or `nn.` member. Rules that report only values
# that may be on the device use them as their prefilter triggers (tests/test_rules_sl3*
# checks them against the analysis' own tables).
DEVICE_ORIGIN_TRIGGERS = (
    "device", "dev", "cuda", "to", "register_buffer", "cuda_device", "gpu_device",
    "target_device", "torch_device", "current_device",
    "Tensor", "LongTensor", "FloatTensor", "BoolTensor", "IntTensor",
    "nn", "Parameter", "weight", "bias",
)

_INTEGER_DTYPES = frozenset({"long", "int", "int64", "int32", "int16", "int8", "uint8", "short"})
_BOOL_METHODS = frozenset(
    {"bool", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "logical_and",
     "logical_or", "logical_not", "logical_xor", "isin", "any", "all", "isclose", "isneginf", "isposinf"}
)
_INTEGER_METHODS = frozenset({"long", "int", "argsort", "argmax", "argmin", "nonzero", "argwhere"})
# Methods whose result has the receiver's dtype (moves, copies, views).
_DTYPE_KEEPING_METHODS = frozenset(
    {"cuda", "cpu", "pin_memory", "contiguous", "clone", "detach", "flatten", "view", "reshape",
     "squeeze", "unsqueeze", "expand", "repeat", "t", "transpose", "permute"}
)
_INTEGER_FACTORIES = frozenset({"arange", "randperm", "randint", "argsort", "argmax", "argmin", "searchsorted", "bucketize"})


def _scope_body(ctx) -> cst.CSTNode:
    return ctx.function or ctx.module


class _AssignmentIndex:
    """Source-ordered record of one scope: every statement's position, every `name = value`,
    and every statement that may change a name's value in place (`name.append(...)`,
    `name[i] = ...`, `name += ...`). Nested functions and classes are their own scopes.

    A walk over statements only (no expression traversal): it costs a small fraction of a
    libcst visitor pass over the same scope."""

    def __init__(self, scope: cst.CSTNode) -> None:
        self.order: dict[int, int] = {}
        self.bindings: dict[str, list[tuple[int, cst.BaseExpression | None]]] = {}
        self.mutations: dict[str, list[int]] = {}
        # the positions of `name op= value`, which bind `name` to a value of its own dtype
        self.updated_in_place: set[int] = set()
        # (name, position of its `for`) -> the iterable whose elements the name takes
        self.loop_elements: dict[tuple[str, int], cst.BaseExpression] = {}
        self._suite(scope.body)  # a Module's body is a sequence, a def's an IndentedBlock

    def _suite(self, suite) -> None:
        if suite is None:
            return
        statements = suite.body if isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite)) else suite
        for statement in statements:
            self._statement(statement)

    def _mark(self, node: cst.CSTNode) -> int:
        position = len(self.order)
        self.order[id(node)] = position
        return position

    def _statement(self, stmt) -> None:
        position = self._mark(stmt)
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                self._small(small, self._mark(small))
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self._bind(stmt.name.value, None, position)
        elif isinstance(stmt, cst.BaseSmallStatement):
            self._small(stmt, position)
        else:
            if isinstance(stmt, cst.For):
                self._target(stmt.target, None, position)
                self._loop_elements(stmt.target, stmt.iter, position)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        self._target(item.asname.name, None, position)
            self._suite(getattr(stmt, "body", None))
            for handler in getattr(stmt, "handlers", ()):
                self._suite(handler.body)
            orelse = getattr(stmt, "orelse", None)
            if isinstance(orelse, cst.If):
                self._statement(orelse)
            elif orelse is not None:
                self._suite(orelse.body)
            final = getattr(stmt, "finalbody", None)
            if final is not None:
                self._suite(final.body)

    def _loop_elements(self, target, iterable, position: int) -> None:
        """`for x in it`, `for i, x in enumerate(it)`, `for a, b in zip(p, q)`."""
        if isinstance(target, cst.Name):
            self.loop_elements[(target.value, position)] = iterable
            return
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call):
            return
        func = iterable.func
        names = [e.value for e in target.elements]
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if not isinstance(func, cst.Name) or len(args) != len(iterable.args):
            return
        if func.value == "enumerate" and len(names) == 2 and len(args) == 1 and isinstance(names[1], cst.Name):
            self.loop_elements[(names[1].value, position)] = args[0]
        elif func.value == "zip" and len(names) == len(args):
            for name, arg in zip(names, args):
                if isinstance(name, cst.Name):
                    self.loop_elements[(name.value, position)] = arg

    def _small(self, small, position: int) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self._target(target.target, small.value, position)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self._target(small.target, small.value, position)
        elif isinstance(small, cst.AugAssign):
            self._target(small.target, None, position)
            if isinstance(small.target, cst.Name):
                self.updated_in_place.add(position)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                self.mutations.setdefault(func.value.value, []).append(position)

    def _bind(self, name: str, value, position: int) -> None:
        self.bindings.setdefault(name, []).append((position, value))

    def _target(self, target, value, position: int) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, value, position)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                inner = element.value
                self._target(inner.value if isinstance(inner, cst.StarredElement) else inner, None, position)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            head = target.value
            while isinstance(head, (cst.Subscript, cst.Attribute)):
                head = head.value
            if isinstance(head, cst.Name):
                self.mutations.setdefault(head.value, []).append(position)


def _assignment_index(ctx) -> _AssignmentIndex:
    scope = _scope_body(ctx)
    cache = ctx.__dict__.setdefault("_assignment_indexes", {})
    index = cache.get(id(scope))
    if index is None:
        index = _AssignmentIndex(scope)
        cache[id(scope)] = index
    return index


def _position_of_current(ctx, index: _AssignmentIndex) -> int | None:
    for node in reversed(ctx.stack):
        position = index.order.get(id(node))
        if position is not None:
            return position
    return None


def bound_value(name: str, ctx, before: int | None = None) -> cst.BaseExpression | None:
    """The value of the latest `name = value` before the statement being visited (or before
    position `before`), in the enclosing function (or module). None when the name is not
    assigned a plain value there."""
    found = _binding(name, ctx, before)
    return found[1] if found else None


def _binding(name: str, ctx, before: int | None = None) -> tuple[int, cst.BaseExpression | None] | None:
    index = _assignment_index(ctx)
    here = _position_of_current(ctx, index) if before is None else before
    if here is None:
        return None
    earlier = [(position, value) for position, value in index.bindings.get(name, ()) if position < here]
    return earlier[-1] if earlier else None


def single_unmutated_binding(name: str, ctx) -> cst.BaseExpression | None:
    """The value of `name` when the scope binds it exactly once, before the statement being
    visited, and never changes it in place (no method call on it, no item or attribute
    assignment): then its value at this statement is exactly that expression's result."""
    index = _assignment_index(ctx)
    here = _position_of_current(ctx, index)
    bindings = index.bindings.get(name, ())
    if here is None or len(bindings) != 1 or index.mutations.get(name):
        return None
    position, value = bindings[0]
    return value if position < here else None


def _dtype_name(expr: cst.BaseExpression | None) -> str | None:
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "torch":
        return expr.attr.value
    return None


def dtype_kind(expr: cst.BaseExpression, ctx, _depth: int = 0, _at: int | None = None) -> str | None:
    """"bool" or "integer" when the tensor's dtype is visible in the code, else None.

    Looks through names bound once in the scope (`mask = x > 0; y[mask]`) a few levels deep."""
    if _depth > 4:
        return None
    if isinstance(expr, cst.Comparison):
        return "bool"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return dtype_kind(expr.expression, ctx, _depth + 1, _at)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        left = dtype_kind(expr.left, ctx, _depth + 1, _at)
        right = dtype_kind(expr.right, ctx, _depth + 1, _at)
        return "bool" if "bool" in (left, right) else left if left == right else None
    if isinstance(expr, cst.Name):
        found = _binding(expr.value, ctx, _at)
        if found is None:
            return None
        position, value = found
        # Read what the name was bound to before: after `mask &= lens > 0` (an in-place update
        # keeps the tensor's dtype) and after `mask = None` on a branch (where it holds None
        # there is no index to copy, and elsewhere it holds its earlier value).
        if (value is None and position in _assignment_index(ctx).updated_in_place) \
                or (isinstance(value, cst.Name) and value.value == "None"):
            return dtype_kind(expr, ctx, _depth + 1, position)
        if value is None:
            return None
        # The bound value is read where it was bound (`m = m.to(d)` looks further back).
        return dtype_kind(value, ctx, _depth + 1, position)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        # Every assignment whose dtype is visible must agree (`self.free = self.free[n:]`
        # says nothing new).
        kinds = {dtype_kind(value, ctx, _depth + 1, -1) for value in self_attribute_values(expr.attr.value, ctx)} - {None}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(expr, cst.Attribute):
        # `info.weight_indices`: what the file gives a field of that name (`Info(weight_indices=...)`).
        kinds = {dtype_kind(value, ctx, _depth + 1, -1) for value in module_field_values(expr.attr.value, ctx)} - {None}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(expr, cst.Subscript) and all(
        isinstance(e.slice, cst.Slice)
        or is_int_literal(e.slice.value)
        or ctx.placement(e.slice.value).is_(Place.SCALAR)
        for e in expr.slice
    ):
        return dtype_kind(expr.value, ctx, _depth + 1, _at)  # a basic-indexing view keeps the dtype
    if isinstance(expr, cst.Call):
        dtype = _dtype_name(getattr(kwarg(expr, "dtype"), "value", None))
        name = method_name(expr)
        qual = ctx.qualname(expr.func) or ""
        if name == "to":
            args = positional(expr)
            for candidate in [a.value for a in args] + [getattr(kwarg(expr, "dtype"), "value", None)]:
                target = _dtype_name(candidate)
                if target == "bool":
                    return "bool"
                if target in _INTEGER_DTYPES:
                    return "integer"
            return dtype_kind(expr.func.value, ctx, _depth + 1, _at)
        if dtype == "bool":
            return "bool"
        if dtype in _INTEGER_DTYPES:
            return "integer"
        short = qual[6:] if qual.startswith("torch.") else name
        if short in _BOOL_METHODS:
            return "bool"
        if short in _INTEGER_METHODS or short in _INTEGER_FACTORIES:
            return "integer"
        if qual in ("torch.tensor", "torch.as_tensor") and expr.args:
            return literal_kind(expr.args[0].value)
        if name in _DTYPE_KEEPING_METHODS:
            return dtype_kind(expr.func.value, ctx, _depth + 1, _at)
    return None


def literal_kind(expr: cst.BaseExpression) -> str | None:
    """"integer" for a list/tuple literal of int literals, "bool" for one of bools."""
    if not isinstance(expr, (cst.List, cst.Tuple)) or not expr.elements:
        return None
    values = [e.value for e in expr.elements]
    if all(is_int_literal(v) for v in values):
        return "integer"
    if all(isinstance(v, cst.Name) and v.value in ("True", "False") for v in values):
        return "bool"
    return None


def is_int_literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, cst.Integer)


def python_list_index(expr: cst.BaseExpression, ctx) -> bool:
    """The index is a Python list (advanced indexing: PyTorch builds a CPU index tensor and
    copies it to the device). Tuples are not lists: `x[(0, 1)]` is basic indexing; nor is a
    list of slices (`x[[slice(a, b) for ...]]`), which PyTorch reads as a tuple of them."""
    if isinstance(expr, (cst.List, cst.ListComp)):
        return not _list_of_slices(expr)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value in ("list", "sorted"):
            return True
        return method_name(expr) == "tolist"
    if isinstance(expr, cst.Name):
        value = bound_value(expr.value, ctx)
        if value is not None:
            return not isinstance(value, cst.Name) and python_list_index(value, ctx)
        return _annotated_list_parameter(expr.value, ctx)
    if isinstance(expr, cst.Attribute):
        # `self.bad_token_ids`: every assignment the analysis saw is a list display.
        value = ctx.placement(expr)
        # Evidence steps that are statements (the assignment) say nothing about the kind.
        origins = [ev.node for ev in value.evidence if isinstance(ev.node, cst.BaseExpression)]
        return value.is_(Place.SEQUENCE) and bool(origins) and all(python_list_index(n, ctx) for n in origins if not isinstance(n, cst.Attribute))
    return False


def _is_slice_call(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "slice"


def _list_of_slices(expr: cst.List | cst.ListComp) -> bool:
    """`[slice(a, b), slice(c, d)]`, `[slice(o, o + n) for n, o in ...]`: basic indexing, as a
    tuple of slices (a list holding a slice, `...` or `None` is not an index list)."""
    if isinstance(expr, cst.ListComp):
        return _is_slice_call(expr.elt)
    return any(_is_slice_call(e.value) or isinstance(e.value, cst.Ellipsis) for e in expr.elements if isinstance(e, cst.Element))


def _annotated_list_parameter(name: str, ctx) -> bool:
    function = ctx.function
    if function is None:
        return False
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name and param.annotation is not None:
            annotation = param.annotation.annotation
            head = annotation.value if isinstance(annotation, cst.Subscript) else annotation
            return isinstance(head, cst.Name) and head.value in ("list", "List")
    return False


def is_full_slice(element: cst.SubscriptElement) -> bool:
    s = element.slice
    return isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None


def simple_reference(expr: cst.BaseExpression) -> bool:
    """A name or an attribute chain (`x`, `self.buf`): safe to write twice in a fix."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


_SHAPED_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "rand", "randn", "randint"})
_SHAPED_NEW_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})


def known_ndim(expr: cst.BaseExpression, ctx, _at: int | None = None, _open: set | None = None) -> int | None:
    """The number of dimensions of a tensor built in view (`torch.zeros(b, n, device=d)`,
    `x.new_zeros((b, n))`), looking through a name bound in the scope; None when unknown."""
    _open = set() if _open is None else _open
    if isinstance(expr, cst.Name):
        found = _binding(expr.value, ctx, _at)
        if found is None or found[1] is None:
            return None
        return known_ndim(found[1], ctx, found[0], _open)  # read where it was bound
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        # `self.buf` built in `__init__`: every assignment in the class must agree. An
        # assignment that reads the attribute itself (`self.buf = self.buf.to(d)`) is followed
        # once: `_open` holds the attributes being resolved, so a cycle answers "unknown".
        attr = expr.attr.value
        if attr in _open:
            return None
        _open.add(attr)
        try:
            ndims = {known_ndim(value, ctx, -1, _open) for value in self_attribute_values(attr, ctx)}
        finally:
            _open.discard(attr)
        return ndims.pop() if len(ndims) == 1 else None
    if isinstance(expr, cst.Attribute):
        return _field_ndim(expr, ctx, _open)
    if not isinstance(expr, cst.Call):
        return None
    qual = ctx.qualname(expr.func) or ""
    name = method_name(expr)
    if name in ("cuda", "to", "contiguous", "clone", "float", "half", "bfloat16", "long", "int"):
        return known_ndim(expr.func.value, ctx, _at, _open)
    if qual.startswith("torch.") and qual[6:] in _SHAPED_FACTORIES:
        args = positional(expr)
        if qual == "torch.full" or qual == "torch.randint":
            shape = [a for a in args if isinstance(a.value, (cst.Tuple, cst.List))]
            return len(shape[0].value.elements) if len(shape) == 1 else None
    elif name in _SHAPED_NEW_METHODS:
        args = positional(expr)
        if name == "new_full":
            args = args[:1]
    else:
        return None
    size = kwarg(expr, "size")
    if size is not None:
        args = [size]
    if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
        return len(args[0].value.elements)
    if args and all(not isinstance(a.value, (cst.Tuple, cst.List, cst.StarredElement)) for a in args):
        return len(args)
    return None


def _field_ndim(expr: cst.Attribute, ctx, _open: set) -> int | None:
    """The dimensions of `obj.field` where the file gives the field its value: every value
    the file's code gives a field of that name (`x.field = v`, `Cls(field=v)`) whose shape
    is visible must agree, and at least one must be visible."""
    attr = expr.attr.value
    key = ("field", attr)
    if key in _open:
        return None
    _open.add(key)
    try:
        ndims = {known_ndim(value, ctx, -1, _open) for value in module_field_values(attr, ctx)} - {None}
    finally:
        _open.discard(key)
    return ndims.pop() if len(ndims) == 1 else None


def module_field_values(attr: str, ctx) -> list[cst.BaseExpression]:
    """The values the module gives a field named `attr` of any object other than `self`:
    `obj.attr = value` and the keyword argument `attr=value` of a call to a class (a
    capitalised name: `Info(attr=value)`). A name passed as the value stands for what its
    function bound it to, when the function binds it exactly once."""
    cache = ctx.__dict__.setdefault("_module_field_values", None)
    if cache is None:
        cache = ctx.__dict__["_module_field_values"] = _ModuleFields(ctx.module).values
    return cache.get(attr, [])


# Nodes that hold only whitespace, comments or punctuation: the walk of `_ModuleFields` skips them.
_TRIVIA = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Comment, cst.Newline,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.BaseBinaryOp,
    cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.ImportStar, cst.SimpleString,
    cst.Integer, cst.Float, cst.Imaginary,
)
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}
_DESCEND: dict[type, bool] = {}


def _node_fields(kind: type) -> tuple[str, ...]:
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        import dataclasses

        fields = _NODE_FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return fields


def _descends(kind: type) -> bool:
    go = _DESCEND.get(kind)
    if go is None:
        go = _DESCEND[kind] = isinstance(kind, type) and issubclass(kind, cst.CSTNode) and not issubclass(kind, _TRIVIA)
    return go


class _ModuleFields:
    """Every `obj.attr = value` and `Cls(attr=value)` of the module, in one walk of its nodes
    (libcst's own visit rebuilds every node it passes: several times the cost, in a file of
    thousands of calls)."""

    def __init__(self, module: cst.Module) -> None:
        self.values: dict[str, list[cst.BaseExpression]] = {}
        self._functions: list[cst.FunctionDef] = []
        self._indexes: dict[int, _AssignmentIndex] = {}
        self._walk(module)

    def _walk(self, module: cst.Module) -> None:
        leave = object()  # marks where a function's nodes end
        pending: list = [module]
        pop, push = pending.pop, pending.append
        while pending:
            node = pop()
            if node is leave:
                self._functions.pop()
                continue
            kind = type(node)
            if kind is cst.FunctionDef:
                self._functions.append(node)
                push(leave)
            elif kind is cst.Assign:
                self.visit_Assign(node)
            elif kind is cst.Call:
                self.visit_Call(node)
            children = []
            for name in _node_fields(kind):
                value = getattr(node, name)
                value_type = type(value)
                if value_type is list or value_type is tuple:
                    children.extend(child for child in value if _descends(type(child)))
                elif _descends(value_type):
                    children.append(value)
            children.reverse()  # visited in source order
            pending.extend(children)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and not (isinstance(t.value, cst.Name) and t.value.value == "self"):
                self._add(t.attr.value, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if not name[:1].isupper():
            return
        for arg in node.args:
            if arg.keyword is not None:
                self._add(arg.keyword.value, arg.value)

    def _add(self, attr: str, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Name):
            value = self._bound_once(value.value)
            if value is None:
                return
        self.values.setdefault(attr, []).append(value)

    def _bound_once(self, name: str) -> cst.BaseExpression | None:
        if not self._functions:
            return None
        function = self._functions[-1]
        index = self._indexes.get(id(function))
        if index is None:
            index = self._indexes[id(function)] = _AssignmentIndex(function)
        bindings = index.bindings.get(name, ())
        if len(bindings) != 1 or isinstance(bindings[0][1], cst.Name):
            return None
        return bindings[0][1]


def self_attribute_values(attr: str, ctx) -> list[cst.BaseExpression]:
    """The values of every `self.<attr> = value` statement in the methods of the class
    around the code being visited (top-level statements of each method's body)."""
    class_def = next((scope for scope in reversed(ctx.chain) if isinstance(scope, cst.ClassDef)), None)
    if class_def is None:
        return []
    cache = ctx.__dict__.setdefault("_self_attribute_values", {})
    key = (id(class_def), attr)
    if key not in cache:
        values = []
        for method in getattr(class_def.body, "body", ()):
            if not isinstance(method, cst.FunctionDef):
                continue
            for stmt in getattr(method.body, "body", ()):
                for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
                    targets = small.targets if isinstance(small, cst.Assign) else ()
                    for target in targets:
                        t = target.target
                        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self" and t.attr.value == attr:
                            values.append(small.value)
        cache[key] = values
    return cache[key]


# --- appending a keyword argument without losing layout or comments ----------------------

_NO_SPACE_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def _arg_indent(call: cst.Call, args: list[cst.Arg]) -> str | None:
    """The indentation of the arguments of a call written one argument per line, else None."""
    separators = [a.comma.whitespace_after for a in args[:-1] if isinstance(a.comma, cst.Comma)]
    for ws in (*separators, call.whitespace_before_args):
        if isinstance(ws, cst.ParenthesizedWhitespace):
            return ws.last_line.value
    return None


def append_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`call` with `name=value` added as its last argument, keeping its layout: on one line
    it becomes `f(a, name=value)`; written one argument per line, the new argument gets a
    line of its own, and a comment after the old last argument stays where it was."""
    new = cst.Arg(value=value, keyword=cst.Name(name), equal=_NO_SPACE_EQUAL)
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    comma = last.comma if isinstance(last.comma, cst.Comma) else None
    # The whitespace that ends the argument list (before `)`), where a comment may sit.
    closing = comma.whitespace_after if comma is not None else last.whitespace_after_arg
    indent = _arg_indent(call, args)
    if not isinstance(closing, cst.ParenthesizedWhitespace) or indent is None:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")), whitespace_after_arg=cst.SimpleWhitespace(""))
        trailing = comma is not None and not isinstance(closing, cst.ParenthesizedWhitespace)
        new = new.with_changes(
            comma=cst.Comma(whitespace_after=closing) if trailing else cst.MaybeSentinel.DEFAULT,
            whitespace_after_arg=cst.SimpleWhitespace("") if trailing else last.whitespace_after_arg,
        )
        args.append(new)
        return call.with_changes(args=args)
    # One argument per line: the old last argument keeps its comment, then a new line at the
    # arguments' indentation; the new argument ends the way the old list ended.
    separator = closing.with_changes(indent=True, last_line=cst.SimpleWhitespace(indent))
    args[-1] = last.with_changes(
        comma=cst.Comma(whitespace_before=comma.whitespace_before if comma else cst.SimpleWhitespace(""), whitespace_after=separator),
        whitespace_after_arg=cst.SimpleWhitespace(""),
    )
    ending = closing.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=())
    if comma is not None:  # keep the trailing-comma style
        new = new.with_changes(comma=cst.Comma(whitespace_after=ending))
    else:
        new = new.with_changes(whitespace_after_arg=ending)
    args.append(new)
    return call.with_changes(args=args)


# --- dimensions: which device values are 0-dim (SL207, SL208) -------------------------------

# Whole-tensor reductions: called with no argument they give a 0-dim tensor.
_FULL_REDUCTIONS = frozenset(
    {"sum", "max", "min", "amax", "amin", "mean", "prod", "argmax", "argmin", "count_nonzero", "norm", "median"}
)
# Results that are 1-D whatever their input (`unique`, `arange`, `flatten`, `bincount`).
_ONE_DIM_RESULTS = frozenset(
    {"unique", "unique_consecutive", "arange", "flatten", "ravel", "bincount", "randperm", "masked_select", "cumsum_flat"}
)
# Methods and torch functions that keep their input's number of dimensions.
_NDIM_KEEPING = frozenset(
    {"cuda", "cpu", "to", "contiguous", "clone", "detach", "long", "int", "float", "half", "bfloat16", "bool",
     "cumsum", "cumprod", "sort", "flip", "abs", "neg", "clamp", "clip", "sigmoid", "exp", "log", "sqrt",
     "pin_memory", "type_as", "roll", "masked_fill"}
)
# Names that, in serving code, are per-request vectors (`seq_lens`, `sizes`, `token_ids`).
_VECTOR_NAME_ENDINGS = ("lens", "lengths", "sizes", "counts", "ids", "indices", "offsets", "indptr", "positions", "loc")


def tensor_ndim(expr: cst.BaseExpression, ctx, _depth: int = 0, _at: int | None = None) -> int | None:
    """The number of dimensions of a tensor expression when the code shows it, else None:
    factories (`known_ndim`), `x.nonzero()` (2), `x.unique()` / `torch.arange` (1), whole
    reductions (0), `x[i]` with Python integers (one fewer per index), the element of a
    loop over a tensor (one fewer), names bound once to any of these."""
    if _depth > 6:
        return None
    found = known_ndim(expr, ctx, _at) if not isinstance(expr, cst.Name) else None
    if found is not None:
        return found
    if isinstance(expr, cst.Name):
        binding = _binding(expr.value, ctx, _at)
        if binding is None:
            # A parameter annotated a Python number: if a tensor is passed, it is 0-dim.
            return 0 if _number_parameter(expr.value, ctx) else None
        position, value = binding
        if value is not None:
            return tensor_ndim(value, ctx, _depth + 1, position)
        iterable = _assignment_index(ctx).loop_elements.get((expr.value, position))
        if iterable is not None:
            outer = tensor_ndim(iterable, ctx, _depth + 1, position)
            return outer - 1 if outer else None
        return None
    if isinstance(expr, cst.Subscript):
        # `x.nonzero(as_tuple=True)[0]`: the tuple's element is one index vector (1-D), as
        # `x.nonzero()[0]`'s row is.
        base = 2 if _nonzero_tuple(expr.value, ctx) else tensor_ndim(expr.value, ctx, _depth + 1, _at)
        if base is None:
            return None
        dropped = 0
        for element in expr.slice:
            if isinstance(element.slice, cst.Slice):
                continue
            value = element.slice.value
            if is_int_literal(value) or ctx.placement(value).is_(Place.SCALAR):
                dropped += 1
            else:
                return None  # advanced or None/Ellipsis indexing
        return base - dropped if base >= dropped else None
    if isinstance(expr, cst.Call):
        qual = ctx.qualname(expr.func) or ""
        name = qual[6:] if qual.startswith("torch.") else method_name(expr)
        is_method = not qual.startswith("torch.")
        args = positional(expr)
        if name in ("nonzero", "argwhere"):
            return None if is_true(getattr(kwarg(expr, "as_tuple"), "value", None)) else 2
        if name in _ONE_DIM_RESULTS:
            return 1
        if name in ("view", "reshape") and is_method and len(args) == 1 and is_int_literal(args[0].value):
            return 1
        if name in _FULL_REDUCTIONS and ((is_method and not expr.args) or (not is_method and len(expr.args) == 1)):
            return 0
        if name == "item":
            return None
        if name in _NDIM_KEEPING and is_method:
            return tensor_ndim(expr.func.value, ctx, _depth + 1, _at)
    if isinstance(expr, cst.BinaryOperation):
        left = tensor_ndim(expr.left, ctx, _depth + 1, _at)
        right = tensor_ndim(expr.right, ctx, _depth + 1, _at)
        if left is not None and (right is not None or ctx.placement(expr.right).is_(Place.SCALAR)):
            return max(left, right or 0)
        if right is not None and ctx.placement(expr.left).is_(Place.SCALAR):
            return right
    return None


def _nonzero_tuple(expr: cst.BaseExpression, ctx) -> bool:
    """`torch.nonzero(x, as_tuple=True)` / `x.nonzero(as_tuple=True)`: a tuple of 1-D index
    vectors, one per dimension of `x`."""
    if not isinstance(expr, cst.Call):
        return False
    qual = ctx.qualname(expr.func) or ""
    name = qual[6:] if qual.startswith("torch.") else method_name(expr)
    return name == "nonzero" and is_true(getattr(kwarg(expr, "as_tuple"), "value", None))


def _number_parameter(name: str, ctx) -> bool:
    """`name` is a parameter of the enclosing function annotated `int` or `float` (or
    `Optional[int]`, `int | None`)."""
    function = ctx.function
    if function is None:
        return False
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            if param.annotation is None:
                return False
            annotation = param.annotation.annotation
            if isinstance(annotation, cst.Subscript) and isinstance(annotation.value, cst.Name) and annotation.value.value == "Optional":
                first = annotation.slice[0].slice if annotation.slice else None
                annotation = first.value if isinstance(first, cst.Index) else annotation
            if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
                sides = [a for a in (annotation.left, annotation.right) if not (isinstance(a, cst.Name) and a.value == "None")]
                annotation = sides[0] if len(sides) == 1 else annotation
            return isinstance(annotation, cst.Name) and annotation.value in ("int", "float")
    return False


def named_like_a_vector(expr: cst.BaseExpression) -> bool:
    """`seq_lens`, `self.req_sizes`, `token_ids`: a name serving code gives a per-request vector."""
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return name.lower().endswith(_VECTOR_NAME_ENDINGS)


def derived_from_a_vector(expr: cst.BaseExpression, ctx, _depth: int = 0, _at: int | None = None) -> bool:
    """`expr` is named like a per-request vector (`named_like_a_vector`), or is a name bound
    (at this point of the scope) to one through calls that keep the number of dimensions
    (`tail = next_token_ids.to(dtype)`, `tail = tail.clone()`): the same vector's shape."""
    if named_like_a_vector(expr):
        return True
    if _depth > 6:
        return False
    if isinstance(expr, cst.Name):
        binding = _binding(expr.value, ctx, _at)
        if binding is None or binding[1] is None:
            return False
        return derived_from_a_vector(binding[1], ctx, _depth + 1, binding[0])
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _NDIM_KEEPING:
        return derived_from_a_vector(expr.func.value, ctx, _depth + 1, _at)
    return False


# --- data that costs nothing to copy ------------------------------------------------------


def is_empty_literal(expr: cst.BaseExpression) -> bool:
    """`[]` / `()`: a tensor built from it holds no data, so nothing is copied."""
    return isinstance(expr, (cst.List, cst.Tuple)) and not expr.elements


def is_constant_literal(expr: cst.BaseExpression) -> bool:
    """A number, or a (nested) list/tuple of numbers and bools: data fixed in the source."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False")
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(not isinstance(e, cst.StarredElement) and is_constant_literal(e.value) for e in expr.elements)
    return False


def traced_as_constant(data: cst.BaseExpression, ctx) -> bool:
    """Data that torch.compile turns into a constant of the graph when a tensor is built from
    it inside a compiled function: a literal, or any Python value (not a tensor): dynamo reads
    it at trace time and guards on it, so no copy runs per call."""
    if not compiled_by_torch_compile(ctx):
        return False
    if is_constant_literal(data):
        return True
    place = ctx.placement(data)
    return not any(p in place.places for p in (Place.DEVICE, Place.HOST, Place.PINNED, Place.NUMPY))


def compiled_by_torch_compile(ctx) -> bool:
    """Inside a function that torch.compile traces (decorated, compiled by a call, or nested
    in one): a tensor built there from constant data becomes a constant of the compiled
    graph, copied once when the graph is built, not on every call."""
    hot = ctx.hot_path or ""
    return hot == "compiled by torch.compile()" or (hot.startswith("under @") and "compile" in hot)


# --- concatenations of host tensors (SL103) -----------------------------------------------

_CONCATENATIONS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "column_stack"})


def concatenated_host_tensor(expr: cst.BaseExpression, ctx, _depth: int = 0):
    """The placement of a host tensor element when `expr` is `torch.cat(seq)` / `stack` /
    `concat` of a sequence (a display, a comprehension, or a name bound once to one) one of
    whose elements is a host tensor and none of which may be on the device: all inputs of a
    concatenation share one device, so one host element places the result. Else None."""
    if _depth > 3 or not isinstance(expr, cst.Call):
        return None
    qual = ctx.qualname(expr.func) or ""
    if not (qual.startswith("torch.") and qual[6:] in _CONCATENATIONS):
        return None
    args = positional(expr)
    tensors = kwarg(expr, "tensors")
    seq = args[0].value if args else tensors.value if tensors is not None else None
    if isinstance(seq, cst.Name):
        seq = _unchanged_binding(seq.value, ctx)
    elements = _sequence_elements(seq)
    if not elements:
        return None
    places = [ctx.placement(e) for e in elements]
    if any(p.maybe_device for p in places):
        return None
    hosts = [p for p in places if p.is_(Place.HOST, Place.PINNED)]
    return max(hosts, key=lambda p: p.confidence) if hosts else None


def _unchanged_binding(name: str, ctx) -> cst.BaseExpression | None:
    """The value of the latest `name = value` before the statement being visited, when no
    statement in between changes `name` in place (`name.append(...)`)."""
    index = _assignment_index(ctx)
    here = _position_of_current(ctx, index)
    found = _binding(name, ctx)
    if here is None or found is None:
        return None
    position, value = found
    if any(position < m < here for m in index.mutations.get(name, ())):
        return None
    return value


def _sequence_elements(seq) -> list[cst.BaseExpression]:
    if isinstance(seq, (cst.List, cst.Tuple)):
        return [e.value for e in seq.elements if not isinstance(e, cst.StarredElement)]
    if isinstance(seq, (cst.ListComp, cst.GeneratorExp)):
        elt = seq.elt
        return [elt.body, elt.orelse] if isinstance(elt, cst.IfExp) else [elt]
    return []
