"""Can this expression be a device value? The screen's `ast` mirror of the placement
analysis (synclint/analysis/sources.py), answering only "maybe" or "no".

Rules that report only device values (SL203, SL204, SL3xx, SL401, SL103) report where the
analysis places a value on the device with medium confidence or more. This module answers,
without libcst, whether that is possible for a given expression, and errs only towards
"maybe": each case below follows the evaluator's own case (a name looks up its bindings,
`.shape` is host metadata, `x.size(0)` a Python int, `torch.cat(xs)` lives with its inputs,
a call to an unknown function is unknown, `self.proj(x)` calls a submodule...), and where
the evaluator can say "device", so does this. Bindings are joined over the whole function
(not per statement), so this says "maybe" more often than the analysis, never less.

A low-confidence placement (a `torch.Tensor` annotation outside forward()) cannot make a
medium finding (the analysis joins confidences by their minimum), so it is not a source.
"""

from __future__ import annotations

import ast

from synclint.apis import torch_api as api

ACCELERATOR_PREFIXES = frozenset({"cuda", "xpu", "mps", "hpu", "npu", "mlu", "meta"})
DEVICE_NAMES = frozenset(api.DEVICE_LIKE_NAMES)
PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})
SELF_DEVICE_ATTRIBUTES = PARAMETER_ATTRIBUTES | DEVICE_NAMES
_MODULE_MEMBERS = frozenset({"Parameter", "Buffer", "register_buffer"})
_DEVICE_WORDS = ("device", "cuda")
_HOST_ATTRIBUTES = api.SEQUENCE_ATTRIBUTES | api.SCALAR_ATTRIBUTES | api.OTHER_ATTRIBUTES
_HOST_METHODS = api.SCALAR_RESULT_METHODS | api.SEQUENCE_RESULT_METHODS | api.NUMPY_RESULT_METHODS | {"cpu", "pin_memory"}
_NOT_TENSOR_NAMESPACES = ("cuda.", "distributed.", "nn.init.", "nn.utils.", "backends.", "compiler.", "_dynamo.", "utils.")
_MODULE_MEMBER_CALLS = frozenset({"nn.Parameter", "nn.parameter.Parameter", "nn.Buffer"})
_TENSOR_ARG_KEYWORDS = frozenset({"input", "other", "tensors"})


# --- tables the fact reader uses -------------------------------------------------------------


def device_identifier(identifiers: set[str]) -> bool:
    """An identifier that makes a device in the analysis (`device=`, `.cuda()`, `dev`, a
    registered buffer or parameter). Used for the coarse test of rules without sites."""
    if not identifiers.isdisjoint(DEVICE_NAMES) or not identifiers.isdisjoint(_MODULE_MEMBERS):
        return True
    return any(word in name.lower() for name in identifiers for word in _DEVICE_WORDS)


def moves_to_a_device(call: ast.Call) -> bool:
    """`.to(x)` with a target that is not plainly a dtype (`torch.float16`, `x.dtype`)."""
    for kw in call.keywords:
        if kw.arg in ("device", "other", None):
            return True
    return any(not plainly_a_dtype(arg) for arg in call.args[:1])


def plainly_a_dtype(expr: ast.expr) -> bool:
    if type(expr) is ast.Attribute:
        if expr.attr == "dtype":
            return True
        return type(expr.value) is ast.Name and expr.value.id == "torch" and expr.attr in api.DTYPES
    return type(expr) is ast.Name and "dtype" in expr.id


def tensor_annotation(annotation: ast.expr) -> bool:
    for node in ast.walk(annotation):
        if type(node) is ast.Name and "Tensor" in node.id:
            return True
        if type(node) is ast.Attribute and "Tensor" in node.attr:
            return True
        if type(node) is ast.Constant and type(node.value) is str and "Tensor" in node.value:
            return True
    return False


def _literal(expr: ast.expr) -> bool:
    """A number, None or `...` (negative numbers too): an index or bound that copies nothing."""
    if type(expr) is ast.UnaryOp:
        expr = expr.operand
    return type(expr) is ast.Constant and not isinstance(expr.value, str)


