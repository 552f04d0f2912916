"""What one module says about its classes: their bases, the classes of their fields, what
their constructors and annotated functions return, the methods they alias and the objects
their methods build (`_Types`, `_class_info`, `_method_info`).
"""

from __future__ import annotations

import ast

from synclint.analysis import astwalk
from synclint.apis import torch_api as api
from synclint.repo.keys import ALIAS, GENERIC_BASES, RETURNED_BY, _CLASS_UNION, _EXTERNAL
from synclint.screen import places


class _Types:
    """The classes of the repository (or of one file while it is summarised): their bases,
    the classes of their fields and what their constructors and annotated functions return,
    all by last name."""

    bases: dict
    field_types: dict
    returns: dict

    def is_class(self, name: str) -> bool:
        return name in self.bases

    def _lineage(self, cls: str):
        seen = [cls]
        i = 0
        while i < len(seen) and i < 32:
            for base in self.bases.get(seen[i], ()):
                if base not in seen:
                    seen.append(base)
            i += 1
        return seen

    def field_type(self, cls: str, name: str) -> str | None:
        for one in self._lineage(cls):
            found = self.field_types.get((one, name))
            if found is not None:
                if found.startswith(RETURNED_BY):
                    # the factory method of the object's own class (its nearest definition)
                    return self.returns_class(cls, found[len(RETURNED_BY):])
                return found or None  # "": several classes: unknown
        return None

    def parameter_class(self, cls: str, method: str, param: str) -> str | None:
        """The class the nearest base of `cls` whose `method` declares parameter `param`
        declares it (`places.inherited_parameter_class`). The lineage here takes generic
        bases too (`Builder(MetaBuilder[Meta])`): which interface a subclass implements is
        what its base says, whatever the fields' families leave out."""
        key = places.parameter_key(method, param)
        seen = [cls]
        i = 0
        while i < len(seen) and i < 32:
            one = seen[i]
            found = self.field_types.get((one, key))
            if found is not None:
                return found or None
            generic = self.field_types.get((one, GENERIC_BASES))
            for base in (*self.bases.get(one, ()), *(generic.split(",") if generic else ())):
                if base and base not in seen:
                    seen.append(base)
            i += 1
        return None

    def resolved_class(self, cls: str, depth: int = 0) -> str | None:
        """A class the summary of one file left as a path (`places.deferred`: what
        `Worker.forward_step` returns, the class of `Engine.worker`; alternatives joined by
        `|`, which must agree), resolved against every file's classes; None where a link is
        unknown."""
        if not places.deferred(cls):
            return cls
        if depth > 8:
            return None
        if "|" in cls:
            found = {self.resolved_class(one, depth + 1) for one in cls.split("|")}
            return found.pop() if len(found) == 1 else None
        at_return, at_field = cls.rfind(places.RETURNED_CLASS), cls.rfind(places.FIELD_CLASS)
        at = max(at_return, at_field)
        base = self.resolved_class(cls[:at], depth + 1)
        if base is None:
            return None
        name = cls[at + 2:]
        if at_return > at_field:
            found = self._returns_class(base, name)
        else:
            found = self.field_type(base, name) if base else None
        if found is not None and places.deferred(found):
            found = self.resolved_class(found, depth + 1)
        return found

    def _returns_class(self, owner: str, name: str) -> str | None:
        for one in self._lineage(owner) if owner else ("",):
            found = self.returns.get((one, name))
            if found is not None:
                return found or None
        return None

    def returns_class(self, owner: str, name: str) -> str | None:
        found = self._returns_class(owner, name)
        if found is not None and places.deferred(found):
            return self.resolved_class(found)  # `return run_verify(...)`: what that returns
        return found


