"""Calls made on a platform's branch, read with `ast` for the repository index: the platforms a
branch's test allows (`current_platform.is_rocm()`, `x.device.type == "npu"`, a class's
platform fields), the calls each function makes only there, and the platforms a class's
constructor does not raise on. The call graph reads them to call a function that only
other platforms' branches reach code of those platforms.
"""

from __future__ import annotations

import ast
from collections import Counter

from synclint.analysis import astwalk
from synclint.analysis.guards import _platform_predicate
from synclint.analysis.platform_words import (
    PLATFORMS, device_type_platforms, names_device_type, package_platforms,
)

ON_PLATFORMS = "%"  # `%cpu`: a guard of a call made on a branch that runs on those platforms only


def platform_test(test: ast.expr) -> bool:
    """Whether an `if` test says where its body runs (`_is_npu`, `current_platform.is_xpu()`)."""
    return _branch_platforms(test)[0] is not None


def _branch_platforms(test: ast.expr, fields: dict | None = None) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """(platforms where the body runs, where the `else` runs); None: any (as
    synclint/analysis/platforms.py `branch_sets` reads a libcst test). `fields`: the fields
    the enclosing class only ever sets to a platform predicate (`platform_fields`)."""
    kind = type(test)
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        body, orelse = _branch_platforms(test.operand, fields)
        return orelse, body
    if kind is ast.BoolOp:
        sides = [_branch_platforms(v, fields) for v in test.values]
        if type(test.op) is ast.And:
            return _meet([b for b, _ in sides]), _join([e for _, e in sides])
        return _join([b for b, _ in sides]), _meet([e for _, e in sides])
    if (fields and kind is ast.Attribute and type(test.value) is ast.Name and test.value.id == "self"
            and test.attr in fields):
        return fields[test.attr]  # (where its value holds, where it does not)
    platforms = _device_type_test(test) if kind is ast.Compare else _platform_predicate(test)
    if platforms is None:
        return None, None
    return platforms, PLATFORMS - platforms


def _device_type_test(test: ast.Compare) -> frozenset[str] | None:
    """`x.device.type != "cuda"`, `device_type in ("npu", "xpu")`
    (`platform_words.device_type_platforms`)."""
    if len(test.ops) != 1 or type(test.ops[0]) not in (ast.Eq, ast.NotEq, ast.In, ast.NotIn):
        return None
    subject, other = test.left, test.comparators[0]
    if type(subject) is ast.Constant:
        subject, other = other, subject
    if not names_device_type(_dotted(subject)):
        return None
    items = other.elts if type(other) in (ast.Tuple, ast.List, ast.Set) else [other]
    if not all(type(i) is ast.Constant and type(i.value) is str for i in items):
        return None
    return device_type_platforms([i.value for i in items], negated=type(test.ops[0]) in (ast.NotEq, ast.NotIn))


def _dotted(node: ast.expr) -> str:
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        parts.append(node.id)
    return ".".join(reversed(parts))


def _meet(sets):
    known = [s for s in sets if s is not None]
    return frozenset.intersection(*known) if known else None


def _join(sets):
    return None if any(s is None for s in sets) else frozenset().union(*sets)


def platform_fields(class_node: ast.ClassDef) -> dict[str, tuple]:
    """The fields a class only ever sets to one platform predicate (`self.use_triton =
    is_cuda() or is_hip()`), each with (the platforms where it holds, where it does not;
    None: any): a test of one is a platform branch (the twin of
    synclint/analysis/platforms.py's, on `ast`)."""
    # id of each `self.f = v` -> (f, v), where `v` is what a name set once in the function
    # was bound to (`flag = is_cuda()`, then `self.use_triton = flag`): one walk of each
    # function, the innermost one that sets the field having the last word (outer functions
    # come first in a breadth-first walk).
    stores: dict[tuple[int, str], tuple[str, ast.expr | None]] = {}
    for func in astwalk.walk(class_node):
        if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef):
            continue
        own: list[tuple[ast.stmt, str, ast.expr | None]] = []  # (the statement, f, v)
        values: dict[str, ast.expr] = {}
        counts: Counter = Counter()
        for node in astwalk.walk(func):
            kind = type(node)
            if kind is ast.Assign:
                for target in node.targets:
                    if type(target) is ast.Name:
                        values[target.id] = node.value
                        counts[target.id] += 1
                    elif type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                        own.append((node, target.attr, node.value))
            elif kind is ast.AnnAssign or kind is ast.AugAssign:
                target = node.target
                if kind is ast.AugAssign and type(target) is ast.Name:
                    counts[target.id] += 2
                elif type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                    own.append((node, target.attr, node.value if kind is ast.AnnAssign else None))
        for node, attr, value in own:
            if value is not None and type(value) is ast.Name and counts[value.id] == 1:
                value = values[value.id]
            stores[id(node), attr] = (attr, value)
    found: dict[str, tuple | None] = {}
    for attr, value in stores.values():
        sets = _branch_platforms(value) if value is not None else None
        if sets == (None, None) or (attr in found and found[attr] != sets):
            sets = None
        found[attr] = sets
    return {name: platforms for name, platforms in found.items() if platforms is not None}


