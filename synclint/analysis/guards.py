"""Branches guarded by a parameter, and what the callers pass for it.

A sync in `if k_scale is None: k_scale = torch.tensor(1.0, device=d)` runs only for calls
that leave `k_scale` out; one in `if wait: event.synchronize()` only for calls that pass a
true `wait`. Where every caller on a hot path passes `k_scale`, or none passes `wait=True`
(shutdown does, and shutdown is cold), the branch never runs in steady state.

Two halves, one vocabulary of argument kinds:

- the repository index (`ast`, synclint/repo/) writes, for every call a function makes, the
  kind of each argument (`argument_signature`), and for every function the parameters whose
  value can decide a branch (`decisive_parameters`: tested or passed on);
- the tiers (`libcst`, synclint/analysis/guarded_branches.py and tier.py) read the
  conditions a finding sits under, ask the call graph which kinds the callers on hot paths
  pass for that parameter, and call the branch cold when none can take it (`can_take`).

This module is the index's half and the shared vocabulary: `ast` only (the index does not
import libcst).

Argument kinds:

| kind | the argument |
|---|---|
| `N` | `None`, or left out where the default is `None` |
| `T` / `F` | a true / false literal (`True`, `1`, `"x"` / `False`, `0`, `""`), or left out for such a default |
| `c` | the CPU device: `"cpu"`, `"cpu:0"`, `torch.device("cpu")`, a local name bound only to one, or left out for such a default (true, never `None`) |
| `g` | given: a call, a computed value, a local name never bound to what may be `None`: taken to be a value |
| `?` | unknown: what may be `None` (a field `batch.x_cpu`, an item, a conditional expression, a `.get(...)`, a name bound to one of these), or a `*args`/`**kwargs` call |
| `@q#i#d` | the caller's own parameter `q` (at position `i`, default kind `d`) passed on: what the caller's callers pass for it |
| `@q#i#d#g` | the same, where `q` is declared never None (`max_top_k: int`): what may be None among what its callers pass (or all, where they are not known) is taken to be a value |
| `@q#i#d#n` | the same, where a test around the call says `q` is not None (`if q is not None: f(q)`): what its callers pass, None aside (a value where they are not known) |

An argument a test around the call says is not None (`if meta.lens_cpu is not None:
f(meta.lens_cpu)`, the `else` of `if x is None:`, after `if x is None: return`;
`narrowed_calls`) is `g` where it would be `?` or a field's value.
| `Pcpu` | a platform predicate (`current_platform.is_cpu()`, `_is_npu`): false where the target platforms (`target-platforms`) are none of its own |

A debug switch (`self.debug_mode`, `ps > 1 and pool.debug_mode`, `os.environ.get("X_DEBUG")`,
as synclint/analysis/coldcode.py reads one, or a local bound only to one) is passed as `F`:
true only while debugging, which is not steady state.

The index's other readings of a module live beside this one: the calls made on a platform's
branch (synclint/analysis/platform_branches.py), what the repository assigns to fields
(synclint/analysis/given_fields.py) and where it uses its classes
(synclint/analysis/class_uses.py).
"""

from __future__ import annotations

import ast
import functools
from collections import Counter

from synclint.analysis import astwalk
from synclint.analysis.coldcode import debug_switch
from synclint.analysis.platform_words import predicate_platforms

NONE, TRUE, FALSE, GIVEN, UNKNOWN = "N", "T", "F", "g", "?"
CPU_DEVICE = "c"  # the CPU device (`"cpu"`, `torch.device("cpu")`): a true value, never None
PLATFORM = "P"  # `P<platform>+<platform>`: a platform predicate (`current_platform.is_cpu()`)

# The last part of a parameter passed on (`@q#i#d#g`): declared never None (`max_top_k: int`),
# so what may be None among what its callers pass is taken to be a value; or (`#n`) tested
# not None around the call (`if q is not None: f(q)`), so what its callers pass other than
# None is what reaches the call.
DECLARED, NARROWED = "#g", "#n"

LIST = "l"  # a Python list (`[...]`, `t.tolist()`, `list(...)`): never None, never a tensor

# What each condition on a parameter needs the parameter to be.
IS_NONE, NOT_NONE, TRUTHY, FALSY = "is None", "is not None", "is true", "is false"
IS_LIST, NOT_LIST, IS_TENSOR, NOT_TENSOR = "is a list", "is not a list", "is a tensor", "is not a tensor"
_TAKES = {
    IS_NONE: frozenset({NONE, UNKNOWN}),
    NOT_NONE: frozenset({TRUE, FALSE, GIVEN, UNKNOWN, CPU_DEVICE, LIST}),
    TRUTHY: frozenset({TRUE, GIVEN, UNKNOWN, CPU_DEVICE, LIST}),
    FALSY: frozenset({FALSE, NONE, GIVEN, UNKNOWN, LIST}),
    IS_LIST: frozenset({GIVEN, UNKNOWN, LIST}),
    NOT_LIST: frozenset({NONE, TRUE, FALSE, GIVEN, UNKNOWN, CPU_DEVICE}),
    IS_TENSOR: frozenset({GIVEN, UNKNOWN}),
    NOT_TENSOR: frozenset({NONE, TRUE, FALSE, GIVEN, UNKNOWN, CPU_DEVICE, LIST}),
}

