"""What an annotation or an expression declares on its own: a Python number, a container, a
tuple of known length, a 0-dim reduction, a held function, a call through a class; read
by the summary of a module and by the solve.
"""

from __future__ import annotations

import ast
from functools import reduce
from operator import or_

from synclint.analysis import astwalk, coldcode, receivers
from synclint.apis import torch_api as api
from synclint.repo.keys import SCALAR, _EXTERNAL, _SUPER_CALL
from synclint.screen import places

# Tensor reductions that give a 0-dim tensor when called with no dimension.
_WHOLE_REDUCTIONS = frozenset({"max", "min", "sum", "amax", "amin", "prod", "argmax", "argmin"})

# Builtin and `collections` containers: what a method called on one runs is the library's.
_CONTAINERS = frozenset({"set", "frozenset", "dict", "list", "tuple", "deque", "defaultdict", "OrderedDict", "Counter",
                         "Set", "FrozenSet", "Dict", "List", "Tuple", "Deque", "DefaultDict", "MutableSet", "MutableMapping"})
_CONTAINER_DISPLAYS = (ast.Set, ast.Dict, ast.List, ast.ListComp, ast.SetComp, ast.DictComp)


def _container_value(value: ast.expr) -> bool:
    """`set()`, `{}`, `[]`, `{k: v for ...}`, `collections.deque()`, `defaultdict(list)`."""
    if type(value) in _CONTAINER_DISPLAYS:
        return True
    if type(value) is ast.Call:
        func = value.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
        return name in _CONTAINERS
    return False


def _container_annotation(annotation) -> bool:
    """`set[int]`, `dict[str, Req]`, `Optional[List[int]]`, `collections.deque`."""
    if annotation is None:
        return False
    if type(annotation) is ast.Subscript:
        head = annotation.value
        name = head.id if type(head) is ast.Name else head.attr if type(head) is ast.Attribute else ""
        if name == "Optional":
            return _container_annotation(annotation.slice)
        return name in _CONTAINERS
    if type(annotation) is ast.BinOp and type(annotation.op) is ast.BitOr:  # `set[int] | None`
        sides = [annotation.left, annotation.right]
        return any(_container_annotation(side) for side in sides) and all(
            _container_annotation(side) or type(side) is ast.Constant and side.value is None for side in sides)
    if type(annotation) is ast.Name:
        return annotation.id in _CONTAINERS
    if type(annotation) is ast.Attribute:
        return annotation.attr in _CONTAINERS
    return False


def _zero_dim_of(expr):
    """The tensor whose element or whole reduction `expr` is, shifted by a constant or not
    (`counts[rank]`, `pids.max() + 1`, `torch.sum(lens)`), else None."""
    while type(expr) is ast.BinOp and (type(expr.left) is ast.Constant or type(expr.right) is ast.Constant):
        expr = expr.right if type(expr.left) is ast.Constant else expr.left
    if _element(expr):
        return expr.value
    if type(expr) is not ast.Call or expr.keywords or type(expr.func) is not ast.Attribute or expr.func.attr not in _WHOLE_REDUCTIONS:
        return None
    owner = expr.func.value
    if type(owner) is ast.Name and owner.id == "torch":
        return expr.args[0] if len(expr.args) == 1 and type(expr.args[0]) is not ast.Starred else None
    return owner if not expr.args else None


# Names of a variable or field that holds a class (`self.metadata_cls`, `builder_class`).
_CLASS_NAME_SUFFIXES = ("_cls", "_class")


def _element(expr) -> bool:
    """`t[i]`, `t[i, j]`, `t[-1]`: one element of a tensor indexed by numbers (not a slice,
    a list or a string key)."""
    if type(expr) is not ast.Subscript:
        return False
    index = expr.slice
    parts = index.elts if type(index) is ast.Tuple else (index,)
    for part in parts:
        kind = type(part)
        if kind is ast.Constant:
            if type(part.value) is not int:
                return False
        elif kind not in (ast.Name, ast.BinOp, ast.UnaryOp, ast.Attribute):
            return False
    return True


def _tuple_length(values: list) -> int:
    """The length of the tuples every `return` of a function gives (`return a, b`; a
    `return None` or a bare `return` aside), or 0 where one gives anything else or the
    lengths differ."""
    length = 0
    for value in values:
        if type(value) is ast.Constant and value.value is None:
            continue
        if type(value) is not ast.Tuple or any(type(e) is ast.Starred for e in value.elts):
            return 0
        if length and len(value.elts) != length:
            return 0
        length = len(value.elts)
    return length


def _tuple_annotation(annotation, length: int) -> tuple[bool, ...]:
    """Which elements a return annotation `tuple[torch.Tensor, int]` (`Tuple[...]`,
    `Optional[Tuple[...]]`) declares tensors."""
    expr = places.unquoted(annotation)
    expr = places.unwrapped(expr) if expr is not None else None
    if type(expr) is ast.BinOp and type(expr.op) is ast.BitOr:
        expr = expr.left if _is_none(expr.right) else expr.right if _is_none(expr.left) else None
    if type(expr) is ast.Subscript and places._last_name(expr.value) in ("tuple", "Tuple") and type(expr.slice) is ast.Tuple:
        elements = expr.slice.elts
        if len(elements) == length:
            return tuple(places.tensor_annotation(e) for e in elements)
    return (False,) * length


