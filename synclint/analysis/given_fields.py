"""What the repository assigns to fields, read with `ast` for the repository index: the kind of
every value a module gives a field (`None` or what may be None, another field's value, a
value), by the field's name and, where the code says it, its class; `GivenFields` then says
which fields never hold None, so that an argument read from one (`f(batch.lens_cpu)`) is
taken to be given.
"""

from __future__ import annotations

import ast

from synclint.analysis import astwalk
from synclint.analysis.guards import (
    Bindings, FIELD, GIVEN, NONE, _annotated_parameters, _maybe_none, _optional, none_assigned,
)

# A class body's `f: Optional[T] = None`: None only where some construction of the class leaves
# `f` out. The constructions are kept under the field name `CONSTRUCTION` of the class, one
# kind per call: `CONSTRUCTED` + the keywords it passes, sorted, joined by `,`, and `;?` where
# it also passes positional arguments or `**kwargs` (which may or may not fill `f`).
DEFAULT_NONE = "d"
CONSTRUCTION = "<init>"
CONSTRUCTED = "c"


def field_values(tree: ast.Module) -> set[tuple[str, str]]:
    """(field, kind) for every value a module assigns to a field, by the field's name:
    `obj.f = v`, `setattr(obj, "f", v)`, `register_buffer("f", v)`, a class body's `f: T = v`
    or `f: T` (a dataclass field the constructor fills), a constructor's or `replace()`'s
    keyword `Cls(f=v)`; `del obj.f`. The kind is `N` where the value may be `None` (`None`, a
    `.get()`, an `Optional[...]` / `... | None` annotation, a parameter that may be `None`),
    `~g` where it is another field's value (`self.f = meta.g`), `g` otherwise. A field the
    repository assigns only values of kind `g` (or fields that are) never holds None."""
    out: set[tuple[str, str]] = set()
    empty = Bindings()

    def visit(body, own, bindings, cls: str, in_class: bool) -> None:
        for stmt in body:
            kind = type(stmt)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                params = _annotated_parameters(stmt)
                visit(stmt.body, params, none_assigned(stmt), cls if in_class else "", False)
                continue
            if kind is ast.ClassDef:
                visit(stmt.body, {}, empty, stmt.name, True)
                continue
            prefix = cls + "." if cls else ""
            if in_class and kind is ast.AnnAssign and type(stmt.target) is ast.Name:
                declared = _declared_kind(stmt.annotation, stmt.value, own, bindings)
                if declared == NONE and _none_default(stmt.value):
                    declared = DEFAULT_NONE  # None unless every construction passes it
                out.add((prefix + stmt.target.id, declared))
            elif in_class and kind is ast.Assign:
                for target in stmt.targets:
                    if type(target) is ast.Name:
                        out.add((prefix + target.id, _value_kind(stmt.value, own, bindings)))
            found: set[tuple[str, str]] = set()
            for node in _walk_statement(stmt):
                _assignments(node, own, bindings, found, cls)
            out.update(found)

    visit(tree.body, {}, empty, "", False)
    return out


def _walk_statement(stmt: ast.stmt):
    """The nodes of one statement, not those of functions or classes defined in it."""
    pending = [stmt]
    while pending:
        node = pending.pop()
        yield node
        for child in astwalk.children(node):
            if type(child) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                pending.append(child)


# Calls whose keywords are the fields of the object they build or copy: a class (a
# capitalised name), `cls(...)`, `dataclasses.replace(obj, f=v)`, `obj._replace(f=v)`.
_FIELD_KEYWORD_CALLS = frozenset({"cls", "replace", "_replace", "evolve"})
_SETTERS = {"setattr": 1, "__setattr__": 1, "register_buffer": 0, "register_parameter": 0}  # where the name is


def _assignments(node, own, bindings, out: set, cls: str = "") -> None:
    """The fields `node` assigns: `Cls.f` where the object is `self` of a method of `Cls` or a
    `Cls(...)` being built, `f` where its class is not known here."""

    def key(obj, attr: str) -> str:
        return f"{cls}.{attr}" if cls and type(obj) is ast.Name and obj.id == "self" else attr

    kind = type(node)
    if kind in (ast.Assign, ast.AnnAssign, ast.AugAssign):
        targets = node.targets if kind is ast.Assign else [node.target]
        for target in targets:
            if type(target) is ast.Attribute:
                field = key(target.value, target.attr)
                if kind is ast.AugAssign:
                    out.add((field, GIVEN))
                elif kind is ast.AnnAssign:
                    out.add((field, _declared_kind(node.annotation, node.value, own, bindings)))
                else:
                    out.add((field, _value_kind(node.value, own, bindings)))
            elif type(target) in (ast.Tuple, ast.List):
                values = node.value.elts if type(node.value) in (ast.Tuple, ast.List) and len(node.value.elts) == len(target.elts) else None
                for i, element in enumerate(target.elts):
                    if type(element) is ast.Attribute:
                        out.add((key(element.value, element.attr), _value_kind(values[i], own, bindings) if values is not None else NONE))
    elif kind is ast.Delete:
        out.update((key(t.value, t.attr), NONE) for t in node.targets if type(t) is ast.Attribute)
    elif kind is ast.Call:
        func = node.func
        name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
        at = _SETTERS.get(name)
        obj = func.value if type(func) is ast.Attribute else None  # `self.register_buffer(...)`
        if at is not None and node.args and type(node.args[0]) is ast.Constant and type(node.args[0].value) is str:
            at = 0  # `self.__setattr__("f", v)`; `object.__setattr__(self, "f", v)` names it second
        elif at == 1 and node.args:
            obj = node.args[0]  # `setattr(self, "f", v)`
        if at is not None and len(node.args) > at + 1 and type(node.args[at]) is ast.Constant and type(node.args[at].value) is str:
            out.add((key(obj, node.args[at].value), _value_kind(node.args[at + 1], own, bindings)))
        elif name[:1].isupper() or name in _FIELD_KEYWORD_CALLS:
            owner = cls if name == "cls" else name if name[:1].isupper() else ""
            for kw in node.keywords:
                if kw.arg is not None:
                    out.add((f"{owner}.{kw.arg}" if owner else kw.arg, _value_kind(kw.value, own, bindings)))
            if owner and name not in ("replace", "_replace", "evolve") and not owner.endswith(("Error", "Exception", "Warning")):
                # a construction: which fields it fills (a copy keeps the fields it leaves out)
                passed = ",".join(sorted(kw.arg for kw in node.keywords if kw.arg is not None))
                open_ended = bool(node.args) or any(kw.arg is None for kw in node.keywords)
                out.add((f"{owner}.{CONSTRUCTION}", CONSTRUCTED + passed + (";?" if open_ended else "")))