_LIST_CALLS = frozenset({"list", "sorted"})


def list_value(expr: ast.expr) -> bool:
    """Whether `expr` is a Python list: a display, a comprehension, `t.tolist()`, `list(...)`."""
    kind = type(expr)
    if kind in (ast.List, ast.ListComp):
        return True
    if kind is ast.Call:
        func = expr.func
        if type(func) is ast.Attribute:
            return func.attr == "tolist"
        return type(func) is ast.Name and func.id in _LIST_CALLS
    return False


def instance_test(cls: str | None, positive: bool) -> str | None:
    """The condition `isinstance(p, cls)` puts on `p` (`cls` as `_instance_class` reads it:
    "list", "tensor" or None)."""
    if cls == "list":
        return IS_LIST if positive else NOT_LIST
    if cls == "tensor":
        return IS_TENSOR if positive else NOT_TENSOR
    return None


def _instance_class(types: ast.expr) -> str | None:
    """`list` for `list` or `(list, tuple)`, `tensor` for `torch.Tensor` / `Tensor`."""
    if type(types) is ast.Tuple:
        names = {_instance_class(e) or (e.id if type(e) is ast.Name else "?") for e in types.elts}
        return "list" if names == {"list", "tuple"} else None
    if type(types) is ast.Name:
        return "list" if types.id == "list" else "tensor" if types.id == "Tensor" else None
    if type(types) is ast.Attribute and types.attr == "Tensor" and type(types.value) is ast.Name and types.value.id == "torch":
        return "tensor"
    return None


def can_take(condition: str, kinds) -> bool:
    """Whether an argument of one of `kinds` can satisfy `condition`."""
    return any(k in _TAKES[condition] for k in kinds)


def constant_kind(value) -> str:
    if value is None:
        return NONE
    if value is Ellipsis:
        return UNKNOWN
    if type(value) is str:
        head, colon, index = value.partition(":")
        if head == "cpu" and (not colon or index.isdigit()):
            return CPU_DEVICE  # `"cpu"`, `"cpu:0"`: a true string that names the CPU device
    return TRUE if value else FALSE


def cpu_device(expr: ast.expr) -> bool:
    """`"cpu"`, `"cpu:0"`, `torch.device("cpu")`, `torch.device("cpu", 0)`,
    `torch.device(type="cpu")`: a value that names the CPU device (not `torch.device(x)` of
    a value not said here)."""
    kind = type(expr)
    if kind is ast.Constant:
        return constant_kind(expr.value) == CPU_DEVICE
    if kind is ast.Call and not any(type(a) is ast.Starred for a in expr.args) and all(k.arg is not None for k in expr.keywords):
        func = expr.func
        named = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
        if named != "device" or (type(func) is ast.Attribute and not (type(func.value) is ast.Name and func.value.id == "torch")):
            return False
        first = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "type"), None)
        return first is not None and type(first) is ast.Constant and first.value == "cpu"
    return False


def parameters(func: ast.AST) -> dict[str, tuple[int, str]]:
    """A function's parameters (without `self`/`cls`) -> (position, or -1 for keyword-only;
    the kind of its default, `-` where it has none)."""
    args = func.args
    positional = [a for a in [*args.posonlyargs, *args.args]]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out: dict[str, tuple[int, str]] = {}
    position = 0
    for a, default in zip(positional, defaults):
        if a.arg in ("self", "cls") and not out and position == 0:
            continue
        out[a.arg] = (position, _default_kind(default))
        position += 1
    for a, default in zip(args.kwonlyargs, args.kw_defaults):
        out[a.arg] = (-1, _default_kind(default))
    if args.kwarg is not None:
        out[KEYWORDS] = (-2, args.kwarg.arg)  # `**kwargs`: what it forwards is what its callers pass
    return out


KEYWORDS = "**"  # the key of `parameters` that names the function's `**kwargs`, where it has one


def _default_kind(default) -> str:
    if default is None:
        return "-"
    if type(default) is ast.Constant:
        return constant_kind(default.value)
    return GIVEN


