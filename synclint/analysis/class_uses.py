"""Where the repository uses its classes, read with `ast` for the repository index: each call
that builds a class, with the platforms of the branches around it (`%xpu`); any other use of
it as a value; a class-level call `Cls.m(...)`, which builds the class only where `m` may;
and a class a method hands out (`return Cls`). A class that only other platforms' branches
build is read as their code.
"""

from __future__ import annotations

import ast
import re

from synclint.analysis import astwalk
from synclint.analysis.platform_branches import ON_PLATFORMS, _branch_platforms

# The guard of a class name used as a value other than by calling it (`registry = {"a": Cls}`,
# `cls=Cls`): it may be built anywhere (`class_uses`).
ANY_USE = "*"
# `REGISTERED + "FLASH"`: the class is named only by a dotted path that a registry entry holds
# (`class Backend(Enum): FLASH = "pkg.flash.FlashBackend"`): it is built wherever the entry is
# used. `(MEMBER + "FLASH", guard)`: the module uses an entry `Registry.FLASH` there.
REGISTERED = "@"
MEMBER = "."
# `QUERY + "m\t" + guard`: a class-level call `Cls.m(...)` (also through a local that holds
# the class and is used only so: `backend = Cls; backend.m(...)`) made where `guard` runs. It
# builds the class only where `m` may build it (`SELF_BUILT`), or where the class is not the
# repository's; otherwise it asks the class something and builds nothing.
QUERY = "?"
# `SELF_BUILT + "m"`: the class's method `m` may build the class (`cls(...)`, `cls.other(...)`,
# `return cls`): a query of `m` builds it.
SELF_BUILT = "!"
# `HANDED + "Owner.m"`: `return Cls` in method `m` of class `Owner` (`get_impl_cls()`): the
# class is handed out where `Owner` is, and built there.
HANDED = ">"
# "pkg.backends.flash.FlashBackend": at least one module and a capitalised class name.
_DOTTED_CLASS = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)+([A-Z][A-Za-z0-9_]*)$")


def class_uses(tree: ast.Module) -> set[tuple[str, str]]:
    """(capitalised name, guard) for each use of a name that may be a class: a call `Cls(...)`
    (also `mod.Cls(...)`) with the platforms of the branches around it (`%xpu`, as
    `platform_calls`; "" where it runs everywhere), `ANY_USE` for any other use as a value.
    Annotations, base classes, the classes of `isinstance` / `issubclass` and `except`
    clauses build nothing and are no use. A name imported under an alias
    (`from pkg.runner import Runner as RunnerV1`, then `RunnerV1(...)`) is a use of the class.
    A class-level call `Cls.m(...)` is a `QUERY` of `m` (it builds the class only where `m`
    may: `SELF_BUILT`), and `return Cls` in a method of `Owner` hands the class out where
    `Owner` is used (`HANDED`)."""
    skip: set[int] = set()
    aliases: dict[str, set[str]] = {}
    out: set[tuple[str, str]] = set()
    uses = _Uses(skip)
    functions = []
    holds_a_class = False  # `backend = Cls` somewhere: `_Uses.read_locals` has work to do
    for node in astwalk.walk(tree):
        kind = type(node)
        if kind is ast.Assign:
            holds_a_class = holds_a_class or _holds_a_class(node)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            functions.append(node)
            args = node.args
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if a is not None and a.annotation is not None:
                    skip.update(id(n) for n in astwalk.walk(a.annotation))
            if node.returns is not None:
                skip.update(id(n) for n in astwalk.walk(node.returns))
        elif kind is ast.AnnAssign:
            skip.update(id(n) for n in astwalk.walk(node.annotation))
        elif kind is ast.ClassDef:
            for base in (*node.bases, *(k.value for k in node.keywords)):
                skip.update(id(n) for n in astwalk.walk(base))
            uses.read_methods(node, out)
        elif kind is ast.Call and type(node.func) is ast.Name and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            skip.update(id(n) for n in astwalk.walk(node.args[1]))
        elif kind is ast.ExceptHandler and node.type is not None:
            skip.update(id(n) for n in astwalk.walk(node.type))
        elif kind is ast.ImportFrom:
            for alias in node.names:
                if alias.asname and alias.asname != alias.name:
                    aliases.setdefault(alias.asname, set()).add(alias.name)
    if holds_a_class:
        for func in functions:
            uses.read_locals(func)
    _class_uses(tree.body, None, uses, out)
    if aliases:
        out.update((original, guard) for name, guard in list(out) for original in aliases.get(name, ()))
    return out


def capitalised(name: str) -> bool:
    """A name that may be a class's (`Runner`; not a constant's, `MAX_LEN`)."""
    return name[:1].isupper() and not name.isupper()


def _class_uses(statements, where: frozenset[str] | None, uses: "_Uses", out: set) -> None:
    guard = "" if where is None else ON_PLATFORMS + "+".join(sorted(where))
    for stmt in statements:
        if type(stmt) is ast.If:
            _expression_uses(stmt.test, guard, uses, out)
            body, orelse = _branch_platforms(stmt.test)
            for branch, there in ((stmt.body, body), (stmt.orelse, orelse)):
                inner = where if there is None else (there if where is None else where & there)
                _class_uses(branch, inner, uses, out)
            continue
        nested = [getattr(stmt, f, None) or [] for f in ("body", "orelse", "finalbody")]
        nested += [h.body for h in getattr(stmt, "handlers", None) or []]
        nested += [c.body for c in getattr(stmt, "cases", None) or []]
        if any(nested):
            for field_name, value in ast.iter_fields(stmt):
                if field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    continue
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, ast.AST):
                        _expression_uses(item, guard, uses, out)
            for block in nested:
                _class_uses(block, where, uses, out)
        else:
            _expression_uses(stmt, guard, uses, out)


