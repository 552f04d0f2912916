"""What the screen (synclint/screen/) reads from one unit of a file, in one walk of its
`ast`: identifiers, the names it reads and binds (and from what), the `self.` attributes it
reads and writes, the methods it calls through `self.`, and the places where a rule that
reports only device values would look (a truth test, a conversion, a subscript...).

The walk is a plain stack over each node's fields: `ast.walk`/`iter_child_nodes` cost more
than the `ast.parse` they follow.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from synclint.analysis import astwalk
from synclint.apis import torch_api as _api
from synclint.screen.places import SEQUENCE_DISPLAYS

# Builtins whose argument SL203 reports when it is a device tensor (conversions, text,
# host comparisons) or SL204 when it sizes something.
CONVERTING_BUILTINS = frozenset(
    {"int", "float", "bool", "complex", "range", "str", "repr", "format", "print", "max", "min", "any", "all", "len"}
)
BOOL_RESULT_METHODS = frozenset({"equal", "allclose", "is_nonzero"})
SIZING_BUILTINS = frozenset({"int", "range"})
# Calls whose arguments PyTorch reads as Python numbers (SL208), by their last name.
NUMBER_ARGUMENT_CALLS = frozenset(
    {name.rpartition(".")[2] for name in (*_api.NUMBER_ARGUMENT_FUNCTIONS, *_api.NUMBER_ARGUMENT_METHODS, *_api.CLAMP_FUNCTIONS)}
)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Unit:
    """A module-level statement or a member of a module-level class: kept or blanked whole."""

    node: ast.AST | None
    first: int  # first line (decorators included), 1-based
    last: int
    owner: object | None = None  # the class (screen.ClassUnits) of a member
    name: str | None = None  # a method's name
    method: bool = False
    identifiers: set[str] = field(default_factory=set)
    called: set[str] = field(default_factory=set)  # names of what it calls, and keywords passed
    loads: set[str] = field(default_factory=set)  # names read
    defines: set[str] = field(default_factory=set)  # names bound at module or class level
    self_reads: set[str] = field(default_factory=set)
    self_writes: dict[str, list] = field(default_factory=dict)  # attr -> values (as in bindings)
    self_calls: set[str] = field(default_factory=set)
    # (names, value): a binding. The value is an expression, a place mask (screen.places:
    # a forward() tensor input, a device-named parameter, an annotation), or
    # `("aug", target, expr)` for an augmented assignment.
    bindings: list = field(default_factory=list)
    bound: set[str] = field(default_factory=set)
    annotations: dict[str, ast.expr] = field(default_factory=dict)  # name -> its annotation (parameters, `x: T = ...`)
    iterated: dict[str, list] = field(default_factory=dict)  # loop variable -> what it iterates (`for req in reqs`)
    imported: set[str] = field(default_factory=set)  # names its imports bind
    local_defs: dict[str, list] = field(default_factory=dict)  # nested def name -> nodes
    sites: dict[str, list] = field(default_factory=dict)  # site kind -> nodes
    calls: dict[str, list] = field(default_factory=dict)  # called name -> calls (the rules' words)
    # Structural device evidence (synclint/analysis/evidence.py), read as "may": parameters
    # whose place nothing states, and the operands of device-only uses in the unit.
    unplaced_params: set[str] = field(default_factory=set)
    device_uses: list = field(default_factory=list)
    passed_on: list = field(default_factory=list)  # `self.m(...)` / `f(...)` calls with arguments
    # Straight-line versions (`_versions`): id of a `Name` read after an unconditional rebinding
    # of its name -> the name of that binding (`x#2`), which alone holds what it reads.
    versions: dict = field(default_factory=dict)
    other_bound: set[str] = field(default_factory=set)  # names bound by evidence, not by a store
    launches: bool = False
    # A round trip through the host (evidence.py): names copied to the host (`x.to("cpu")`,
    # `x.cpu()`), and whether a value is moved to a tensor's device (`.to(x.device)`, `.to(d)`).
    host_copied: set[str] = field(default_factory=set)
    moves_back: bool = False
    device_source: bool = False
    has_import: bool = False
    import_line: bool = False
    docstring: bool = False
    first_indent: tuple[int, str] | None = None
    # A long module-level table split into its elements (screen `_table_parts`): an
    # element's statement (kept with any of its elements), and the rows of a statement that
    # its elements own (blanked with the element, not with the statement).
    container: Unit | None = None
    holes: tuple[tuple[int, int], ...] = ()
    table: str | None = None  # the name a split table binds (on its statement's unit)
    # Names in `defines` bound only as comprehension targets: no other unit reads them.
    comprehension_only: set[str] = field(default_factory=set)


_LAST_PARSE: list = [None, None]  # a text `parsed` was asked to remember, and its tree


def parsed(text: str, remember: bool = False) -> ast.Module:
    """`ast.parse(text)`. The repository index summarises a file (synclint/repo/) and the
    screen then reads the same text: the index's parse is remembered (`remember`) and given
    to the next question about that text, so a large file is parsed once, not twice, and
    its tree is not kept beyond that (nothing mutates it)."""
    last, tree = _LAST_PARSE
    if last is not None and (last is text or (len(last) == len(text) and last == text)):
        _LAST_PARSE[0] = _LAST_PARSE[1] = None
        return tree
    tree = ast.parse(text)
    if remember:
        _LAST_PARSE[0], _LAST_PARSE[1] = text, tree
    return tree


def first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)]) if decorators else node.lineno


def is_self(node: ast.AST) -> bool:
    return type(node) is ast.Name and node.id == "self"


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = tuple(f for f in getattr(kind, "_fields", ()) if f not in ("ctx", "type_comment")) if issubclass(kind, ast.AST) else ()
        _FIELDS[kind] = fields
    return fields


class FactReader:
    """Reads a unit's facts; `device_words` etc. come from the screen's tables."""

    def __init__(self, lines: list[str], tables, call_words=frozenset(), collect: list | None = None) -> None:
        self.lines = lines
        # (node, unit) for every call, attribute assignment and def: what the repository
        # index (synclint/repo/) summarises, gathered in this same walk. While it is
        # gathered, the screen's loose "may" readings of device evidence (a device-only use
        # anywhere in the unit, list elements) are left out: the index reads places as facts.
        self.collect = collect
        self.t = tables
        self.call_words = call_words  # calls of these names are kept by name (unit.calls)
        self.aliases: dict[str, str] = {}  # `from m import a as b`: b -> a
        self.imports: dict[str, set[str]] = {}  # local name -> the dotted names it may stand for
        # (name, id of the assignment) of a nested function's readback of its own parameter
        # (`def fwd(x, grid): grid_cpu = grid.cpu()`): evidence about that parameter, not
        # about the enclosing function's name `grid` (`_own_parameter_readbacks`).
        self._nested_readbacks: set[tuple[str, int]] = set()

    def read(self, root: ast.AST, unit: Unit, skip: frozenset = frozenset()) -> None:
        """Add what `root` holds to `unit`'s facts, without the subtrees whose ids are in `skip`."""
        t = self.t
        ids = unit.identifiers
        sites = unit.sites
        device = False
        pending: list = [root]
        pop, push = pending.pop, pending.append
        while pending:
            node = pop()
            if skip and id(node) in skip:
                continue
            kind = type(node)
            if kind is ast.Name:
                ids.add(node.id)
                if type(node.ctx) is ast.Load:
                    unit.loads.add(node.id)
                else:
                    unit.bound.add(node.id)
                continue
            if kind is ast.Constant:
                if type(node.value) is str and node.value.split(":", 1)[0] in t.ACCELERATOR_PREFIXES:
                    device = True
                continue
            if kind is ast.Attribute:
                attr = node.attr
                ids.add(attr)
                if is_self(node.value):
                    if type(node.ctx) is ast.Load:
                        unit.self_reads.add(attr)
                    continue
                if attr in t.PARAMETER_ATTRIBUTES:
                    device = True
            elif kind is ast.Call:
                self._call(node, unit, sites)
                if self.collect is not None:
                    self.collect.append((node, unit))
                func = node.func
                if type(func) is ast.Attribute and func.attr == "to" and t.moves_to_a_device(node):
                    device = True
            elif kind is ast.Subscript:
                sites.setdefault("subscript", []).append(node)
                if any(t.literal_int_list(e) for e in t._index_elements(node)):
                    unit.called.add(t.LITERAL_LIST_INDEX)  # a word for SL106's constant index
            elif kind is ast.Assign:
                if self.collect is not None:
                    self.collect.append((node, unit))
                for target in node.targets:
                    self._bind(target, node.value, unit, unpack=True)
                if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                    source = readback_into_host_name(node.targets[0].id, node.value)
                    if source is not None and (source, id(node)) not in self._nested_readbacks:
                        unit.bindings.append(((source,), t.DEVICE))
                        unit.other_bound.add(source)
                if len(node.targets) == 1 and type(node.targets[0]) is ast.Subscript:
                    sites.setdefault("store", []).append(node.targets[0])
                    sites.setdefault("stored", []).append(node.value)
            elif kind is ast.AugAssign:
                self._bind(node.target, ("aug", node.target, node.value), unit)
            elif kind is ast.AnnAssign:
                if self.collect is not None:
                    self.collect.append((node, unit))
                if node.value is not None:
                    self._bind(node.target, node.value, unit)
                if type(node.target) is ast.Name:
                    unit.annotations[node.target.id] = node.annotation
                declared = t.annotation_mask(node.annotation)
                if declared:
                    self._bind(node.target, declared, unit)
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                self._bind_loop(node.target, node.iter, unit)
                sites.setdefault("loop", []).append(node.iter)
                if kind is ast.comprehension and node.ifs:
                    sites.setdefault("truth", []).extend(node.ifs)
            elif kind is ast.With or kind is ast.AsyncWith:
                for item in node.items:
                    context = item.context_expr
                    if type(context) is ast.Call and type(context.func) in (ast.Attribute, ast.Name) and t._last_name(context.func) == "device":
                        # `with torch.device(d):` (a device context for the factories in it)
                        first = node.body[0].lineno if node.body else node.lineno
                        sites.setdefault("device_with", []).append((context, first, node.end_lineno))
            elif kind is ast.withitem:
                if node.optional_vars is not None:
                    self._bind(node.optional_vars, node.context_expr, unit)
            elif kind is ast.NamedExpr:
                self._bind(node.target, node.value, unit)
            elif kind is ast.If or kind is ast.While or kind is ast.Assert or kind is ast.IfExp:
                sites.setdefault("truth", []).append(node.test)
            elif kind is ast.BoolOp:
                sites.setdefault("truth", []).append(node)
            elif kind is ast.UnaryOp:
                if type(node.op) is ast.Not:
                    sites.setdefault("truth", []).append(node.operand)
            elif kind is ast.FormattedValue:
                sites.setdefault("text", []).append(node.value)
            elif kind is ast.BinOp:
                if type(node.op) is ast.Mod:
                    sites.setdefault("text", []).append(node.right)
                elif type(node.op) is ast.Mult and type(node.left) in SEQUENCE_DISPLAYS:
                    sites.setdefault("numbers", []).append(node.right)  # `[n] * count` (SL208)
                elif type(node.op) is ast.Mult and type(node.right) in SEQUENCE_DISPLAYS:
                    sites.setdefault("numbers", []).append(node.left)
                unit.device_uses.append(node.left)
                unit.device_uses.append(node.right)
            elif kind is ast.Compare:
                if len(node.ops) == 1 and type(node.ops[0]) not in (ast.Is, ast.IsNot, ast.In, ast.NotIn):
                    unit.device_uses.append(node.left)
                    unit.device_uses.append(node.comparators[0])
            elif kind in FUNCTIONS or kind is ast.Lambda:
                if self.collect is not None and kind is not ast.Lambda:
                    self.collect.append((node, unit))
                if kind is not ast.Lambda:
                    ids.add(node.name)
                    unit.bound.add(node.name)
                    if node is not root:
                        unit.local_defs.setdefault(node.name, []).append(node)
                        self._nested_readbacks.update(_own_parameter_readbacks(node))
                self._parameters(node, unit, forward=kind is not ast.Lambda and node.name == "forward")
                if kind is not ast.Lambda and type(node.returns) is ast.Name and node.returns.id == "bool":
                    # `-> bool`: what it returns is truth-tested by its callers (SL203)
                    sites.setdefault("truth", []).extend(
                        r.value for r in astwalk.walk(node) if type(r) is ast.Return and r.value is not None
                    )
            elif kind is ast.ClassDef:
                ids.add(node.name)
                unit.bound.add(node.name)
            elif kind is ast.keyword:
                if node.arg is not None:
                    ids.add(node.arg)
                    unit.called.add(node.arg)
            elif kind is ast.arg:
                ids.add(node.arg)
            elif kind is ast.alias:
                ids.add(node.name.rpartition(".")[2])
                if node.asname:
                    ids.add(node.asname)
                    self.aliases[node.asname] = node.name
                local = (node.asname or node.name).partition(".")[0]
                unit.bound.add(local)
                unit.imported.add(local)
                continue
            elif kind is ast.Import or kind is ast.ImportFrom:
                unit.has_import = True
                self._import(node)
            elif kind is ast.ExceptHandler:
                if node.name:
                    unit.bound.add(node.name)
            elif kind is ast.MatchAs or kind is ast.MatchStar:
                if node.name:  # a capture pattern: bound to anything the subject holds
                    unit.bindings.append(((node.name,), t.ANYTHING))
                    unit.bound.add(node.name)
                    unit.other_bound.add(node.name)
            elif kind is ast.MatchMapping:
                if node.rest:
                    unit.bindings.append(((node.rest,), t.ANYTHING))
                    unit.bound.add(node.rest)
                    unit.other_bound.add(node.rest)
            if isinstance(node, ast.stmt) and node.col_offset:
                self._note_indent(node, unit)
            for name in _fields(kind):
                value = getattr(node, name)
                if type(value) is list:
                    pending.extend(value)
                elif value is not None:
                    push(value)
        unit.device_source = device or t.device_identifier(ids) or not unit.self_reads.isdisjoint(t.SELF_DEVICE_ATTRIBUTES)
        if self.collect is None and unit.moves_back and unit.unplaced_params & unit.host_copied:
            # copied to the host and a value moved back to a device: may be a device tensor
            names = unit.unplaced_params & unit.host_copied
            unit.bindings.append((tuple(sorted(names)), t.DEVICE))
            unit.other_bound.update(names)
        if self.collect is None and unit.unplaced_params and (unit.device_uses or unit.launches or unit.passed_on):
            # evidence.device_uses may show any of them on the device: a device operand
            # beside one, a kernel launch / custom op taking it, or a function of the file
            # whose parameter is a device tensor taking it.
            value = t.DEVICE if unit.launches else ("devuse", tuple(unit.device_uses), tuple(unit.passed_on))
            unit.bindings.append((tuple(sorted(unit.unplaced_params)), value))
            unit.other_bound.update(unit.unplaced_params)
        if type(root) in FUNCTIONS:
            _versions(root, unit)

    def _import(self, node) -> None:
        found = self.imports
        if type(node) is ast.Import:
            for alias in node.names:
                if alias.asname:
                    found.setdefault(alias.asname, set()).add(alias.name)
                else:
                    head = alias.name.partition(".")[0]
                    found.setdefault(head, set()).add(head)
        elif node.module and not node.level:
            for alias in node.names:
                found.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")

    def _call(self, node: ast.Call, unit: Unit, sites: dict) -> None:
        func = node.func
        called = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        if type(func) is ast.Subscript or (type(func) is ast.Attribute and _dotted_head(func) == "torch.ops"):
            unit.launches = True  # `kernel[grid](x)`, `torch.ops.ns.op(x)`: see evidence.py
        elif called in _api.SAME_DEVICE_FUNCTIONS:
            for arg in node.args:
                if type(arg) in (ast.List, ast.Tuple):
                    unit.device_uses.extend(e for e in arg.elts if type(e) is not ast.Starred)
                elif type(arg) is not ast.Starred:
                    unit.device_uses.append(arg)
        if type(func) is ast.Attribute and called in ("cpu", "to"):
            receiver = func.value
            if called == "cpu" or _to_the_cpu(node):
                if type(receiver) is ast.Name:
                    unit.host_copied.add(receiver.id)
            elif node.args and (type(node.args[0]) is ast.Name or (type(node.args[0]) is ast.Attribute and node.args[0].attr == "device")):
                unit.moves_back = True
        if called in NUMBER_ARGUMENT_CALLS:  # arguments read as Python numbers (SL208)
            sites.setdefault("numbers", []).extend([*node.args, *(kw.value for kw in node.keywords)])
        elif type(func) is ast.Name and called in ("list", "tuple"):  # iterated whole (SL207)
            sites.setdefault("loop", []).extend(node.args)
        if node.args or node.keywords:
            if type(func) is ast.Name or (type(func) is ast.Attribute and is_self(func.value)):
                unit.passed_on.append(node)
        if type(func) is ast.Name:
            unit.called.add(func.id)
            if func.id in self.call_words:
                unit.calls.setdefault(func.id, []).append(node)
            if func.id in CONVERTING_BUILTINS:
                sites.setdefault("convert", []).extend(node.args)
                if func.id in SIZING_BUILTINS:
                    sites.setdefault("sizing", []).extend(node.args)
        elif type(func) is ast.Attribute:
            attr = func.attr
            unit.called.add(attr)
            if attr in self.call_words:
                unit.calls.setdefault(attr, []).append(node)
            if is_self(func.value):
                unit.self_calls.add(attr)
            if attr == "copy_":
                sites.setdefault("copy", []).append(node)
            if attr in ("append", "insert") and node.args:
                # a list's element: what indexing the list may give (flow.py `_record_elements`);
                # the index keeps those of a local list only, which `torch.cat(parts)` reads
                if self.collect is None and (is_self(func.value.value) if type(func.value) is ast.Attribute else False):
                    unit.self_writes.setdefault(func.value.attr, []).append(node.args[-1])
                elif type(func.value) is ast.Name:
                    unit.bindings.append(((func.value.id,), node.args[-1]))
                    unit.other_bound.add(func.value.id)
            if attr in BOOL_RESULT_METHODS:
                sites.setdefault("convert", []).extend([func.value, *node.args])
            elif attr == "format":
                sites.setdefault("convert", []).extend(node.args)
            elif attr == "item":
                sites.setdefault("sizing", []).append(func.value)
            elif attr == "register_buffer" and node.args and type(node.args[0]) is ast.Constant and type(node.args[0].value) is str:
                unit.self_writes.setdefault(node.args[0].value, []).append(self.t.DEVICE)
            elif attr == "cuda" or attr == "to":
                sites.setdefault("move", []).append(node)

    def _bind_loop(self, target: ast.AST, iterable, unit: Unit) -> None:
        """`for i, x in enumerate(t)` and `for a, b in zip(p, q)` bind element-wise, as the
        analysis does (synclint/analysis/flow.py `loop_bindings`); other loops bind the
        target to the iterable."""
        if type(target) in (ast.Tuple, ast.List) and type(iterable) is ast.Call and type(iterable.func) is ast.Name:
            name, args, names = iterable.func.id, iterable.args, target.elts
            plain = not iterable.keywords and not any(type(a) is ast.Starred for a in args)
            plain = plain and not any(type(n) is ast.Starred for n in names)
            if plain and name == "enumerate" and len(names) == 2 and len(args) == 1:
                self._bind(names[0], ast.Constant(0), unit)
                self._bind(names[1], args[0], unit)
                if type(names[1]) is ast.Name:
                    unit.iterated.setdefault(names[1].id, []).append(args[0])
                return
            if plain and name == "zip" and len(names) == len(args):
                for element, arg in zip(names, args):
                    self._bind(element, arg, unit)
                return
        self._bind(target, iterable, unit)
        if type(target) is ast.Name:
            unit.iterated.setdefault(target.id, []).append(iterable)

    def _bind(self, target: ast.AST, value, unit: Unit, unpack: bool = False) -> None:
        """Record `target = value`: names (through tuples, lists and stars) and `self.x`.
        `a, b = x, y` binds element by element, as the analysis does; so does `a, b = f(x)`
        (`unpack`: an assignment), each name to `("item", call, position)`."""
        kind = type(target)
        if kind is ast.Name:
            unit.bindings.append(((target.id,), value))
        elif kind is ast.Tuple or kind is ast.List:
            if type(value) in (ast.Tuple, ast.List) and len(value.elts) == len(target.elts):
                for element, part in zip(target.elts, value.elts):
                    self._bind(element, part, unit)
                return
            if unpack and type(value) is ast.Call and not any(type(e) is ast.Starred for e in target.elts):
                # `a, b = f(x)`: each name the element of the tuple returned there
                # (screen.places `call_item`), as the analysis reads it.
                for position, element in enumerate(target.elts):
                    self._bind(element, ("item", value, position), unit)
                return
            for element in target.elts:
                self._bind(element, value, unit)
        elif kind is ast.Starred:
            self._bind(target.value, value, unit)
        elif kind is ast.Attribute and is_self(target.value):
            unit.self_writes.setdefault(target.attr, []).append(value)

    def _parameters(self, func, unit: Unit, forward: bool) -> None:
        args = func.args
        t = self.t
        positional = [*args.posonlyargs, *args.args]
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]
        key = param_key(func, unit) if type(func) is not ast.Lambda else None
        names = {arg.arg for arg, _ in pairs}
        moved = None
        for arg, default in pairs:
            name = arg.arg
            unit.bound.add(name)
            if name in ("self", "cls"):
                continue
            if arg.annotation is not None:
                unit.annotations[name] = arg.annotation
            if arg.annotation is None or t.tensor_annotation(arg.annotation):
                if any(name + suffix in names for suffix in _api.HOST_MIRROR_SUFFIXES):
                    unit.bindings.append(((name,), t.DEVICE))  # beside its host mirror
                elif default is None or (type(default) is ast.Constant and default.value is None):
                    unit.unplaced_params.add(name)
            if key is not None:
                # What every caller in the repository passes, or what the name says.
                known = t.REPO.param(key, name)
                if known:
                    unit.bindings.append(((name,), known))
            host_named = name.lower().endswith(_api.HOST_MIRROR_SUFFIXES)  # `grid_thw_cpu`: not on the device
            if forward and moved is None:
                owner = unit.owner.header.node if unit.method and unit.owner is not None else None
                moved = moved_inputs(func, frozenset(s.name for s in owner.body if type(s) in FUNCTIONS) if owner is not None else frozenset())
            if (forward and not host_named and name not in moved and arg.annotation is not None and t.tensor_annotation(arg.annotation)) or name in t.DEVICE_NAMES:
                unit.bindings.append(((name,), t.DEVICE))
            if arg.annotation is not None:
                declared = t.annotation_mask(arg.annotation)
                if declared:
                    unit.bindings.append(((name,), declared))
            if default is not None:
                unit.bindings.append(((name,), default))
        for star in (args.vararg, args.kwarg):
            if star is not None:
                unit.bound.add(star.arg)

    def _note_indent(self, stmt: ast.stmt, unit: Unit) -> None:
        decorators = getattr(stmt, "decorator_list", None)
        row, column = (decorators[0].lineno, decorators[0].col_offset - 1) if decorators else (stmt.lineno, stmt.col_offset)
        if unit.first_indent is not None and unit.first_indent[0] <= row:
            return
        line = self.lines[row - 1] if row <= len(self.lines) else ""
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if len(indent) == column:  # the statement begins its line: an INDENT token there
            unit.first_indent = (row, indent)