class Bindings(frozenset):
    """The names a function binds to what may be `None` somewhere (`None`, a field, an item,
    a conditional value, a `.get(...)`; see `argument_kind`), with `.rebound`: every name it
    assigns, and `.filled`: those it fills where they are None (`if q is None: q = [...]`)."""

    rebound: frozenset[str] = frozenset()
    filled: frozenset[str] = frozenset()
    mutated: frozenset[str] = frozenset()  # names whose items it sets, deletes, pops or updates (`kwargs["x"] = 1`)
    platform: dict = {}  # name -> the platform kind of the one predicate it is bound to (`is_cpu = current_platform.is_cpu()`)
    debug: frozenset[str] = frozenset()  # names bound only to a debug switch (`check = n > 1 and self.debug_mode`; never a `for` target, `+=`, ...)
    cpu: frozenset[str] = frozenset()  # names bound only to the CPU device (`device = torch.device("cpu")`)
    lists: frozenset[str] = frozenset()  # names bound only to Python lists (`sizes = t.tolist()`, or `a = b` under `if isinstance(b, list):`)
    fields: dict = {}  # name -> the field its one binding reads (`lens = meta.per_req_lens`)
    declared: frozenset[str] = frozenset()  # parameters declared never None (`max_top_k: int`)
    keyword_dicts: dict = {}  # name -> the `dict(a=x, ...)` or `{"a": x, ...}` its one binding is (`f(**name)` passes them)
    tests_none: bool = False  # whether it tests anything `is None` or `is not None` (`narrowed_calls` has work)


@functools.lru_cache(maxsize=2048)
def none_assigned(func: ast.AST) -> Bindings:
    """Read once per function (by identity: the index asks for each function's bindings, and
    again while it reads what a module assigns to fields; `repo.summarize` clears the memo
    after each module). The result is read-only."""
    maybe, rebound, filled, mutated = set(), set(), set(), set()
    platform: dict[str, set] = {}
    debug: dict[str, bool] = {}
    cpu: dict[str, bool] = {}
    lists: dict[str, bool] = {}
    narrowed: set[int] = set()  # `a = b` statements in the body of `if isinstance(b, list):`
    bindings: Counter = Counter()
    fields: dict[str, str] = {}
    keyword_dicts: dict[str, ast.expr] = {}
    tests_none = False
    for node in astwalk.walk(func):
        kind = type(node)
        if kind is ast.Subscript and type(node.ctx) is not ast.Load and type(node.value) is ast.Name:
            mutated.add(node.value.id)  # `kwargs["x"] = 1`, `del kwargs["x"]`
        elif kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _MUTATORS and type(node.func.value) is ast.Name:
            mutated.add(node.func.value.id)  # `kwargs.pop("x")`, `kwargs.update(...)`
        if kind is ast.Assign:
            names = [t.id for t in node.targets if type(t) is ast.Name]
            rebound.update(names)
            bindings.update(names)
            if type(node.value) is ast.Attribute:
                fields.update((name, node.value.attr) for name in names)
            if _keyword_dict(node.value):
                keyword_dicts.update((name, node.value) for name in names)
            if _maybe_none(node.value):
                maybe.update(names)
            switch = debug_switch(node.value)
            for name in names:
                debug[name] = debug.get(name, True) and switch
            on_cpu = cpu_device(node.value)
            for name in names:
                cpu[name] = cpu.get(name, True) and on_cpu
            listed = list_value(node.value) or id(node) in narrowed
            for name in names:
                lists[name] = lists.get(name, True) and listed
            for target in node.targets:
                if type(target) is not ast.Name:  # `a, device = ...`: not a CPU device (nor a list, nor a switch) alone
                    cpu.update((n.id, False) for n in astwalk.walk(target) if type(n) is ast.Name)
                    lists.update((n.id, False) for n in astwalk.walk(target) if type(n) is ast.Name)
                    debug.update((n.id, False) for n in astwalk.walk(target) if type(n) is ast.Name)
            platforms = _platform_predicate(node.value)
            for name in names:
                platform.setdefault(name, set()).add(PLATFORM + "+".join(sorted(platforms)) if platforms else "")
        elif kind in (ast.AnnAssign, ast.NamedExpr, ast.AugAssign) and type(node.target) is ast.Name:
            rebound.add(node.target.id)
            cpu[node.target.id] = False
            debug[node.target.id] = False
            name = node.target.id
            if kind is ast.AugAssign:  # `sizes += [n]` keeps a list a list
                lists[name] = lists.get(name, False) and type(node.op) is ast.Add
            else:
                lists[name] = node.value is not None and list_value(node.value) and lists.get(name, True)
            bindings[node.target.id] += 2  # never the one plain binding of a field
            if kind is not ast.AugAssign and node.value is not None and _maybe_none(node.value):
                maybe.add(node.target.id)
        elif kind in (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith):
            targets = [node.target] if kind in (ast.For, ast.AsyncFor) else [i.optional_vars for i in node.items if i.optional_vars is not None]
            for target in targets:
                names = [n.id for n in astwalk.walk(target) if type(n) is ast.Name]
                rebound.update(names)
                cpu.update((name, False) for name in names)
                lists.update((name, False) for name in names)
                debug.update((name, False) for name in names)
                bindings.update(names * 2)
        if kind is ast.Compare and not tests_none:
            tests_none = any(type(c) is ast.Constant and c.value is None for c in node.comparators)
        if kind is ast.If:
            narrowed.update(_list_copies(node))
        if kind is ast.If and _is_none_test(node.test):
            name = node.test.left.id
            if any(type(s) is ast.Assign and any(type(t) is ast.Name and t.id == name for t in s.targets) and not _maybe_none(s.value)
                   for s in node.body):
                filled.add(name)
    found = Bindings(maybe)
    found.rebound, found.filled, found.mutated = frozenset(rebound), frozenset(filled - maybe), frozenset(mutated)
    found.platform = {name: kinds.pop() for name, kinds in platform.items() if len(kinds) == 1 and "" not in kinds}
    found.debug = frozenset(name for name, only in debug.items() if only)
    found.cpu = frozenset(name for name, only in cpu.items() if only)
    found.lists = frozenset(name for name, only in lists.items() if only)
    found.fields = {name: attr for name, attr in fields.items() if bindings[name] == 1}
    found.keyword_dicts = {name: value for name, value in keyword_dicts.items() if bindings[name] == 1 and name not in mutated}
    found.declared = _declared_never_none(func)
    found.tests_none = tests_none
    return found