def _none_default(value) -> bool:
    """A class body's default of `None`: `= None`, `= field(default=None)`."""
    if type(value) is ast.Constant:
        return value.value is None
    if type(value) is ast.Call and type(value.func) in (ast.Name, ast.Attribute) and (
        value.func.id if type(value.func) is ast.Name else value.func.attr
    ) == "field":
        return any(kw.arg == "default" and type(kw.value) is ast.Constant and kw.value.value is None for kw in value.keywords)
    return False


def _declared_kind(annotation, value, own, bindings) -> str:
    """A class body's (or an annotated assignment's) field `f: T = value`."""
    if _optional(annotation):
        return NONE
    if value is None:
        return GIVEN  # a field the constructor must fill, declared never None
    if type(value) is ast.Call and type(value.func) in (ast.Name, ast.Attribute) and (
        value.func.id if type(value.func) is ast.Name else value.func.attr
    ) == "field":  # `dataclasses.field(default=..., default_factory=...)`
        for kw in value.keywords:
            if kw.arg == "default":
                return _value_kind(kw.value, own, bindings)
        return GIVEN
    return _value_kind(value, own, bindings)


def _value_kind(value, own, bindings) -> str:
    kind = type(value)
    if kind is ast.Attribute:
        return FIELD + value.attr  # what that field holds
    if kind is ast.Subscript:
        return GIVEN if type(value.slice) is ast.Slice else NONE  # a slice is never None; an item may be
    if kind is ast.Name:
        if value.id in own and value.id not in bindings.rebound:
            return own[value.id]
        if value.id in bindings or value.id not in bindings.rebound:
            return NONE  # bound to what may be None, or not bound here (a global, a closure's)
        return GIVEN
    if kind is ast.Starred:
        return NONE
    return NONE if _maybe_none(value) else GIVEN


class GivenFields:
    """Which fields never hold None, from the kinds of value assigned to each
    (`field_values`: `Cls.f` for a known class, `f` for an object of a class not known
    there). `Cls.f` is given where the values assigned to `f` of the classes of its lineage
    (its bases and subclasses) and of objects of unknown class are all given, at least one
    assigned; a bare `f` where those of every class are. A value that is another field's
    (`~g`) is given where that field is."""

    def __init__(self, kinds: dict[str, set[str]], lineage=None) -> None:
        self.by_name: dict[str, dict[str, set[str]]] = {}
        for key, found in kinds.items():
            owner, _, name = key.rpartition(".")
            self.by_name.setdefault(name, {})[owner] = set(found)
        self.lineage = lineage or (lambda cls: (cls,))
        self.memo: dict[str, bool] = {}

    def fresh(self) -> GivenFields:
        """The same fields and lineage, with no answer worked out yet: a lint's answers do not
        depend on what another file asked before (a cycle of fields is read from where it is
        entered)."""
        found = GivenFields.__new__(GivenFields)
        found.by_name, found.lineage, found.memo = self.by_name, self.lineage, {}
        return found

    def __contains__(self, field: str) -> bool:
        found = self.memo.get(field)
        if found is None:
            self.memo[field] = False  # a cycle of fields assigned from each other: not given
            found = self.memo[field] = self._given(field)
        return found

    def _given(self, field: str) -> bool:
        owner, _, name = field.rpartition(".")
        owners = self.by_name.get(name)
        if not owners:
            return False
        if owner:
            related = set(self.lineage(owner)) | {""}
            pairs = [(o, k) for o, found in owners.items() if o in related for k in found]
        else:
            pairs = [(o, k) for o, found in owners.items() for k in found]
        if any(k == DEFAULT_NONE and not (o and self._always_filled(o, name)) for o, k in pairs):
            return False  # a `None` default some construction may leave in place
        values = [k for _, k in pairs if k != DEFAULT_NONE]
        if not values:
            return False  # nothing says what the field is filled with
        return all(k == GIVEN or k[:1] == FIELD and k[1:] != field and k[1:] in self for k in values)

    def _always_filled(self, owner: str, name: str) -> bool:
        """Whether every construction the repository makes of `owner` (and of the classes of
        its lineage) passes field `name` by keyword: its `None` default never applies. A
        construction with positional arguments or `**kwargs` that does not name it may leave
        it to the default."""
        constructions = self.by_name.get(CONSTRUCTION)
        if not constructions:
            return False
        related = set(self.lineage(owner))
        calls = [k for o, found in constructions.items() if o in related for k in found]
        return bool(calls) and all(name in k[len(CONSTRUCTED):].partition(";")[0].split(",") for k in calls)