def _class_info(tree: ast.Module, imports) -> tuple:
    """One file's classes: ((name, bases, fields in order)...), ((class, field, type)...),
    ((owner, function, class)...): a field's class from its annotation or `self.f = Cls(...)`,
    a function's from `-> Cls`, a classmethod's from the `cls(...)` / `Cls(...)` it returns."""
    classes, field_types, returns = [], [], []
    registries = _registries(tree, imports)
    values = _module_values(tree)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = places.annotation_class(node.returns, imports) if node.returns is not None else None
            if found:
                returns.append(("", node.name, found))
            continue
        if not isinstance(node, ast.ClassDef):
            continue
        name = node.name
        bases = tuple(
            b for b in (places.resolved_name(places._last_name(e), imports) for e in node.bases) if b and b not in ("object", "Generic", "Protocol")
        )
        fields = []
        start = len(field_types)
        injected: list = []  # `self.x = x` with `x: Cls`: only where no constructor says the class
        for member in node.body:
            if isinstance(member, ast.AnnAssign) and type(member.target) is ast.Name:
                if places._last_name(member.annotation.value if type(member.annotation) is ast.Subscript else member.annotation) != "ClassVar":
                    fields.append(member.target.id)
                _annotated_field(name, member.target.id, member.annotation, imports, field_types)
            elif isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _method_info(name, member, imports, field_types, returns, registries, injected)
        built = {(c, f) for c, f, _ in field_types[start:]}
        field_types.extend(e for e in dict.fromkeys(injected) if (e[0], e[1]) not in built)
        field_types.extend((name, field + ALIAS, ",".join(refs)) for field, refs in _method_aliases(node, imports, values).items())
        generic = [places.resolved_name(places._last_name(e.value), imports) for e in node.bases if type(e) is ast.Subscript]
        generic = [b for b in generic if b and b not in ("Generic", "Protocol")]
        if generic:
            # `Base[Meta]`: no base of the class table (its fields' families leave it out),
            # but the interface whose parameter declarations an override inherits.
            field_types.append((name, GENERIC_BASES, ",".join(generic)))
        classes.append((name, bases, tuple(fields)))
    return tuple(classes), tuple(field_types), tuple(returns)


def _module_values(tree: ast.Module) -> frozenset[str]:
    """Names a module binds by assignment (values, not functions)."""
    out = set()
    for node in tree.body:
        for target in node.targets if type(node) is ast.Assign else (node.target,) if type(node) is ast.AnnAssign else ():
            out.update(n.id for n in astwalk.walk(target) if type(n) is ast.Name)
    return frozenset(out)


def _method_aliases(cls: ast.ClassDef, imports, values: frozenset) -> dict[str, list[str]]:
    """The fields a class's methods bind to a function, so that `obj.f(...)` runs it: `self.f =
    self.g` (a bound method of the object: `self.g`, resolved in the solve against the class
    of the object called), `self.f = helper` (a function by name; `mod>helper` where it is
    imported from a module of the repository), also wrapped in `torch.compile(...)`. A
    dispatch set in `__init__` (`if windowed: self.update = self.update_windowed` ... `else:
    self.update = self.update_plain`) gives each. None for `self.f = self.x` where `x` is a
    field the class writes (a value, not a method), a local or a parameter, a class, a
    library function or a module-level value."""
    methods, written = set(), set()
    bodies = []
    for member in cls.body:
        if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.add(member.name)
            bodies.append(member)
        elif isinstance(member, ast.Assign):
            written.update(t.id for t in member.targets if type(t) is ast.Name)
        elif isinstance(member, ast.AnnAssign) and type(member.target) is ast.Name:
            written.add(member.target.id)
    pairs = []
    for func in bodies:
        local = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
        if func.args.vararg:
            local.add(func.args.vararg.arg)
        if func.args.kwarg:
            local.add(func.args.kwarg.arg)
        for node in astwalk.walk(func):
            kind = type(node)
            if kind is ast.Name and type(node.ctx) is ast.Store:
                local.add(node.id)
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef) and node is not func:
                local.add(node.name)
            elif kind in (ast.Assign, ast.AnnAssign, ast.AugAssign):
                for target in node.targets if kind is ast.Assign else (node.target,):
                    if type(target) is ast.Attribute and places.is_self_name(target.value):
                        written.add(target.attr)
                        if kind is ast.Assign:
                            pairs.append((target.attr, node.value, local))
    out: dict[str, list[str]] = {}
    for field, value, local in pairs:
        pending = [value]
        while pending:
            value = pending.pop()
            if type(value) is ast.IfExp:  # `self.pick = self.pick_greedy if greedy else self.pick_top_p`
                pending += (value.orelse, value.body)
                continue
            if type(value) is ast.Call and _torch_compile(value.func, imports) and value.args:
                value = value.args[0]  # `torch.compile(self._forward)` runs `_forward`
            ref = None
            if type(value) is ast.Attribute and places.is_self_name(value.value):
                if value.attr != field and (value.attr in methods or value.attr not in written):
                    ref = "self." + value.attr
            elif type(value) is ast.Name and value.id not in local and value.id not in values and not value.id[:1].isupper():
                quals = imports.get(value.id)
                if quals:
                    top = min(quals).split(".", 1)[0]
                    ref = None if top in _EXTERNAL else f"{top}>{places.resolved_name(value.id, imports)}"
                else:
                    ref = value.id
            if ref is not None and ref not in out.setdefault(field, []):
                out[field].append(ref)
    return {field: refs for field, refs in out.items() if refs}