def _dotted_head(func: ast.Attribute) -> str:
    """`torch.ops` of `torch.ops.ns.op`."""
    parts = []
    node = func
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return ""
    parts.append(node.id)
    parts.reverse()
    return ".".join(parts[:2])


_READBACKS = frozenset({"cpu", "tolist", "item"})


def readback_into_host_name(target: str, value) -> str | None:
    """`x` of `x_cpu = x[...].cpu()` (synclint/analysis/evidence.py `host_named_readback`):
    the name a readback bound to a host-named target shows on the device."""
    if not _api.host_copy_name(target):
        return None
    while type(value) is ast.Call and type(value.func) is ast.Attribute:
        method = value.func.attr
        if method in _READBACKS and not value.args or method == "to" and value.args:
            value = value.func.value
            break
        if method in ("numpy", "tolist") and not value.args:
            value = value.func.value
            continue
        return None
    else:
        return None
    while True:  # the name under views and reductions
        kind = type(value)
        if kind is ast.Name:
            return value.id if value.id not in ("self", target) and not _api.host_copy_name(value.id) else None
        if kind is ast.Subscript:
            value = value.value
        elif kind is ast.Call and type(value.func) is ast.Attribute:
            value = value.func.value
        else:
            return None


def _own_parameter_readbacks(func) -> set[tuple[str, int]]:
    """(name, id of the assignment) of each `x_cpu = x.cpu()` in a nested function `func`
    whose `x` is one of `func`'s parameters: the unit joins the names of its nested scopes,
    and such a readback says nothing of the enclosing function's `x` (whose callers the
    index may know pass host data)."""
    args = func.args
    own = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    out: set[tuple[str, int]] = set()
    for node in astwalk.walk(func):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            source = readback_into_host_name(node.targets[0].id, node.value)
            if source in own:
                out.add((source, id(node)))
    return out