def _held_functions(tree: ast.Module, imports: dict) -> set[tuple[str, str]]:
    """(field, function ref) for each function a module stores in a field named for
    functions (coldcode.callable_field): a class body's field (`F = (f, g)`, `F: tuple =
    field(default_factory=lambda: (f,))`) or a keyword of a call (`Config(F=f)`). A function
    is one the module defines at its top level (`f`) or imports from the repository
    (`pkg>f`), as `_Summarizer._callees` writes a call of it."""
    own = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def refs(value):
        for node in astwalk.walk(value):
            if type(node) is ast.Name and type(node.ctx) is ast.Load and not node.id[:1].isupper():
                if node.id in own:
                    yield node.id
                elif node.id in imports:
                    top = min(imports[node.id]).split(".", 1)[0]
                    if top not in _EXTERNAL:
                        yield f"{top}>{node.id}"

    found: set[tuple[str, str]] = set()
    for node in astwalk.walk(tree):
        if type(node) is ast.ClassDef:
            for stmt in node.body:
                if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value is not None:
                    field, value = stmt.target.id, stmt.value
                elif type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
                    field, value = stmt.targets[0].id, stmt.value
                else:
                    continue
                if coldcode.callable_field(field):
                    found.update((field, ref) for ref in refs(value))
        elif type(node) is ast.keyword and node.arg and coldcode.callable_field(node.arg):
            found.update((node.arg, ref) for ref in refs(node.value))
    return found


def _class_method(callee: str) -> bool:
    """Whether a callee of `_Summarizer._callees` names the class whose method runs
    (`Cls.m`: `self.m()`, a typed object; `Cls:m`: `Cls.m()`, a static or class method
    called through its class; `Base::m`: `super().m()`), not a field's object or a method
    by name."""
    if ">" in callee:
        return False
    for mark in (_SUPER_CALL, ":", "."):
        cls, sep, method = callee.partition(mark)
        if sep:
            return bool(cls) and method.isidentifier()
    return False


def _by_name_method(callee: str) -> tuple[str, str]:
    """The method a call may reach by name, and the field whose object it is called on:
    (`m`, "") for `.m` (a call on an object of no known class), (`m`, `=Cls.field`) for
    `Cls.field.m` (a method of what a field holds, by name where the field's class is not
    known); ("", "") for the rest."""
    if callee[:1] == ".":
        return callee[1:], ""
    if callee.count(".") == 2 and not any(c in callee for c in ":>!|?="):
        held, _, method = callee.rpartition(".")
        return method, "=" + held
    return "", ""


def _receiver(call: ast.Call) -> str:
    """The word the name of the object a method is called on ends in (`planner.plan(x)`,
    `self._storage_attachment.detach()`: `planner`, `attachment`), or "" where it is no name."""
    obj = call.func.value if type(call.func) is ast.Attribute else None
    if type(obj) is ast.Name:
        return receivers.receiver_word(obj.id)
    if type(obj) is ast.Attribute:
        return receivers.receiver_word(obj.attr)
    return ""


def _device_kernel(func) -> bool:
    return any(api.kernel_decorator_name(name) for name in coldcode.decorator_names(func) if name)


_SCALAR_TYPES = frozenset({"int", "float", "bool", "str", "complex", "bytes"})


def _declared(annotation) -> int:
    """What a field's annotation says: a Python scalar, list, or numpy array (a tensor
    annotation says nothing of where it lives)."""
    expr = places.unquoted(annotation)
    if expr is None:
        return 0
    expr = places.unwrapped(expr)
    members = None
    if type(expr) is ast.BinOp and type(expr.op) is ast.BitOr:
        members = (expr.left, expr.right)
    elif type(expr) is ast.Subscript and places._last_name(expr.value) == "Union":
        members = tuple(expr.slice.elts) if type(expr.slice) is ast.Tuple else (expr.slice,)
    if members is not None:
        masks = [_declared(m) for m in members]
        if any(m & SCALAR for m in masks) and any(places.tensor_annotation(m) for m in members):
            # `causal: bool | torch.Tensor`: the field may hold a Python value; the class says so
            # (its tensor values do not make it a device field alone).
            return SCALAR
        if len(members) == 2 and type(expr) is ast.BinOp:
            left, right = masks
            return left | right if left and right or _is_none(expr.left) or _is_none(expr.right) else 0
        return 0 if not all(masks) else reduce(or_, masks)
    if type(expr) is ast.Name and expr.id in _SCALAR_TYPES:
        return SCALAR
    mask = places.annotation_mask(expr)
    if mask:
        return mask
    head = expr.value if type(expr) is ast.Subscript else expr
    if places._last_name(head) in _PYTHON_CONTAINER_TYPES:
        return SCALAR  # a Python container: not a tensor
    return 0