def _keyword_dict(value: ast.expr) -> bool:
    """`dict(a=x, b=y)` or `{"a": x, "b": y}`: every key a name written out."""
    if type(value) is ast.Call:
        return type(value.func) is ast.Name and value.func.id == "dict" and not value.args and all(kw.arg for kw in value.keywords)
    if type(value) is ast.Dict:
        return all(type(k) is ast.Constant and type(k.value) is str and k.value.isidentifier() for k in value.keys)
    return False


def keyword_items(value: ast.expr) -> list[tuple[str, ast.expr]]:
    """The (keyword, value) pairs of a `_keyword_dict`."""
    if type(value) is ast.Call:
        return [(kw.arg, kw.value) for kw in value.keywords]
    return [(k.value, v) for k, v in zip(value.keys, value.values)]


def _declared_never_none(func: ast.AST) -> frozenset[str]:
    """The named parameters whose annotation says they are never None (`max_top_k: int`, with
    no default or a default that is not None): not `Optional[...]`, `... | None` or `Any`."""
    args = getattr(func, "args", None)
    if args is None:
        return frozenset()
    stars = {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return frozenset(name for name, kind in _annotated_parameters(func).items() if kind == GIVEN and name not in stars)


def _list_copies(node: ast.If):
    """ids of the `a = b` statements of the body of `if isinstance(b, list):` (`a` is a list)."""
    for name, condition in _requirements(node.test, True):
        if condition == IS_LIST:
            for stmt in node.body:
                if type(stmt) is ast.Assign and type(stmt.value) is ast.Name and stmt.value.id == name:
                    yield id(stmt)


_MUTATORS = frozenset({"pop", "popitem", "update", "setdefault", "clear", "__setitem__", "__delitem__"})


def _is_none_test(test: ast.expr) -> bool:
    """`name is None`."""
    return (
        type(test) is ast.Compare and type(test.left) is ast.Name and len(test.ops) == 1 and type(test.ops[0]) is ast.Is
        and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None
    )


def _maybe_none(expr: ast.expr) -> bool:
    kind = type(expr)
    if kind is ast.Constant:
        return expr.value is None
    if kind is ast.IfExp:
        # `hint if hint is not None else compute(x)`: None only where a branch may be.
        return not (_never_none(expr.body, expr.test, True) and _never_none(expr.orelse, expr.test, False))
    if kind in (ast.Attribute, ast.Subscript, ast.BoolOp, ast.Await):
        return True
    if kind is ast.Call:
        func = expr.func
        return (type(func) is ast.Attribute and func.attr in _MAYBE_NONE_CALLS) or (type(func) is ast.Name and func.id == "getattr")
    return False


# Calls that return `None` for a missing key: `d.get(k)`, `d.pop(k, None)`, `getattr(o, n, None)`.
_MAYBE_NONE_CALLS = frozenset({"get", "pop", "getattr"})

# Expressions whose value is never `None`: literals and displays, arithmetic, comparisons.
_VALUE_EXPRESSIONS = (ast.Tuple, ast.List, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                      ast.JoinedStr, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Lambda)


def _never_none(branch: ast.expr, test: ast.expr, positive: bool) -> bool:
    """Whether a branch of a conditional expression is never `None`: a value that cannot be
    (a literal, a display, arithmetic, a call that is no `.get()`), or the name the test
    itself says is not None there (`hint` in `hint if hint is not None else ...`)."""
    kind = type(branch)
    if kind is ast.Name:
        return any(name == branch.id and condition in (NOT_NONE, TRUTHY) for name, condition in _requirements(test, positive))
    if kind is ast.Constant:
        return branch.value is not None
    if kind is ast.IfExp:
        return not _maybe_none(branch)
    if kind is ast.Call:
        return not _maybe_none(branch)
    return kind in _VALUE_EXPRESSIONS


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _held_text(expr: ast.expr) -> str | None:
    """`x` or `meta.lens_cpu`: a name, or fields read off one; None for anything else."""
    parts = []
    while type(expr) is ast.Attribute:
        parts.append(expr.attr)
        expr = expr.value
    if type(expr) is not ast.Name:
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _not_none_when(test: ast.expr, positive: bool) -> frozenset[str]:
    """The names and fields (`_held_text`) that `test` being `positive` says are not None:
    `x is not None`, the `else` of `meta.lens is None`, each side of `a is not None and b
    is not None`. (A test of truth says so too, but is left out: functions with no `is
    None` test are not read at all, `Bindings.tests_none`.)"""
    kind = type(test)
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        return _not_none_when(test.operand, not positive)
    if kind is ast.BoolOp:
        if (type(test.op) is ast.And) is positive:
            return frozenset().union(*(_not_none_when(v, positive) for v in test.values))
        return frozenset()
    if kind is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Is, ast.IsNot):
        right = test.comparators[0]
        if type(right) is ast.Constant and right.value is None and (type(test.ops[0]) is ast.IsNot) is positive:
            text = _held_text(test.left)
            return frozenset((text,)) if text else frozenset()
        return frozenset()
    return frozenset()