def _torch_compile(func, imports) -> bool:
    """`torch.compile` (through the imports: `import torch as th`, `from torch import compile`)."""
    if type(func) is ast.Attribute and func.attr == "compile" and type(func.value) is ast.Name:
        return any(q == "torch" for q in imports.get(func.value.id, ()))
    return type(func) is ast.Name and any(q == "torch.compile" for q in imports.get(func.id, ()))


def _constructed(value, owner: str, imports, local: dict) -> str | None:
    """`cls(...)`, `Cls(...)` (a capitalised callee), or a name bound to one in the method."""
    if type(value) is ast.Name:
        return local.get(value.id)
    if type(value) is not ast.Call or type(value.func) is not ast.Name:
        return None
    callee = value.func.id
    if callee == "cls":
        return owner
    callee = places.resolved_name(callee, imports)
    if places.names_a_class(callee):
        return callee
    return None


def _registries(tree: ast.Module, imports) -> dict[str, str]:
    """Module-level dicts of classes (`_ADAPTERS = {"mlp": MlpAdapter, "shuffle": ShuffleAdapter}`)
    -> `MlpAdapter|ShuffleAdapter`: the classes an object built from an entry may be."""
    out: dict[str, str] = {}
    for node in tree.body:
        target = node.targets[0] if type(node) is ast.Assign and len(node.targets) == 1 else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if type(target) is not ast.Name or type(value) is not ast.Dict or not value.values:
            continue
        names = [places._last_name(v) if type(v) in (ast.Name, ast.Attribute) else "" for v in value.values]
        if all(n[:1].isupper() and not n.isupper() for n in names):
            out[target.id] = _CLASS_UNION.join(sorted({places.resolved_name(n, imports) for n in names}))
    return out


def _registry_entry(value, registries: dict) -> str | None:
    """`REGISTRY[key]`, `REGISTRY.get(key)` of a module-level dict of classes: the union."""
    if type(value) is ast.Subscript and type(value.value) is ast.Name:
        return registries.get(value.value.id)
    if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "get" and type(value.func.value) is ast.Name:
        return registries.get(value.func.value.id)
    return None


def _own_method_called(value) -> str | None:
    """`m` of `self.m(...)`."""
    if type(value) is ast.Call and type(value.func) is ast.Attribute and places.is_self_name(value.func.value):
        return value.func.attr
    return None


# Return annotations that name the base every model class shares: what the body builds
# (`-> nn.Module` of `return Resampler(...).to(device)`) says more.
_GENERIC_RETURNS = frozenset({"Module", "nn.Module", "torch.nn.Module"})


def _returned_object(value):
    """The object a return gives back: `x` of `x.to(device=d, dtype=t)`, `x.eval()`."""
    while type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in api.MODULE_SELF_RETURNING_METHODS:
        value = value.func.value
    return value


def _annotated_field(owner: str, field: str, annotation: ast.expr, imports, field_types: list) -> None:
    """The classes a field's annotation says: the field's own (`info: StepInfo`) and its
    elements' (`reqs: list[Req]`, kept as `field + ELEMENTS`)."""
    found = places.annotation_class(annotation, imports)
    if found:
        field_types.append((owner, field, found))
    elements = places.element_class(annotation, imports)
    if elements:
        field_types.append((owner, field + places.ELEMENTS, elements))