_NUMBER_TYPES = frozenset({"int", "float"})
# Annotations of Python containers (`OrderedDict[Key, int]`, `deque[int]`): never a tensor.
_PYTHON_CONTAINER_TYPES = frozenset({
    "dict", "Dict", "OrderedDict", "defaultdict", "DefaultDict", "Counter", "Mapping", "MutableMapping",
    "set", "Set", "frozenset", "FrozenSet", "deque", "Deque", "tuple", "Tuple", "Sequence", "Callable",
})

_SEQUENCE_TYPES = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "MutableSequence", "Iterable", "Iterator",
                             "set", "Set", "frozenset", "dict", "Dict", "Mapping", "range"})
_PYTHON_ITERATORS = frozenset({"range", "list", "tuple", "sorted", "reversed", "set", "dict"})
_PYTHON_METHODS = frozenset({"tolist", "keys", "values", "items", "split", "splitlines"})


def _sequence_parameters(node) -> frozenset:
    """Parameters of a function annotated a Python container (`Sequence[int]`, `list[int]`)
    and never rebound in it (`timesteps, n = retrieve_timesteps(...)` makes a `list[int]`
    parameter a tensor)."""
    if type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return frozenset()
    args = node.args
    rebound = {n.id for n in astwalk.walk(node) if type(n) is ast.Name and type(n.ctx) is ast.Store}
    out = set()
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        expr = a.annotation
        while type(expr) is ast.Subscript and places._last_name(expr.value) in ("Optional", "Final", "Annotated"):
            expr = expr.slice.elts[0] if type(expr.slice) is ast.Tuple else expr.slice
        head = expr.value if type(expr) is ast.Subscript else expr
        if expr is not None and places._last_name(head) in _SEQUENCE_TYPES:
            out.add(a.arg)
        elif type(expr) is ast.Subscript and type(expr.slice) is ast.Name and expr.slice.id in ("int", "float", "bool"):
            out.add(a.arg)  # `GenericSequence[int]`: a container of Python numbers, whatever it is called
    return frozenset(out - rebound)


def _python_iterable(expr, sequences) -> bool:
    """An iterable whose elements are Python values: `range(n)`, a literal or comprehension,
    `t.tolist()`, `d.items()`, a parameter annotated a Python container."""
    kind = type(expr)
    if kind in (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.Dict, ast.Constant, ast.JoinedStr):
        return True
    if kind is ast.Name:
        return expr.id in sequences
    if kind is ast.Call:
        func = expr.func
        if type(func) is ast.Name:
            return func.id in _PYTHON_ITERATORS
        if type(func) is ast.Attribute:
            return func.attr in _PYTHON_METHODS
    return False


def _has_number_parameter(unit) -> bool:
    node = unit.node
    if type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return False
    args = node.args
    return any(a.annotation is not None and _number_annotation(a.annotation) for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


def _number_annotation(annotation, types=_NUMBER_TYPES) -> bool:
    """`int`, `float`, `Optional[int]`, `int | None`: a parameter declared a Python number."""
    expr = places.unquoted(annotation)
    if expr is None:
        return False
    expr = places.unwrapped(expr)
    if type(expr) is ast.BinOp and type(expr.op) is ast.BitOr:
        sides = [e for e in (expr.left, expr.right) if not _is_none(e)]
        return len(sides) == 1 and _number_annotation(sides[0], types)
    return type(expr) is ast.Name and expr.id in types


def _number_field_annotation(annotation) -> bool:
    """A field declared a Python number: `int`, `float`, `bool`, `Optional[int]`, `int | None`
    (a `ClassVar` too)."""
    return _number_annotation(annotation, _NUMBER_TYPES | {"bool"})


def _is_none(expr) -> bool:
    return type(expr) is ast.Constant and expr.value is None


def _declared_fields(tensors) -> set[tuple]:
    """(class, field) declared a tensor (`("", field)`: by some class, for a read by the
    name), and `("python", class, field)`: declared Python data (`keys: Optional[List[str]]`)."""
    return (
        {(k[1], k[2]) for k in tensors if k[0] == "A"}
        | {("", k[1]) for k in tensors if k[0] == "a"}
        | {("python", k[1], k[2]) for k in tensors if k[0] == "D"}
        | {("number", k[1], k[2]) for k in tensors if k[0] == "N"}
    )


def _scalar(value) -> bool:
    """A value that is plainly a Python scalar, string or container (not a tensor)."""
    kind = type(value)
    if kind is ast.Constant:
        return value.value is not None and value.value is not Ellipsis
    if kind in (ast.JoinedStr, ast.Dict, ast.Set, ast.DictComp, ast.SetComp, ast.Tuple, ast.List, ast.ListComp, ast.Compare):
        return True
    if kind is ast.UnaryOp:
        return type(value.op) is ast.Not or _scalar(value.operand)
    if kind is ast.Call:
        func = value.func
        if type(func) is ast.Name:
            return func.id in api.SCALAR_BUILTINS or func.id in api.SEQUENCE_BUILTINS
        if type(func) is ast.Attribute:
            return func.attr in api.SCALAR_RESULT_METHODS or func.attr in api.SEQUENCE_RESULT_METHODS
    if kind is ast.BinOp:
        return _scalar(value.left) and _scalar(value.right)
    return False