def _bound_names(stmt: ast.stmt) -> set[str]:
    """The names a statement binds at its own level (`x = ...`, `x: T = ...`, `x += ...`, a
    `for` target, `with ... as x`): what was known of them before no longer holds."""
    kind = type(stmt)
    if kind is ast.Assign:
        targets = stmt.targets
    elif kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor):
        targets = [stmt.target]
    elif kind in (ast.With, ast.AsyncWith):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    else:
        return set()
    return {n.id for t in targets for n in astwalk.walk(t) if type(n) is ast.Name}


def narrowed_calls(func: ast.AST) -> dict[int, frozenset[str]]:
    """id of each call `func` makes (not those of functions nested in it) where a test
    around it says some of its names or fields are not None -> their texts (`_held_text`):
    in `if meta.lens_cpu is not None: f(meta.lens_cpu)`, the `else` of `if x is None:`, what
    follows `if x is None: return` in its block, `x is not None and f(x)`, and `f(x) if x
    is not None else g()`. An argument that is one of them is a value, whatever may be None
    elsewhere (`argument_kind`)."""
    out: dict[int, frozenset[str]] = {}

    def expression(node: ast.AST, known: frozenset[str]) -> None:
        pending = [(node, known)]
        while pending:
            node, known = pending.pop()
            kind = type(node)
            if kind is ast.Lambda:
                continue
            if kind is ast.Call and known:
                out[id(node)] = known
            if kind is ast.IfExp:
                pending.append((node.test, known))
                pending.append((node.body, known | _not_none_when(node.test, True)))
                pending.append((node.orelse, known | _not_none_when(node.test, False)))
            elif kind is ast.BoolOp:
                positive = type(node.op) is ast.And
                before = known
                for value in node.values:
                    pending.append((value, before))
                    before = before | _not_none_when(value, positive)
            else:
                pending.extend((child, known) for child in astwalk.children(node))

    def block(statements, known: frozenset[str]) -> None:
        for stmt in statements:
            kind = type(stmt)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                continue
            if kind is ast.If or kind is ast.While:
                expression(stmt.test, known)
                block(stmt.body, known | _not_none_when(stmt.test, True))
                block(stmt.orelse, known | _not_none_when(stmt.test, False) if kind is ast.If else known)
                if kind is ast.If and not stmt.orelse and stmt.body and type(stmt.body[-1]) in _EXITS:
                    known = known | _not_none_when(stmt.test, False)  # `if x is None: return`: x is given below
                continue
            for child in astwalk.children(stmt):
                if isinstance(child, ast.stmt) or isinstance(child, ast.excepthandler) or type(child) is ast.match_case:
                    continue
                expression(child, known)
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if type(inner) is list:
                    block(inner, known)
            for handler in getattr(stmt, "handlers", ()) or ():
                block(handler.body, known)
            for case in getattr(stmt, "cases", ()) or ():
                block(case.body, known)
            bound = _bound_names(stmt)
            if bound and known:
                known = frozenset(t for t in known if t.partition(".")[0] not in bound)

    block(func.body, frozenset())
    return out