def platform_calls(func: ast.AST, fields: dict | None = None) -> dict[int, str]:
    """id of each statement of `func` (not of functions nested in it) that runs only on some
    platforms, by the `if` tests around it (`elif current_platform.is_cpu():`, the `else` of
    `if is_cuda():`, and what follows `if is_cuda(): ...; return` in its block) -> `%cpu`: the
    calls made there reach their callees only where the target platforms include one of those
    (`repo._CallGraphTiers._caller`)."""
    out: dict[int, str] = {}
    blocks = [func.body]
    while blocks:
        after = None  # where the rest of the block runs, after `if is_cuda(): ...; return`
        for node in blocks.pop():
            kind = type(node)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                continue
            if after is not None:
                out[id(node)] = ON_PLATFORMS + "+".join(sorted(after))
            if kind is ast.If:
                body, orelse = _branch_platforms(node.test, fields)
                for branch, where in ((node.body, body), (node.orelse, orelse)):
                    for stmt in branch:
                        if where is not None:
                            out[id(stmt)] = ON_PLATFORMS + "+".join(sorted(where))
                    blocks.append(branch)
                if orelse is not None and not node.orelse and node.body and type(node.body[-1]) in (ast.Return, ast.Raise):
                    after = orelse if after is None else after & orelse  # the `else` is what follows
                continue
            for field_name in ("body", "orelse", "finalbody"):
                blocks.append(getattr(node, field_name, ()) or ())
            blocks.extend(handler.body for handler in getattr(node, "handlers", ()) or ())
            blocks.extend(case.body for case in getattr(node, "cases", ()) or ())
    return out


def constructor_platforms(class_node: ast.ClassDef) -> frozenset[str] | None:
    """The platforms a class can be built on, as its `__init__` says (`init_platforms`)."""
    init = next((s for s in class_node.body if type(s) in (ast.FunctionDef, ast.AsyncFunctionDef) and s.name == "__init__"), None)
    return init_platforms(init) if init is not None else None


def init_platforms(init: ast.FunctionDef) -> frozenset[str] | None:
    """Where a constructor does not raise, as its top level says (as
    synclint/analysis/platforms.py `constructor_platforms` reads a libcst class): `if not
    _is_xpu: raise ...` (where the test fails), `assert current_platform.is_npu()` (where it
    holds), tests of platform predicates alone, an import of a vendor's package (where it
    installs). None: any."""
    return _intersection(_where_it_does_not_raise(stmt) for stmt in init.body)


def _where_it_does_not_raise(stmt: ast.stmt) -> frozenset[str] | None:
    """The platforms a constructor's top-level statement lets it get past (`init_platforms`)."""
    kind = type(stmt)
    if kind is ast.If and not stmt.orelse and stmt.body and type(stmt.body[-1]) is ast.Raise and _predicates_only(stmt.test):
        return _branch_platforms(stmt.test)[1]
    if kind is ast.Assert and _predicates_only(stmt.test):
        return _branch_platforms(stmt.test)[0]
    if kind is ast.Import:
        return _intersection(package_platforms(alias.name) for alias in stmt.names)
    if kind is ast.ImportFrom and not stmt.level and stmt.module:
        return package_platforms(stmt.module)
    return None


def _intersection(sets) -> frozenset[str] | None:
    """The platforms in every one of `sets` that says any (None: no constraint)."""
    result = None
    for one in sets:
        if one is not None:
            result = one if result is None else result & one
    return result


def _predicates_only(test: ast.expr) -> bool:
    """A test of platform predicates alone, not of where an object lives (`gen.device.type != "cpu"`)."""
    if type(test) is ast.UnaryOp:
        return _predicates_only(test.operand)
    if type(test) is ast.BoolOp:
        return all(_predicates_only(v) for v in test.values)
    return type(test) is not ast.Compare


def on_platforms_within(guards_of: dict[int, str], body: list, platforms: frozenset[str]) -> None:
    """Every statement of a method's `body` runs only on `platforms` (its class's
    `constructor_platforms`): `guards_of` (`platform_calls`) with each top-level statement's
    guard narrowed to them; what is nested in a statement inherits its guard."""
    for stmt in body:
        found = guards_of.get(id(stmt))
        where = platforms if found is None else platforms & frozenset(found[len(ON_PLATFORMS):].split("+"))
        guards_of[id(stmt)] = ON_PLATFORMS + "+".join(sorted(where))


def runs_on_targets(guard: str, targets: frozenset[str]) -> bool:
    """Whether a `%cpu+npu` guard's platforms include one of the target platforms."""
    return not frozenset(guard[len(ON_PLATFORMS):].split("+")).isdisjoint(targets)