def _method_info(owner: str, func, imports, field_types: list, returns: list, registries: dict | None = None,
                 injected: list | None = None) -> None:
    found = places.annotation_class(func.returns, imports) if func.returns is not None else None
    if found in _GENERIC_RETURNS:
        found = None
    declared_classes = _parameter_classes(func, imports)
    if found and places._is_property(func):
        # `@property def target_worker(self) -> TpModelWorker`: `obj.target_worker` is one.
        field_types.append((owner, func.name, found))
    if func.name != "__init__":
        # The classes its parameters are declared: an override that leaves one unannotated
        # (`def build(self, common_prefix_len, common_attn_metadata)`) reads it as the
        # nearest base's method declares it (`places.inherited_parameter_class`).
        field_types.extend((owner, places.parameter_key(func.name, p), c) for p, c in declared_classes.items())
    local: dict[str, str] = {}
    chosen: dict[str, str] = {}  # names bound to an entry of a registry of classes
    built = set()
    returned = []
    handed = _never_rebound(func, declared_classes)
    for node in astwalk.walk(func):
        kind = type(node)
        if kind is ast.Assign and len(node.targets) == 1:
            target = node.targets[0]
            made = _constructed(node.value, owner, imports, {})
            if made is None and type(node.value) is ast.Name and type(target) is ast.Attribute and places.is_self_name(target.value):
                # `self.pool = pool` with `pool: SlotPool` a parameter: the field holds what the
                # parameter is declared (an object handed in, as a constructor commonly is).
                declared = handed.get(node.value.id)
                if declared is not None and injected is not None:
                    injected.append((owner, target.attr, declared))
                continue
            if made is None and registries:
                entry = _registry_entry(node.value, registries)
                if entry and type(target) is ast.Name:
                    chosen[target.id] = entry
                    continue
                if type(node.value) is ast.Call:  # `self.adapter = adapter_cls(...)`, `REGISTRY[key](...)`
                    call = node.value.func
                    made = chosen.get(call.id) if type(call) is ast.Name else _registry_entry(call, registries)
            if made is None:
                method = _own_method_called(node.value) if type(target) is ast.Attribute and places.is_self_name(target.value) else None
                if method is not None:
                    # `self.resampler = self.init_resampler(...)`: what the method returns, for
                    # the object's own class (a subclass may override the factory).
                    field_types.append((owner, target.attr, RETURNED_BY + method))
                continue
            if type(target) is ast.Name:
                local[target.id] = made
            elif type(target) is ast.Attribute and places.is_self_name(target.value):
                field_types.append((owner, target.attr, made))
        elif kind is ast.AnnAssign and type(node.target) is ast.Attribute and places.is_self_name(node.target.value):
            _annotated_field(owner, node.target.attr, node.annotation, imports, field_types)
        elif kind is ast.Return and node.value is not None and found is None:
            returned.append(node.value)
    for value in returned:  # after the walk: a local bound in a nested block (`with ...:`) is known
        inner = _returned_object(value)
        made = _constructed(inner, owner, imports, local)
        if made is not None and (made == owner or type(inner) is ast.Name or inner.func.id == "cls" or inner is not value):
            built.add(made)
    if found is None and len(built) == 1:
        found = built.pop()
    if found is None and not built:
        found = _returned_call(returned, owner, imports)
    if found:
        returns.append((owner, func.name, found))


def _returned_call(returned: list, owner: str, imports) -> str | None:
    """What a function returns where every `return` hands on the result of one call, of a
    function (`return run_verify(batch, ...)`) or of a method of the object's own class
    (`return self._build(x)`): that callee's class, as a path the solve resolves
    (`places.RETURNED_CLASS`); None otherwise."""
    callees = set()
    for value in returned:
        if type(value) is ast.Constant and value.value is None:
            continue
        if type(value) is not ast.Call:
            return None
        func = value.func
        if type(func) is ast.Name:
            callees.add(f"{places.RETURNED_CLASS}{places.resolved_name(func.id, imports)}")
        elif type(func) is ast.Attribute and places.is_self_name(func.value) and owner:
            callees.add(f"{owner}{places.RETURNED_CLASS}{func.attr}")
        else:
            return None
    return callees.pop() if len(callees) == 1 else None


def _as_host_copy(value: ast.expr) -> ast.expr:
    """`value.cpu()`, placed where `value` is: a host tensor of what `value` holds."""
    method = ast.copy_location(ast.Attribute(value=value, attr="cpu", ctx=ast.Load()), value)
    return ast.copy_location(ast.Call(func=method, args=[], keywords=[]), value)


def _parameter_classes(func, imports) -> dict[str, str]:
    """The parameters of `func` annotated with a class (`pool: SlotPool`, `Optional[Cfg]`):
    name -> class."""
    args = func.args
    found = {}
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        if arg.annotation is not None and arg.arg not in ("self", "cls"):
            declared = places.annotation_class(arg.annotation, imports)
            if declared:
                found[arg.arg] = declared
    return found


def _never_rebound(func, classes: dict[str, str]) -> dict[str, str]:
    """Those of `classes` (parameter -> class) that the function never rebinds."""
    found = dict(classes)
    if found:
        for node in astwalk.walk(func):
            if type(node) is ast.Name and type(node.ctx) is ast.Store:
                found.pop(node.id, None)
    return found