# --- the model -----------------------------------------------------------------------------


class DeviceModel:
    """Per file: which names, `self.` attributes and function results may hold a device value."""

    def __init__(self, by_name, class_defines, imports: dict[str, tuple[str, ...]]) -> None:
        self.by_name = by_name  # module-level name -> units binding it
        self.class_defines = class_defines  # (class, name) -> class-level units binding it
        self.imports = imports  # local name -> dotted module path (`F` -> torch.nn.functional)
        self._taint: dict[int, set[str]] = {}
        self._partial: dict[int, set[str]] = {}  # scopes whose fixpoint is under way
        self._memo: dict[tuple, bool] = {}
        self._active: set = set()

    # --- sites --------------------------------------------------------------------------
    def holds(self, unit, kind: str) -> bool:
        """Whether some site of `kind` in `unit` may see a device value."""
        sites = unit.sites
        dev = self.dev
        if kind == "truth":
            return any(dev(leaf, unit) for site in sites.get("truth", ()) for leaf in _truth_leaves(site))
        if kind in ("convert", "sizing"):
            return any(dev(e, unit) for e in sites.get(kind, ()))
        if kind == "text":
            return any(dev(e, unit) for site in sites.get("text", ()) for e in _elements(site))
        if kind == "move":
            return any(_is_move(call) for call in sites.get("move", ()))
        if kind == "store":
            return any(dev(target.value, unit) for target in sites.get("store", ()))
        subscripts = sites.get("subscript", ())
        if kind == "index":
            return any(
                any(type(e) is not ast.Slice and not _literal(e) for e in _index_elements(s)) and dev(s.value, unit)
                for s in subscripts
            )
        if kind == "mask":
            return any(dev(e, unit) for s in subscripts for e in _index_elements(s) if type(e) is not ast.Slice)
        if kind == "bound":
            return any(
                dev(b, unit)
                for s in subscripts
                for e in _index_elements(s)
                if type(e) is ast.Slice
                for b in (e.lower, e.upper, e.step)
                if b is not None and not _literal(b)
            )
        return True  # a kind this model does not know: assume it may

    # --- expressions --------------------------------------------------------------------
    def dev(self, expr, unit) -> bool:
        kind = type(expr)
        if kind is ast.Name:
            return self._name(expr.id, unit)
        if kind is ast.Attribute:
            return self._attribute(expr, unit)
        if kind is ast.Call:
            return self._call(expr, unit)
        if kind is ast.Subscript:
            return self.dev(expr.value, unit)
        if kind is ast.Constant:
            return type(expr.value) is str and expr.value.split(":", 1)[0] in ACCELERATOR_PREFIXES
        if kind is ast.JoinedStr:
            head = expr.values[0] if expr.values else None
            return type(head) is ast.Constant and str(head.value).split(":", 1)[0] in ACCELERATOR_PREFIXES
        if kind is ast.BinOp:
            return self.dev(expr.left, unit) or self.dev(expr.right, unit)
        if kind is ast.UnaryOp:
            return type(expr.op) is not ast.Not and self.dev(expr.operand, unit)
        if kind is ast.Compare:
            if any(type(op) in (ast.Is, ast.IsNot, ast.In, ast.NotIn) for op in expr.ops):
                return False  # identity and membership give a Python bool
            return self.dev(expr.left, unit) or any(self.dev(c, unit) for c in expr.comparators)
        if kind is ast.BoolOp:
            return any(self.dev(v, unit) for v in expr.values)
        if kind is ast.IfExp:
            return self.dev(expr.body, unit) or self.dev(expr.orelse, unit)
        if kind is ast.NamedExpr:
            return self.dev(expr.value, unit)
        # Lists, tuples, dicts, comprehensions, lambdas are Python objects; anything else
        # (await, yield, starred) the analysis does not place.
        return False

    def _name(self, name: str, unit) -> bool:
        if name in DEVICE_NAMES and name not in self.imports:
            return True
        if name in unit.bound:
            if name in self.taint(unit):
                return True
        cls = unit.owner
        if cls is not None:
            for other in self.class_defines.get((id(cls), name), ()):
                if other is not unit and name in self.taint(other):
                    return True
        for other in self.by_name.get(name, ()):
            if other is not unit and not isinstance(other.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if name in self.taint(other):
                    return True
        return False

    def _attribute(self, expr: ast.Attribute, unit) -> bool:
        attr = expr.attr
        if attr == "device":
            return True  # `.device` of a tensor or a model: an accelerator, inferred
        if is_self_name(expr.value):
            return self._self_attribute(attr, unit)
        if attr in PARAMETER_ATTRIBUTES:
            return True  # a submodule's parameter, or that of a module on the device
        if attr in api.SAME_PLACE_ATTRIBUTES:
            return self.dev(expr.value, unit)
        return False  # host metadata (`.shape`, `.dtype`) or an attribute the analysis cannot place

    def _self_attribute(self, attr: str, unit) -> bool:
        if attr in SELF_DEVICE_ATTRIBUTES:
            return True
        cls = unit.owner
        if cls is None:
            return False
        return self._memoized(("attr", id(cls), attr), lambda: self._written_device(cls, attr))

    def _written_device(self, cls, attr: str) -> bool:
        """Whether some `self.<attr> = value` in the class may assign a device value (the
        analysis joins every write); a registered buffer is on the device."""
        for member in cls.members:
            for value in member.self_writes.get(attr, ()):
                if value is None:
                    return True
                operand = value[2] if isinstance(value, tuple) else value  # `self.x += v`: v
                if self.dev(operand, member):
                    return True
        return False

    def _call(self, call: ast.Call, unit) -> bool:
        func = call.func
        for qual in self._qualnames(func):
            if qual.startswith("torch.") and self._torch_call(qual[6:], call, unit):
                return True
        if type(func) is ast.Name:
            name = func.id
            if name not in unit.bound and name not in self.by_name:
                if name in api.SCALAR_BUILTINS or name in api.SEQUENCE_BUILTINS:
                    return False
                if name in api.TENSOR_PRESERVING_BUILTINS:
                    return any(self.dev(a, unit) for a in call.args)
            return self._local_function_returns(name, unit)
        if type(func) is ast.Attribute:
            method = func.attr
            if is_self_name(func.value) and unit.owner is not None:
                for member in unit.owner.members:
                    if member.method and member.name == method and self._returns(member.node, member):
                        return True
            return self._method(method, call, func.value, unit)
        return False

    def _torch_call(self, name: str, call: ast.Call, unit) -> bool:
        if name == "device" or name == "cuda.current_device":
            return True
        if name in api.DTYPE_RESULT_FUNCTIONS or name in api.HOST_RESULT_FUNCTIONS or name == "from_numpy":
            return False
        if name in api.TENSOR_FACTORIES:
            for kw in call.keywords:
                if kw.arg == "device":
                    return self._device_target(kw.value, unit)
            return bool(call.args) and self.dev(call.args[0], unit)
        if name in _MODULE_MEMBER_CALLS:
            return True
        if name.startswith(_NOT_TENSOR_NAMESPACES):
            return False
        if name.startswith("nn.") and not name.startswith("nn.functional."):
            return False  # a module, not a tensor
        values = [*call.args, *(kw.value for kw in call.keywords if kw.arg in _TENSOR_ARG_KEYWORDS)]
        return any(self.dev(v, unit) or (type(v) in (ast.List, ast.Tuple) and any(self.dev(e, unit) for e in v.elts)) for v in values)

    def _method(self, method: str, call: ast.Call, base, unit) -> bool:
        if method == "cuda":
            return True
        if method in _HOST_METHODS:
            return False
        if method == "to":
            keywords = {kw.arg: kw.value for kw in call.keywords}
            target = keywords.get("device", keywords.get("other", call.args[0] if call.args else None))
            if target is not None and not plainly_a_dtype(target) and self._device_target(target, unit):
                return True
            return self.dev(base, unit)
        if method in api.NEW_METHODS:
            for kw in call.keywords:
                if kw.arg == "device" and self._device_target(kw.value, unit):
                    return True
        return self.dev(base, unit)

    def _device_target(self, expr, unit) -> bool:
        """A `device=` / `.to()` target that may send the tensor to the device: a device or
        a device tensor, an integer index, or a name (the analysis reads `local_rank` as one)."""
        if type(expr) is ast.Constant:
            return type(expr.value) is int or (type(expr.value) is str and expr.value.split(":", 1)[0] in ACCELERATOR_PREFIXES)
        return type(expr) in (ast.Name, ast.Attribute) or self.dev(expr, unit)

    # --- scopes ---------------------------------------------------------------------------
    def taint(self, unit):
        """The names `unit` binds that may hold a device value: a fixpoint over its bindings.
        While it is worked out, questions that reach it see the names found so far, and
        nothing computed meanwhile is remembered (it may change as the set grows)."""
        key = id(unit)
        done = self._taint.get(key)
        if done is not None:
            return done
        partial = self._partial.get(key)
        if partial is not None:
            return partial
        tainted: set[str] = set()
        self._partial[key] = tainted
        try:
            changed = True
            while changed:
                changed = False
                for names, value in unit.bindings:
                    if all(n in tainted for n in names):
                        continue
                    if value is None or self._binding_device(value, unit, tainted):
                        tainted.update(names)
                        changed = True
        finally:
            del self._partial[key]
        if not self._partial:
            self._taint[key] = tainted
        return tainted

    def _binding_device(self, value, unit, tainted) -> bool:
        if isinstance(value, tuple):  # ("aug", target, value)
            _, target, operand = value
            return (type(target) is ast.Name and target.id in tainted) or self.dev(operand, unit)
        return self.dev(value, unit)

    def _local_function_returns(self, name: str, unit) -> bool:
        for node in unit.local_defs.get(name, ()):
            if self._returns(node, unit):
                return True
        for other in self.by_name.get(name, ()):
            if isinstance(other.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and self._returns(other.node, other):
                return True
        return False

    def _returns(self, func, unit) -> bool:
        """Whether `func` (evaluated in `unit`'s bindings) may return a device value."""
        return self._memoized(("returns", id(func)), lambda: any(self.dev(r, unit) for r in _return_values(func)))

    def _memoized(self, key, compute) -> bool:
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return True  # a cycle (recursion, attributes written from each other): maybe
        self._active.add(key)
        try:
            value = compute()
        finally:
            self._active.discard(key)
        if not self._partial:
            self._memo[key] = value
        return value

    def _qualnames(self, func) -> list[str]:
        """Every dotted name `func` can stand for through the file's imports (a name imported
        twice may mean either: both are tried, so the answer is the union)."""
        parts = []
        while type(func) is ast.Attribute:
            parts.append(func.attr)
            func = func.value
        if type(func) is not ast.Name:
            return []
        rest = ".".join(reversed(parts))
        return [f"{head}.{rest}" if rest else head for head in self.imports.get(func.id, ())]


def is_self_name(node) -> bool:
    return type(node) is ast.Name and node.id == "self"


def _truth_leaves(expr):
    """What Python truth-tests in `expr`: the operands of `and`/`or`/`not`, recursively."""
    kind = type(expr)
    if kind is ast.BoolOp:
        return [leaf for value in expr.values for leaf in _truth_leaves(value)]
    if kind is ast.UnaryOp and type(expr.op) is ast.Not:
        return _truth_leaves(expr.operand)
    return [expr]


def _elements(expr):
    return list(expr.elts) if type(expr) is ast.Tuple else [expr]


def _index_elements(subscript: ast.Subscript):
    index = subscript.slice
    return list(index.elts) if type(index) is ast.Tuple else [index]


def _is_move(call: ast.Call) -> bool:
    func = call.func
    return func.attr == "cuda" or moves_to_a_device(call)


def _return_values(func) -> list:
    """The values `func` returns (not those of functions nested in it)."""
    out = []
    pending = list(func.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Return:
            if node.value is not None:
                out.append(node.value)
            continue
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if isinstance(node, ast.stmt):
            pending.extend(ast.iter_child_nodes(node))
        elif kind is ast.ExceptHandler or kind is ast.match_case:
            pending.extend(node.body)
    return out