def function_key(func, unit: Unit) -> str:
    """The name calls reach a function by: its own, or its class's for `__init__` (`Cls(...)`)."""
    if func.name == "__init__" and unit.owner is not None and unit.node is func:
        return unit.owner.header.node.name
    return func.name


# `f<outer`: the parameters of a function `f` defined inside function `outer` (the outermost
# function around it): only calls made inside `outer` reach it, never a call of another
# module's `f` (`def f(length: float)` nested in a method is not the `f` a loop elsewhere
# passes tensor elements).
NESTED = "<"


def nested_key(func, unit: Unit) -> str | None:
    """`f<outer` for a function `f` nested in the function `outer` that `unit` is; else None."""
    outer = unit.node
    if func is outer or type(outer) not in (ast.FunctionDef, ast.AsyncFunctionDef) or type(func) is ast.Lambda:
        return None
    return f"{func.name}{NESTED}{outer.name}"


def param_key(func, unit: Unit) -> str:
    """The name a function's own parameters are read by: `Cls.method` for a method of a
    module-level class (not `__init__`), as the analysis asks the repository first
    (synclint/analysis/flow.py `_param_fact`); `nested_key` for a nested function; else
    `function_key`."""
    if unit.method and unit.node is func and unit.owner is not None and func.name != "__init__":
        return f"{unit.owner.header.node.name}.{func.name}"
    return nested_key(func, unit) or function_key(func, unit)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def collect_defines(stmt: ast.AST, out: set[str], comprehension_only: set[str] | None = None, skip: frozenset = frozenset()) -> None:
    """Names a module- or class-level statement binds: assignment targets, imports,
    definitions (not the locals of the functions it defines). With `comprehension_only`,
    the names bound only as a comprehension's `for` targets go there too (Python binds them
    in the comprehension's own scope, and so does the analysis: `context._comprehension_env`).
    Not under the nodes whose ids are in `skip`. A plain stack over the fields, as `read`."""
    pending: list = [stmt]
    pop, push = pending.pop, pending.append
    targets: list[ast.AST] = []
    while pending:
        node = pop()
        if skip and id(node) in skip:
            continue
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                out.add(node.id)
            continue
        if kind is ast.Constant or kind is ast.Lambda:
            continue
        if kind in _DEFINITIONS:
            out.add(node.name)
            continue
        if kind is ast.comprehension and comprehension_only is not None:
            targets.append(node.target)
            push(node.iter)
            pending.extend(node.ifs)
            continue
        if kind is ast.alias:
            out.add((node.asname or node.name).split(".")[0])
        elif kind is ast.Global or kind is ast.Nonlocal:
            out.update(node.names)
            continue
        elif (kind is ast.MatchAs or kind is ast.MatchStar) and node.name:
            out.add(node.name)
        for name in _fields(kind):
            value = getattr(node, name)
            if type(value) is list:
                pending.extend(value)
            elif value is not None:
                push(value)
    if comprehension_only is not None:
        loose: set[str] = set()
        for target in targets:
            collect_defines(target, loose)
        comprehension_only.update(loose - out)
        out.update(loose)