def argument_kind(expr: ast.expr, own: dict[str, tuple[int, str]], none_names: frozenset[str], owner_of=None,
                  narrowed: frozenset[str] = frozenset()) -> str:
    """The kind of an argument (the table of the module docstring). `narrowed`: the names and
    fields a test around the call says are not None (`narrowed_calls`): one of them is a
    value, and a parameter passed on is what its callers pass other than None."""
    found = _argument_kind(expr, own, none_names, owner_of)
    if narrowed and (found == UNKNOWN or found[:1] in (FIELD, "@")) and _held_text(expr) in narrowed:
        if found[:1] == "@":  # `@q#i#d#n`: what its callers pass, None aside
            return f"{found.removesuffix(DECLARED)}{NARROWED}"
        return GIVEN
    return found


def _argument_kind(expr: ast.expr, own: dict[str, tuple[int, str]], none_names: frozenset[str], owner_of=None) -> str:
    kind = type(expr)
    if kind is ast.Constant:
        return constant_kind(expr.value)
    if kind is ast.Name:
        if expr.id in none_names.debug and expr.id not in own:
            return FALSE  # `check = n > 1 and self.debug_mode`, then `f(x, check)`
        if expr.id in none_names.cpu and expr.id not in own:
            return CPU_DEVICE  # `device = torch.device("cpu")`, then `f(x, device=device)`
        if expr.id in none_names.lists and expr.id not in own:
            return LIST  # `sizes = lens.tolist()`, then `f(sizes)`
        if expr.id in none_names.fields and expr.id not in own:
            return FIELD + none_names.fields[expr.id]  # `lens = meta.lens`, then `f(lens)`
        if expr.id in none_names:
            return UNKNOWN
        if expr.id in none_names.platform and expr.id not in own:
            return none_names.platform[expr.id]  # `is_cpu = current_platform.is_cpu()`, then `f(x, is_cpu)`
        if expr.id in own:
            if expr.id in none_names.filled:
                return GIVEN  # `if q is None: q = [...]` before: never None here
            if expr.id in none_names.rebound:
                return UNKNOWN  # passed on after some other rebinding
            position, default = own[expr.id]
            # `#g`: declared never None, which is what it is where its callers are not known
            declared = DECLARED if expr.id in none_names.declared else ""
            return f"@{expr.id}#{position}#{default}{declared}"
        return GIVEN
    if kind is ast.Call and cpu_device(expr):
        return CPU_DEVICE  # `torch.device("cpu")`
    if list_value(expr):
        return LIST
    platforms = _platform_predicate(expr)
    if platforms is not None:  # `current_platform.is_cpu()`: true on those platforms only
        return PLATFORM + "+".join(sorted(platforms))
    if kind is not ast.Name and debug_switch(expr):
        return FALSE  # `debug=self.debug_mode`: true only while debugging
    if kind is ast.Attribute:
        # a field's value: given where the repository never makes it None (`~Cls.f` where the
        # object's class is known: the values assigned to that class's field `f`)
        owner = owner_of(expr) if owner_of is not None else None
        return FIELD + (f"{owner}.{expr.attr}" if owner else expr.attr)
    if kind is ast.NamedExpr or _maybe_none(expr):
        return UNKNOWN
    return GIVEN


def _platform_predicate(expr: ast.expr) -> frozenset[str] | None:
    if type(expr) is ast.Call and not expr.args and not expr.keywords:
        expr = expr.func
    if type(expr) is ast.Attribute:
        return predicate_platforms(expr.attr)
    if type(expr) is ast.Name:
        return predicate_platforms(expr.id)
    return None


def on_targets(kind: str, targets: frozenset[str]) -> str:
    """A platform predicate's kind on the target platforms: false where it holds on none of
    them, true where on all, unknown where on some."""
    platforms = set(kind[len(PLATFORM):].split("+"))
    if not platforms & targets:
        return FALSE
    return TRUE if targets <= platforms else UNKNOWN


def argument_signature(call: ast.Call, own: dict[str, tuple[int, str]], none_names: frozenset[str], owner_of=None,
                       narrowed: frozenset[str] = frozenset()) -> str:
    """`g,N,@hint#1#N;wait=T`: the kinds of a call's positional arguments, then `;` and its
    keywords; `*` where a `*args` or `**kwargs` makes the rest unknown, and `*@a.b` where
    the caller forwards its own `**kwargs` untouched (whose named parameters are `a`, `b`):
    a keyword the call does not name is what the caller's callers pass for it."""
    positional = []
    for arg in call.args:
        if type(arg) is ast.Starred:
            positional.append("*")
            break
        positional.append(argument_kind(arg, own, none_names, owner_of, narrowed))
    keywords = []
    for kw in call.keywords:
        if kw.arg is None:
            local = none_names.keyword_dicts.get(kw.value.id) if type(kw.value) is ast.Name and kw.value.id not in own else None
            if local is not None:  # `f(**opts)` of `opts = dict(a=x, ...)`: the keywords it holds
                keywords.extend(f"{key}={argument_kind(value, own, none_names, owner_of, narrowed)}" for key, value in keyword_items(local))
            else:
                keywords.append(_forwarded(kw.value, own, none_names))
        else:
            keywords.append(f"{kw.arg}={argument_kind(kw.value, own, none_names, owner_of, narrowed)}")
    return ",".join(positional) + ";" + ",".join(keywords)