def _expression_uses(node: ast.AST, guard: str, uses: "_Uses", out: set) -> None:
    called: set[int] = set()
    skip, handed, queried = uses.skip, uses.handed, uses.queried
    for sub in astwalk.walk(node):
        if id(sub) in skip:
            continue
        kind = type(sub)
        if kind is ast.Call:
            func = sub.func
            name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
            if capitalised(name):
                out.add((name, guard))
                called.add(id(func))
            elif type(func) is ast.Attribute and type(func.value) is ast.Name and capitalised(func.value.id) and not name[:1].isupper():
                out.add((func.value.id, QUERY + name + "\t" + guard))  # `Cls.m(...)`: a question, or a build where `m` builds
                called.add(id(func.value))
        elif id(sub) in called:
            continue
        elif kind is ast.Name and type(sub.ctx) is ast.Load and capitalised(sub.id):
            key = id(sub)
            if key in handed:
                out.add((sub.id, HANDED + handed[key]))
            elif key in queried:
                out.update((sub.id, QUERY + method + "\t" + guard) for method in queried[key])
            else:
                out.add((sub.id, ANY_USE))
        elif kind is ast.Attribute and type(sub.ctx) is ast.Load:
            if capitalised(sub.attr):
                out.add((sub.attr, ANY_USE))
            elif sub.attr.isupper() and capitalised(_base_name(sub.value)):
                out.add((MEMBER + sub.attr, guard))  # `Registry.FLASH`: an entry, where it is used
        elif kind is ast.Assign and len(sub.targets) == 1 and type(sub.targets[0]) is ast.Name:
            value = sub.value
            if type(value) is ast.Constant and type(value.value) is str and sub.targets[0].id.isupper():
                match = _DOTTED_CLASS.match(value.value)
                if match:
                    out.add((match.group(1), REGISTERED + sub.targets[0].id))


class _Uses:
    """What `class_uses` reads before it walks a module's statements: the nodes that are no
    use (`skip`), the classes a method hands out (`handed`: id of the returned name ->
    "Owner.m"), and the classes held by a local that is only asked things (`queried`: id of
    the assigned name -> the methods called on the local)."""

    def __init__(self, skip: set[int]) -> None:
        self.skip = skip
        self.handed: dict[int, str] = {}
        self.queried: dict[int, tuple[str, ...]] = {}

    def read_methods(self, node: ast.ClassDef, out: set) -> None:
        """`return Cls` in a method hands `Cls` out; a method that calls or returns its own
        class object (`cls(...)`, `cls.other(...)`, `return cls`, `Owner(...)`) may build the
        class, where it is called."""
        for item in node.body:
            if type(item) not in (ast.FunctionDef, ast.AsyncFunctionDef):
                continue
            own = item.args.args[0].arg if item.args.args and any(_base_name(d) == "classmethod" for d in item.decorator_list) else None
            for sub in astwalk.walk(item):
                kind = type(sub)
                if kind is ast.Return and type(sub.value) is ast.Name:
                    if sub.value.id == own:
                        out.add((node.name, SELF_BUILT + item.name))
                    elif capitalised(sub.value.id):
                        self.handed[id(sub.value)] = node.name + "." + item.name
                elif kind is ast.Call:
                    func = sub.func
                    if type(func) is ast.Name and func.id == node.name:
                        # `Owner(...)` in Owner's own method: built where that method is called.
                        self.skip.update((id(sub), id(func)))
                        out.add((node.name, SELF_BUILT + item.name))
                    elif own is not None:
                        target = func.value if type(func) is ast.Attribute else func
                        if type(target) is ast.Name and target.id == own:
                            out.add((node.name, SELF_BUILT + item.name))

    def read_locals(self, func) -> None:
        """A local assigned a class (`backend = Cls`) and read only as the object of method
        calls (`backend.page_size(spec)`): each assignment is a query of those methods."""
        held: dict[str, list[ast.Name]] = {}
        methods: list[ast.Attribute] = []
        loads: list[ast.Name] = []
        for sub in astwalk.walk(func):
            kind = type(sub)
            if kind is ast.Assign and _holds_a_class(sub):
                held.setdefault(sub.targets[0].id, []).append(sub.value)
            elif kind is ast.Call and type(sub.func) is ast.Attribute and type(sub.func.value) is ast.Name:
                methods.append(sub.func)
            elif kind is ast.Name and type(sub.ctx) is ast.Load:
                loads.append(sub)
        if not held:
            return
        asked: dict[str, set[str]] = {name: set() for name in held}
        receivers: set[int] = set()
        for method in methods:
            if method.value.id in asked:
                receivers.add(id(method.value))
                asked[method.value.id].add(method.attr)
        for load in loads:
            if id(load) not in receivers:
                asked.pop(load.id, None)  # read another way: it may be built anywhere
        for name, called in asked.items():
            if called:
                for value in held[name]:
                    self.queried[id(value)] = tuple(sorted(called))


def _holds_a_class(node: ast.Assign) -> bool:
    """`backend = Cls`: a local name assigned a capitalised name."""
    return len(node.targets) == 1 and type(node.targets[0]) is ast.Name and type(node.value) is ast.Name and capitalised(node.value.id)


def _base_name(node: ast.AST) -> str:
    kind = type(node)
    return node.id if kind is ast.Name else node.attr if kind is ast.Attribute else ""