# --- straight-line versions ------------------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _versions(func: ast.AST, unit: Unit) -> None:
    """Give a name rebound by a statement of the function's own body (`x = torch.as_tensor(x,
    device="cpu")`, `lens = lens.to(device)`) a binding of its own (`x#1`) and point the reads
    after it there, until the next statement that may bind the name again: the place model
    joins every binding of a name, but after an unconditional rebinding only the new value is
    read. Only names bound more than once and only by stores (not by the evidence bindings of
    `x_cpu = x.cpu()`, `xs.append(t)` or a device use) are versioned; reads inside nested
    functions and lambdas keep the joined name (they run later)."""
    counts: dict[str, int] = {}
    for names, _ in unit.bindings:
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    candidates = {n for n, c in counts.items() if c > 1 and "#" not in n} - unit.other_bound
    if not candidates:
        return
    _Versions(unit, candidates).block(func.body, {})


class _Versions:
    """The walk of `_versions`: a block's statements in order, with the version each name
    holds at that point. A block nested in a branch or a loop is straight-line too: a name
    rebound at its own level is that value in the reads after it in that block; once the
    block ends, either value may be read (the name is joined again). A loop's body may also
    read what its own later statements bound in the previous iteration, so names the loop
    binds anywhere are joined inside it; a `try` and a `match` are read whole, as before."""

    def __init__(self, unit: Unit, candidates: set) -> None:
        self.unit = unit
        self.candidates = candidates
        self.number = len(unit.versions)

    def block(self, stmts: list, current: dict) -> None:
        for stmt in stmts:
            kind = type(stmt)
            if kind is ast.If:
                self.reads(stmt.test, current)
                self.branches(stmt, (stmt.body, stmt.orelse), current, {})
            elif kind in (ast.For, ast.AsyncFor):
                self.reads(stmt.iter, current)
                self.branches(stmt, (stmt.body, stmt.orelse), current, self.stores(stmt))
            elif kind is ast.While:
                carried = self.stores(stmt)
                self.reads(stmt.test, {n: v for n, v in current.items() if n not in carried})
                self.branches(stmt, (stmt.body, stmt.orelse), current, carried)
            elif kind in (ast.With, ast.AsyncWith):
                for item in stmt.items:
                    self.reads(item.context_expr, current)
                self.branches(stmt, (stmt.body,), current, self.stores_of(item.optional_vars for item in stmt.items))
            else:
                self.simple(stmt, current)

    def simple(self, stmt: ast.stmt, current: dict) -> None:
        simple = None
        if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name and stmt.targets[0].id in self.candidates:
            simple = stmt.targets[0].id
        if current:
            reads, stored = _reads_and_stores(stmt.value if simple else stmt, current)
            for node in reads:
                if node.id not in stored:
                    self.unit.versions[id(node)] = current[node.id]
            for name in stored:
                current.pop(name, None)
            if simple in stored:
                return  # `x = (x := ...)`: bound twice in one statement
        if simple is not None:
            self.number += 1
            version = f"{simple}#{self.number}"
            self.unit.bindings.append(((version,), stmt.value))
            current[simple] = version

    def reads(self, expr, current: dict) -> None:
        """Point the reads of a compound statement's header (`if x:`, `for a in x:`) at the
        versions they see; a name the header binds (`if (x := ...)`) is joined after it."""
        if not current or expr is None:
            return
        reads, stored = _reads_and_stores(expr, current)
        for node in reads:
            if node.id not in stored:
                self.unit.versions[id(node)] = current[node.id]
        for name in stored:
            current.pop(name, None)

    def branches(self, stmt, blocks: tuple, current: dict, carried: set) -> None:
        """Each block from the versions before `stmt`, less the names a loop carries round
        (and its own targets); after it, every name any block may bind is joined."""
        inner = {n: v for n, v in current.items() if n not in carried}
        for body in blocks:
            self.block(body, dict(inner))
        for name in self.stores(stmt):
            current.pop(name, None)

    def stores(self, stmt) -> set:
        if not self.candidates:
            return set()
        return _reads_and_stores(stmt, dict.fromkeys(self.candidates))[1]

    def stores_of(self, targets) -> set:
        found: set = set()
        for target in targets:
            if target is not None:
                found |= _reads_and_stores(target, dict.fromkeys(self.candidates))[1]
        return found