def _forwarded(value: ast.expr, own, none_names) -> str:
    """The keyword entry of `**value`: `*@a.b` where `value` is the caller's own `**kwargs`,
    neither rebound nor changed (its named parameters `a`, `b` never reach it), else `*`."""
    kwargs = own.get(KEYWORDS)
    if kwargs is None or type(value) is not ast.Name or value.id != kwargs[1]:
        return "*"
    if value.id in none_names.rebound or value.id in none_names.mutated:
        return "*"
    return "*@" + ".".join(n for n in own if n != KEYWORDS)


def passed_kind(signature: str, name: str, position: int, default: str) -> str:
    """The kind a call with `signature` passes for parameter `name` (at `position`, -1 for
    keyword-only, with `default` the kind of its default). Left to a forwarded `**kwargs`
    (`*@...`): `@name#-1#default`, what the caller's callers pass for the keyword, or the
    default where `name` is one of the caller's named parameters (never in its `**kwargs`)."""
    positional, _, keywords = signature.partition(";")
    args = positional.split(",") if positional else []
    if position >= 0 and "*" in args[: position + 1]:
        return UNKNOWN
    if "*" in args and "*@" in keywords:
        # `f(*args, **kwargs)` of a wrapper: never followed up its callers, whose calls by
        # name (`forward`) are too many to search. Otherwise a `*args` never fills a
        # keyword-only parameter (position -1): its keyword, or its default, says.
        return UNKNOWN
    if 0 <= position < len(args):
        return args[position]
    forwarded = None
    for kw in keywords.split(",") if keywords else ():
        if kw[:1] == "*":
            if kw == "*":
                return UNKNOWN
            forwarded = kw[2:].split(".")
            continue
        key, _, kind = kw.partition("=")
        if key == name:
            return kind
    if forwarded is not None and name not in forwarded:
        return f"@{name}#-1#{default}"
    return UNKNOWN if default == "-" else default


def shape(func: ast.AST) -> str:
    """As guarded_branches.shape_of, from `ast`: `2|x,hint,wait|x|ak`, the positional
    parameters' count (without `self`), every name it accepts, those without a default, and
    whether it takes `*args` (a) and `**kwargs` (k)."""
    own = {name: value for name, value in parameters(func).items() if name != KEYWORDS}
    count = sum(1 for position, _ in own.values() if position >= 0)
    stars = ("a" if func.args.vararg is not None else "") + ("k" if func.args.kwarg is not None else "")
    required = ",".join(name for name, (_, default) in own.items() if default == "-")
    return f"{count}|{','.join(own)}|{required}|{stars}"


def fits(signature: str, shape: str) -> bool:
    """Whether a call with `signature` can be a call of a function of `shape`
    (guarded_branches.shape_of):
    no more positional arguments than it takes, no keyword it does not name, every parameter
    without a default given. A call by name of another class's method
    (`batch.filter_batch(reqs_to_exclude=...)`, `batch.filter_batch()`) does not fit."""
    if not shape:
        return True
    count, names, required, stars = shape.split("|")
    positional, _, keywords = signature.partition(";")
    args = positional.split(",") if positional else []
    given = [kw.partition("=")[0] for kw in keywords.split(",")] if keywords else []
    if "*" in args or any(g[:1] == "*" for g in given):
        return True  # `f(*args)`, `f(**kwargs)`: anything may be passed
    if len(args) > int(count) and "a" not in stars:
        return False
    accepted = names.split(",")
    if "k" not in stars and any(k not in accepted for k in given):
        return False
    passed = set(accepted[: len(args)]) | set(given)
    return all(r in passed for r in required.split(",") if r)