def _reads_and_stores(root: ast.AST, names: dict) -> tuple[list, set]:
    """The `Name` reads of `names` under `root` (not inside nested functions, classes and
    lambdas), and the names of `names` something under it may bind."""
    reads: list = []
    stored: set = set()
    pending = [root]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Name:
            if node.id in names:
                if type(node.ctx) is ast.Load:
                    reads.append(node)
                else:
                    stored.add(node.id)
            continue
        if kind in _SCOPES:
            if kind is not ast.Lambda and node.name in names:
                stored.add(node.name)  # `def x(): ...` binds `x`
            continue
        if kind is ast.Global or kind is ast.Nonlocal:
            stored.update(n for n in node.names if n in names)
        elif kind is ast.alias:
            local = (node.asname or node.name).partition(".")[0]
            if local in names:
                stored.add(local)
        elif kind is ast.ExceptHandler and node.name in names:
            stored.add(node.name)
        elif kind in (ast.MatchAs, ast.MatchStar) and node.name in names:
            stored.add(node.name)
        pending.extend(astwalk.children(node))
    return reads, stored


def moved_inputs(func, methods: frozenset = frozenset()) -> frozenset:
    """The names whose data a function moves to a device (`grid_thw.to(x.device)`,
    `f(grid_thw[:, 1]).to(torch.int32).to(x.device)`, `x.cuda()`; not `.to(torch.int32)`, nor
    `h` of `y.to(h.device)`): a module's `forward` that moves an input holds it on the host,
    whatever "inputs live where the module runs" says. Also the data a moved local was made of,
    by operators and functions or by one of the class's own `methods` (analysis/flow.py
    `moved_inputs`, the same reading of the libcst tree)."""
    found = set()
    made: dict[str, set] = {}  # a local bound to what was made of data -> the names of that data
    stack = list(func.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in FUNCTIONS or kind is ast.ClassDef or kind is ast.Lambda:
            continue
        if kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("to", "cuda") and _moves(node) and not _to_the_cpu(node):
            found.update(_data_names(node.func.value))
        elif kind is ast.Assign and ((own := _own_method_call(node.value, methods)) or _made_of_data(node.value, methods)):
            value = node.value
            if own:
                given = set().union(*(_data_names(a) for a in value.args), *(_data_names(k.value) for k in value.keywords))
            else:
                given = _data_names(value)
            for target in node.targets:
                for element in (target.elts if type(target) in (ast.Tuple, ast.List) else (target,)):
                    if type(element) is ast.Name:
                        made.setdefault(element.id, set()).update(given)
        stack.extend(astwalk.children(node))
    for name in list(found):
        found.update(made.get(name, ()))
    return frozenset(found)


def _made_of_data(value, methods: frozenset) -> bool:
    """As analysis/flow.py `_made_of_data`: computed from the data of the names it reads, by
    operators, tensor methods and functions, not by a submodule; not a plain alias."""
    for node in astwalk.walk(value):
        kind = type(node)
        if kind is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self" and func.attr not in methods:
                return False
        elif kind in (ast.Lambda, ast.Await, ast.Yield):
            return False
    return type(value) not in (ast.Name, ast.Attribute)


def _own_method_call(value, methods: frozenset) -> bool:
    """`self.m(...)` with `m` a method the class defines (not a submodule field)."""
    return type(value) is ast.Call and type(value.func) is ast.Attribute and type(value.func.value) is ast.Name \
        and value.func.value.id == "self" and value.func.attr in methods


def _moves(call) -> bool:
    """`.cuda()`, `.to(device=...)`, `.to(..., non_blocking=...)`, `.to("cuda")`, `.to(d)` of a
    target not named as a dtype (analysis/flow.py `_moves`)."""
    if call.func.attr == "cuda":
        return True
    if any(k.arg in ("device", "non_blocking") for k in call.keywords):
        return True
    first = call.args[0] if call.args and type(call.args[0]) is not ast.Starred else None
    if type(first) is ast.Constant:
        return type(first.value) is str
    name = first.attr if type(first) is ast.Attribute else first.id if type(first) is ast.Name else None
    return name is not None and name not in _api.DTYPES and "dtype" not in name.lower()


def _to_the_cpu(call) -> bool:
    """`.to("cpu")`, `.to(device="cpu")`, `.to(torch.device("cpu"))`: a copy to the host."""
    values = [call.args[0]] if call.args else []
    values += [k.value for k in call.keywords if k.arg == "device"]
    for value in values:
        if type(value) is ast.Call and value.args:
            value = value.args[0]  # `torch.device("cpu")`
        if type(value) is ast.Constant and value.value == "cpu":
            return True
    return False


def _data_names(expr) -> set:
    out = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            out.add(node.id)
        elif kind is ast.Call and type(node.func) is ast.Attribute and (node.func.attr in _api.HOST_COPY_METHODS or node.func.attr == "to" and _to_the_cpu(node)):
            continue  # `x.type(torch.BoolTensor).to(d)`: what is moved is a host copy, whatever `x` is
        elif kind is ast.Attribute and node.attr in _api.METADATA_ATTRIBUTES:
            continue
        elif kind is ast.Lambda or kind in FUNCTIONS:
            continue
        else:
            stack.extend(astwalk.children(node))
    return out