def _requirements(test: ast.expr, positive: bool) -> list[tuple[str, str]]:
    """(name, condition) that hold when `test` is `positive` (as guarded_branches does with
    libcst for a finding's branches)."""
    kind = type(test)
    if kind is ast.Name:
        return [(test.id, TRUTHY if positive else FALSY)]
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        return _requirements(test.operand, not positive)
    if kind is ast.BoolOp:
        if type(test.op) is ast.And and positive or type(test.op) is ast.Or and not positive:
            return [pair for value in test.values for pair in _requirements(value, positive)]
        return []
    if kind is ast.Call and type(test.func) is ast.Name and test.func.id == "isinstance" and len(test.args) == 2 and not test.keywords:
        condition = instance_test(_instance_class(test.args[1]), positive)
        if condition is not None and type(test.args[0]) is ast.Name:
            return [(test.args[0].id, condition)]
        return []
    if kind is ast.Compare and type(test.left) is ast.Name and len(test.ops) == 1:
        right = test.comparators[0]
        if type(right) is ast.Constant and right.value is None:
            if type(test.ops[0]) is ast.Is:
                return [(test.left.id, IS_NONE if positive else NOT_NONE)]
            if type(test.ops[0]) is ast.IsNot:
                return [(test.left.id, NOT_NONE if positive else IS_NONE)]
    return []


def guarded_calls(func: ast.AST, own: dict[str, tuple[int, str]], bindings: Bindings) -> dict[int, str]:
    """id of each statement (or branch of a conditional expression) of `func` that runs only
    under a condition on one of its parameters -> `p#position#default#condition`: the calls
    made there reach their callees only when the callers pass what takes the branch."""
    out: dict[int, str] = {}
    for node in astwalk.walk(func):
        kind = type(node)
        if kind not in (ast.If, ast.IfExp):
            continue
        for branch, positive in ((node.body, True), (node.orelse, False)):
            pairs = [(p, c) for p, c in _requirements(node.test, positive) if p in own and p not in bindings.rebound]
            if not pairs or not branch:
                continue
            name, condition = pairs[0]
            position, default = own[name]
            guard = f"{name}#{position}#{default}#{condition}"
            for part in branch if isinstance(branch, list) else [branch]:
                out.setdefault(id(part), guard)
    return out


def decisive_parameters(func: ast.AST, own: dict[str, tuple[int, str]], signatures) -> tuple[str, ...]:
    """The parameters whose value a branch of `func` tests (`if p is None`, `if p:`,
    `x if p is not None else y`), that `func` passes on to a call (`signatures`), or that
    say where it puts a tensor (`destination_parameters`)."""
    found = set(destination_parameters(func, own))
    for node in astwalk.walk(func):
        if type(node) in (ast.If, ast.IfExp, ast.While):
            for sub in astwalk.walk(node.test):
                if type(sub) is ast.Name and sub.id in own:
                    found.add(sub.id)
    for signature in signatures:
        for part in signature.replace(";", ",").split(","):
            kind = part.partition("=")[2] if "=" in part else part
            if kind.startswith("@"):
                found.add(kind[1:].split("#", 1)[0])
            elif part[:2] == "*@":  # its `**kwargs`, forwarded: what its callers pass decides
                found.add(own[KEYWORDS][1])
    return tuple(sorted(found))


def destination_parameters(func: ast.AST, own) -> set[str]:
    """The parameters `func` gives as the device a tensor goes to: `.to(p)`, `.to(device=p)`,
    `.cuda(p)`, a `device=p` keyword of any call (`torch.tensor(x, device=p)`). What the
    callers pass for them says whether the move leaves the host at all (the libcst analysis
    asks: synclint/analysis/flow.py `_bind_parameters`)."""
    found = set()
    for node in astwalk.walk(func):
        if type(node) is not ast.Call:
            continue
        for kw in node.keywords:
            if kw.arg == "device" and type(kw.value) is ast.Name and kw.value.id in own:
                found.add(kw.value.id)
        func_ = node.func
        if type(func_) is ast.Attribute and func_.attr in ("to", "cuda") and node.args:
            first = node.args[0]
            if type(first) is ast.Name and first.id in own:
                found.add(first.id)
    return found


FIELD = "~"  # `~f`: an argument that reads field `f` (`batch.cu_seqlens_host`): given where `f` never holds None


def _annotated_parameters(func) -> dict[str, str]:
    """A function's parameters -> the kind a field assigned from one holds: `N` where it may
    be None (a `None` default, an `Optional` annotation, no annotation), `g` otherwise."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = {}
    for a, default in [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
        if a.annotation is None or _optional(a.annotation) or (type(default) is ast.Constant and default.value is None):
            out[a.arg] = NONE
        else:
            out[a.arg] = GIVEN
    for a in (args.vararg, args.kwarg):
        if a is not None:
            out[a.arg] = GIVEN
    return out


def _optional(annotation) -> bool:
    """`Optional[T]`, `T | None`, `None`, `Union[T, None]`, `Any`, or a string of one."""
    for node in astwalk.walk(annotation):
        if type(node) is ast.Constant and (node.value is None or type(node.value) is str and ("None" in node.value or "Optional" in node.value or "Any" in node.value)):
            return True
        if type(node) is ast.Name and node.id in ("Optional", "Any", "None"):
            return True
        if type(node) is ast.Attribute and node.attr in ("Optional", "Any"):
            return True
    return False
