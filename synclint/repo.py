"""The repository index: what the rest of the repository says about a value one file cannot place.

A tensor often arrives in the function that syncs on it through a parameter, a field of a
metadata object or a helper defined in another file. This module reads every Python file of
the project once (with `ast`, cached by content hash), summarises each, and solves over the
whole repository:

- a field (`obj.x`, `self.x`) every assignment of which that can be placed (`self.x = ...` in
  any method, `obj.x = ...`, `Cls(x=...)`) puts a device tensor there is a device field
  (fields are keyed by name: one that is also given host data, a list or a Python value
  anywhere is not placed); one only ever assigned host data is a host field;
- a parameter every call site of which that can be placed passes a device tensor is a device
  parameter (calls resolve by name: `f(...)`, `obj.f(...)`, `Cls(...)` for `Cls.__init__`;
  and through the class of the object where the code says it, a method alias such as
  `self.update = self.update_windowed` included); a method reads its own parameters through
  its class (`_MethodParams`);
- a function whose every placeable `return` gives a device (host) tensor returns one.

Each summary is computed by the screen's `ast` evaluator (synclint/screen/places.py), the
same one that decides which functions libcst parses: while a file is summarised, what the
evaluator would ask of the rest of the repository (a field, a parameter, a function's
result) is returned as a symbolic bit, so the summary is a set of flows `target <- local
places | symbols`, independent of every other file, and cacheable by content. The flows are
then solved to a fixpoint.

One odd assignment must not undo the rest: a declared tensor (`x: torch.Tensor` as a field
of a class family, a parameter or the result of a function whose name at most three functions
share) that at least two flows give a device tensor, and at least three times as many as give
it anything else, is read as the device tensor it mostly holds (`_dominant`; `--explain` says so).

Structural conventions, which hold in any codebase, are evidence too (medium confidence, and
`--explain` says so): a name ending in `_gpu`, `_cuda` or `_dev` is a device tensor (not a
device word such as `device`, nor a flag or a count: `is_cuda`, `use_gpu`, `num_gpu`,
`flops_per_gpu`; a `_device` suffix names a device object as often as a tensor, so it says
nothing); `_cpu`, `_host`, `_pinned`, `_cpu_tensor` a host tensor (so is a name that starts
with `host_` or `cpu_`: `host_indices`), `_np`/`_numpy` a numpy
array, `_list` a Python list; and a class or a parameter list holding both `x` and its host
mirror `x_cpu` (`x_host`, `x_np`) holds `x` on the device, unless `x` is given host data or
Python values anywhere in the repository (`self.num_tokens = 0` in another class).

What the solve found is installed for the lint (`install`): the screen reads it through
`places.REPO`, the libcst analysis through `attr_fact` / `param_fact` / `ret_fact`.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
import hashlib
import keyword
import marshal
import os
import re
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import lru_cache, reduce
from itertools import accumulate, chain, repeat
from itertools import count as numbers
from operator import itemgetter, or_
from pathlib import Path

from synclint.analysis import astwalk, coldcode, guards, receivers
from synclint.analysis.host_fields import base_modules, declares_fields, device_fields, host_fields, module_candidates
from synclint.analysis.platform_words import host_class, host_file, path_platforms
from synclint.apis import torch_api as api
from synclint.apis.tensor_members import ARRAY_ONLY_MEMBERS, TENSOR_MEMBERS
from synclint.screen import places
from synclint.screen.facts import NESTED, FactReader, function_key, nested_key, param_key, parsed
from synclint.lines import line_starts

DEVICE, HOST, NUMPY, LIST, CPU = places.DEVICE, places.HOST, places.NUMPY, places.LIST, places.CPU
SCALAR = 1 << 5  # a Python scalar or string: the index's own bit (the screen never needs it)
PLACES = DEVICE | HOST | NUMPY | LIST | SCALAR
_FIRST_SYMBOL = 1 << 6  # bits from here stand for what another file decides

DEVICE_SUFFIXES = ("_gpu", "_cuda", "_dev")
HOST_SUFFIXES = {"_cpu": HOST, "_host": HOST, "_pinned": HOST, "_cpu_tensor": HOST, "_np": NUMPY, "_numpy": NUMPY, "_list": LIST}
HOST_PREFIXES = ("host_", "cpu_")
MIRROR_SUFFIXES = ("_cpu", "_host", "_np", "_cpu_tensor", "_numpy")

# Files larger than this are not summarised (generated tables, test data).
MAX_FILE_BYTES = 2_000_000
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", "site-packages",
                        "build", "dist", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".synclint_cache"})
ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
INDEX_VERSION = "repo-index-42"
RACY_WINDOW_NS = 2_000_000_000  # as synclint/cache.py
# A caller that is no way in for the hot path: a call on a cold branch (a first use or a
# cache miss, an `except` handler, a debugging switch: synclint/analysis/coldcode.py), one of
# the call graph's cold roots.
COLD_CALLER = " [on a cold branch]"
GUARDED_CALLER = " [only when "
UNTAKEN_CALLER = " [on a branch no call outside cold code takes]"


# A name that starts like a flag or a count is not a tensor, whatever its suffix
# (`is_cuda`, `use_gpu`, `init_cuda`, `num_gpu`, `flops_per_gpu`).
_COUNT_HEADS = ("num_", "n_", "max_", "min_", "total_", "count_")
_NOT_TENSOR_HEADS = ("is_", "_is_", "has_", "use_", "_use_", "init_", "enable_", "disable_", "with_", "should_",
                     "can_", "allow_", *_COUNT_HEADS,
                     # methods of a platform dispatch (`act_fn.forward_cuda`, `_forward_cpu`, `run_gpu`)
                     "forward_", "_forward_", "run_", "_run_", "launch_", "dispatch_")


@lru_cache(maxsize=65536)
def convention(name: str) -> int:
    """The place a name's suffix says, as a mask (0: it says nothing)."""
    lower = name.lower()
    if lower in api.DEVICE_LIKE_NAMES or "_per_" in lower:
        return 0  # a device object, not a tensor
    if lower.startswith(_NOT_TENSOR_HEADS):
        # a flag or a count (`is_cuda`, `num_gpu`): never a device tensor by its suffix; a
        # count kept on the host (`num_draft_tokens_cpu`, `max_seq_lens_host`) is host data
        head = next((h for h in _COUNT_HEADS if lower.startswith(h)), "")
        rest = lower[len(head):]  # `num_cpu`: a number of CPUs
        return next((place for suffix, place in HOST_SUFFIXES.items() if head and rest.endswith(suffix)), 0)
    for suffix, place in HOST_SUFFIXES.items():
        if lower.endswith(suffix) and len(lower) > len(suffix):
            return place
    if lower.endswith(DEVICE_SUFFIXES) and len(lower) > 4:
        return DEVICE
    if lower.startswith(HOST_PREFIXES) and len(lower) > 5:
        return HOST  # `host_indices`, `cpu_lens`: the prefix says where, as the suffix does
    return 0


# --- index mode: symbols for what other files decide --------------------------------------------


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
                found = places.annotation_class(member.annotation, imports)
                if found:
                    field_types.append((name, member.target.id, found))
                elements = places.element_class(member.annotation, imports)
                if elements:
                    field_types.append((name, member.target.id + places.ELEMENTS, elements))
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


# `Cls.f()`: the field types' key for what a method alias `self.f = self.g` makes `obj.f(...)` run.
ALIAS = "()"
# A field type `RETURNED_BY + m`: the field holds what method `m` of the object's own class
# returns (`self.vpm = self.init_vision_module(...)`, overridden by each subclass).
RETURNED_BY = "=>"
# The field types' key for a class's generic bases (`class B(Base[Meta])`: "Base").
GENERIC_BASES = "[bases]"
# The mark of a relay flow that passes an element of an indexed value (`f(counts[rank])`).
ELEMENT = "element"


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
            declared = places.annotation_class(node.annotation, imports)
            if declared:
                field_types.append((owner, node.target.attr, declared))
            elements = places.element_class(node.annotation, imports)
            if elements:
                field_types.append((owner, node.target.attr + places.ELEMENTS, elements))
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


class _Recorder(_Types, places.NoRepository):
    """Installed as places.REPO while a file is summarised: a question about another file is
    answered with a bit that stands for it."""

    symbolic = True

    def __init__(self) -> None:
        self.bits: dict[tuple, int] = {}
        self.keys: list[tuple] = []
        self.learn(((), (), ()))

    def learn(self, info: tuple) -> None:
        classes, field_types, returns = info
        self.bases = {name: bases for name, bases, _ in classes}
        self.field_types = _unique(((c, f), t) for c, f, t in field_types)
        self.returns = _unique(((o, f), t) for o, f, t in returns)

    def is_class(self, name: str) -> bool:
        # A class of this file, or a capitalised name another file may define: a field
        # read through it is a symbol the solve answers (by name where no class has it).
        return name in self.bases or places.spelt_as_class(name)

    def field(self, cls: str, name: str) -> int:
        return convention(name) or self._symbol(("A", cls, name))

    def passed(self, mask: int, func, func_unit, call, place) -> int:
        key = param_key(func, func_unit)
        args = func.args
        params = [a.arg for a in [*args.posonlyargs, *args.args] if a.arg not in ("self", "cls")]

        def argument(name: str):
            arg = next((kw.value for kw in call.keywords if kw.arg == name), None)
            if arg is None and name in params:
                position = params.index(name)
                positional = [a for a in call.args]
                if position < len(positional) and not any(type(a) is ast.Starred for a in positional[: position + 1]):
                    arg = positional[position]
            return arg

        return self._substituted(mask, key, argument, place)

    def _substituted(self, mask: int, key: str, argument, place) -> int:
        """`mask` with the parameters of function `key` replaced by where this call's
        arguments are, also inside the arguments it passes on to a method that may return
        them (PASSED_ARGUMENT: `return self.pool.translate(loc)` of a wrapper)."""
        rest = mask >> 6
        keys = self.keys
        while rest:
            low = rest & -rest
            rest ^= low
            symbol = keys[low.bit_length() - 1]
            if symbol[0] == "p" and symbol[1] == key:
                arg = argument(symbol[2])
                if arg is not None:
                    mask = (mask & ~(low << 6)) | place(arg)
            elif symbol[0] == PASSED_ARGUMENT and _reads_parameter(symbol[4], key):
                inner = symbol[3]
                for one in symbol[4]:
                    inner |= self._symbol(one)
                now = self._substituted(inner, key, argument, place)
                if now != inner:
                    mask = (mask & ~(low << 6)) | self._passed_argument(symbol[1], symbol[2], now)
        return mask

    def _symbol(self, key: tuple) -> int:
        bit = self.bits.get(key)
        if bit is None:
            bit = self.bits[key] = _FIRST_SYMBOL << len(self.keys)
            self.keys.append(key)
        return bit

    def attr(self, name: str) -> int:
        return convention(name) or self._symbol(("a", name))

    def param(self, function: str, name: str) -> int:
        return convention(name) or self._symbol(("p", function, name))

    def ret(self, function: str) -> int:
        return self._symbol(("r", function))

    def ret_item(self, function: str, position: int) -> int:
        return self._symbol((RESULT_ITEM, function, position))

    def method_ret(self, cls: str, name: str) -> int:
        return self._symbol((METHOD_RESULT, f"{cls}.{name}"))

    def method_ret_item(self, cls: str, name: str, position: int) -> int:
        return self._symbol((METHOD_RESULT_ITEM, f"{cls}.{name}", position))

    def method_passed(self, cls: str, name: str, call, place) -> int:
        """The arguments of `obj.<name>(...)` (`obj` of class `cls`), each as a symbol that
        stands for where it is if the method the call runs returns that parameter as it is
        (PASSED_ARGUMENT, `_Resolver`): `pool.translate(loc)` with `def translate(self, loc):
        return loc` is where this call's `loc` is."""
        mask = 0
        ref = f"{cls}.{name}"
        for position, arg in enumerate(call.args):
            if type(arg) is ast.Starred:
                break
            mask |= self._passed_argument(ref, position, place(arg))
        for keyword in call.keywords:
            if keyword.arg is not None:
                mask |= self._passed_argument(ref, keyword.arg, place(keyword.value))
        return mask

    def _passed_argument(self, ref: str, slot, mask: int) -> int:
        # Not the arguments of other such calls it holds (`x = pool.m(x)` in a loop would nest
        # them without end while the bindings' fixpoint grows): the symbols of an argument
        # stay those of the file's fields, parameters and results, a finite set.
        local, symbols = self.split(mask)
        symbols = tuple(s for s in symbols if s[0] != PASSED_ARGUMENT)
        if not local and not symbols:
            return 0
        return self._symbol((PASSED_ARGUMENT, ref, slot, local, symbols))

    def split(self, mask: int) -> tuple[int, tuple]:
        local = mask & PLACES
        symbols = []
        rest = mask >> 6
        keys = self.keys
        while rest:
            low = rest & -rest
            symbols.append(keys[low.bit_length() - 1])
            rest ^= low
        return local, tuple(symbols)


def _reads_parameter(symbols: tuple, function: str) -> bool:
    """Whether `symbols` (those of a PASSED_ARGUMENT, at any depth) read a parameter of `function`."""
    return any(s[0] == "p" and s[1] == function or s[0] == PASSED_ARGUMENT and _reads_parameter(s[4], function)
               for s in symbols)


def _unique(keys_values) -> dict:
    """key -> value, "" where a key has several values (the class of a field built two ways).
    A class the code names wins over what a factory method returns (`RETURNED_BY`)."""
    out: dict = {}
    for key, value in keys_values:
        old = out.get(key)
        if old is None or old == value:
            out[key] = value
        elif isinstance(value, str) and value.startswith(RETURNED_BY) and old:
            continue
        elif isinstance(old, str) and old.startswith(RETURNED_BY) and value:
            out[key] = value
        else:
            out[key] = ""
    return out


_NO_SUMMARY = ((), (), (), (), (), ((), (), ()), ())

# Words of a module's text: what may name a function (a call, a callback, a string a dispatch
# looks up). `f"decode_{backend}"` also names every function whose name starts `decode_`.
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF_NAME = re.compile(r"\bdef\s+([A-Za-z_][A-Za-z0-9_]*)")
# A decorator that registers the next definition (`@custom_op("ns::op")`, `@router.post(...)`,
# `@register(...)`: a call) hands it to code that calls it by another name or none. Not one that
# wraps it under its own name (`@staticmethod`, `@lru_cache(...)`, `@torch.compile(...)`).
_DECORATOR = re.compile(r"^[ \t]*@([A-Za-z_][\w.]*)[ \t]*\(", re.M)
_WRAPPERS = frozenset({"lru_cache", "cache", "wraps", "compile", "no_grad", "inference_mode", "enable_grad", "autocast",
                       "jit", "autotune", "heuristics", "contextmanager", "deprecated", "deprecate_kwarg", "override",
                       "dataclass", "total_ordering", "singledispatch", "retry", "timeit", "nvtx_range"})
# A call signature (`guards.argument_signature`) that passes what may be None: `?`, a field's
# value (`~f`) or a parameter passed on (`@q#...`).
_MAY_BE_NONE = re.compile(r"[?~@]")
_FORMAT_PREFIX = re.compile(r"""\b[fF][rR]?["']([A-Za-z_][A-Za-z0-9_]*)\{""")
# `f"get_{modality}_feature"`: the name's start and, where the string ends in a name's
# characters right after a replacement field, its end (`get_*_feature`).
_FORMAT_NAME = re.compile(r"""\b[fF][rR]?(["'])([A-Za-z_][A-Za-z0-9_]*)((?:\{[^{}"'\n]*\}[A-Za-z0-9_]*)+)\1""")
NAME_PREFIX = "*"  # `decode_*`: a word that starts a formatted string
_MIN_PREFIX = 4
_KEYWORDS = frozenset(keyword.kwlist) | {"self", "cls"}


def _registered(text: str) -> set[str]:
    """The functions a registering decorator (`_DECORATOR`, not a wrapper) hands on: the
    definition that follows each such decorator line."""
    out = set()
    for decorator in _DECORATOR.finditer(text):
        if decorator.group(1).rpartition(".")[2] in _WRAPPERS:
            continue
        found = _DEF_NAME.search(text, decorator.end())
        if found:
            out.add(found.group(1))
    return out


# A comment, or a string literal with its prefix (`f"..."`, `r"""..."""`) and its body. One
# character at a time, each by one alternative, and a string left open ends at its line's end
# (at the text's for a triple-quoted one): a file that does not parse costs a linear scan.
_PROSE = re.compile(
    r"""#[^\n]*|(?P<prefix>[rRbBuUfF]{0,2})(?:"{3}(?P<long>(?:[^\\"]|\\.|"(?!""))*)(?:"{3}|\Z)"""
    r"""|'{3}(?P<long2>(?:[^\\']|\\.|'(?!''))*)(?:'{3}|\Z)"""
    r"""|"(?P<short>(?:[^\\"\n]|\\.)*)(?:"|(?=\n)|\Z)|'(?P<short2>(?:[^\\'\n]|\\.)*)(?:'|(?=\n)|\Z))""",
    re.S,
)
# A string that may name a function (`getattr(obj, "prefill")`, `"pkg.mod:main"`, `__all__`).
_NAME_STRING = re.compile(r"[A-Za-z_][\w.:]*")


def _prose_blanked(match: re.Match) -> str:
    whole = match.group(0)
    if whole[0] == "#":
        return ""
    if "f" in match.group("prefix").lower():
        return whole
    body = match.group("long") or match.group("long2") or match.group("short") or match.group("short2") or ""
    return whole if _NAME_STRING.fullmatch(body) else "\n" * body.count("\n")


def _without_prose(text: str) -> str:
    """The text with what cannot call a function blanked (its lines kept): comments, and
    strings that are not a name or a dotted path (docstrings, messages). A formatted
    string keeps its words (`f"{self.stats()}"` calls), and so does a name's string."""
    return _PROSE.sub(_prose_blanked, text)


def name_references(text: str, tree: ast.Module | None = None) -> tuple[str, ...]:
    """The words of a module that may name a function of the repository, sorted: every word
    of its code and of the strings that are a name (`_without_prose`: not its comments,
    docstrings or messages, which call nothing),
    less a function's name where its `def` lines are its only mentions in the module and it
    has no decorator (with the parsed `tree`: nor where the others are in its own body, a
    recursive call or `f.cache`, or set an attribute of it at module level, `f.cache = {}`),
    and the words that start a formatted string (`decode_*`). Capitalised words (classes) and
    keywords are left out. With the `tree`, a name the module only imports and re-exports
    (`from .factory import create_pool` and `__all__`) is left out too: a package's public
    name, which users call and the repository need not."""
    source = text
    text = _without_prose(text)
    words = _WORD.findall(text)
    seen = set(words)
    defined = _DEF_NAME.findall(text)
    counts = Counter(words) if defined or tree is not None else None
    if tree is not None:
        seen.difference_update(_reexported_only(text, tree, counts))
    if defined:
        decorated = _registered(text)
        own = _own_mentions(text, tree) if tree is not None else {}
        for name, n in Counter(defined).items():
            if counts[name] <= max(n, own.get(name, 0)) and name not in decorated:  # named only by itself
                seen.discard(name)
    seen.difference_update(_KEYWORDS)
    found = {w for w in seen if not w[:1].isupper()}
    # A prefix shorter than a word (`f"_{i}"`, `f"g{n}"`) looks nothing up by name; with the
    # tree, neither does a string no lookup by name is given (`f"create_{response.id}"`, a
    # task's name).
    looking = _lookup_lines(tree) if tree is not None else None
    starts = line_starts(source) if looking is not None else None
    for match in _FORMAT_PREFIX.finditer(source):
        start = match.group(1)
        if len(start) < _MIN_PREFIX:
            continue
        if looking is not None and bisect_right(starts, match.start()) not in looking:
            continue
        whole = _FORMAT_NAME.match(source, match.start())  # the whole string is a name's parts
        end = whole.group(3).rpartition("}")[2] if whole is not None else ""  # what follows its last field
        found.add(start + NAME_PREFIX + end)
    return tuple(sorted(found))


# Calls that look a name up (`getattr(module, f"decode_{backend}")`), and the tables a
# subscript looks one up in (`globals()[f"_{kind}_kernel"]`).
_LOOKUP_CALLS = frozenset({"getattr", "hasattr", "attrgetter", "methodcaller", "import_module", "__import__", "import_string",
                           "locate", "get_attr"})
_LOOKUP_TABLES = frozenset({"globals", "vars", "locals"})


def _lookup_lines(tree: ast.Module) -> set[int]:
    """The lines of the formatted strings a module may look a name up with: given to a
    lookup (in its arguments, or a table's subscript), or bound to a name the module gives
    to one (`name = f"decode_{backend}"`, then `getattr(module, name)`)."""
    given: list[ast.AST] = []
    names: set[str] = set()
    assigned: list[tuple[str, ast.AST]] = []
    for node in astwalk.walk(tree):
        kind = type(node)
        if kind is ast.Call:
            func = node.func
            called = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
            if called in _LOOKUP_CALLS:
                for arg in (*node.args, *(k.value for k in node.keywords)):
                    given.append(arg)
                    names.update(n.id for n in astwalk.walk(arg) if type(n) is ast.Name)
        elif kind is ast.Subscript:
            table = node.value
            if (type(table) is ast.Call and type(table.func) is ast.Name and table.func.id in _LOOKUP_TABLES) or \
                    (type(table) is ast.Attribute and table.attr == "__dict__"):
                given.append(node.slice)
                names.update(n.id for n in astwalk.walk(node.slice) if type(n) is ast.Name)
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            assigned.append((node.targets[0].id, node.value))
    given.extend(value for name, value in assigned if name in names)
    return {line for part in given for n in astwalk.walk(part) if type(n) is ast.JoinedStr
            for line in range(n.lineno, (n.end_lineno or n.lineno) + 1)}


def _reexported_only(text: str, tree: ast.Module, counts: Counter) -> set[str]:
    """The names a module imports (`from x import name`, at module level) and mentions
    nowhere else than in its imports and its `__all__`."""
    imported: set[str] = set()
    spans: list[tuple[int, int]] = []
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.ImportFrom:
            imported.update(a.name for a in node.names if a.asname in (None, a.name) and a.name != "*")
            spans.append((node.lineno, node.end_lineno or node.lineno))
        elif kind in (ast.Assign, ast.AugAssign, ast.AnnAssign):
            targets = node.targets if kind is ast.Assign else [node.target]
            if any(type(t) is ast.Name and t.id == "__all__" for t in targets):
                spans.append((node.lineno, node.end_lineno or node.lineno))
        elif kind in (ast.If, ast.Try) or kind.__name__ == "TryStar":
            pending.extend(node.body)
            pending.extend(getattr(node, "orelse", ()))
            for handler in getattr(node, "handlers", ()):
                pending.extend(handler.body)
    imported = {name for name in imported if not name[:1].isupper()}
    if not imported:
        return set()
    lines = text.splitlines()
    there: Counter = Counter()
    for start, end in spans:
        for line in lines[start - 1:end]:
            there.update(word for word in _WORD.findall(line) if word in imported)
    return {name for name in imported if counts[name] <= there[name]}


def _own_mentions(text: str, tree: ast.Module) -> dict[str, int]:
    """For each function without decorators (module-level, defined once; or methods of the
    module's classes, every definition of the name), how many times the module's words name
    it from its own definitions (`def` lines and bodies: a recursive call, a method that
    hands the call on to another object's method of its name) and from module-level
    statements that only set a module-level function's attributes (`f.cache = {}`): the
    mentions that never call it from elsewhere."""
    lines = text.splitlines()
    functions = {}
    methods: dict[str, list] = {}
    for node in tree.body:
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and not node.decorator_list:
            functions[node.name] = None if node.name in functions else node
        elif type(node) is ast.ClassDef:
            for member in node.body:
                if type(member) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    methods.setdefault(member.name, []).append(None if member.decorator_list else member)
    found: dict[str, int] = {}

    def mentions(name: str, start: int, end: int) -> int:
        return sum(1 for line in lines[start - 1:end] for word in _WORD.findall(line) if word == name)

    for name, node in functions.items():
        if node is not None and name not in methods:
            found[name] = mentions(name, node.lineno, node.end_lineno or node.lineno)
    for name, nodes in methods.items():
        if name not in functions and None not in nodes:
            found[name] = sum(mentions(name, node.lineno, node.end_lineno or node.lineno) for node in nodes)
    for node in tree.body:
        if type(node) is not ast.Assign or not all(type(t) is ast.Attribute and type(t.value) is ast.Name for t in node.targets):
            continue
        for target in node.targets:
            name = target.value.id
            if found.get(name) and functions.get(name) is not None:
                found[name] += mentions(name, node.lineno, node.end_lineno or node.lineno)
    return found


def summarize(text: str) -> tuple:
    """One module's summary: (flows, signatures, mirrors, declared tensors, call edges, classes,
    name references: `name_references`).

    flows: (target, local mask, symbols, line) with target ("a", attr), ("r", function),
    ("P", function, position) or ("p", function, keyword); signatures: (function, params);
    mirrors: tuples of names held together (a class's fields, a function's parameters)."""
    with astwalk.keeping():  # the readers below walk each function many times over
        return _summarize(text)


def _summarize(text: str) -> tuple:
    try:
        tree = parsed(text, remember=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return (*_NO_SUMMARY[:-1], name_references(text))
    from synclint import screen

    saved = places.REPO
    try:
        lines = text.splitlines(keepends=True)
        collected: list = []
        recorder = _Recorder()
        places.REPO = recorder
        places.LIST_ELEMENTS = False
        reader = FactReader(lines, places, frozenset(), collected)
        units, classes = screen._units(tree, reader)
        imports = {n: tuple(sorted(p)) for n, p in reader.imports.items()}
        info = _class_info(tree, imports)
        recorder.learn(info)
        model = places.PlaceModel(screen._definitions(units), screen._class_definitions(classes), imports)
        model.host_fields = host_fields(text)
        summary = _Summarizer(model, recorder, imports).run(collected, classes)
        # What the module assigns to fields, by name (guards.field_values), as marks beside its calls.
        marks = {(MARK_CALLER, FIELD_MARK + field, kind) for field, kind in guards.field_values(tree)}
        marks.update((MARK_CALLER, HOST_MARK, method) for method in _generic_host_methods(tree))
        marks.update((MARK_CALLER, HANDLER_MARK, method) for method in coldcode.dispatch_handlers(tree, text))
        if coldcode.stores_callable_fields(text):
            marks.update((MARK_CALLER, HELD_MARK + field, ref) for field, ref in _held_functions(tree, imports))
        # The functions the module hands to an executor, and those it runs as a thread's target.
        for mark, names in ((WORKER_MARK, coldcode.pool_tasks(text)), (THREAD_MARK, coldcode.thread_targets(text))):
            if names:
                marks.update((MARK_CALLER, mark, callee) for caller, callee, _ in summary[4]
                             if not caller and callee.rpartition(".")[2] in names)
        marks.update((MARK_CALLER, SCRIPT_MARK, name) for name in coldcode.script_calls(tree))
        # The `run` of a `threading.Thread` (or `Process`) subclass is the body `start()` runs.
        marks.update((MARK_CALLER, THREAD_MARK, f"{name}.run") for name in coldcode.thread_classes(tree))
        # ... and through a helper's parameter (`submit_batches(executor, self._push_batch)`).
        handing, handed = coldcode.handed_on_workers(tree, text)
        marks.update((MARK_CALLER, WORKER_PARAM_MARK, one) for one in handing)
        marks.update((MARK_CALLER, PASSED_FUNCTION_MARK, one) for one in handed)
        # Where the module builds (or otherwise uses) each class: a class built only on other
        # platforms' branches is their code (`_CallGraphTiers._built_elsewhere`).
        marks.update((MARK_CALLER, BUILT_MARK + name, guard) for name, guard in guards.class_uses(tree))
        if declares_fields(text):
            # The multimodal fields it declares, and the modules its classes' bases come from
            # (`inherited_host_fields`); `_file_edges` keys them by the file's path.
            marks.update((MARK_CALLER, KEPT_FIELD_MARK, name) for name in host_fields(text))
            marks.update((MARK_CALLER, DEVICE_FIELD_MARK, name) for name in device_fields(text))
            marks.update((MARK_CALLER, BASE_MODULE_MARK, spec) for spec in base_modules(tree))
        return (*summary[:4], tuple(sorted({*summary[4], *marks})), info, name_references(text, tree))
    except Exception:  # noqa: BLE001 - recursion, a module the place model gives up on (places.TooCostly), or a defect: it adds no facts, the run goes on
        return (*_NO_SUMMARY[:-1], name_references(text))
    finally:
        places.REPO = saved
        places.LIST_ELEMENTS = True
        guards.none_assigned.cache_clear()  # its keys are this module's functions


# Library base classes whose methods are no method of the repository (`self.to()` of an
# `nn.Module` subclass does not call the repository's `to()`).
_LIBRARY_BASES = frozenset({"Module", "nn.Module", "object", "ABC", "Enum", "IntEnum", "Exception", "Generic", "Protocol", "NamedTuple", "dict", "list"})

# `A|B`: a field's class where it is built from a registry of classes (`_registries`).
_CLASS_UNION = "|"

# `Cls.sub!`: a call of the object field `sub` of a `Cls` holds (`self.sub(x)`), not of a method.
_FIELD_CALL = "!"

# Calls into these are not calls of the repository's functions.
_EXTERNAL = ("torch", "numpy", "math", "os", "re", "sys", "logging", "typing", "dataclasses", "functools",
             "itertools", "collections", "json", "time", "triton", "enum", "copy", "warnings", "threading", "asyncio")


class _Summarizer:
    def __init__(self, model, recorder: _Recorder, imports) -> None:
        self.model = model
        self.recorder = recorder
        self.imports = imports
        self.flows: list[tuple] = []
        self.signatures: list[tuple] = []
        self.mirrors: list[tuple] = []
        self.tensors: list[tuple] = []  # fields, parameters and results declared `torch.Tensor`
        # (caller, callee): the call graph (`_callees`), and ("", function) for each function defined
        self.edges: set[tuple] = set()
        self._loop_names: dict[int, dict] = {}  # unit -> loop element names -> what their loops iterate
        self._elements_memo: dict[int, dict] = {}  # unit -> names bound to an element -> what is indexed
        self._fields_memo: dict[int, frozenset] = {}
        self._containers_memo: dict[int, frozenset] = {}
        self._platforms_memo: dict[int, dict] = {}
        self._built_on_memo: dict[int, frozenset[str] | None] = {}
        # Calls whose result the code reads as an array (`x.detach().cpu()`: id of `x.detach()`).
        self._array_results: set[int] = set()
        self._tables_memo: dict[int, frozenset] = {}  # class node -> the tables its methods fill by key

    def _filled_tables(self, class_node: ast.ClassDef) -> frozenset[str]:
        found = self._tables_memo.get(id(class_node))
        if found is None:
            found = self._tables_memo[id(class_node)] = coldcode.filled_tables(class_node)
        return found

    def _flow(self, target: tuple, value, unit, line: int, more: tuple = ()) -> None:
        """`target <- value` (and the same for each of `more`: one evaluation)."""
        # `positions >= starts` of tensors is a bool tensor where its operands are
        mask = self._tensor_comparison(value, unit) if type(value) is ast.Compare else None
        if mask is None and _scalar(value):
            self.flows.append((target, SCALAR, (), line))
            self.flows.extend((t, SCALAR, (), line) for t in more)
            return
        if type(value) is ast.Constant:
            return  # None, `...`: says nothing
        if mask is None:
            try:
                mask = self.model.place(value, unit)
            except RecursionError:
                return
        if not mask:
            return
        local, symbols = self.recorder.split(mask)
        if local or symbols:
            self.flows.append((target, local, symbols, line))
            self.flows.extend((t, local, symbols, line) for t in more)

    def _tensor_comparison(self, value: ast.Compare, unit) -> int | None:
        """The places of a comparison that is elementwise on a tensor the code places; None
        for one that gives a Python bool (`n > 0` of Python numbers, `is`, `in`)."""
        if any(type(op) in (ast.Is, ast.IsNot, ast.In, ast.NotIn) for op in value.ops):
            return None
        try:
            mask = self.model.place(value, unit)
        except RecursionError:
            return None
        return mask if mask & (DEVICE | HOST | NUMPY) else None

    def run(self, collected, classes) -> tuple:
        for cls in classes:
            names = set()
            owner = cls.header.node.name
            for member in cls.members:
                node = member.node
                if isinstance(node, ast.AnnAssign) and type(node.target) is ast.Name:
                    names.add(node.target.id)
                    declared = _declared(node.annotation)
                    if declared:  # a field declared `int`, `list[int]`, `np.ndarray`
                        self.flows.append((("a", node.target.id), declared, (), node.lineno))
                        self.flows.append((("A", owner, node.target.id), declared, (), node.lineno))
                        self.tensors.append(("D", owner, node.target.id))  # declared Python data
                        if _number_field_annotation(node.annotation):
                            self.tensors.append(("N", owner, node.target.id))  # declared a Python number
                    elif places.tensor_annotation(node.annotation):
                        self.tensors.append(("a", node.target.id))
                        self.tensors.append(("A", owner, node.target.id))
                elif isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if type(t) is ast.Name)
                names.update(member.self_writes)
            if len(names) > 1:
                self.mirrors.append(tuple(sorted(names)))
        for node, unit in collected:
            kind = type(node)
            if kind is ast.Call:
                self._call(node, unit)
            elif kind is ast.Assign:
                for target in node.targets:
                    if type(target) is ast.Attribute:
                        self._flow(("a", target.attr), node.value, unit, node.lineno)
                        owner = self._owner(target, unit)
                        if owner:  # `self.x = v`, `obj.x = v` with obj's class known
                            self._flow(("A", owner, target.attr), node.value, unit, node.lineno)
            elif kind is ast.AnnAssign:
                if type(node.target) is ast.Attribute:
                    owner = self._owner(node.target, unit)
                    targets = [("a", node.target.attr)] + ([("A", owner, node.target.attr)] if owner else [])
                    declared = _declared(node.annotation)
                    if declared and owner:
                        self.tensors.append(("D", owner, node.target.attr))  # declared Python data
                        if _number_field_annotation(node.annotation):
                            self.tensors.append(("N", owner, node.target.attr))  # declared a Python number
                    for target in targets:
                        if declared:
                            self.flows.append((target, declared, (), node.lineno))
                        elif places.tensor_annotation(node.annotation):
                            self.tensors.append(target)
                        if node.value is not None:
                            self._flow(target, node.value, unit, node.lineno)
            else:
                self._def(node, unit)
        return (tuple(self.flows), tuple(self.signatures), tuple(self.mirrors), tuple(self.tensors), tuple(sorted(self.edges)))

    def _def(self, func, unit) -> None:
        key = function_key(func, unit)
        args = func.args
        params = tuple(a.arg for a in [*args.posonlyargs, *args.args] if a.arg not in ("self", "cls"))
        self.signatures.append((key, params))
        nested = nested_key(func, unit)  # its parameters are read by `f<outer`: the calls inside `outer` give them
        if nested:
            self.signatures.append((nested, params))
        # A method is also known by `Cls.method`: the calls whose class the code says reach
        # its parameters alone (`_QualifiedCalls`), not those of every method of its name.
        qualified = self._qualified(func, unit)
        qualified = qualified if "." in qualified and key != unit.owner.header.node.name else None
        if qualified:
            self.signatures.append((qualified, params))
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if a.annotation is not None and places.tensor_annotation(a.annotation):
                self.tensors.append(("p", key, a.arg))
                if qualified:
                    self.tensors.append(("p", qualified, a.arg))
                if nested:
                    self.tensors.append(("p", nested, a.arg))
            elif a.annotation is not None and _number_annotation(a.annotation):
                self.tensors.append(("n", key, a.arg))  # declared a Python number
                if nested:
                    self.tensors.append(("n", nested, a.arg))
                if qualified:
                    self.tensors.append(("n", qualified, a.arg))
        # A method's result is also known by `Cls.method`: a call through an object of its
        # class (`self.pool.alloc(n)`) reads what that method returns (`_Resolver`). Only a
        # result the method makes from its object and its own sources: one made from its
        # arguments (`return self.table[loc]`) is what each call passes, which a single
        # target cannot say (the calls of a helper of the file are read with their own
        # arguments: `places.PlaceModel._passed`), so it is left unknown there.
        values = places._return_values(func)
        narrowed = places.cpu_narrowed_returns(func)
        if narrowed:  # `if t.device.type == "cpu": return t`: a host tensor there, read as `t.cpu()`
            values = [_as_host_copy(v) if id(v) in narrowed else v for v in values]
        if qualified:
            own = frozenset(("p", qualified, a.arg) for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])
            elements = [e for v in values for e in (v.elts if type(v) is ast.Tuple else (v,))]
        if func.returns is not None and places.tensor_annotation(func.returns):
            self.tensors.append(("r", qualified or key))
        # A method's result is known by `Cls.method` alone: its own name is what calls of a
        # function by name read (`get_context()` of an imported function is no method's call).
        result = (qualified if not any(self._reads(e, unit, own) for e in elements) else None) if qualified else key
        # ... but a function that returns its parameters and nothing else (`return loc`,
        # `return loc.to(torch.int32)`, `return base + rem` of its own arguments) gives each
        # call where that call's arguments are (PASSED_ARGUMENT; `Facts.passes`).
        owner_key = qualified or key
        passed = self._passes_through(values, unit, frozenset(
            ("p", owner_key, a.arg) for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]))
        if passed:
            self.tensors.append((PASSES_THROUGH, owner_key, tuple((params.index(n) if n in params else -1, n) for n in passed)))
        names = params + tuple(a.arg for a in args.kwonlyargs)
        if len(names) > 1:
            self.mirrors.append(names)
        for value in values if result else ():
            if type(value) is ast.Tuple:
                # `return timesteps, n`: unpacked by the caller (`a, b = f()`, each name bound
                # to the result), so the result holds what any element holds; never a fact.
                for element in value.elts:
                    if type(element) is not ast.Starred:
                        self._flow(("rt", result), element, unit, value.lineno)
                continue
            self._flow(("r", result), value, unit, value.lineno)
        # ... and element by element where every `return` gives a tuple of the same length
        # (or None): `start, n = f(batch)` reads each (RESULT_ITEM), declared a tensor by
        # `-> tuple[torch.Tensor, int]`.
        length = _tuple_length(values)
        if length:
            declared = _tuple_annotation(func.returns, length)
            for position in range(length):
                made_from_arguments = qualified and any(
                    self._reads(v.elts[position], unit, own) for v in values if type(v) is ast.Tuple)
                item = (qualified if not made_from_arguments else None) if qualified else key
                if declared[position]:
                    self.tensors.append((RESULT_ITEM, qualified or key, position))
                for value in values if item else ():
                    if type(value) is ast.Tuple:
                        self._flow((RESULT_ITEM, item, position), value.elts[position], unit, value.lineno)
        # A call made only on a branch that runs once (a cache miss, a first use, an
        # `except` handler, a debug-only branch: synclint/analysis/coldcode.py) comes from a
        # cold caller. Not the calls of a thread's target: a serving loop runs on a thread or
        # process of its own (`Process(target=run_scheduler_process)`), and what it calls
        # runs every step.
        caller = self._qualified(func, unit)
        own = guards.parameters(func)
        none_names = guards.none_assigned(func)
        signatures: set[str] = set()
        # A memoised function (`@lru_cache`) runs its body once per key: what it calls too.
        filled = self._filled_tables(unit.owner.header.node) if unit.owner is not None else frozenset()
        cold = {id(n) for n in (func.body if coldcode.memoised(func) else coldcode.cold_subtrees(func, filled, none_names.debug - own.keys()))}
        klass = unit.owner.header.node if unit.owner is not None and unit.node is func else None
        stage = klass and coldcode.pipeline_name(klass.name, [places._last_name(base) for base in klass.bases])
        if stage and coldcode.pipeline_entry(stage, func.name):
            # A pipeline or stage entry: what it calls outside its loops, once per request.
            cold.update(id(n) for n in coldcode.once_per_request(func, stage, klass))
        # A call made only under a condition on a parameter (`if allow_sync: apply_top_k(...)`)
        # comes from `caller [only when allow_sync#2#F#is true]`: a way in only where the
        # callers pass what takes the branch (`_CallGraphTiers._caller`).
        guarded = guards.guarded_calls(func, own, none_names) if own else {}
        # ... or on a platform's branch (`elif current_platform.is_cpu():`): `caller [only when %cpu]`.
        on_platforms = guards.platform_calls(func, self._platform_fields(unit.owner) if unit.owner is not None else None)
        # ... or in a method of a class built only on some platforms (`if not _is_xpu: raise` in its `__init__`).
        built_on = self._constructor_platforms(unit.owner) if unit.method and unit.owner is not None and func.name != "__init__" else None
        if built_on is not None:
            guards.on_platforms_within(on_platforms, func.body, built_on)

        def source_of(node, inherited: str) -> str:
            key = id(node)
            if key in cold:
                return caller + COLD_CALLER
            if not guarded and not on_platforms:
                return inherited  # most functions: no branch decided by a parameter or a platform
            condition, platforms = guarded.get(key), on_platforms.get(key)
            guard = f"{condition};{platforms}" if condition and platforms else condition or platforms
            if guard:
                if inherited == caller:
                    return f"{caller}{GUARDED_CALLER}{guard}]"
                if inherited.startswith(caller + GUARDED_CALLER):  # nested: every condition must hold
                    return f"{inherited[:-1]};{guard}]"
            return inherited

        narrowed = None  # `guards.narrowed_calls(func)`, once a call passes what may be None
        # A device kernel's body (`@triton.jit`) calls device functions, not host code.
        pending = [] if _device_kernel(func) else [(n, source_of(n, caller)) for n in func.body]
        while pending:  # the calls this function makes (not those of functions nested in it)
            node, source = pending.pop()
            kind = type(node)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                if kind is not ast.Lambda:
                    self.edges.add((source, node.name, "*"))  # a nested definition runs when called
                continue
            if kind is ast.Call:
                built = _built_class(node.func)
                if built:
                    self.edges.add((caller, BUILDER_MARK + built, ""))  # `Cls(...)`: who builds `Cls`
                callees = [c for c in self._callees(node, unit) if c != caller]
                if callees:
                    # What the call passes for each parameter (synclint/analysis/guards.py).
                    owner_of = lambda e: self._owner(e, unit)  # noqa: E731
                    signature = guards.argument_signature(node, own, none_names, owner_of)
                    if none_names.tests_none and _MAY_BE_NONE.search(signature):
                        # An argument a test around the call says is not None (`if x is not None: f(x)`)
                        if narrowed is None:
                            narrowed = guards.narrowed_calls(func)
                        if id(node) in narrowed:
                            signature = guards.argument_signature(node, own, none_names, owner_of, narrowed[id(node)])
                    signatures.add(signature)
                    self.edges.update((source, callee, signature) for callee in callees)
                    # A call by name: the word its object's name ends in (`markov_head` ->
                    # `head`), which rules out candidates of other classes (`_CallGraph._unreached`).
                    # So does a call of a method of what a field holds (`self.k.detach()`), kept
                    # with the field: it goes by name only where the index does not know its class.
                    self.edges.update((MARK_CALLER, RECEIVER_MARK + method, f"{_receiver(node)}{held}:{source}")
                                      for method, held in map(_by_name_method, callees) if method)
                # A lambda handed to a call (`cached_call(key, lambda: self._encode(x))`, `sorted(key=lambda r: f(r))`)
                # runs when the callee calls it: its calls are this function's, as a nested definition's are.
                pending.extend((arg.body, source_of(arg.body, source)) for arg in (*node.args, *(k.value for k in node.keywords))
                               if type(arg) is ast.Lambda)
            elif kind is ast.Attribute and type(node.ctx) is ast.Load and coldcode.callable_field(node.attr):
                # `funcs = config.postprocess_text_funcs`: a read of a field that holds
                # functions calls what the repository stores there (`HELD_MARK`).
                self.edges.add((source, HELD_CALL + node.attr, ""))
                pending.extend((child, source_of(child, source)) for child in astwalk.children(node))
                continue
            elif kind is ast.Attribute and node.attr in ARRAY_ONLY_MEMBERS and type(node.value) is ast.Call:
                # Visited before the calls it reads: `x.detach().float().cpu()` marks both.
                inner = node.value
                while type(inner) is ast.Call and type(inner.func) is ast.Attribute and inner.func.attr in TENSOR_MEMBERS:
                    self._array_results.add(id(inner))
                    inner = inner.func.value
            pending.extend((child, source_of(child, source)) for child in astwalk.children(node))
        # A definition: a node of the call graph, with the parameters that decide its branches.
        self.edges.add(("", caller, ",".join(guards.decisive_parameters(func, own, signatures))))
        if unit.owner is not None:
            # A method's shape: a call by name that cannot bind to its parameters does not reach it.
            shape = guards.shape(func)
            if not shape.endswith("||ak"):
                self.edges.add((MARK_CALLER, SHAPE_MARK + caller, shape))

    def _passes_through(self, values, unit, own: frozenset) -> tuple[str, ...]:
        """The parameters a function's result is made of, where every `return` (`return
        None` aside) is where some of its parameters are and nothing else (`return x`, `return
        x.to(torch.int32)`, `return a + b`); () where one reads anything else."""
        found: set[str] = set()
        for value in values:
            if type(value) is ast.Constant and value.value is None:
                continue
            try:
                mask = self.model.place(value, unit)
            except RecursionError:
                return ()
            local, symbols = self.recorder.split(mask)
            if local or not symbols or not own.issuperset(symbols):
                return ()
            found.update(s[2] for s in symbols)
        return tuple(sorted(found))

    def _reads(self, value, unit, symbols: frozenset) -> bool:
        """Whether the places `value` may hold read one of `symbols` (a method's own parameters)."""
        try:
            mask = self.model.place(value, unit)
        except RecursionError:
            return True
        return not symbols.isdisjoint(self.recorder.split(mask)[1])

    @staticmethod
    def _qualified(func, unit) -> str:
        """A function's node in the call graph: `Cls.method` for a method of a module-level
        class, the bare name for a module-level or nested function."""
        if unit.node is func and unit.method and unit.owner is not None:
            return f"{unit.owner.header.node.name}.{func.name}"
        return func.name

    def _callees(self, call: ast.Call, unit) -> tuple:
        """What a call may run, as the solve resolves it (`_CallGraph`): `f` a function by
        name; `Cls.m` method `m` of an object of class `Cls` (`self.m()`, a typed object,
        `Cls.m()`; where `Cls` has no `m`, the object its field `m` holds: `self.sub(x)`);
        `Cls.a.m` method `m` of what field `a` of `Cls` holds (`self.a.m()`); `Cls:m` the
        `m` that class `Cls` has itself or inherits (`Cls.m()`, `super().m()`); `.m` a method
        of an object of unknown class; `mod>f` function `f` of module `mod` (kept only when
        `mod` is the repository's). A call into a library module or a constructor: nothing."""
        func = call.func
        if type(func) is ast.Name:
            name = func.id
            if name[:1].isupper() or name in api.SCALAR_BUILTINS or name in api.SEQUENCE_BUILTINS:
                return ()  # a constructor (its `__init__` is a cold root) or a builtin
            quals = self.imports.get(name)
            if quals:
                top = min(quals).split(".", 1)[0]
                return () if top in _EXTERNAL else (f"{top}>{name}",)
            if name in unit.bound:
                cls = self._class_of(func, unit)  # `mod = Sub(...)`, then `mod(x)`
                if cls:
                    return (f"{cls}.__call__",)
            return (name,)
        if type(func) is not ast.Attribute:
            return ()
        method, obj = func.attr, func.value
        head = obj
        while type(head) is ast.Attribute:
            head = head.value
        if type(head) is ast.Name:
            quals = self.imports.get(head.id)
            if quals:
                top = min(quals).split(".", 1)[0]
                if top in _EXTERNAL:
                    return ()
                if obj is head:
                    # `Cls.m()` of an imported class, `mod.f()` of an imported module
                    if head.id[:1].isupper():
                        return (f"{places.resolved_name(head.id, self.imports)}:{method}",)
                    return (f"{top}>{method}",)
        owner = unit.owner.header.node.name if unit.owner is not None else None
        if owner is not None:
            if type(obj) is ast.Name and obj.id in ("self", "cls"):
                if method in self._written_fields(unit.owner):
                    return (f"{owner}.{method}{_FIELD_CALL}",)  # `self.score(x)`: a submodule the field holds
                return (f"{owner}.{method}",)
            if type(obj) is ast.Attribute and type(obj.value) is ast.Name and obj.value.id == "self":
                if obj.attr in self._container_fields(unit.owner):
                    return ()  # `self._evictable.discard(key)` of a set: the builtin's, no method by name
                return (f"{owner}.{obj.attr}.{method}",)
            if type(obj) is ast.Call and type(obj.func) is ast.Name and obj.func.id == "super" and not obj.args:
                # the bases' own or inherited `m`; none of the repository's where they are a
                # library's (`super().run(*args)` of a `torch.fx.Interpreter`), never by name
                bases = self.recorder.bases.get(owner, ())
                return tuple(f"{base}{_SUPER_CALL}{method}" for base in bases)
        if type(obj) is ast.Name and obj.id[:1].isupper() and obj.id not in unit.bound:
            return (f"{obj.id}:{method}",)  # `Cls.m()` of a class of this file
        cls = self._class_of(obj, unit)
        if cls:
            return (f"{cls}.{method}",)
        if type(obj) is ast.Name and _container_annotation(unit.annotations.get(obj.id)):
            return ()  # `pending: set[int]`, then `pending.discard(i)`: the builtin's
        if method in TENSOR_MEMBERS and (id(call) in self._array_results or self._plainly_a_tensor(obj, unit)):
            # `x_t[:, -pad:].detach()`, `batch.lens.detach().cpu()`: torch's method, not a
            # repository's `detach`
            return ()
        return (f".{method}",)

    def _plainly_a_tensor(self, expr, unit) -> bool:
        """Whether `expr` is an array by its shape alone: a subscript by a slice or by several
        indices (`x[:, 1:]`, `x[i, j]`: a list of objects is indexed by one key, and a slice of
        a sequence is a sequence, whose methods are not the repository's), a call of a torch
        function (`torch.cat(parts)`) or of a callable a field holds (`self.embed_tokens(ids)`:
        a submodule's output; the repository's methods are not called through fields), a name
        annotated a tensor (`x: torch.Tensor`), or a torch.Tensor member read or called on one
        of these (`x[:, 0].float()`, `torch.cat(p).T`)."""
        while True:
            kind = type(expr)
            if kind is ast.Name:
                annotation = unit.annotations.get(expr.id)
                return (annotation is not None and places.tensor_annotation(annotation)
                        and places.annotation_class(annotation, self.imports) is None)
            if kind is ast.Subscript:
                key = expr.slice
                return type(key) is ast.Slice or type(key) is ast.Tuple and len(key.elts) > 1
            if kind is ast.Call:
                func = expr.func
                if type(func) is not ast.Attribute:
                    return False
                head = func.value
                if type(head) is ast.Name and head.id in self.imports:
                    return min(self.imports[head.id]).split(".", 1)[0] == "torch"
                if type(head) is ast.Name and head.id == "torch":
                    return True
                if (type(head) is ast.Name and head.id == "self" and unit.owner is not None
                        and func.attr in self._written_fields(unit.owner)):
                    return True  # `self.embed_tokens(ids)`: what a callable the object holds returns
                if func.attr not in TENSOR_MEMBERS:
                    return False
                expr = head
            elif kind is ast.Attribute and expr.attr in TENSOR_MEMBERS:
                expr = expr.value
            else:
                return False

    def _platform_fields(self, owner) -> dict:
        """The fields the class only ever sets to a platform predicate (`guards.platform_fields`)."""
        found = self._platforms_memo.get(id(owner))
        if found is None:
            found = self._platforms_memo[id(owner)] = guards.platform_fields(owner.header.node)
        return found

    def _constructor_platforms(self, owner) -> frozenset[str] | None:
        """The platforms the class can be built on (`guards.constructor_platforms`)."""
        key = id(owner)
        if key not in self._built_on_memo:
            self._built_on_memo[key] = guards.constructor_platforms(owner.header.node)
        return self._built_on_memo[key]

    def _container_fields(self, owner) -> frozenset[str]:
        """The fields a class only ever sets to builtin containers (`self._evictable: set[K]
        = set()`, `self.pending = {}`, `self.queue = deque()`): a method called on one is the
        builtin's, never a repository method of that name."""
        found = self._containers_memo.get(id(owner))
        if found is None:
            kinds: dict[str, bool] = {}
            for node in astwalk.walk(owner.header.node):
                if type(node) is ast.Assign:
                    targets, value, annotation = node.targets, node.value, None
                elif type(node) is ast.AnnAssign:
                    targets, value, annotation = [node.target], node.value, node.annotation
                else:
                    continue
                for target in targets:
                    if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                        container = _container_annotation(annotation) or (value is not None and _container_value(value))
                        kinds[target.attr] = kinds.get(target.attr, True) and container
            found = self._containers_memo[id(owner)] = frozenset(name for name, container in kinds.items() if container)
        return found

    def _written_fields(self, owner) -> frozenset[str]:
        """The fields a class's methods assign (`self.score = nn.Linear(...)`) and that it
        does not define as methods."""
        found = self._fields_memo.get(id(owner))
        if found is None:
            written = set()
            methods = set()
            for member in owner.members:
                written.update(member.self_writes)
                if member.method:
                    methods.add(member.name)
            found = self._fields_memo[id(owner)] = frozenset(written - methods)
        return found

    def _class_of(self, expr, unit) -> str | None:
        try:
            return self.model.class_of(expr, unit)
        except RecursionError:
            return None

    def _own_method_params(self, unit, name: str) -> tuple | None:
        """The parameters (without `self`) of method `name` of `unit`'s own class, or None."""
        owner = unit.owner
        if owner is None:
            return None
        for member in owner.members:
            node = member.node
            if member.method and member.name == name and type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
                args = node.args
                return tuple(a.arg for a in [*args.posonlyargs, *args.args] if a.arg not in ("self", "cls"))
        return None

    def _loop_elements(self, unit) -> dict:
        """Names a loop in `unit` binds to the elements of what it iterates (`for t in ts`,
        `for i, t in enumerate(ts)`, `for a, b in zip(p, q)`; not the counter of
        `enumerate`) -> the iterables. A name one of whose loops iterates Python data (a
        `range`, a list, `.tolist()`, a parameter annotated a sequence) is left out."""
        found = self._loop_names.get(id(unit))
        if found is not None:
            return found
        pairs: list[tuple[str, ast.expr]] = []
        for node in astwalk.walk(unit.node) if unit.node is not None else ():
            if type(node) not in (ast.For, ast.AsyncFor, ast.comprehension):
                continue
            target, iterable = node.target, node.iter
            if type(target) is ast.Name:
                pairs.append((target.id, iterable))
            elif type(target) is ast.Tuple and type(iterable) is ast.Call and type(iterable.func) is ast.Name:
                elements, args = target.elts, iterable.args
                if iterable.func.id == "enumerate" and len(elements) == 2 and len(args) == 1:
                    if type(elements[1]) is ast.Name:
                        pairs.append((elements[1].id, args[0]))
                elif iterable.func.id == "zip" and len(elements) == len(args):
                    pairs.extend((e.id, a) for e, a in zip(elements, args) if type(e) is ast.Name)
        sequences = _sequence_parameters(unit.node)
        out: dict[str, list] = {}
        python = set()
        for name, iterable in pairs:
            if _python_iterable(iterable, sequences):
                python.add(name)
            out.setdefault(name, []).append(iterable)
        found = self._loop_names[id(unit)] = {n: v for n, v in out.items() if n not in python}
        return found

    def _element_names(self, unit) -> dict:
        """Names bound in `unit` to an element of an indexed value only (`n = counts[rank]`,
        `v = table[i, j]`; not a slice, nor a key of a dict; not a name also bound otherwise,
        `n = int(n)`) -> the values indexed."""
        found = self._elements_memo.get(id(unit))
        if found is not None:
            return found
        out: dict[str, list] = {}
        stores: Counter = Counter()
        for node in astwalk.walk(unit.node) if unit.node is not None else ():
            if type(node) is ast.Name and type(node.ctx) is not ast.Load:
                stores[node.id] += 1
            elif type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                whole = _zero_dim_of(node.value)
                if whole is not None:
                    out.setdefault(node.targets[0].id, []).append(whole)
        found = self._elements_memo[id(unit)] = {n: v for n, v in out.items() if stores[n] == len(v)}
        return found

    def _element_flows(self, target: tuple, arg, unit, line: int, more: tuple = ()) -> None:
        """`f(counts[rank])`, `f(pids.max() + 1)`, or a name bound to such an element or
        reduction: the tensor it is taken from flows to `target` (an "element" relay, read by
        `_loop_numbers` for number parameters)."""
        whole = _zero_dim_of(arg)
        if whole is not None:
            self._flow(target, whole, unit, line, more)
        elif type(arg) is ast.Name:
            for indexed in self._element_names(unit).get(arg.id, ()):
                self._flow(target, indexed, unit, line, more)

    def _call(self, call: ast.Call, unit) -> None:
        func = call.func
        if type(func) is ast.Name:
            key = func.id
            head = key
            if key in unit.local_defs and type(unit.node) in (ast.FunctionDef, ast.AsyncFunctionDef):
                key = f"{key}{NESTED}{unit.node.name}"  # a function nested in this one (`nested_key`)
        elif type(func) is ast.Attribute:
            key = func.attr
            head = func.value
            while type(head) is ast.Attribute:
                head = head.value
            head = head.id if type(head) is ast.Name else ""
        else:
            return
        if key in api.SCALAR_BUILTINS or key in api.SEQUENCE_BUILTINS or not (call.args or call.keywords):
            return
        for qual in self.imports.get(head, ()):
            if qual.split(".", 1)[0] in _EXTERNAL:
                return
        loops = self._loop_elements(unit)
        # A method passing its own number parameters on to a method of its object (only
        # these calls are kept twice: the relay of `_loop_numbers`).
        own = type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self" and _has_number_parameter(unit)
        own_params = self._own_method_params(unit, key) if own else None
        built = self._constructor(call, unit)
        # The methods the call may reach where the code says the class (`self.m()`, a typed
        # object, `self.sub(x)`, `Cls.m()`, `super().m()`), or `.m` (any method `m`): resolved
        # in the solve.
        refs = () if built or type(func) is not ast.Attribute else tuple(
            r for r in self._callees(call, unit) if ("." in r or ":" in r) and ">" not in r)
        # Where the code says the class (`self.m(x)`, a typed object), the call runs that
        # class's `m` (or a base's, an override's): its arguments go to those methods alone,
        # not to every function of the name `m` (a module-level `m`, other classes' `m`).
        by_class = bool(refs) and all(_class_method(r) for r in refs)
        # `obj.inc(count[i])` of an object whose class the code does not say: the methods of
        # that name it may reach keep their number annotations (no element relay by name).
        by_name_only = bool(refs) and all(r[:1] == "." for r in refs)
        # `Base.m(self, x)`: a method called through its class with its object given first;
        # the method's parameters (`self` left out) start at the second argument.
        first = call.args[0] if call.args else None
        shift = int(by_class and type(first) is ast.Name and first.id in ("self", "cls")
                    and all(":" in r and _SUPER_CALL not in r for r in refs))
        for position, arg in enumerate(call.args):
            if type(arg) is ast.Starred:
                break
            slot = position - shift
            qualified = tuple(("QP", r, slot) for r in refs) if slot >= 0 else ()
            if by_class:
                if qualified:
                    self._flow(qualified[0], arg, unit, call.lineno, qualified[1:])
            else:
                self._flow(("P", key, position), arg, unit, call.lineno, qualified)
            # through the class too (`self.rotary(pids.max() + 1)` runs `Rotary.forward`)
            if not by_name_only:
                self._element_flows(("EP", key, position), arg, unit, call.lineno,
                                    tuple(("QE", r, slot) for r in refs) if slot >= 0 else ())
            if type(arg) is ast.Name and arg.id in loops:
                for iterable in loops[arg.id]:
                    self._flow(("LP", key, position), iterable, unit, call.lineno)
            elif own_params is not None and position < len(own_params):
                # `self.f(x)` with `f` defined in this class: its parameter, by position.
                self._flow(("Sp", key, own_params[position]), arg, unit, call.lineno)
            if built:  # `Cls(a, b)`: a dataclass / NamedTuple field, by its position
                self._flow(("AP", built, position), arg, unit, call.lineno)
        for kw in call.keywords:
            if kw.arg is not None:
                qualified = tuple(("Qp", r, kw.arg) for r in refs)
                if by_class:
                    self._flow(qualified[0], kw.value, unit, call.lineno, qualified[1:])
                else:
                    self._flow(("p", key, kw.arg), kw.value, unit, call.lineno, qualified)
                if not by_name_only:
                    self._element_flows(("Ep", key, kw.arg), kw.value, unit, call.lineno, tuple(("Qe", r, kw.arg) for r in refs))
                if type(kw.value) is ast.Name and kw.value.id in loops:
                    for iterable in loops[kw.value.id]:
                        self._flow(("Lp", key, kw.arg), iterable, unit, call.lineno)
                elif own:
                    self._flow(("Sp", key, kw.arg), kw.value, unit, call.lineno)
                if key[:1].isupper() or key.endswith(_CLASS_NAME_SUFFIXES):
                    # `Cls(x=...)`, `self.metadata_cls(x=...)` (a class held in a field named
                    # for one): a dataclass / NamedTuple field
                    self._flow(("a", kw.arg), kw.value, unit, call.lineno)
                if built:  # the field of that name, unless an `__init__` declares it a number (`_file_flows`)
                    self._flow(("AK", built, kw.arg), kw.value, unit, call.lineno)

    def _owner(self, target: ast.Attribute, unit) -> str | None:
        """The class of the object whose field `target` writes (`self`, a typed name)."""
        try:
            owner = self.model.class_of(target.value, unit)
        except RecursionError:
            return None
        return owner if owner is None or "(" not in owner else None  # a placeholder: no class's field yet

    def _constructor(self, call: ast.Call, unit) -> str | None:
        """The class `Cls(...)` / `cls(...)` builds (its keywords are its fields)."""
        func = call.func
        if type(func) is not ast.Name:
            return None
        if func.id == "cls":
            return self.model._name_class("cls", unit, 0)
        if func.id in unit.bound and func.id not in unit.imported:
            return None
        name = places.resolved_name(func.id, self.imports)
        return name if self.recorder.is_class(name) else None


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


# --- the solve -----------------------------------------------------------------------------------


class Types(_Types):
    def __init__(self, bases: dict, field_types: dict, returns: dict) -> None:
        self.bases, self.field_types, self.returns = bases, field_types, returns


class _Family:
    """The classes whose field `x` an object of class C may hold: C, its bases and its
    subclasses (an object annotated with a base may be any of them)."""

    def __init__(self, types: _Types, typed_fields) -> None:
        self.types = types
        self.typed = typed_fields
        self.children: dict[str, list] = {}
        for name, parents in types.bases.items():
            for parent in parents:
                self.children.setdefault(parent, []).append(name)
        self.memo: dict[tuple, tuple] = {}

    def classes(self, cls: str) -> list:
        found = self.types._lineage(cls)
        pending = [cls]
        while pending and len(found) < 256:
            for child in self.children.get(pending.pop(), ()):
                if child not in found:
                    found.append(child)
                    pending.append(child)
        return found

    def keys(self, cls: str, name: str) -> tuple:
        key = (cls, name)
        found = self.memo.get(key)
        if found is None:
            if places.deferred(cls):
                # `Worker+>forward_step`: the class another file decides, now known.
                real = self.types.resolved_class(cls)
                found = self.keys(real, name) if real else ()
            elif "(" in cls:
                # `Cls.method(param)`: an unannotated parameter of an override, summarised
                # before its base was known; read through the class the base declares it.
                owner, _, parameter = cls.partition(".")
                method, _, param = parameter[:-1].partition("(")
                declared = self.types.parameter_class(owner, method, param)
                found = self.keys(declared, name) if declared and "(" not in declared else ()
            else:
                found = tuple(("A", c, name) for c in self.classes(cls) if (c, name) in self.typed)
            self.memo[key] = found
        return found


@dataclass
class Facts:
    """What the repository says: key -> (mask, where), for fields ("a", name), parameters
    ("p", function, name) and results ("r", function). Installed as places.REPO."""

    values: dict[tuple, tuple[int, str]] = field(default_factory=dict)
    fingerprint: str = ""
    callers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # function -> who calls it (`_CallGraph`)
    # While one file is linted (`recording`): every fact it asked for and the answer it got,
    # the call graph's tier verdicts ("t", function) included. A cached result stays valid
    # while the repository gives the same answers to the same questions (synclint/cache.py).
    reads: dict | None = field(default=None, compare=False, repr=False)
    # target -> (path, index of the flow in that file's summary) an explanation cites: lets a
    # run after an edit that only moved lines patch the citations instead of solving again.
    examples: dict = field(default_factory=dict, compare=False, repr=False)
    vendored: frozenset[str] = frozenset()  # functions defined only in vendored folders (third_party/)
    # (typed fields (class, field) -> (mask, where a device value is given), declared tensors,
    #  bases, field classes, returned classes): the classes of the repository
    classes: tuple = ({}, (), {}, {}, {})
    # function -> ((caller, arguments), ...): the kinds of argument each call passes, for the
    # functions whose branches a parameter decides (synclint/analysis/guards.py)
    arguments: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # method names that more than `_FEW_FAMILIES` unrelated class families define (`free`,
    # `run`, `plan`): what calls of the name pass says nothing of one class's method
    crowded: frozenset[str] = frozenset()
    # module-level functions no code, string or comment of the repository names (`unused`):
    # what only they reach runs for tests or users of the package, not in serving
    orphans: frozenset[str] = frozenset()
    # method name -> the classes that define it: how `obj.m()` with `obj` of a known class
    # resolves to the methods it runs (`method_result`), as the call graph resolves it
    methods: dict[str, tuple[str, ...]] = field(default_factory=dict)
    symbolic = False  # answers are places, not symbols (as places.NoRepository)
    # the modules with multimodal field marks (`_CallGraphTiers.inherited_of`), on first use
    field_modules: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    def passed(self, mask: int, func, func_unit, call, place) -> int:
        return mask

    def __post_init__(self) -> None:
        typed, declared, bases, field_types, returns = self.classes
        self.types = Types(bases, field_types, returns)
        self.typed = typed
        self.declared = frozenset(tuple(d) for d in declared if len(d) == 2)
        # Fields a class declares Python data: never a device field through that family.
        self.python_fields = frozenset(tuple(d[1:]) for d in declared if len(d) == 3 and d[0] == "python")
        # Fields a class declares a Python number (`next_token: Optional[int]`).
        self.number_fields = frozenset(tuple(d[1:]) for d in declared if len(d) == 3 and d[0] == "number")
        self.family = _Family(self.types, typed)
        self._field_memo: dict[tuple, tuple | None] = {}
        self._graph: _CallGraph | None = None

    # --- classes (each answer recorded, as the facts are, while a file is linted) --------------
    def _recorded(self, key: tuple, found):
        if self.reads is not None:
            self.reads[key] = found
        return found

    def is_class(self, name: str) -> bool:
        return self._recorded(("C", name), self.types.is_class(name))

    def field_type(self, cls: str, name: str) -> str | None:
        return self._recorded(("T", cls, name), self.types.field_type(cls, name))

    def returns_class(self, owner: str, name: str) -> str | None:
        return self._recorded(("R", owner, name), self.types.returns_class(owner, name))

    def parameter_class(self, cls: str, method: str, param: str) -> str | None:
        return self._recorded(("PC", cls, method, param), self.types.parameter_class(cls, method, param))

    def field(self, cls: str, name: str) -> int:
        found = self.field_fact(cls, name)
        return found[0] & ~SCALAR if found is not None else 0  # the screen places tensors only

    def field_fact(self, cls: str | None, name: str) -> tuple[int, str] | None:
        """(mask, reason) for `obj.<name>` with obj of class `cls`: what the repository
        assigns to that field of the class, its bases and its subclasses; by the name alone
        where no class of that family is assigned the field (or the class is unknown)."""
        if name in api.DEVICE_LIKE_NAMES:
            return None
        named = _name_fact(name, "field")
        if named is not None:
            return named
        return self._recorded(("F", cls or "", name), self.typed_fact(cls, name))

    def typed_fact(self, cls: str | None, name: str) -> tuple[int, str] | None:
        if not cls or not self.types.is_class(cls):
            return self.values.get(("a", name))
        key = (cls, name)
        if key in self._field_memo:
            return self._field_memo[key]
        keys = self.family.keys(cls, name)
        if not keys:
            found = self._by_name(name, "(" not in cls and any((one, name) in self.declared for one in self.family.classes(cls)))
        else:
            mask, where, declared = 0, "", ("", name) in self.declared
            python = False
            number = None
            tensor_field = False  # the family declares the field a tensor (`state_indices: torch.Tensor`)
            for _, one, _ in keys:
                part, first = self.typed[(one, name)]
                mask |= part
                where = where or (f"{one}.{name} is assigned device tensors in {first}" if first else "")
                tensor_field = tensor_field or (one, name) in self.declared
                declared = declared or tensor_field
                python = python or (one, name) in self.python_fields
                number = number or (one if (one, name) in self.number_fields else None)
            found = None
            if number and not mask & (DEVICE | HOST | NUMPY | LIST):
                # `next_token: Optional[int] = None`, given nothing that may be a tensor or a
                # container anywhere: a Python number (or None) wherever it is read.
                found = (SCALAR, f"{number}.{name} is declared a Python number and given no tensor in the repository "
                                 f"(the class of the object is `{cls}`)")
            elif python and mask & DEVICE:
                # `keys: Optional[List[str]]`: the class says what the field holds, whatever a
                # copy from a same-named device field elsewhere gives it.
                found = None
            elif mask & (DEVICE | HOST) == DEVICE and declared:
                found = (DEVICE, f"{where or f'{cls}.{name} is assigned only device tensors'} (the class of the object is `{cls}`)")
            elif mask in (HOST, NUMPY, LIST, HOST | NUMPY):
                found = (mask, f"{cls}.{name} is assigned only host data in the repository")
            elif not mask:
                found = self._by_name(name, tensor_field)
            elif mask & DEVICE:
                named = self.values.get(("a", name))
                if named is not None and named[0] == DEVICE:
                    found = named  # the name's evidence (a host mirror beside it) decides
        self._field_memo[key] = found
        return found

    def _by_name(self, name: str, tensor_field: bool) -> tuple[int, str] | None:
        """The facts of a field's name, for a class whose own writes of it place nothing;
        none where the class declares it a tensor and the name says only lists or numbers
        (another class's `state_indices: List[int]` says nothing of a `torch.Tensor` field)."""
        found = self.values.get(("a", name))
        if tensor_field and found is not None and not found[0] & (DEVICE | HOST | NUMPY):
            return None
        return found

    def method_result(self, cls: str, name: str, position: int | None = None) -> tuple[int, str] | None:
        """(mask, reason) for the result of `obj.<name>()` with `obj` of class `cls` (element
        `position` of it, unpacked): what the methods that call runs return, where they agree."""
        key = ("M", cls, name) if position is None else ("Mi", cls, name, position)
        return self._recorded(key, self._method_result(cls, name, position))

    def passes(self, function: str) -> tuple[tuple[int, str], ...] | None:
        """The parameters (position after `self`, or -1, and name) that `function`'s result is
        made of alone (`return loc`, `return base + rem` of its arguments), or None."""
        found = self.get((PASSES_THROUGH, function))
        if found is None:
            return None
        return tuple((int(p), n) for p, _, n in (one.partition(":") for one in found[1].split(",")))

    def method_passes(self, cls: str, name: str) -> tuple[tuple[int, str], ...] | None:
        """As `passes`, for `obj.<name>()` with `obj` of class `cls`: where every method the
        call may run returns the same parameters alone."""
        found = {self.passes(m) for m in methods_of_class(self._methods_graph(), f"{cls}.{name}")}
        return found.pop() if len(found) == 1 else None

    def _methods_graph(self):
        graph = self._graph
        if graph is None:
            graph = self._graph = _CallGraph(self.types)
            graph.methods = {method: set(classes) for method, classes in self.methods.items()}
        return graph

    def _method_result(self, cls: str, name: str, position: int | None) -> tuple[int, str] | None:
        methods = methods_of_class(self._methods_graph(), f"{cls}.{name}")
        found = [self.values.get(("r", m) if position is None else (RESULT_ITEM, m, position)) for m in methods]
        if not found or any(f is None for f in found) or len({f[0] for f in found}) != 1:
            return None
        mask, reason = found[0]
        if len(found) > 1:
            reason = f"{reason}; so is that of every override the call may run ({', '.join(f'`{m}()`' for m in methods[1:])})"
        return mask, f"{reason} (the class of the object is `{cls}`)"

    # --- masks, for the screen ---------------------------------------------------------------
    def attr(self, name: str) -> int:
        return convention(name) or self._mask(("a", name))

    def param(self, function: str, name: str) -> int:
        named = convention(name)
        if named or "." not in function:
            return named or self._mask(("p", function, name))
        # A method's parameter (`Cls.method`), as the analysis asks it (analysis/flow.py
        # `_param_fact`): what the calls through its class pass, else those of its name,
        # unless many unrelated classes define a method of that name.
        if self.get(("p", function, name)) is not None:
            return self._mask(("p", function, name))
        method = function.rpartition(".")[2]
        crowded = self._recorded(("K", method), method in self.crowded)
        return 0 if crowded else self._mask(("p", method, name))

    def ret(self, function: str) -> int:
        return self._mask(("r", function))

    def ret_item(self, function: str, position: int) -> int:
        return self._mask((RESULT_ITEM, function, position))

    def method_ret(self, cls: str, name: str) -> int:
        found = self.method_result(cls, name)
        return found[0] & PLACES & ~SCALAR if found is not None else 0

    def method_ret_item(self, cls: str, name: str, position: int) -> int:
        found = self.method_result(cls, name, position)
        return found[0] & PLACES & ~SCALAR if found is not None else 0

    def _mask(self, key: tuple) -> int:
        found = self.values.get(key)
        if self.reads is not None:
            self.reads[key] = found
        return found[0] & PLACES & ~SCALAR if found is not None else 0  # the screen places tensors only

    # --- facts with reasons, for the analysis ------------------------------------------------
    def get(self, key: tuple) -> tuple[int, str] | None:
        found = self.values.get(key)
        if self.reads is not None:
            self.reads[key] = found
        return found


EMPTY = Facts()
FACTS: Facts = EMPTY


def install(facts: Facts) -> None:
    """What the lint reads from now on (the screen through places.REPO, the analysis through
    the `*_fact` functions). Naming conventions hold with or without an index."""
    global FACTS
    FACTS = facts
    places.REPO = facts


install(EMPTY)


class recording:
    """`with recording() as reads:` collects what the lint inside asks of the installed facts:
    {key: answer}, with ("t", function) -> (tier, reason) or None for the call graph's
    verdicts. The answers a file got are what its findings depend on from other files."""

    def __enter__(self) -> dict:
        self.facts = FACTS
        self.saved = FACTS.reads
        FACTS.reads = {}
        return FACTS.reads

    def __exit__(self, *exc) -> None:
        self.facts.reads = self.saved


def dependency_digest(reads: dict) -> str:
    """One hash of the questions a file asked and the answers it got. `repr`, not marshal:
    marshal's bytes depend on which equal objects are shared or interned (a fact read back
    from disk is written differently from the same fact just solved)."""
    return hashlib.sha256(repr(sorted(reads.items())).encode()).hexdigest()[:24]


# The questions the call graph answers (`Verifier.answer`): tier verdicts, the kinds of argument
# callers pass, fields never None. Their answers depend on the call graph and the classes only
# (`graph_fingerprint`), not on the placements of fields, parameters and results.
GRAPH_QUESTIONS = frozenset({"t", "tv", "g", "gb", "fg", "hf"})


def graph_digest(reads: dict) -> str:
    """`dependency_digest` of the answers that are not the call graph's (GRAPH_QUESTIONS)."""
    return dependency_digest({key: value for key, value in reads.items() if key[0] not in GRAPH_QUESTIONS})


_GRAPH_FINGERPRINTS: dict[int, tuple] = {}


def graph_fingerprint(facts: Facts | None = None) -> str:
    """A digest of everything the call graph's answers (GRAPH_QUESTIONS) read of the facts:
    the callers, the arguments they pass, the classes, the vendored, crowded, unnamed
    functions and the methods. Equal for two indexes, those answers are equal too."""
    facts = FACTS if facts is None else facts
    found = _GRAPH_FINGERPRINTS.get(id(facts))
    if found is not None and found[0] is facts:
        return found[1]
    # Worked out once per index (about 0.5 s for a repository of 150,000 call edges), then
    # read back by the index's own fingerprint, which covers everything it reads.
    memo = os.path.join(str(store_folder()), "graph", facts.fingerprint) if facts.fingerprint else ""
    digest = _read(memo) if memo else None
    if not isinstance(digest, str):
        typed, declared, bases, field_types, returns = facts.classes
        blob = repr((sorted(facts.callers.items()), sorted((k, tuple(v)) for k, v in bases.items()), sorted(field_types.items()),
                     sorted(returns.items()), sorted(facts.arguments.items()), sorted(facts.crowded), sorted(facts.orphans),
                     sorted(facts.methods.items()), sorted(facts.vendored)))
        digest = hashlib.sha256(blob.encode()).hexdigest()[:16]
        if memo:
            _write(memo, marshal.dumps(digest))
    _GRAPH_FINGERPRINTS.clear()
    _GRAPH_FINGERPRINTS[id(facts)] = (facts, digest)
    return digest


_VERIFIERS: dict = {}


def verifier(settings) -> Verifier:
    """One `Verifier` per installed index and settings in this process, shared by the cache's
    lookups and the reuse of a changed file's findings: its answers (the call graph's tier
    verdicts above all) are worked out once for all the files it checks."""
    key = (id(FACTS), settings)
    found = _VERIFIERS.get(key)
    if found is None or found.facts is not FACTS:
        _VERIFIERS.clear()
        found = _VERIFIERS[key] = Verifier(FACTS, settings)
    return found


class Verifier:
    """Answers the questions a cached file asked, again, with the facts installed now: its
    findings are still valid when every answer is the same (`digest(keys) == stored`)."""

    def __init__(self, facts: Facts, settings) -> None:
        self.facts = facts
        self.tiers = _CallGraphTiers(facts, settings)
        self.answers: dict[tuple, object] = {}

    def answer(self, key: tuple):
        found = self.answers.get(key, self)
        if found is self:
            if key[0] == "t":
                found = _plain_verdict(self.tiers.verdict(key[1]))
            elif key[0] in _CLASS_QUESTIONS:
                found = _CLASS_QUESTIONS[key[0]](self.facts, *key[1:])
            elif key[0] == "tv":
                found = _plain_verdict(self.tiers.vendored_verdict(key[1]))
            elif key[0] == "g":
                found = self.tiers.passed_kinds(*key[1:])
            elif key[0] == "gb":
                found = self.tiers.passed_by(*key[1:])
            elif key[0] == "fg":
                found = key[1] in self.tiers.given_fields()
            elif key[0] == "hf":
                found = self.tiers.inherited_of(key[1])
            else:
                found = self.facts.values.get(key)
            self.answers[key] = found
        return found

    def digest(self, keys) -> str:
        return dependency_digest({key: self.answer(key) for key in keys})


# The questions about classes a lint asks (Facts.field_fact and the rest), answered again
# by the Verifier without recording.
_CLASS_QUESTIONS = {
    "F": lambda facts, cls, name: facts.typed_fact(cls or None, name),
    "T": lambda facts, cls, name: facts.types.field_type(cls, name),
    "R": lambda facts, owner, name: facts.types.returns_class(owner, name),
    "PC": lambda facts, cls, method, param: facts.types.parameter_class(cls, method, param),
    "C": lambda facts, name: facts.types.is_class(name),
    "K": lambda facts, name: name in facts.crowded,
    "M": lambda facts, cls, name: facts._method_result(cls, name, None),
    "Mi": lambda facts, cls, name, position: facts._method_result(cls, name, position),
}


def _plain_verdict(verdict) -> tuple[str, str] | None:
    return None if verdict is None else (verdict.tier.value, verdict.reason)


def _name_fact(name: str, what: str) -> tuple[int, str] | None:
    if name in api.DEVICE_LIKE_NAMES:
        return None  # a device object: the analysis places it itself
    mask = convention(name)
    if not mask:
        return None
    return mask, f"{what} `{name}` is named like {_describe(mask)} (inferred from the name)"


def attr_fact(name: str) -> tuple[int, str] | None:
    """(mask, reason) for a field `obj.<name>` one file cannot place, or None."""
    if name in api.DEVICE_LIKE_NAMES:
        return None
    return _name_fact(name, "field") or FACTS.get(("a", name))


def crowded_method(name: str) -> bool:
    """Whether many unrelated class families define a method `name` (`Facts.crowded`)."""
    found = name in FACTS.crowded
    if FACTS.reads is not None:
        FACTS.reads[("K", name)] = found
    return found


def param_fact(function: str, name: str) -> tuple[int, str] | None:
    if name in api.DEVICE_LIKE_NAMES:
        return None  # a device object, placed by its name: not a tensor
    return _name_fact(name, "parameter") or FACTS.get(("p", function, name))


def field_fact(cls: str | None, name: str) -> tuple[int, str] | None:
    """(mask, reason) for `obj.<name>` with `obj` of class `cls` (None: unknown)."""
    return FACTS.field_fact(cls, name)


@lru_cache(maxsize=4096)
def class_of_annotation(text: str) -> str | None:
    """The class an annotation's source text names, by its own last name (for the libcst
    analysis: one implementation, `places.annotation_class`)."""
    try:
        expr = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    return places.annotation_class(expr)


@lru_cache(maxsize=4096)
def elements_of_annotation(text: str) -> str | None:
    """The class of the elements an annotation's source text holds (`list[Req]`)."""
    try:
        expr = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    return places.element_class(expr)


def ret_fact(function: str) -> tuple[int, str] | None:
    return FACTS.get(("r", function))


def ret_item_fact(function: str, position: int) -> tuple[int, str] | None:
    """Element `position` of the tuples a function returns (`a, b = f()`), or None."""
    return FACTS.get((RESULT_ITEM, function, position))


def passes_fact(function: str, cls: str | None = None) -> tuple[tuple[int, str], ...] | None:
    """The parameters whose arguments a call of `function` (of `obj.<function>()`, with `obj`
    of class `cls`) returns alone, or None (`Facts.passes`)."""
    return FACTS.method_passes(cls, function) if cls else FACTS.passes(function)


def method_ret_fact(cls: str, name: str, position: int | None = None) -> tuple[int, str] | None:
    """The result of `obj.<name>()` with `obj` of class `cls` (element `position` of it), or None."""
    return FACTS.method_result(cls, name, position)


def _describe(mask: int) -> str:
    return {DEVICE: "a device tensor", HOST: "a host tensor", NUMPY: "a numpy array", LIST: "a Python list"}.get(mask, "data")


# What a device tensor is not: host tensors, numpy arrays, Python lists and scalars.
_HOST_DATA = HOST | NUMPY | LIST | SCALAR
_HOST_TENSORS = HOST | NUMPY | LIST  # host data a tensor method may be called on
# A fact's flags: a device tensor by weak evidence only (the name also holds host data or
# Python values elsewhere): low; RESOLVABLE: the other values are Python values only (ints,
# lists), so a tensor method called on it (`x.max()`, `x.tolist()`) says it is the tensor.
AMBIGUOUS = 1 << 6
RESOLVABLE = 1 << 7
RESOLVABLE_NOTE = "low unless a tensor method is called on it"
RESOLVABLE_NOTE_TORCH_ONLY = "low unless a method numpy arrays lack is called on it"


def solve(summaries: dict[str, tuple], state: dict | None = None) -> Facts:
    """Join every flow into its target, to a fixpoint; keep the targets with one place.
    `state`, when given, receives what an incremental solve after an edit starts from
    (`_State`)."""
    asm = _assemble(summaries)
    flows, tensors, tupled, loop_flows, own_flows, types, signatures, calls = asm[:8]
    lines = {path: summary[0] for path, summary in summaries.items()}
    mirrored = _mirrored(summaries)
    definitions = Counter(key for summary in summaries.values() for key, _ in summary[1])
    facts, typed, citations, value0, value = _conclude(flows, tensors, tupled, own_flows, loop_flows, lines, mirrored, definitions)
    call_graph = _CallGraph(types)
    graph = call_graph.graph(calls, summaries)
    arguments, crowded = call_graph.arguments, call_graph.crowded()
    # How each reason cites flows: written again after edits that move them (`moved_lines`,
    # `_incremental`).
    examples = citations
    vendored: set[str] = set()
    elsewhere: set[str] = set()
    for path, (_, sigs, *_) in summaries.items():
        (vendored if _vendored(path) else elsewhere).update(key for key, _ in sigs)
    declared = _declared_fields(tensors)
    classes = (typed, sorted(declared), types.bases, types.field_types, types.returns)
    if state is not None:
        state.update(summaries=summaries, asm=asm, value0=value0, value=value, mirrored=mirrored)
    orphans = (
        unused(call_graph.functions | closed_methods(call_graph.methods, types), (summary[6] for summary in summaries.values()))
        if len(summaries) >= MIN_MODULES_FOR_UNUSED
        else frozenset()
    )
    methods = _methods_table(signatures)
    return Facts(facts, _fingerprint(facts, graph, classes, arguments, crowded, orphans, methods), graph, examples=examples,
                 vendored=frozenset(vendored - elsewhere), classes=classes, arguments=arguments, crowded=crowded, orphans=orphans,
                 methods=methods)


def _methods_table(signatures) -> dict[str, tuple[str, ...]]:
    """Method name -> the classes of the repository that define it (`Facts.methods`)."""
    out: dict[str, set] = {}
    for name in signatures:
        cls, _, method = name.rpartition(".")
        if cls:
            out.setdefault(method, set()).add(cls)
    return {method: tuple(sorted(classes)) for method, classes in out.items()}


# A repository of at least this many modules wires its own code together: a function nothing
# in it names is kept for tests or users. In a smaller project (a script, a few modules of
# kernels) such a function is an entry point its users call.
MIN_MODULES_FOR_UNUSED = 100

# A function of this name is an entry point the packaging names (`console_scripts`), not code
# nothing runs.
_ENTRY_NAMES = frozenset({"main"})


def unused(functions, references) -> frozenset[str]:
    """The functions (module-level, by name; methods, `Cls.m`, by their name) that no
    module's words name (`name_references`), nor a formatted string's start (`getattr(module, f"decode_{backend}")`), and end where
    the string has one (`f"get_{modality}_feature"` names `get_image_feature`, not `get_rank`)."""
    named: set[str] = set()
    prefixes: set[tuple[str, str]] = set()
    for words in references:
        for word in words:
            if NAME_PREFIX in word:
                prefixes.add(tuple(word.split(NAME_PREFIX, 1)))  # (start, end)
            else:
                named.add(word)
    return frozenset(
        f for f in functions
        if (bare := f.rpartition(".")[2]) not in named and bare not in _ENTRY_NAMES and not bare.startswith("__")
        and not any(bare.startswith(start) and bare.endswith(end) for start, end in prefixes)
    )


# Bases of a class that call none of its methods by name: a class whose lineage holds only
# the repository's classes, these and PyTorch's bases (`FRAMEWORK_CALLED_METHODS`) runs its
# other methods only where the repository calls them.
_INERT_BASES = frozenset({"ABC", "Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "NamedTuple", "TypedDict", "Exception"})
_ANY = None  # a base from elsewhere, which may call any method by a protocol of its own


def closed_methods(methods: dict, types: _Types) -> set[str]:
    """The methods (`Cls.m`) that nothing outside the repository calls by a protocol of its
    own: every base of `Cls`, and every base of those, is a class of the repository, one
    that calls no method by name (`_INERT_BASES`), or a PyTorch base that calls `m` by no
    name of its (`nn.Module` calls `forward`, not `prefill_audio_ids`). Such a method that
    no module names (`unused`) is code nothing runs."""
    called: dict[str, frozenset | None] = {}

    def outside(cls: str) -> frozenset | None:
        if cls in called:
            return called[cls]
        called[cls] = _ANY  # a cycle of bases: anything
        generic = types.field_types.get((cls, GENERIC_BASES)) or ""
        names: set[str] = set()
        for base in (*types.bases.get(cls, ()), *filter(None, generic.split(","))):
            if base in _INERT_BASES:
                continue
            found = outside(base) if types.is_class(base) else api.FRAMEWORK_CALLED_METHODS.get(base, _ANY)
            if found is _ANY:
                return _ANY
            names.update(found)
        called[cls] = frozenset(names)
        return called[cls]

    return {f"{cls}.{name}" for name, classes in methods.items() for cls in classes
            if types.is_class(cls) and (found := outside(cls)) is not _ANY and name not in found}


def _assemble(summaries: dict[str, tuple]) -> tuple:
    """Every file's flows with their targets resolved against the whole repository (a call's
    arguments to the parameters of the functions of that name, a field read through a class
    to that class's family), in file order; and the repository's tables they were resolved with."""
    signatures: dict[str, set[tuple]] = {}
    tensors: set[tuple] = set()
    bases: dict[str, set] = {}
    fields_of: dict[str, tuple] = {}
    field_types: list = []
    returns: list = []
    calls: dict[str, Counter] = {}  # callee (`_Summarizer._callees`) -> its (caller, arguments)' counts
    for path, (_, sigs, _, declared, edges, *more) in summaries.items():
        tensors.update(declared)
        for caller, callee, arguments in _file_edges(path, edges):
            known = calls.get(callee)
            if known is None:
                known = calls[callee] = Counter()
            known[(caller, arguments)] += 1
        for key, params in sigs:
            signatures.setdefault(key, set()).add(params)
        if more:
            classes, types, rets = more[0]
            for name, parents, fields in classes:
                bases.setdefault(name, set()).update(parents)
                fields_of.setdefault(name, fields)
            field_types += types
            returns += rets
    types = Types({name: tuple(sorted(parents)) for name, parents in bases.items()},
                  _unique(((c, f), t) for c, f, t in field_types), _unique(((o, f), t) for o, f, t in returns))
    flows: list[tuple] = []  # (target, local, symbols, where)
    tupled: set[tuple] = set()  # results that are tuples of values: joined, never a fact
    loop_flows: list[tuple] = []  # the element of a loop passed as an argument
    own_flows: list[tuple] = []  # an argument of a call of the object's own method (`self.f(x)`)
    qualified = _QualifiedCalls(types, signatures, summaries)
    numbers = frozenset((t[1], t[2]) for t in tensors if t[0] == "n")
    for path, (summary_flows, *_) in summaries.items():
        _file_flows(path, summary_flows, signatures, fields_of, flows, tupled, loop_flows, own_flows, qualified, numbers)
    # A field read through a class (`("A", cls, x)`) reads what that class, its bases and its
    # subclasses are given, or what the name is given where none of them is: the symbols
    # it stands for, fixed before the solve.
    family = _Family(types, {(t[1], t[2]) for t, *_ in flows if t[0] == "A"})
    reads = _MethodParams({t for t, *_ in flows if t[0] == "p" and "." in t[1]})
    expanded: dict[tuple, tuple] = {}
    resolver = _Resolver(family, reads, {t for t, *_ in flows if t[0] == RESULT_ITEM}, qualified, tensors)
    resolver.expanded = expanded
    flows = [(target, *_expand_flow(local, symbols, expanded, resolver), where) for target, local, symbols, where in flows]
    return flows, tensors, tupled, loop_flows, own_flows, types, signatures, calls, fields_of, expanded, family


def _file_flows(path: str, summary_flows, signatures, fields_of, flows: list, tupled: set, loop_flows: list, own_flows: list,
                qualified: _QualifiedCalls | None = None, numbers: frozenset = frozenset()) -> None:
    """One file's flows, their targets resolved by the repository's signatures and fields
    (`numbers`: the (function, parameter) pairs declared Python numbers)."""
    for index, (target, local, symbols, _line) in enumerate(summary_flows):
        where = (path, index)
        if target[0] in ("QE", "Qe"):  # an element or reduction passed through the class
            _, ref, slot = target
            if qualified is None:
                continue
            for function in qualified.methods_of(ref):
                if target[0] == "Qe":
                    loop_flows.append((("p", function, slot), local, symbols, where, ELEMENT))
                    continue
                for params in sorted(signatures.get(function, ())):
                    if slot < len(params):
                        loop_flows.append((("p", function, params[slot]), local, symbols, where, ELEMENT))
            continue
        if target[0] in ("QP", "Qp"):
            _, ref, slot = target
            if qualified is None:
                continue
            # A function reached through a method alias (`obj.update(x)` with `self.update =
            # self.update_windowed`) is also given the argument by its own name, as the call
            # `obj.update_windowed(x)` the alias stands for would (the body of a function reads
            # its parameters by that name).
            aliased = tuple(f.rpartition(".")[2] for f in qualified.graph.aliased_by(ref))
            for function in (*qualified.methods_of(ref), *dict.fromkeys(aliased)):
                if target[0] == "Qp":
                    # by its keyword: a keyword-only parameter too (signatures list the
                    # positional ones), as a call by name gives it
                    if function in signatures and (function, slot) not in numbers:
                        flows.append((("p", function, slot), local, symbols, where))
                    continue
                for params in sorted(signatures.get(function, ())):
                    if slot < len(params) and (function, params[slot]) not in numbers:
                        flows.append((("p", function, params[slot]), local, symbols, where))
            continue
        if target[0] == "P":
            # `f(a, b)` by name: each argument goes to the parameter the functions named `f`
            # agree on at its position; where they disagree (`forward(x, mask, ...)` of a
            # hundred modules), the call says nothing of any one of them.
            _, function, position = target
            name = _agreed_parameter(signatures.get(function, ()), position)
            if name is not None and (function, name) not in numbers:
                flows.append((("p", function, name), local, symbols, where))
        elif target[0] == "p":
            # (a parameter declared a Python number stays one as others read it, `row_ids -
            # vocab_start` with `vocab_start: int = 0`, whatever a call by name passes; what a
            # loop element or a reduction gives it is `_loop_numbers`'s)
            if target[1] in signatures and (target[1], target[2]) not in numbers:
                flows.append((target, local, symbols, where))
        elif target[0] in ("LP", "Lp", "EP", "Ep", "SP", "Sp"):
            _, function, slot = target
            out = own_flows if target[0][0] == "S" else loop_flows
            # An element of what is indexed (`EP`) is one only where that is surely a tensor.
            how = (ELEMENT,) if target[0][0] == "E" else ()
            if target[0][1] == "p":
                out.append((("p", function, slot), local, _bare(symbols), where, *how))
            else:
                name = _agreed_parameter(signatures.get(function, ()), slot)
                if name is not None:
                    out.append((("p", function, name), local, _bare(symbols), where, *how))
        elif target[0] == "rt":
            tupled.add(("r", target[1]))
            flows.append((("r", target[1]), local, symbols, where))
        elif target[0] == "AP":  # `Cls(a, b)` of a class without __init__: its fields in order
            _, cls, position = target
            fields = fields_of.get(cls, ())
            if cls not in signatures and position < len(fields):
                flows.append((("A", cls, fields[position]), local, symbols, where))
        elif target[0] == "AK":  # `Cls(a=x)`: the field `a` of the class
            # (but where an `__init__` of the class declares its parameter `a` a Python number,
            # that is what it becomes: `self.top_p = top_p` of a `top_p: float | None`,
            # whatever the call passes)
            _, cls, name = target
            if (cls, name) not in numbers:
                flows.append((("A", cls, name), local, symbols, where))
        else:
            flows.append((target, local, symbols, where))


def _given_numbers(path: str, summary_flows, signatures, fields_of, qualified, numbers: frozenset) -> list:
    """What a file's flows give the parameters declared Python numbers (the flows
    `_file_flows` leaves out; the relay of loop elements reads such parameters), less where
    they are: an edit that changes it is solved whole."""
    if not numbers:
        return []
    every: list = []
    _file_flows(path, summary_flows, signatures, fields_of, every, set(), [], [], qualified, frozenset())
    return sorted(repr(f[:3]) for f in every if f[0][0] == "p" and (f[0][1], f[0][2]) in numbers)


class _QualifiedCalls:
    """The methods (`Cls.m`) a call reaches, as the call graph resolves it (`_CallGraph`):
    through the class the code says (`self.m()`, a typed object, `self.sub(x)` to the class
    field `sub` holds, the functions a method alias binds the field `m` to), else every method
    of the name where few class families define it.
    A method's parameters are then given what these calls pass, and not what calls of every
    other method of its name pass (those go to the name, `("p", m, x)`, as before)."""

    def __init__(self, types, names, paths=()) -> None:
        self.graph = _CallGraph(types)
        self.graph.add_modules(paths)  # `mod>f`: a function a method alias binds, imported from `mod`
        for name in names:
            cls, _, method = name.rpartition(".")
            if cls:
                self.graph.methods.setdefault(method, set()).add(cls)
            else:
                self.graph.functions.add(name)
        self.graph.functions -= set(self.graph.methods)
        self.memo: dict[str, tuple] = {}

    def methods_of(self, ref: str) -> tuple:
        found = self.memo.get(ref)
        if found is None:
            targets, name = self.graph.resolve(ref)
            if not targets and name and self.graph._few(name):
                targets = tuple(f"{cls}.{name}" for cls in sorted(self.graph.methods.get(name, ())))
            found = self.memo[ref] = targets
        return found

    def aliased_functions(self) -> frozenset[str]:
        """The functions (not methods) a method alias binds (`self.act = helper`): their
        parameters are given what the calls of the alias pass."""
        out = set()
        for (_, name), refs in self.graph.types.field_types.items():
            if name.endswith(ALIAS) and refs:
                out.update(r.rpartition(">")[2] for r in refs.split(",") if not r.startswith("self."))
        return frozenset(out)


# Element `i` of the tuples a function returns, a target and a symbol: (RESULT_ITEM, "f", i).
RESULT_ITEM = "ri"
# Symbols for the result of `obj.m()` with `obj` of class `Cls` (METHOD_RESULT, "Cls.m"), and
# for element `i` of it unpacked (METHOD_RESULT_ITEM, "Cls.m", i).
METHOD_RESULT = "Qr"
METHOD_RESULT_ITEM = "Qri"
# An argument of such a call (PASSED_ARGUMENT, "Cls.m", slot, local places, symbols): where
# it is, if a method the call runs returns that parameter as it is; `slot` is its position
# (after `self`) or its keyword. The functions whose result is made of their parameters
# alone are declared (PASSES_THROUGH, function, ((position or -1, parameter), ...)).
PASSED_ARGUMENT = "Qa"
PASSES_THROUGH = "pt"
# Places a resolved symbol adds to its flow's own (`_expand_flow`): (PLACES_OF, mask).
PLACES_OF = "L"
# The symbols `_expand` replaces by what they stand for in the repository (and a method's own
# parameter, `("p", "Cls.m", x)`).
_RESOLVED_SYMBOLS = frozenset({"A", RESULT_ITEM, METHOD_RESULT, METHOD_RESULT_ITEM, PASSED_ARGUMENT})


class _Unresolved(Exception):
    """A symbol the state of the last solve did not resolve (`_incremental`: solved whole)."""


class _Resolver:
    """What a symbol of a summary stands for in the whole repository (`_expand`)."""

    def __init__(self, family, reads: _MethodParams, targeted: set, qualified: _QualifiedCalls, tensors: set) -> None:
        self.family = family
        self.reads = reads
        self.tensors = tensors  # declared tensors: ("r", "Cls.m") for `-> torch.Tensor`
        # The methods that return a parameter as it is: "Cls.m" -> (its position, its name).
        self.passes = {key[1]: {slot for pair in key[2] for slot in pair} for key in tensors if key[0] == PASSES_THROUGH}
        self.expanded: dict = {}  # `_expand`'s memo, for the symbols an argument reads
        # The tuple elements some flow gives a value: (RESULT_ITEM, function, position).
        self.targeted = targeted
        self.qualified = qualified

    def __call__(self, symbol: tuple) -> tuple:
        kind = symbol[0]
        if kind == "A":
            return self.family.keys(symbol[1], symbol[2]) or (("a", symbol[2]),)
        if kind == "p":
            return self.reads.keys(symbol)  # a method's own parameter (`_MethodParams`)
        if kind == RESULT_ITEM:
            # `a, b = f()`: the element where every `return` of `f` gives a tuple, else the whole result.
            return (symbol,) if symbol in self.targeted else (("r", symbol[1]),)
        # `obj.m()` of an object of class `Cls` (METHOD_RESULT, METHOD_RESULT_ITEM): the methods
        # the call runs (`_CallGraph`: the nearest `m` of the class or a base, the overrides of
        # its subclasses); none where the class has no such method in the repository (a
        # library's, a field's).
        methods = methods_of_class(self.qualified.graph, symbol[1])
        if kind == PASSED_ARGUMENT:
            # The argument, where a method the call may run returns it as it is (the others
            # answer through the call's METHOD_RESULT).
            _, _, slot, local, inner = symbol
            if not any(slot in self.passes.get(m, ()) for m in methods):
                return ()
            expanded = _expand(inner, self.expanded, self)
            return (*expanded, (PLACES_OF, local)) if local else expanded
        if kind == METHOD_RESULT:
            # Only methods declared to return a tensor (`-> Optional[torch.Tensor]`): what
            # another returns (a slot object, a dict entry: Python values to the solve) is
            # no place, and would flow on through the methods called on it.
            if not all(("r", m) in self.tensors for m in methods):
                return ()
            return tuple(("r", m) for m in methods)
        return tuple(self((RESULT_ITEM, m, symbol[2]))[0] for m in methods)


def methods_of_class(graph, ref: str) -> tuple:
    """The methods (`Cls.m`) a call `obj.m()` with `obj` of class `Cls` runs (`ref`: "Cls.m"),
    as the call graph resolves it; () where it resolves to no method of the repository."""
    targets, _ = graph.resolve(ref)
    return tuple(t for t in targets if "." in t)


def _expand_flow(local: int, symbols: tuple, expanded: dict, resolve) -> tuple[int, tuple]:
    """A flow's places and symbols with its symbols expanded (`_expand`): the places a
    resolved symbol stands for (PLACES_OF: an argument's own, `f(torch.zeros(n, device=d))`)
    join the flow's."""
    if not symbols:
        return local, symbols
    symbols = _expand(symbols, expanded, resolve)
    if any(s[0] == PLACES_OF for s in symbols):
        for symbol in symbols:
            if symbol[0] == PLACES_OF:
                local |= symbol[1]
        symbols = tuple(s for s in symbols if s[0] != PLACES_OF)
    return local, symbols


def _expand(symbols: tuple, expanded: dict, resolve) -> tuple:
    """The symbols a flow reads, each that stands for something the whole repository decides
    replaced by what it stands for (memoised in `expanded`): a field read through a class
    (`("A", cls, x)`) by the fields of its family, a method's own parameter (`("p", "Cls.m",
    x)`) by what `_MethodParams` says it reads, an element of a returned tuple and the result
    of a call through a typed object as `_Resolver` says. `resolve` (a `_Resolver`) raises
    `_Unresolved` where it cannot say."""
    out = []
    for symbol in symbols:
        if symbol[0] not in _RESOLVED_SYMBOLS and not (symbol[0] == "p" and "." in symbol[1]):
            out.append(symbol)
            continue
        keys = expanded.get(symbol)
        if keys is None:
            keys = expanded[symbol] = resolve(symbol)
        out.extend(keys)
    return tuple(dict.fromkeys(out))


class _MethodParams:
    """What a method reads its own parameter `x` as (`("p", "Cls.m", x)`): what the calls
    that reach `Cls.m` through its class pass, where some do (as the analysis asks the index
    first, analysis/flow.py `_param_fact`; before, the `hidden_states` a logits head's
    `forward` passed on joined what every `forward` of the repository is given); else, as
    before, what the calls of the name `m` pass. (Reading nothing where many unrelated
    classes define an `m`, as the analysis does for a method's own parameter, also dropped
    the Python values and numpy arrays those joins bring, which let a tensor method resolve
    a name also given host tensors: on vLLM's v1 it lost 8 default findings, 5 of them true.)"""

    def __init__(self, targets: set) -> None:
        self.targets = targets

    def keys(self, symbol: tuple) -> tuple:
        if symbol in self.targets:
            return (symbol,)
        return (("p", symbol[1].rpartition(".")[2], symbol[2]),)


class _SolvedTargets:
    """The targets the last full solve's flows give something (its state: key ids and the
    offsets of each key's flows), as a set."""

    def __init__(self, ids: dict, offsets) -> None:
        self.ids, self.offsets = ids, offsets

    @staticmethod
    def count(ids: dict, offsets, key: tuple) -> int:
        k = ids.get(key)
        return 0 if k is None else offsets[k + 1] - offsets[k]

    def __contains__(self, key: tuple) -> bool:
        return self.count(self.ids, self.offsets, key) > 0


def _bare(symbols: tuple) -> tuple:
    """A method's own parameters (`("p", "Cls.m", x)`) also by the method's name: the relay of
    loop elements and number parameters keys parameters so, and reads both (the calls through
    the class give the first, the calls by name the second)."""
    if not any(s[0] == "p" and "." in s[1] for s in symbols):
        return symbols
    out = []
    for s in symbols:
        out.append(s)
        if s[0] == "p" and "." in s[1]:
            out.append(("p", s[1].rpartition(".")[2], s[2]))
    return tuple(dict.fromkeys(out))


def _conclude(flows: list, tensors, tupled, own_flows, loop_flows, lines, mirrored, definitions) -> tuple:
    """The facts the solved flows give: (facts, typed fields, the example each target's
    explanation cites, the plain fixpoint, the final solution). `definitions`: how many
    functions of the repository have each name."""
    value = _fixpoint(flows)
    value0 = value
    # The vote reads flows into one thing: a field of a class family, or a parameter or the
    # result of a function whose name few functions share (not `forward`'s `x` of every
    # model, nor a field keyed by its name alone).
    voters = {t for t in tensors if t[0] == "A" or (t[0] in ("p", "r") and _votes(definitions.get(t[1], 0)))}
    voters |= _passed_on(flows, voters, tensors, definitions)
    value, dominant = _dominant(flows, value, voters)
    # The example an explanation cites: the first flow (in file order) that gives the target
    # a device tensor alone, else the first that gives it one.
    first_device: dict[tuple, str] = {}
    mixed: dict[tuple, str] = {}
    for target, local, symbols, where in flows:
        if target not in first_device and value.get(target, 0) & DEVICE:
            mask = _mask_of(local, symbols, value)
            if mask == DEVICE:
                first_device[target] = where
            elif mask & DEVICE:
                mixed.setdefault(target, where)
    first_device = {**mixed, **first_device}
    facts: dict[tuple, tuple[int, str]] = {}
    # key -> how its reason cites flows (`_written`); a typed field's by ("A", class, field).
    citations: dict[tuple, tuple] = {}

    def written(key, make) -> str:
        text, citation = _written(make, lines)
        if citation is not None:
            citations[key] = citation
        return text

    _relay, relay_cites = _loop_numbers(own_flows, loop_flows, value, tensors, lines, definitions)
    for key, (prefix, where) in relay_cites.items():
        facts[key] = (DEVICE | SCALAR, written(key, lambda fo: _relay_fact(prefix, where, fo)[1]))
    typed: dict[tuple, tuple[int, str]] = {}
    for key, mask in value.items():
        if key[0] == "A":
            typed[(key[1], key[2])] = (mask, written(key, lambda fo: _cite(first_device.get(key), fo)))
            continue
        if key in tupled or key in facts:
            continue
        if mask & DEVICE and key in tensors:
            # Only where the repository also declares it a tensor (`x: torch.Tensor` as a
            # field, a parameter or a return type): the DEVICE of an untyped object (a config,
            # a submodule) is too often a guess of the screen's "may" model.
            if key in dominant:
                facts[key] = (DEVICE, written(key, lambda fo: _dominant_reason(key, dominant[key], fo)))
            elif not mask & _HOST_DATA:
                facts[key] = (DEVICE, written(key, lambda fo: _device_reason(key, first_device.get(key), fo)))
            else:
                # The name holds a device tensor in one place and host data or a Python value
                # in another (`seq_lens` of a metadata class and of a request): which one a use
                # reads, the name does not say. Low: shown with --min-confidence low only.
                beside_mirror = key[0] == "a" and key[1] in mirrored
                facts[key] = (_ambiguous(mask, "", beside_mirror)[0], written(key, lambda fo: _ambiguous(
                    mask,
                    f"{_what(key)} is given device tensors (e.g. {_where(first_device.get(key), fo)}) but also {_other(mask)} in the repository",
                    mirrored=beside_mirror,
                )[1]))
        elif mask in (HOST, NUMPY, LIST, HOST | NUMPY):
            facts[key] = (mask, f"{_what(key)} is given only host data in the repository")
    for name, mirror in mirrored.items():
        key = ("a", name)
        mask = value.get(key, 0)
        if key not in facts:
            reason = f"field `{name}` sits beside its host mirror `{mirror}` (inferred: `{name}` is the device copy)"
            if not mask & _HOST_DATA:
                facts[key] = (DEVICE, reason)
            else:
                # A name also given host data or Python values somewhere (`self.x = 0`, `x:
                # list[int]` in another class): the index keys fields by name, and
                # `num_tokens` beside `num_tokens_cpu` in one class says little of the
                # `num_tokens: int` of every other class. Low.
                facts[key] = _ambiguous(mask, f"{reason[:-1]}; the name also holds {_other(mask)} elsewhere)", mirrored=True)
    # The functions whose result is made of their parameters alone (one definition of the
    # name): a call gives where its own arguments are (`Facts.passes`).
    for key in sorted(k for k in tensors if k[0] == PASSES_THROUGH):
        if definitions.get(key[1], 0) == 1:
            facts[(PASSES_THROUGH, key[1])] = (len(key[2]), ",".join(f"{p}:{n}" for p, n in key[2]))
    _SYSTEM[0] = _SYSTEM[1] = None
    return facts, typed, citations, value0, value


def _fingerprint(values: dict, graph: dict, classes: tuple = ({}, (), {}, {}, {}), arguments: dict | None = None,
                 crowded: frozenset = frozenset(), orphans: frozenset = frozenset(), methods: dict | None = None) -> str:
    # repr, not marshal: the same facts read back from disk must give the same fingerprint.
    typed, declared, bases, field_types, returns = classes
    blob = repr((sorted(values.items()), sorted(graph.items()), sorted((k, v[0]) for k, v in typed.items()),
                 sorted(tuple(d) for d in declared), sorted((k, tuple(v)) for k, v in bases.items()),
                 sorted(field_types.items()), sorted(returns.items()), sorted((arguments or {}).items()), sorted(crowded), sorted(orphans),
                 sorted((methods or {}).items())))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


_MARK = "\x00"


class _Citing:
    """`flows_of` for writing a reason once as a template: every flow the reason cites reads
    as a placeholder line and is recorded with its real line (`_written`), so that the reason
    can be written again after an edit moves the flow to another line or place (`_recited`)."""

    def __init__(self, lines) -> None:
        self.lines, self.cited = lines, []

    def get(self, path, default=()):
        return _CitedFile(self, path, self.lines.get(path, ()))


class _CitedFile:
    __slots__ = ("citing", "path", "flows")

    def __init__(self, citing: _Citing, path: str, flows) -> None:
        self.citing, self.path, self.flows = citing, path, flows

    def __len__(self) -> int:
        return len(self.flows)

    def __getitem__(self, index: int) -> tuple:
        cited = self.citing.cited
        cited.append((self.path, index, self.flows[index][3]))
        return (None, None, None, f"{_MARK}{len(cited) - 1}{_MARK}")


def _written(make, lines) -> tuple[str, tuple | None]:
    """(text, citation): what `make(flows_of)` writes with the lines of `lines`, and, where it
    cites flows, (template, ((path, index, line), ...)) to write it again (`_recited`)."""
    citing = _Citing(lines)
    template = make(citing)
    if not citing.cited:
        return template, None
    return _filled(template, citing.cited), (template, tuple(citing.cited))


def _filled(template: str, cited) -> str:
    for n, (_path, _index, line) in enumerate(cited):
        template = template.replace(f"{_MARK}{n}{_MARK}", str(line))
    return template


def _recited(citation: tuple, places: dict, flows_of) -> tuple[str, tuple]:
    """A citation written again after edits: `places` (path -> old place -> new place of the
    flows that moved; an unlisted place kept) and `flows_of` (path -> the new summary's flows)
    of the edited files."""
    template, cited = citation
    moved = []
    for path, index, line in cited:
        if path in places:
            index = places[path].get(index, index)
            flows = flows_of.get(path, ())
            line = flows[index][3] if index < len(flows) else line
        moved.append((path, index, line))
    return _filled(template, moved), (template, tuple(moved))


def _cite(example, flows_of) -> str:
    """`file.py:LINE` of a flow (path, index), "" when there is none."""
    if example is None:
        return ""
    path, index = example
    flows = flows_of.get(path, ())
    return f"{os.path.basename(path)}:{flows[index][3]}" if index < len(flows) else ""


def _where(example, flows_of) -> str:
    if example is not None:
        path, index = example
        flows = flows_of.get(path, ())
        if index < len(flows):
            return f"{os.path.basename(path)}:{flows[index][3]}"
    return "?"


def _device_reason(key: tuple, example, flows_of) -> str:
    return f"{_what(key)} is given only device tensors in the repository (e.g. {_where(example, flows_of)})"


def _shape(summary: tuple) -> tuple:
    """A summary without its line numbers and its words (`name_references`, which only take
    functions off `Facts.orphans`: `moved_lines`): what the solve's places depend on."""
    return (tuple(flow[:3] for flow in summary[0]), *summary[1:6])


def moved_lines(facts: Facts, changed: dict[str, tuple]) -> Facts:
    """The facts after edits that changed no summary but its line numbers and words
    (`changed`: path -> new summary): the same places; the citations into those files are
    written again."""
    # The functions the changed files now name are no longer unused (`unused`).
    orphans = unused(facts.orphans, [summary[6] for summary in changed.values()])
    flows_of = {path: summary[0] for path, summary in changed.items()}
    values, typed, examples = _recite_all(facts.values, facts.classes[0], facts.examples, {path: {} for path in changed}, flows_of)
    if values is facts.values and typed is facts.classes[0] and orphans == facts.orphans:
        return facts  # a comment or a string edited: nothing the facts say moved
    classes = (typed, *facts.classes[1:])
    return replace(facts, values=values, classes=classes, examples=examples, orphans=orphans,
                   fingerprint=_fingerprint(values, facts.callers, classes, facts.arguments, facts.crowded, orphans, facts.methods))


def _recite_all(values: dict, typed: dict, citations: dict, places: dict, flows_of) -> tuple[dict, dict, dict]:
    """(values, typed fields, citations) with every reason that cites a flow of the edited
    files (`places`: path -> old place -> new place of its flows that moved) written again;
    the same objects where none does."""
    values_now, typed_now, citations_now = values, typed, citations
    for key, citation in citations.items():
        if not any(path in places for path, _, _ in citation[1]):
            continue
        text, citation_now = _recited(citation, places, flows_of)
        if citation_now == citation:
            continue
        if citations_now is citations:
            values_now, typed_now, citations_now = dict(values), dict(typed), dict(citations)
        citations_now[key] = citation_now
        if key[0] == "A":
            typed_now[(key[1], key[2])] = (typed_now[(key[1], key[2])][0], text)
        elif key in values_now:
            values_now[key] = (values_now[key][0], text)
    return values_now, typed_now, citations_now


def _mask_of(local: int, symbols: tuple, value: dict) -> int:
    mask = local
    for symbol in symbols:
        mask |= value.get(symbol, 0)
    return mask & PLACES


def _fixpoint(flows: list[tuple], pinned: dict | None = None) -> dict[tuple, int]:
    """The least solution of `target >= local | symbols` over every flow: a worklist, so a
    flow is evaluated again only when a symbol it reads has grown (each grows at most once
    per place bit). `pinned` targets hold a device tensor whatever flows into them.

    Flows that read nothing are joined per target first, and flows that say the same (the
    same target, places and symbols: one per call site of a popular function) are evaluated
    once; the least solution does not depend on either. The system is kept for the next call
    with the same flows (`_dominant` solves them again with more targets pinned)."""
    const, constraints, readers = _system(flows)
    value: dict[tuple, int] = {t: m for t, m in const.items() if m}
    if pinned:
        for target in pinned:
            value[target] = DEVICE
    queued = [True] * len(constraints)
    pending = list(range(len(constraints) - 1, -1, -1))  # popped from the end: file order first
    get = value.get
    while pending:
        index = pending.pop()
        queued[index] = False
        target, mask, symbols = constraints[index]
        if pinned and target in pinned:
            continue
        for symbol in symbols:
            mask |= get(symbol, 0)
        mask &= PLACES
        old = get(target, 0)
        if mask | old != old:
            value[target] = mask | old
            for reader in readers.get(target, ()):
                if not queued[reader]:
                    queued[reader] = True
                    pending.append(reader)
    return value


_SYSTEM: list = [None, None]  # [flows, (constant places per target, distinct flows that read symbols, their readers)]


def _system(flows: list[tuple]) -> tuple:
    if _SYSTEM[0] is flows:
        return _SYSTEM[1]
    const: dict[tuple, int] = {}
    seen: dict[tuple, int] = {}
    constraints: list[tuple] = []
    for target, local, symbols, _ in flows:
        if symbols:
            key = (target, local & PLACES, symbols)
            if key not in seen:
                seen[key] = len(constraints)
                constraints.append(key)
        elif target in const:
            const[target] |= local & PLACES
        else:
            const[target] = local & PLACES
    readers: dict[tuple, list[int]] = {}
    for index, (_, _, symbols) in enumerate(constraints):
        for symbol in symbols:
            found = readers.get(symbol)
            if found is None:
                readers[symbol] = [index]
            else:
                found.append(index)
    _SYSTEM[0], _SYSTEM[1] = flows, (const, constraints, readers)
    return _SYSTEM[1]


# A declared tensor given device tensors by at least this many flows, and by at least this
# many times as many as give it anything else (or by one flow where no flow gives it anything
# else alone), holds the device tensor (`_dominant`).
_DOMINANT_MIN = 2
_DOMINANT_RATIO = 3
# ... when its function's name is shared by at most this many functions of the repository.
_DOMINANT_MAX_NAMESAKES = 3


def _dominant(flows: list[tuple], value: dict, tensors: set) -> tuple[dict, dict]:
    """Targets declared tensors (`seq_lens: torch.Tensor` as a field, a parameter, a return)
    that nearly every flow gives a device tensor, read as device tensors, and the solve
    again with them pinned.

    The solve joins every value a target is given, so one odd assignment anywhere (`batch.x =
    max_len` in a rarely used backend, a flow the screen could not tell apart) makes a field
    and, through it, every parameter it is passed to, "device or host" for good. Here each
    flow votes with what it alone gives: a device tensor and no host data (a Python value
    beside it is no host tensor), or no device tensor at all; flows that give both abstain.
    A declared tensor with `_DOMINANT_MIN` or more device votes and at most a
    `_DOMINANT_RATIO`-th as many others (or device votes and no other) is pinned to the
    device, and what it flows into is solved again (a few rounds: each pins more). Returns the new solution and
    target -> (device votes, other votes, an example of each)."""
    pinned: dict[tuple, tuple] = {}
    for _ in range(4):
        tally: dict[tuple, list] = {}
        for target, local, symbols, where in flows:
            if target in pinned or target not in tensors:
                continue
            # A flow that reads its own target back (`cu = self.cu if ready else self.cu.to("cpu",
            # non_blocking=True)`, then `Tensors(cu=cu)`) votes with what it adds: the
            # target's own value is no evidence of where it lives.
            own = tuple(s for s in symbols if s != target) if symbols else symbols
            mask = _mask_of(local, own, value) if own else local & PLACES
            if not mask:
                continue
            votes = tally.get(target)
            if votes is None:
                votes = tally[target] = [0, 0, None, None]
            # A device tensor or a Python value (`req_to_token` of a pool some subclass sets to
            # a number) is no host tensor: a device vote. Host data beside a device tensor abstains.
            if mask & DEVICE and not mask & _HOST_TENSORS:
                votes[0] += 1
                votes[2] = votes[2] or where
            elif not mask & DEVICE:
                votes[1] += 1
                votes[3] = votes[3] or where
        found = {
            target: tuple(votes)
            for target, votes in tally.items()
            if value.get(target, 0) & _HOST_DATA and value[target] & DEVICE
            and (votes[0] >= _DOMINANT_MIN and votes[0] >= _DOMINANT_RATIO * votes[1] or votes[0] and not votes[1])
        }
        if not found:
            break
        pinned.update(found)
        value = _fixpoint(flows, pinned)
    return value, pinned


def _passed_on(flows: list, voters: set, tensors, definitions) -> set:
    """Parameters a function passes on as they are to a parameter declared a tensor
    (`def gather_logprobs(logprobs, ids): return gather_logprobs_raw(logprobs, ids)` with
    `gather_logprobs_raw(logprobs: torch.Tensor, ...)`): the code says they hold a tensor too,
    so they vote as declared tensors do (`_dominant`), through chains of such wrappers. Not
    a parameter declared a number, nor one of a name many functions share."""
    relays = [(target, symbols[0]) for target, local, symbols, _ in flows
              if not local and len(symbols) == 1 and target[0] == "p" and symbols[0][0] == "p"]
    found: set = set()
    known = set(voters)
    changed = True
    while changed:
        changed = False
        for target, symbol in relays:
            if target in known and symbol not in known and ("n", *symbol[1:]) not in tensors and _votes(definitions.get(symbol[1], 0)):
                known.add(symbol)
                found.add(symbol)
                changed = True
    return found


def _votes(namesakes: int) -> bool:
    """Whether the parameters and result of a function whose name `namesakes` functions
    of the repository have are put to the vote of `_dominant`."""
    return namesakes <= _DOMINANT_MAX_NAMESAKES


def _dominant_reason(key: tuple, votes: tuple, flows_of) -> str:
    device, other, device_example, other_example = votes
    others = f", other values in {other} (e.g. {_where(other_example, flows_of)})" if other else ""
    return (f"{_what(key)} is declared a tensor and given device tensors in {device} places (e.g. "
            f"{_where(device_example, flows_of)}){others}, and values that may be either elsewhere: read as the device tensor it mostly holds")


def _agreed_parameter(signatures, slot: int) -> str | None:
    """The parameter a positional argument at `slot` fills when calls resolve by name only:
    the name nearly every signature of that name gives the position (4 in 5 of those long
    enough), else None (`add_request(request, ...)` and `add_request(req_idx: int, ...)` in
    two classes do not say which one a call reaches)."""
    names = [params[slot] for params in signatures if slot < len(params)]
    if not names:
        return None
    best = max(set(names), key=names.count)
    return best if names.count(best) * 5 >= len(names) * 4 else None


def _loop_numbers(own_flows, loop_flows, value, tensors, lines, definitions) -> tuple[dict, dict]:
    """Parameters annotated a Python number that may hold a 0-dim device tensor: a caller
    passes the element of a loop over a tensor that may be on the device (`for t in
    sched.timesteps: sched.step(out, t, x)` with `step(..., timestep: int, ...)`; not a loop
    over a list), or a method passes such a parameter (or a value computed from it) on to a
    method of its own object (`self._get_variance(timestep, prev_timestep)`). Where the
    annotation and the callers disagree the value may be either: (DEVICE | SCALAR). An
    element relay into a name several definitions share (`VisionRotaryEmbedding.forward` of
    three models; `definitions`: how many there are of each name) is kept for the module
    whose call gives it, `(FILE_RELAY, module, function, parameter)`: the index knows a class
    by its name, and another model's own call may pass a Python number (`file_relay_fact`).
    Returns (facts, cites): cites is each fact's reason less its citation, and the flow
    (path, index) it cites, so that an edit that moves that flow can cite it again."""
    cites: dict[tuple, tuple[str, tuple]] = {}
    for target, local, symbols, where, *how in loop_flows:
        if how and definitions.get(target[1], 0) > 1:
            key = (FILE_RELAY, module_name(where[0]), *target[1:])
        else:
            key = target
        if key in cites or ("n", *target[1:]) not in tensors:
            continue
        mask = local
        for symbol in symbols:
            given = value.get(symbol, 0)
            if how and given & PLACES == PLACES:
                continue  # a parameter given everything (by a crowded name): it says nothing
            mask |= given
        if how:  # `f(counts[rank])`: what is indexed must be a device tensor, and nothing else
            if mask & PLACES == DEVICE:
                cites[key] = (f"{_what(target)} is annotated a number, but a caller passes it an "
                              f"element or a reduction of a device tensor", where)
        elif mask & DEVICE and not mask & SCALAR:
            # A name that also holds Python numbers (a field that is a list of ints in one
            # class and a device tensor in another, a parameter given everything by a
            # crowded call) says nothing of its elements. A list bit alone does: diffusers'
            # `timesteps: list[int] = None`, rebound to the scheduler's device timesteps.
            cites[target] = (f"{_what(target)} is annotated a number, but a caller passes it the "
                             f"element of a loop over a tensor that may be on the device", where)
    changed = bool(cites)
    while changed:
        changed = False
        for target, _local, symbols, where in own_flows:
            if target in cites or ("n", *target[1:]) not in tensors:
                continue
            source = next((s for s in symbols if s in cites), None)
            if source is not None:
                cites[target] = (f"{_what(target)} is annotated a number, but a caller passes on "
                                 f"{_what(source)}, which may be a device tensor", where)
                changed = True
    return {key: _relay_fact(prefix, where, lines) for key, (prefix, where) in cites.items()}, cites


# A number parameter's element relay kept for the module whose own call gives it
# (`_loop_numbers`): (FILE_RELAY, module, function, parameter).
FILE_RELAY = "pf"


def file_relay_fact(filename: str, function: str, name: str) -> tuple[int, str] | None:
    """What the calls in the module of `filename` give parameter `name` of `function`, a
    name several definitions share, where they pass it an element or a reduction of a device
    tensor (`_loop_numbers`)."""
    return FACTS.get((FILE_RELAY, module_name(filename), function, name))


def _relay_fact(prefix: str, where: tuple, lines) -> tuple[int, str]:
    return DEVICE | SCALAR, f"{prefix} ({_where(where, lines)})"


def _other(mask: int) -> str:
    return "host data" if mask & (HOST | NUMPY) else "Python values"


def _ambiguous(mask: int, reason: str, mirrored: bool = False) -> tuple[int, str]:
    """A device fact of weak evidence. Where the name's other values are Python values only
    (or it is a field beside a host mirror), a tensor method called on it resolves it; where
    they include numpy arrays, only a method numpy does not have (`.cpu()`, `.device`): read
    as the device tensor the callers mostly give (host tensors among them, an allocator's
    `free(index)` called with a host index somewhere, do not veto it)."""
    if mask & NUMPY:
        return DEVICE | AMBIGUOUS | RESOLVABLE, f"{reason}: {RESOLVABLE_NOTE_TORCH_ONLY}"
    if mirrored or not mask & HOST:
        return DEVICE | AMBIGUOUS | RESOLVABLE, f"{reason}: {RESOLVABLE_NOTE}"
    return DEVICE | AMBIGUOUS, f"{reason}: low"


def _mirrored(summaries) -> dict[str, str]:
    """Names held beside their host mirror (`x` and `x_cpu` in one class or parameter list)."""
    out: dict[str, str] = {}
    for _, _, mirrors, *_ in summaries.values():
        for names in mirrors:
            present = set(names)
            for name in names:
                for suffix in MIRROR_SUFFIXES:
                    if name.endswith(suffix) and name[: -len(suffix)] in present:
                        stem = name[: -len(suffix)]
                        if not convention(stem):
                            out.setdefault(stem, name)
    return out


def _what(key: tuple) -> str:
    if key[0] == "a":
        return f"field `{key[1]}`"
    if key[0] == "p":
        return f"parameter `{key[2]}` of `{key[1]}()`"
    if key[0] == RESULT_ITEM:
        return f"element {key[2]} of the tuple `{key[1]}()` returns"
    return f"the result of `{key[1]}()`"


# --- finding the repository and reading it once ------------------------------------------------


def find_root(paths) -> Path | None:
    """The project root above the linted paths: the nearest folder with a marker. Without one,
    a file in an installed package (under site-packages, a namespace package's folders
    included) belongs to the whole package, and a folder
    named on the command line is read as it is (it is linted whole anyway); a loose file in a
    folder that is neither has no repository: its folder and everything below it (a home
    folder, /tmp) is not read to lint one script."""
    roots = []
    for path in paths:
        current = Path(path).resolve()
        is_file = current.is_file() or not current.exists()
        if is_file:
            current = current.parent
        marked = _marked_folder(str(current))
        if marked:
            roots.append(Path(marked))
        else:
            installed = _installed_top(current)
            top = _package_top(str(current)) if installed is None else ""
            if installed is not None:  # a package (namespace packages too) in site-packages
                roots.append(installed)
            elif top:  # the top of the package the path is in
                roots.append(Path(top))
            elif not is_file:
                roots.append(current)
    if not roots:
        return None
    common = Path(os.path.commonpath([str(r) for r in roots]))
    return common if common != Path(common.anchor) else None


_INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages"})


def _installed_top(folder: Path) -> Path | None:
    """The top-level package folder under `site-packages` that `folder` is in (a namespace
    package has no `__init__.py` to walk up by), or None outside an install folder."""
    for child, parent in zip((folder, *folder.parents), folder.parents):
        if parent.name in _INSTALL_FOLDERS:
            return child
    return None


def python_files(root: Path) -> list[str]:
    """The project's Python files, without tests and benchmarks (by the folder and file names
    synclint/analysis/tier.py reads as such): what they pass and assign is not what the
    project's own code is given, and generated test tables are the slowest files to read."""
    from synclint.analysis.pathkinds import TEST_FILE, TEST_FOLDERS

    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".") and d.lower() not in TEST_FOLDERS)
        for name in sorted(files):
            if name.endswith(".py") and not TEST_FILE.match(name.lower()):
                out.append(os.path.join(folder, name))
    return out


def store_folder() -> Path:
    """Summaries are stored by content hash, shared by every checkout of a project on this
    machine (a branch switch or a second worktree reads them back)."""
    explicit = os.environ.get("SYNCLINT_INDEX_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "synclint" / "index"


def _summarize_file(job: tuple) -> tuple[str, tuple | None, tuple | None]:
    """(path, summary, (size, mtime_ns, digest)) for one file; the summary from the store
    when its content was summarised before."""
    path, folder, known = job
    try:
        st = os.stat(path)
        if st.st_size > MAX_FILE_BYTES:
            return path, None, None
        stat = (st.st_size, st.st_mtime_ns)
        digest = known[2] if known is not None and tuple(known[:2]) == stat else None
        data = None
        if digest is None:
            with open(path, "rb") as handle:
                data = handle.read()
            digest = hashlib.sha256(_CODE.encode() + b"\0" + data).hexdigest()
    except OSError:
        return path, None, None
    stored = os.path.join(folder, digest[:2], digest[2:]) if folder else None
    if stored is not None:
        try:
            with open(stored, "rb") as handle:
                return path, marshal.loads(handle.read()), (*stat, digest)
        except (OSError, ValueError, EOFError, TypeError):
            pass
    if data is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return path, None, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    summary = summarize(text)
    if stored is not None:
        _write(stored, marshal.dumps(summary))
    return path, summary, (*stat, digest)


_CODE = ""


# The modules a summary is computed with (tests/test_index_store.py checks the list against
# what summarising a file imports).
SUMMARY_MODULES = ("repo.py", "lines.py", "analysis/astwalk.py", "analysis/coldcode.py", "analysis/guards.py", "analysis/platform_words.py",
                   "screen/places.py", "screen/facts.py", "screen/__init__.py", "apis/torch_api.py",
                   "apis/tensor_members.py", "analysis/receivers.py", "analysis/host_fields.py")


def _index_code() -> str:
    """A hash of the modules a summary depends on (this one, the screen's evaluator and its
    tables): editing a rule does not throw the stored summaries away."""
    package = Path(__file__).resolve().parent
    h = hashlib.sha256(INDEX_VERSION.encode())
    for rel in SUMMARY_MODULES:
        try:
            h.update((package / rel).read_bytes())
        except OSError:
            h.update(rel.encode())
    return h.hexdigest()[:16]


def _write(path: str, blob: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass


def _read(path: str):
    try:
        with open(path, "rb") as handle:
            return marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def build(root: Path, use_cache: bool = True, jobs: int = 1) -> Facts:
    """Summarise every Python file under `root` (from the store where seen before) and solve.
    A warm run stats the files (their digests are kept per root) and reads the solved facts
    back when no file changed."""
    global _CODE
    _CODE = _index_code()
    started = time.time_ns()
    folder = str(store_folder()) if use_cache else None
    files = python_files(root)
    tag = hashlib.sha256(f"{INDEX_VERSION}|{_CODE}|{root}".encode()).hexdigest()[:24]
    stats = (_read(os.path.join(folder, "roots", tag)) if folder else None) or {}
    if not isinstance(stats, dict):
        stats = {}
    if folder:
        from synclint import index_store

        index_store.touch(folder, tag)  # in use: a concurrent prune keeps it
    if folder and len(files) == len(stats):
        # Nothing added or removed: when no file's stat changed, the solved facts are kept.
        changed: list[str] = []
        for path in files:
            known = stats.get(path)
            try:
                st = os.stat(path)
            except OSError:
                changed = files
                break
            if known is None or known[0] != st.st_size or known[1] != st.st_mtime_ns:
                changed.append(path)
                if len(changed) > _MAX_PATCHED:
                    break
        if len(changed) <= _MAX_PATCHED:
            facts = _reuse(root, folder, tag, stats, changed, started, files)
            if facts is not None:
                index_store.keep_bounded(folder, tag)
                return facts
    results = _summarize_many([(f, folder, stats.get(f)) for f in files], jobs)
    summaries = {path: summary for path, summary, _ in results if summary is not None}
    state: dict | None = {} if folder else None
    facts = solve(summaries, state)
    if folder:
        _save(folder, tag, {p: st for p, _, st in results if st is not None}, facts, started)
        _save_state(folder, tag, state, {p: st[2] for p, _, st in results if st is not None}, facts)
        index_store.keep_bounded(folder, tag)
    return facts


# At most this many changed files are compared with their last summary before solving again.
_MAX_PATCHED = 16


_FACTS_FIELDS = 10


def _facts_blob(facts: Facts) -> tuple:
    """What is stored of solved facts (read back by `_facts_of`)."""
    return (facts.values, facts.fingerprint, facts.callers, facts.examples, facts.vendored, facts.classes, facts.arguments, facts.crowded,
            facts.orphans, facts.methods)


def _facts_of(blob: tuple) -> Facts:
    values, fingerprint, callers, examples, vendored, classes, arguments, crowded, orphans, methods = blob
    return Facts(values, fingerprint, callers, examples=examples, vendored=vendored, classes=classes, arguments=arguments, crowded=crowded,
                 orphans=orphans, methods=methods)


def _save(folder: str, tag: str, stats: dict, facts: Facts, started: int) -> None:
    # A file modified just before this run may change again within the same mtime tick and
    # size: its stat is not trusted next time (its content is hashed again).
    trusted = {p: (st if st[1] < started - RACY_WINDOW_NS else (-1, *st[1:])) for p, st in stats.items()}
    _write(os.path.join(folder, "roots", tag), marshal.dumps(trusted))
    _write(os.path.join(folder, "facts", tag), marshal.dumps(_facts_blob(facts)))


def _reuse(root: Path, folder: str, tag: str, stats: dict, changed: list[str], started: int, files: list[str]) -> Facts | None:
    """The last solve's facts, when the files whose stat changed have the same summary as
    before (a touch, an edit inside a function that assigns nothing new) or one that differs
    only in line numbers (the citations are patched); else the facts solved again from the last
    full solve for what the changed summaries reach (`_incremental`); None when the repository
    must be solved whole."""
    solved = _read(os.path.join(folder, "facts", tag))
    if not (isinstance(solved, tuple) and len(solved) == _FACTS_FIELDS):
        return None
    facts = _facts_of(solved)
    if not changed:
        return facts
    moved: dict[str, tuple] = {}
    reshaped: dict[str, tuple] = {}
    stats = dict(stats)
    for path in changed:
        old = stats.get(path)
        before = _read(os.path.join(folder, old[2][:2], old[2][2:])) if old is not None and len(old) == 3 else None
        _, summary, stat = _summarize_file((path, folder, old))
        if before is None or summary is None or stat is None:
            return None
        stats[path] = stat
        if summary == before:
            continue
        if _shape(summary) != _shape(before):
            reshaped[path] = summary
        moved[path] = summary
    if reshaped:
        digests = {p: st[2] for p, st in stats.items() if len(st) == 3}
        facts = _incremental(folder, tag, files, digests, moved)
        if facts is None:
            return None
    elif moved:
        facts = moved_lines(facts, moved)
    _save(folder, tag, stats, facts, started)
    return facts


def _summarize_many(paths: list[tuple], jobs: int) -> list[tuple]:
    if jobs > 1 and len(paths) > 64:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from synclint.runner import _die_with_parent

        try:
            # The workers end with the run, even one killed with SIGKILL (they were left
            # waiting on their queue); a run ended by SIGTERM waits only for the chunks
            # being summarised, not for the whole repository.
            pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_die_with_parent)
        except Exception:  # noqa: BLE001 - a pool that cannot start: do it here
            pool = None
        if pool is not None:
            try:
                return list(pool.map(_summarize_file, paths, chunksize=32))
            except Exception:  # noqa: BLE001 - a worker that died: do it here
                pass
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    return [_summarize_file(p) for p in paths]


# --- solving again after an edit: only what the edit can reach --------------------------------------
#
# A full solve keeps its state (`_save_state`): every flow after resolution, interned, with the
# flows of each target and the flows that read each symbol, the plain fixpoint and the final
# solution of every target, and the repository's tables counted per file. After an edit that
# changes summaries, `_incremental` starts from that state: the targets whose flows changed
# (what they give, or their order) or whose declarations changed, and every target that reads
# them, transitively, are solved again by the same code (`_conclude`) over their flows alone,
# each symbol outside them read as the constant it was solved to; so are the targets whose flows
# only moved to other lines (their solution is the same, what their explanations cite is not).
# That is the full solve's answer, exactly:
# - what lies outside the re-solved targets reads nothing inside them whose solution changes
#   (they are closed under readers) and its flows did not change, so its solution did not change;
# - inside, a flow reads an outside symbol through its final value; the votes of `_dominant`
#   read values as they were in each of its rounds, and a round only lowers values (a pinned
#   target keeps its device bit and loses the rest), so a symbol whose plain fixpoint equals its
#   final value held it in every round; when one read from outside does not, the repository is
#   solved whole;
# - an edit that changes how other files' flows resolve (the signatures of a function some file
#   calls, a class, the fields of a class family, the relay of loop elements, a host mirror) or
#   that reaches more than `_MAX_INCREMENTAL_TARGETS` targets is solved whole too.
# The state is that of the last full solve; each later run starts from it with every file
# changed since (at most `_MAX_PATCHED`).

_STATE_VERSION = "state-3"
_MAX_INCREMENTAL_TARGETS = 4000
_CALL_TARGETS = ("P", "p", "LP", "Lp", "EP", "Ep", "SP", "Sp", "AP", "AK")
_RELAY_TARGETS = ("LP", "Lp", "EP", "Ep", "SP", "Sp", "QE", "Qe")


def _contributions(path: str, summary: tuple) -> tuple:
    """What one file adds to the repository's tables: (signatures, functions its calls target,
    tuple results, declared tensors, call edges, whether it relays loop elements, defined
    names, whether it is vendored), counted so that a file's share can be taken back."""

    flows, sigs, _mirrors, declared, edges, *_ = summary
    targeted: Counter = Counter()
    tupled: Counter = Counter()
    relays = False
    for target, *_ in flows:
        kind = target[0]
        if kind in _CALL_TARGETS:
            targeted[target[1]] += 1
            relays = relays or kind in _RELAY_TARGETS
        elif kind == "rt":
            tupled[("r", target[1])] += 1
    return (Counter(sigs), targeted, tupled, Counter(declared), Counter(_file_edges(path, edges)), relays, Counter(k for k, _ in sigs),
            _vendored(path))


# The marks the call graph reads beside the calls (`_CallGraph.graph`): `("~", HOST_MARK, f)`,
# function `f` is defined in a host-side pre-processing file; `("~", FIELD_MARK + f, kind)`, a
# value of that kind (synclint/analysis/guards.py `field_values`) is assigned to field `f`.
MARK_CALLER = "~"
HOST_MARK = "~host"
# `("~", WORKER_MARK, f)`: the module hands its function `f` to an executor
# (`pool.submit(f, ...)`, `loop.run_in_executor(pool, f)`, `asyncio.to_thread(f)`): `f` runs
# off the serving thread, and what only it reaches too. `("~", THREAD_MARK, f)`: it runs `f`
# as a thread's target (`Thread(target=self._loop)`), off the serving thread unless `f`
# reaches the model itself (`_CallGraphTiers._serving_loop`).
WORKER_MARK = "~worker"
THREAD_MARK = "~thread"
# `("~", SCRIPT_MARK, f)`: the module's `if __name__ == "__main__":` block calls its function
# `f` (`main()`): a script's entry, run by hand; where nothing else calls `f`, what only it
# reaches is cold.
SCRIPT_MARK = "~script"
# `("~", HANDLER_MARK, m)`: the module registers method `m` in a table keyed by message
# types (coldcode.dispatch_handlers): it runs once per message of its kind, not every step.
HANDLER_MARK = "~handler"
# `("~", HELD_MARK + F, ref)`: the module stores function `ref` in a field `F` named for
# functions (`postprocess_text_funcs = field(default_factory=lambda: (llama_postprocess,))`,
# `Config(preprocess_fn=resize)`); a function's read of `.F` is the edge `HELD_CALL + F`,
# which reaches every function stored there (coldcode.callable_field).
HELD_MARK = "~held:"
HELD_CALL = "@"
# `("~", WORKER_PARAM_MARK, "f:1:run")`: function `f` hands its parameter `run` (the second
# after `self`) to a thread or executor; `("~", PASSED_FUNCTION_MARK, "f:1::Cls.m")`: a call
# of `f` passes method `m` of class `Cls` there (coldcode.handed_on_workers).
WORKER_PARAM_MARK = "~wparam"
PASSED_FUNCTION_MARK = "~passed"
FIELD_MARK = "~f:"
# `("~", BUILT_MARK + Cls, guard)`: the module calls `Cls(...)` on a branch that runs on the
# platforms of `guard` (`%xpu`; "" everywhere), or uses the name another way (`guards.ANY_USE`).
BUILT_MARK = "~new:"
# `(f, BUILDER_MARK + Cls, "")`: function `f` builds `Cls` (`Cls(...)`): a class only code
# nothing runs builds is never built (`_CallGraphTiers._unbuilt`).
BUILDER_MARK = "~by:"
# `("~", KEPT_FIELD_MARK, f)`: the module declares multimodal field `f` kept on the host
# (`keep_on_cpu=True`); `DEVICE_FIELD_MARK`, one the framework moves to the device;
# `("~", BASE_MODULE_MARK, "1:qwen2_vl")`: a base of one of its classes is imported from that
# module (synclint/analysis/host_fields.py). `_file_edges` adds the file's path to the mark.
KEPT_FIELD_MARK = "~kept:"
DEVICE_FIELD_MARK = "~moved:"
BASE_MODULE_MARK = "~base:"
_MODULE_MARKS = (KEPT_FIELD_MARK, DEVICE_FIELD_MARK, BASE_MODULE_MARK)
# `("~", SHAPE_MARK + Cls.m, shape)`: the parameters method `m` takes (guards.shape), for the
# calls by name that can bind to them (`_CallGraphTiers._ways_in`).
SHAPE_MARK = "~s:"
# `("~", RECEIVER_MARK + m, "head:caller")`: `caller` calls `m` by name on an object whose
# name ends in `head` ("" for anything else); `UNREACHED_MARK + Cls.m` -> the callers whose
# calls by name of `m` cannot be of a `Cls` (synclint/analysis/receivers.py).
RECEIVER_MARK = "~r:"
UNREACHED_MARK = "~u:"


def _worker_functions(callers: dict) -> frozenset[str]:
    """The functions the repository hands to a thread or executor: directly (`WORKER_MARK`)
    or as an argument of a helper that does (`WORKER_PARAM_MARK`, `PASSED_FUNCTION_MARK`),
    matched by the helper's name and the argument's position or keyword."""
    found = set(callers.get(WORKER_MARK, ()))
    handing: dict[str, set[str]] = {}
    for one in callers.get(WORKER_PARAM_MARK, ()):
        name, position, param = one.split(":", 2)
        handing.setdefault(name, set()).update((position, param) if position != "-1" else (param,))
    if handing:
        for one in callers.get(PASSED_FUNCTION_MARK, ()):
            name, position, keyword, ref = one.split(":", 3)
            ways = handing.get(name)
            if ways and (position in ways if position != "-1" else keyword in ways):
                found.add(ref)
    return frozenset(found)


def _generic_host_methods(tree: ast.Module) -> list[str]:
    """`Cls.m` for the methods of a module-level class that is host-side pre-processing only
    by a generic base (`class VideoProcessor(BaseMultiModalProcessor[Info])`), which the
    class table leaves out of the bases: `_CallGraphTiers._host_side` reads the others."""
    found = []
    for node in tree.body:
        if type(node) is not ast.ClassDef or not any(type(b) is ast.Subscript for b in node.bases):
            continue
        bases = [places._last_name(b.value if type(b) is ast.Subscript else b) for b in node.bases]
        if host_class(node.name, bases):
            found.extend(f"{node.name}.{m.name}" for m in node.body if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef))
    return found


def _marked_folder(folder: str) -> str:
    """The nearest folder at or above `folder` with a project marker (`ROOT_MARKERS`), or ""."""
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in ROOT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return ""
        folder = parent


def _naming_root(folder: str) -> str:
    """The folder a module in `folder` is named from: its project's root (`_marked_folder`);
    without a marker (an unpacked wheel, site-packages), the folder above the top package
    `folder` is in (`_package_top`); "" for a loose folder. One answer for a file however it is given
    (relative to the working folder or absolute), so that the index and the file linted
    name a module alike."""
    marked = _marked_folder(folder)
    if marked:
        return marked
    installed = _installed_top(Path(folder))
    if installed is not None:
        return str(installed.parent)
    top = _package_top(folder)
    return os.path.dirname(top) if top else ""


def _package_top(folder: str) -> str:
    """The highest package folder (one with `__init__.py`) at or above `folder`, climbing
    across namespace folders (no `__init__.py`): `wheel/pkg` for `wheel/pkg/srt/layers/dcp`
    where only `pkg` and `dcp` have one; "" where no folder at or above has one."""
    top = ""
    while True:
        if os.path.exists(os.path.join(folder, "__init__.py")):
            top = folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return top
        folder = parent


_project_root_of = lru_cache(maxsize=4096)(_naming_root)  # asked for every file's edges


def _below_project_root(path: str) -> str:
    """`path` from its project's root (`/home/amd-team/repo/pkg/x.py` -> `pkg/x.py`): the
    folders above the project say nothing of the platforms its files are for."""
    root = _project_root_of(os.path.dirname(os.path.abspath(path)))
    return os.path.relpath(os.path.abspath(path), root) if root else path


def _built_class(func: ast.expr) -> str:
    """`Cls` of a call `Cls(...)` or `module.Cls(...)`, "" for any other call."""
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
    return name if guards.capitalised(name) else ""


def _file_edges(path: str, edges) -> tuple:
    """A file's call edges with what its path adds: the functions it defines, marked host-side
    where the file is pre-processing by its name or folder (`platform_words.host_file`); and
    in a file for other platforms by its name or folder (`platforms/rocm.py`), the classes it
    builds and the registry entries it uses outside any platform branch are built and used on
    those platforms only. A class it uses as a value (`cls=Runner`) may still be built
    anywhere: such uses keep `guards.ANY_USE`."""
    if any(callee in _MODULE_MARKS for caller, callee, _ in edges if caller == MARK_CALLER):
        edges = _module_marks(path, edges)
    platforms = path_platforms(_below_project_root(path))
    if platforms:
        guard = guards.ON_PLATFORMS + "+".join(sorted(platforms))

        def there(arguments: str) -> str:  # "" or a query made outside any branch: on the file's platforms
            return guard if not arguments else arguments + guard if arguments[:1] == guards.QUERY and arguments[-1:] == "\t" else arguments

        def on_platforms(caller: str) -> str:  # the calls of its functions are made on its platforms only
            if not caller or caller == MARK_CALLER or caller.endswith((COLD_CALLER, UNTAKEN_CALLER)):
                return caller
            if GUARDED_CALLER in caller:
                return f"{caller[:-1]};{guard}]"
            return f"{caller}{GUARDED_CALLER}{guard}]"

        edges = tuple((caller, callee, there(arguments)) if caller == MARK_CALLER and callee.startswith(BUILT_MARK)
                      else (on_platforms(caller), callee, arguments)
                      for caller, callee, arguments in edges)
    if not host_file(path):
        return tuple(edges)
    return (*edges, *((MARK_CALLER, HOST_MARK, callee) for caller, callee, _ in edges if not caller))


def module_name(path: str) -> str:
    """A module's path from its project's root, `/`-separated, without `.py` (a package's
    `__init__.py` by its folder): how the marks of `_module_marks` name it."""
    name = _below_project_root(path).replace(os.sep, "/")
    name = re.sub(r"\.pyi?$", "", name)
    return name[: -len("/__init__")] if name.endswith("/__init__") else name


def _module_marks(path: str, edges) -> tuple:
    """The module marks of a file's edges keyed by the file's module name; a base module's
    spec (`1:qwen2_vl`) turned into the module names it may be (`host_fields.module_candidates`)."""
    here = module_name(path)
    out = []
    for caller, callee, arguments in edges:
        if caller != MARK_CALLER or callee not in _MODULE_MARKS:
            out.append((caller, callee, arguments))
        elif callee == BASE_MODULE_MARK:
            out.extend((caller, callee + here, name) for name in module_candidates(arguments, here))
        else:
            out.append((caller, callee + here, arguments))
    return tuple(out)


def _live_relay(target: tuple, number_functions: set) -> bool:
    """Whether a relay flow's target may reach a parameter declared a Python number: its
    function (`("EP", "step", 1)`), method (`("Sp", "_get_variance", "t")`) or the method a call
    through its class runs (`("QE", "Rotary.forward", 0)`), by its last name."""
    return str(target[1]).rpartition(".")[2] in number_functions


def _relay_flows(summary: tuple) -> list:
    """A file's flows into the relay of loop elements and own-method parameters
    (`_loop_numbers`), with their places in the summary and their lines: an edit that leaves
    them as they were leaves what the relay reads from this file, and what it cites, as it was."""
    return [(index, flow) for index, flow in enumerate(summary[0]) if flow[0][0] in _RELAY_TARGETS]


def _save_state(folder: str, tag: str, state: dict, digests: dict, facts: Facts) -> None:
    from array import array

    summaries = state["summaries"]
    flows, _tensors, _tupled, loop_flows, own_flows, types, _signatures, _callers, fields_of, expanded, _family = state["asm"]
    paths = list(summaries)
    if any(p not in digests for p in paths):
        return
    pos = {p: i for i, p in enumerate(paths)}
    # Interned: every target and symbol gets the next number the first time it is seen.
    ids: dict = defaultdict(numbers().__next__)
    ftgt = array("i", map(ids.__getitem__, map(itemgetter(0), flows)))
    floc = array("q", map(itemgetter(1), flows))
    lengths = array("i", map(len, map(itemgetter(2), flows)))
    fsym = array("i", map(ids.__getitem__, chain.from_iterable(map(itemgetter(2), flows))))
    fsoff = array("i", accumulate(lengths, initial=0))
    wheres = list(map(itemgetter(3), flows))
    fpath = array("i", map(pos.__getitem__, map(itemgetter(0), wheres)))
    findex = array("i", map(itemgetter(1), wheres))
    keys = list(ids)
    n = len(keys)
    per_file = Counter(fpath)
    file_off = array("i", accumulate((per_file.get(i, 0) for i in range(len(paths))), initial=0))
    by_target = _csr(n, ftgt, range(len(ftgt)))
    readers = _csr(n, fsym, array("i", chain.from_iterable(map(repeat, range(len(ftgt)), lengths))))
    value0, value = state["value0"], state["value"]
    values = array("q", map(value.get, keys, repeat(0)))
    plain = array("q", map(value0.get, keys, repeat(0)))
    signatures: dict[str, Counter] = {}
    targeted: Counter = Counter()
    tupled: Counter = Counter()
    tensors: Counter = Counter()
    edges: dict[str, Counter] = {}
    names: Counter = Counter()
    vendored_names: Counter = Counter()
    for path, summary in summaries.items():
        sigs, tg, tp, dec, edg, _relays, nm, vend = _contributions(path, summary)
        for (name, params), count in sigs.items():
            known = signatures.get(name)
            if known is None:
                known = signatures[name] = Counter()
            known[params] += count
        targeted.update(tg)
        tupled.update(tp)
        tensors.update(dec)
        for (caller, callee, arguments), count in edg.items():
            known = edges.get(callee)
            if known is None:
                known = edges[callee] = Counter()
            known[(caller, arguments)] += count
        (vendored_names if vend else names).update(nm)
    toff = by_target[0]
    typed = {(k[1], k[2]): toff[i + 1] - toff[i] for i, k in enumerate(keys) if k[0] == "A" and toff[i + 1] > toff[i]}
    # What the relay reads: only its flows into a parameter declared a Python number can give
    # a fact (`_loop_numbers`), so only theirs make an edit that reaches them a whole solve.
    live = [f for f in (*loop_flows, *own_flows) if tensors.get(("n", *f[0][1:]), 0) > 0]
    relayed = {t for t, *_ in live} | {s for _, _, symbols, *_ in live for s in symbols}
    blob = (
        _STATE_VERSION, tuple(paths), tuple(digests[p] for p in paths), tuple(keys),
        tuple(a.tobytes() for a in (ftgt, floc, fsym, fsoff, fpath, findex, file_off, *by_target, *readers, values, plain)),
        {name: dict(c) for name, c in signatures.items()}, dict(targeted), dict(tupled), dict(tensors), {callee: dict(c) for callee, c in edges.items()}, dict(names),
        dict(vendored_names), dict(typed), tuple(relayed), state["mirrored"], fields_of,
        (types.bases, types.field_types, types.returns), expanded,
        _facts_blob(facts),
    )
    _write(os.path.join(folder, "state", tag), marshal.dumps(blob))


def _csr(n: int, keys, items) -> tuple:
    """(offsets, found): the items of key k (`keys[j]` is the key of `items[j]`), in the order
    given, at found[offsets[k]:offsets[k + 1]]."""
    from array import array

    counts = Counter(keys)
    offsets = array("i", accumulate((counts.get(k, 0) for k in range(n)), initial=0))
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return offsets, array("i", map(items.__getitem__, order))


class _Lines(dict):
    """path -> the flows of its summary (the lines citations name), read from the store on first use."""

    def __init__(self, folder: str, digests: dict, fresh: dict) -> None:
        super().__init__(fresh)
        self.folder, self.digests = folder, digests

    def get(self, path, default=()):
        if not dict.__contains__(self, path):
            digest = self.digests.get(path)
            summary = _read(os.path.join(self.folder, digest[:2], digest[2:])) if digest else None
            self[path] = summary[0] if isinstance(summary, tuple) and summary else ()
        return dict.get(self, path, default)


class _Signatures:
    """function -> its signatures now, for the functions one file's flows name."""

    def __init__(self, base: dict, delta: dict) -> None:
        self.base, self.delta = base, delta

    def get(self, name: str, default=()):
        counts = dict(self.base.get(name, {}))
        for params, n in self.delta.get(name, {}).items():
            counts[params] = counts.get(params, 0) + n
        found = {params for params, n in counts.items() if n > 0}
        return found or default

    def __contains__(self, name: str) -> bool:
        return bool(self.get(name))


def _incremental(folder: str, tag: str, files: list[str], digests: dict, fresh: dict) -> Facts | None:
    """The facts after an edit that changed summaries, from the last full solve's state (see
    above); None when the repository must be solved whole. `digests`: path -> content digest
    now; `fresh`: path -> summary, of the files summarised in this run."""
    from array import array

    blob = _read(os.path.join(folder, "state", tag))
    if not (isinstance(blob, tuple) and len(blob) == 19 and blob[0] == _STATE_VERSION):
        return None
    (_, paths, base_digests, keys, arrays, signatures, targeted, tupled_count, tensor_count, edge_count, names,
     vendored_names, typed_count, relayed, mirrored, fields_of, (bases, field_types, returns), expanded, base) = blob
    if list(paths) != files:
        return None
    changed = [i for i, p in enumerate(paths) if digests.get(p) != base_digests[i]]
    if not (isinstance(base, tuple) and len(base) == _FACTS_FIELDS):
        return None
    values_of, fingerprint, callers, examples, vendored, classes, arguments, crowded, orphans, methods = base
    if not changed:
        return _facts_of(base)
    if len(changed) > _MAX_PATCHED:
        return None
    ftgt, floc, fsym, fsoff, fpath, findex, file_off, toff, titems, roff, ritems, values, plain = (
        array("q" if i in (1, 11, 12) else "i", b) for i, b in enumerate(arrays))
    base_counts = [Counter(c) for c in (targeted, tupled_count, tensor_count, names, vendored_names)]
    definitions_before = base_counts[3] + base_counts[4]
    targeted, tupled_count, tensor_count, names, vendored_names = (Counter(c) for c in base_counts)
    edges_now: dict[str, Counter] = {}  # callee -> its callers' counts, for the callees the edit touches
    delta: dict[str, Counter] = {}  # function -> the counts of its signatures added (negative: taken away)
    olds, news = {}, {}
    places: dict[str, dict] = {}  # path -> old place -> new place in its summary of the flows that moved
    touched_keys: set = set()  # declared tensors and tuple results of the changed files
    number_functions = None  # the last names of the functions with a number parameter, once needed
    for i in changed:
        path = paths[i]
        old = _read(os.path.join(folder, base_digests[i][:2], base_digests[i][2:]))
        new = fresh.get(path)
        if new is None:
            new = _read(os.path.join(folder, digests[path][:2], digests[path][2:]))
        if not (isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new) == len(_NO_SUMMARY)):
            return None
        if old[5] != new[5] or _mirrored({path: old}) != _mirrored({path: new}):
            return None  # a class, a field's class, a host mirror: every file's flows read them
        before, after = _contributions(path, old), _contributions(path, new)
        if before[5] or after[5]:
            # Only relay flows into a function with a parameter declared a Python number can
            # give a fact (`_loop_numbers`); the others (`x.view(t.sum())`, `f(counts[i])` of a
            # helper without number parameters) are inert, whatever the edit does to them.
            # (An edit that changes which parameters are declared numbers is solved whole below.)
            if number_functions is None:
                number_functions = {k[1].rpartition(".")[2] for k, n in base_counts[2].items() if k[0] == "n" and n > 0}
            was = [(index, flow) for index, flow in _relay_flows(old) if _live_relay(flow[0], number_functions)]
            now = [(index, flow) for index, flow in _relay_flows(new) if _live_relay(flow[0], number_functions)]
            if [flow[:3] for _, flow in was] != [flow[:3] for _, flow in now]:
                return None  # the relay of loop elements and own-method parameters changed: solved whole
            if was != now:  # the same relay flows, moved: what the relay's facts cite moves with them
                places.setdefault(path, {}).update((old_index, new_index) for (old_index, _), (new_index, _) in zip(was, now))
        for sign, part in ((-1, before), (1, after)):
            for (name, params), n in part[0].items():
                delta.setdefault(name, Counter())[params] += sign * n
            for count, c in zip((targeted, tupled_count, tensor_count), part[1:4]):
                for k, n in c.items():
                    count[k] += sign * n
            for (caller, callee, passed), n in part[4].items():
                if callee not in edges_now:
                    edges_now[callee] = Counter(edge_count.get(callee, {}))
                edges_now[callee][(caller, passed)] += sign * n
            for k, n in part[6].items():
                (vendored_names if part[7] else names)[k] += sign * n
            touched_keys.update(part[2])
            touched_keys.update(part[3])
        olds[i], news[i] = old, new
    sigs_now = _Signatures(signatures, delta)
    sigs_before = _Signatures(signatures, {})
    resigned = {name for name in delta if sigs_now.get(name, set()) != sigs_before.get(name, set())}
    if any(targeted[name] > 0 for name in resigned):
        return None  # calls of a function whose signatures changed resolve differently
    method_names = {name.rpartition(".")[2] for name in signatures if "." in name}
    if any("." in name or name in method_names for name in resigned):
        return None  # a method's signature: the calls resolved through classes (`_QualifiedCalls`) change
    qualified = _QualifiedCalls(Types(bases, field_types, returns), [name for name in signatures if sigs_now.get(name)], paths)
    if resigned & qualified.aliased_functions():
        return None  # a function a method alias binds: the calls of the alias resolve differently
    # The changed files' flows, resolved now (their old ones are in the state).
    family = []
    ids = {k: i for i, k in enumerate(keys)}
    # A method's parameter is read through its class where calls through the class give it
    # something (`_MethodParams`): which ones do is as the last full solve found, checked below.
    reads = _MethodParams(_SolvedTargets(ids, toff))

    def resolve(symbol: tuple) -> tuple:
        if symbol[0] == "p":
            return reads.keys(symbol)
        if symbol[0] != "A":
            raise _Unresolved  # what it stands for may have changed with the edit: solved whole
        if not family:
            family.append(_Family(Types(bases, field_types, returns), {k for k, n in typed_count.items() if n > 0}))
        return family[0].keys(symbol[1], symbol[2]) or (("a", symbol[2]),)

    new_flows: dict[int, list] = {}
    # The parameters declared numbers (an edit that changes which ones are is solved whole).
    numbers = frozenset((k[1], k[2]) for k, n in base_counts[2].items() if k[0] == "n" and n > 0)
    typed_now = Counter(typed_count)
    method_params: Counter = Counter()  # flows into `("p", "Cls.m", x)` added (taken away: negative)
    for i in changed:
        if _given_numbers(paths[i], olds[i][0], sigs_now, fields_of, qualified, numbers) != _given_numbers(
                paths[i], news[i][0], sigs_now, fields_of, qualified, numbers):
            return None  # what calls give a parameter declared a number changed: read by the relay, solved whole
        out: list = []
        relay: list = []
        _file_flows(paths[i], news[i][0], sigs_now, fields_of, out, set(), relay, relay, qualified, numbers)
        resolved = []
        for target, local, symbols, where in out:
            try:
                resolved.append((target, *_expand_flow(local, symbols, expanded, resolve), where))
            except _Unresolved:
                return None
            if target[0] == "A":
                typed_now[(target[1], target[2])] += 1
            elif target[0] == "p" and "." in target[1]:
                method_params[target] += 1
        new_flows[i] = resolved
        for f in range(file_off[i], file_off[i + 1]):
            t = keys[ftgt[f]]
            if t[0] == "A":
                typed_now[(t[1], t[2])] -= 1
            elif t[0] == "p" and "." in t[1]:
                method_params[t] -= 1
    if {k for k, n in typed_now.items() if n > 0} != {k for k, n in typed_count.items() if n > 0}:
        return None  # the fields of a class family changed: reads through classes resolve differently
    if any((t in reads.targets) != (n + _SolvedTargets.count(ids, toff, t) > 0) for t, n in method_params.items() if n):
        return None  # a method's parameter given something through its class now, or nothing: its reads resolve differently
    # An unpacked element reads the element where some flow gives it a value, else the whole
    # result (`_Resolver`): an edit that adds the first such flow, or takes the last away,
    # changes what it reads.
    given = Counter()
    for i in changed:
        for f in range(file_off[i], file_off[i + 1]):
            t = keys[ftgt[f]]
            if t[0] == RESULT_ITEM:
                given[t] -= 1
        for t, *_ in new_flows[i]:
            if t[0] == RESULT_ITEM:
                given[t] += 1
    if any((_SolvedTargets.count(ids, toff, t) > 0) != (_SolvedTargets.count(ids, toff, t) + n > 0) for t, n in given.items() if n):
        return None
    # Seeds: the targets whose flows in a changed file differ (what they give, their order, the
    # line they cite), and the names declared tensors (tuple results) in one and not the other.
    seeds: set = set()
    for i in changed:
        old_lines, new_lines = olds[i][0], news[i][0]
        was: dict = {}
        for f in range(file_off[i], file_off[i + 1]):
            index = findex[f]
            symbols = tuple(keys[s] for s in fsym[fsoff[f]:fsoff[f + 1]])
            was.setdefault(keys[ftgt[f]], []).append((floc[f], symbols, index, old_lines[index][3]))
        now: dict = {}
        for target, local, symbols, (_, index) in new_flows[i]:
            now.setdefault(target, []).append((local, symbols, index, new_lines[index][3]))
        for t in was.keys() | now.keys():
            before, after = was.get(t), now.get(t)
            if before == after:
                continue
            if before is not None and after is not None and [f[:2] for f in before] == [f[:2] for f in after]:
                # The same flows, on other lines: only what its explanation cites moves.
                places.setdefault(paths[i], {}).update((b[2], a[2]) for b, a in zip(before, after))
            else:
                seeds.add(t)
    tensor_base, tupled_base = base_counts[2], base_counts[1]
    for k in touched_keys:
        if (tensor_count[k] > 0) != (tensor_base.get(k, 0) > 0) or (tupled_count[k] > 0) != (tupled_base.get(k, 0) > 0):
            if k[0] == "n" or k[0] in ("r", PASSES_THROUGH) and "." in k[1]:
                # a number parameter (read by the relay of loop elements), a method's result
                # (a call through its class reads it only where it is declared a tensor), a
                # method that returns its parameters (the calls through its class read their
                # arguments; a function's own, only the lint reads, below)
                return None
            seeds.add(k)
    # Everything that reads a seed, transitively (through the state's readers and the changed
    # files' new flows).
    stale = {f for i in changed for f in range(file_off[i], file_off[i + 1])}
    new_readers: dict = {}
    for i in changed:
        for flow in new_flows[i]:
            for s in flow[2]:
                new_readers.setdefault(s, []).append(flow[0])
    region = set(seeds)
    pending = list(seeds)
    while pending:
        key = pending.pop()
        k = ids.get(key)
        found = [keys[ftgt[f]] for f in ritems[roff[k]:roff[k + 1]] if f not in stale] if k is not None else []
        for target in (*found, *new_readers.get(key, ())):
            if target not in region:
                region.add(target)
                pending.append(target)
        if len(region) > _MAX_INCREMENTAL_TARGETS:
            return None
    if region & set(relayed):
        return None  # read by the relay of loop elements: solved whole
    # The flows of those targets, in file order; what they read from outside, folded in as the
    # constant it was solved to.
    order: list = []
    for key in region:
        k = ids.get(key)
        if k is not None:
            for f in titems[toff[k]:toff[k + 1]]:
                if f not in stale:
                    order.append(((fpath[f], f), f))
    for i in changed:
        for n, flow in enumerate(new_flows[i]):
            if flow[0] in region:
                order.append(((i, file_off[i] + n), flow))
    order.sort(key=lambda item: item[0])
    flows: list = []
    for _, item in order:
        if type(item) is int:
            target = keys[ftgt[item]]
            local = floc[item]
            symbols = tuple(keys[s] for s in fsym[fsoff[item]:fsoff[item + 1]])
            where = (paths[fpath[item]], findex[item])
        else:
            target, local, symbols, where = item
        inside = []
        for s in symbols:
            if s in region:
                inside.append(s)
                continue
            k = ids.get(s)
            if k is not None:
                if plain[k] != values[k]:
                    return None  # a value `_dominant` changed between rounds: solved whole
                local |= values[k]
        flows.append((target, local, tuple(inside), where))
    tensors = {k for k, n in tensor_count.items() if n > 0}
    tupled = {k for k, n in tupled_count.items() if n > 0}
    lines = _Lines(folder, digests, {paths[i]: news[i][0] for i in changed})
    definitions = names + vendored_names
    if any(_votes(definitions_before.get(name, 0)) != _votes(definitions.get(name, 0)) for name in delta):
        return None  # a name now shared by more (or fewer) functions: the vote reads it differently
    facts, typed, citations, _value0, _value = _conclude(flows, tensors, tupled, [], [], lines, mirrored, definitions)
    # Merged with what lies outside, as it was: a target whose flows only moved (a function
    # inserted above them) keeps its solution, and the reasons that cite a moved flow, its
    # own or the relay's, are written again with its new place and line.
    values_outside = {k: v for k, v in values_of.items() if k not in region}
    typed_outside = {k: v for k, v in classes[0].items() if ("A", *k) not in region}
    citations_outside = {k: v for k, v in examples.items() if k not in region}
    for i in changed:
        places.setdefault(paths[i], {})
    values_now, typed_all, examples_now = _recite_all(values_outside, typed_outside, citations_outside, places,
                                                      {paths[i]: news[i][0] for i in changed})
    values_now.update((k, v) for k, v in facts.items() if k in region)
    # The functions that pass their arguments through, as the declarations now say (`_conclude`
    # writes them all, whatever the region).
    for k in [k for k in values_now if k[0] == PASSES_THROUGH]:
        del values_now[k]
    values_now.update((k, v) for k, v in facts.items() if k[0] == PASSES_THROUGH)
    typed_all.update(typed)
    examples_now.update((k, v) for k, v in citations.items() if k in region)
    # The call graph and the vendored functions, from the counts: the graph resolved again
    # whole where the edit changed a call or a definition (a definition changes how calls by
    # name and through classes resolve).
    if edges_now and not _only_uncalled_definitions(edges_now, edge_count):
        counts_now = {callee: counts for callee, counts in edge_count.items() if callee not in edges_now}
        counts_now.update(edges_now)
        call_graph = _CallGraph(Types(bases, field_types, returns))
        graph = call_graph.graph(counts_now, paths)
        arguments, crowded = call_graph.arguments, call_graph.crowded()
    else:
        graph = callers
    vendored_now = frozenset(k for k, n in vendored_names.items() if n > 0 and names.get(k, 0) <= 0)
    declared = _declared_fields(tensors)
    classes_now = (typed_all, sorted(declared), *classes[2:])
    # Functions nothing names: those the changed files now name are named; a function an edit
    # leaves unnamed, or defines anew, waits for the next whole solve (one is never unused too early).
    orphans_now = unused(orphans, [news[i][6] for i in changed])
    # The methods are those of the last full solve: an edit that adds, removes or re-signs one is solved whole (above).
    return Facts(values_now, _fingerprint(values_now, graph, classes_now, arguments, crowded, orphans_now, methods), graph,
                 examples=examples_now, vendored=vendored_now, classes=classes_now, arguments=arguments, crowded=crowded,
                 orphans=orphans_now, methods=methods)


def _only_uncalled_definitions(edges_now: dict, edge_count: dict) -> bool:
    """Whether the edit's changes to the call graph's counts (`edges_now`: callee -> its
    callers' counts now) only define functions by names that nothing defined before and that
    no call, field or mark of the repository names (`def added(x): return x` appended): the
    graph resolved whole would be the one of the last solve, since a function no call reaches
    and that calls nothing is no edge of it."""
    new_names = set()
    for callee, counts in edges_now.items():
        before = edge_count.get(callee, {})
        changes = [(key, counts.get(key, 0) - before.get(key, 0)) for key in counts.keys() | before.keys()]
        if any(change and (key[0] != "" or change < 0) for key, change in changes):
            return False  # a call added or taken away, or a definition taken away
        if not any(change for _, change in changes):
            continue
        if not callee.isidentifier() or any(key[0] == "" and n > 0 for key, n in before.items()):
            return False  # a method, or a name defined elsewhere already (calls by name resolve differently)
        new_names.add(callee)
    if not new_names:
        return True
    named = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(new_names))) + r")(?!\w)")
    for callee, counts in edge_count.items():
        if callee in new_names and any(key[0] and n > 0 for key, n in counts.items()):
            return False  # called by that name before it was defined
        if callee not in new_names and named.search(callee):
            return False  # `mod>added`, `.added`, `Cls.added`, a held or marked reference
        if callee[:1] == MARK_CALLER and any(named.search(str(key[1])) for key in counts):
            return False
    return True


# --- hot and cold through the call graph ---------------------------------------------------------

_MAX_VISITED = 4000
# `Base::m`: a call `super().m()` in a subclass of `Base` (`_CallGraph._resolve`).
_SUPER_CALL = "::"
# A parameter passed on through at most this many callers is followed (`passed_kinds`).
_MAX_PASSED_ON = 4
# A method name defined in more class families than this (classes that share no base of the
# repository: `run`, `process`, `apply`, `build`) is called by name (`obj.run()`, the class
# of `obj` unknown) only weakly: the call may reach any of them.
_FEW_FAMILIES = 3


def _children_of(bases: dict) -> dict[str, list[str]]:
    """class -> the repository's classes that name it as a base."""
    children: dict[str, list[str]] = {}
    for name, parents in bases.items():
        for parent in parents:
            children.setdefault(parent, []).append(name)
    return children


def _descendants(children: dict, cls: str) -> list[str]:
    """The subclasses of `cls` (`children`: `_children_of`), at any depth, in the order they
    are found (at most 255: a generated hierarchy stops there)."""
    found: list[str] = []
    pending, seen = [cls], {cls}
    while pending and len(seen) < 256:
        for child in children.get(pending.pop(), ()):
            if child not in seen:
                seen.add(child)
                pending.append(child)
                found.append(child)
    return found


class _CallGraph:
    """The call graph of the summaries' edges (`_Summarizer._callees`), resolved through the
    classes of the repository: `self.m()` reaches `m` of the object's class (the nearest
    definition among it and its bases, and the overrides of its subclasses); `self.sub(x)`
    the `__call__` or `forward` of the class field `sub` holds; a method of an object of
    unknown class every definition of the name (`callers[".m"]`; `callers["?m"]`, a weak
    way in, where many unrelated classes define it); a call of a function imported from a
    library nothing of the repository."""

    def __init__(self, types: _Types) -> None:
        self.types = types
        self.functions: set[str] = set()  # module-level and nested functions, by name
        self.methods: dict[str, set[str]] = {}  # method name -> the classes defining it
        self.modules: set[str] = set()  # names of the repository's folders and modules
        self.children = _children_of(types.bases)
        self.memo: dict[str, tuple] = {}
        self.roots: dict[str, str] = {}
        self.alias_names: frozenset[str] | None = None  # the fields some method alias binds (`_aliased`)

    def graph(self, calls: dict, paths) -> dict:
        """callee -> its callers, from `calls`: callee (as `_Summarizer._callees` writes it)
        -> {(caller, arguments): count}, with the caller "" counting the definitions of a
        function (its `arguments`: the parameters that decide its branches). Also fills
        `self.arguments`: function -> ((caller, arguments), ...) of the calls that reach it,
        for the functions with deciding parameters (synclint/analysis/guards.py)."""
        self.add_modules(paths)
        defined = set()
        decisive = set()  # functions (and names) with parameters that decide a branch
        marks: dict[str, set] = {}  # the marks beside the calls (`_path_edges`): host-side functions, fields' values
        for callee, counts in calls.items():
            if callee[:1] == MARK_CALLER:
                found = {arguments for (caller, arguments), n in counts.items() if caller == MARK_CALLER and n > 0}
                if found:
                    marks[callee] = found
                continue
            for (caller, arguments), n in counts.items():
                if caller or n <= 0:
                    continue
                if callee not in defined:
                    defined.add(callee)
                    cls, _, name = callee.rpartition(".")
                    if cls:
                        self.methods.setdefault(name, set()).add(cls)
                    else:
                        self.functions.add(name)
                if arguments:
                    decisive.add(callee)
                    decisive.add(callee.rpartition(".")[2])
        callers: dict[str, set[str]] = {}
        passed: dict[str, set[tuple]] = {}
        builders: dict[str, set[str]] = {}
        for callee, counts in calls.items():
            found = [key for key, n in counts.items() if key[0] and n > 0]
            if found and callee.startswith(BUILDER_MARK):
                builders.setdefault(callee, set()).update(caller for caller, _ in found)
                continue
            if not found or callee[:1] == MARK_CALLER:
                continue
            if callee[:1] == HELD_CALL:  # a read of a field that holds functions: each of them
                targets, name = tuple(dict.fromkeys(t for ref in sorted(marks.get(HELD_MARK + callee[1:], ()))
                                                    for t in self.resolve(ref)[0])), ""
            else:
                targets, name = self.resolve(callee)
            if name:  # by name: one entry for every definition of the name
                targets = (*targets, ("." if self._few(name) else "?") + name)
            for target in targets:
                known = callers.get(target)
                if known is None:
                    known = callers[target] = set()
                known.update(caller for caller, _ in found)
                if target in decisive or target[:1] in ".?":  # by name: the calls' arguments, for the shapes they fit
                    passed.setdefault(target, set()).update(found)
        named = self.functions.union(self.methods)
        self.arguments = {target: tuple(sorted(found)) for target, found in passed.items()}
        graph = {callee: tuple(sorted(found)) for callee, found in callers.items() if callee in defined or callee[:1] in ".?" and callee[1:] in named}
        graph.update((mark, tuple(sorted(found))) for mark, found in marks.items() if not mark.startswith(RECEIVER_MARK))
        graph.update((mark, tuple(sorted(found))) for mark, found in builders.items())
        graph.update(self._unreached(marks))
        return graph

    def _unreached(self, marks: dict) -> dict:
        """`UNREACHED_MARK + Cls.m` -> the callers whose calls by name of `m` are made on
        objects named for other classes than `Cls`'s family (receivers.unreached)."""
        out: dict[str, set[str]] = {}
        families: dict[str, frozenset[str]] = {}
        for mark, pairs in marks.items():
            if not mark.startswith(RECEIVER_MARK):
                continue
            method = mark[len(RECEIVER_MARK):]
            classes = self.methods.get(method)
            if not classes:
                continue
            by_caller: dict[str, set[str]] = {}
            for pair in pairs:
                word, _, caller = pair.partition(":")
                word, _, held = word.partition("=")
                if held:
                    cls = self.types.field_type(*held.split("."))
                    if cls and self._of_class(cls, method):
                        continue  # `self.a.m()` of a field of a known class: resolved, not by name
                by_caller.setdefault(caller, set()).add(word)
            candidates = {}
            for cls in classes:
                words = families.get(cls)
                if words is None:
                    lineage = self.types._lineage(cls)
                    module = any(one.rpartition(".")[2] == "Module" for one in lineage)
                    words = families[cls] = receivers.family_words(lineage, self._subclasses(cls), module)
                candidates[cls] = words
            tensor_member = method in TENSOR_MEMBERS
            for caller, words in by_caller.items():
                for cls in receivers.unreached(words, candidates, tensor_member):
                    out.setdefault(f"{UNREACHED_MARK}{cls}.{method}", set()).add(caller)
        return {mark: tuple(sorted(found)) for mark, found in out.items()}

    def add_modules(self, paths) -> None:
        """The names of the repository's folders and modules, from its files' paths."""
        for path in paths:
            parts = path.replace("\\", "/").split("/")
            self.modules.update(parts[:-1])
            self.modules.add(parts[-1].rsplit(".", 1)[0])

    def resolve(self, ref: str) -> tuple[tuple, str]:
        """(the functions a call reaches, the name it reaches every definition of, or "")."""
        found = self.memo.get(ref)
        if found is None:
            found = self.memo[ref] = self._resolve(ref)
        return found

    def _resolve(self, ref: str) -> tuple[tuple, str]:
        if ">" in ref:  # `mod>f`: a function of an imported module
            module, _, name = ref.partition(">")
            return ((name,) if module in self.modules and name in self.functions else ()), ""
        if ref[:1] == ".":
            return (), ref[1:]
        if _SUPER_CALL in ref:  # `super().m()`: a base's own or inherited `m`, or a library's
            cls, _, name = ref.partition(_SUPER_CALL)
            return (() if name == "__init__" else self._in_family(cls, name, overrides=False)), ""
        if ":" in ref:  # `Cls.m()`: the class's own or inherited `m`
            cls, _, name = ref.partition(":")
            if name == "__init__":
                return (), ""  # a constructor's: a cold root whoever calls it
            found = self._in_family(cls, name, overrides=False)
            return (found, "") if found or cls in self.types.bases else ((), name)
        parts = ref.split(".")
        if len(parts) == 1:
            return ((ref,) if ref in self.functions else ()), ""
        if len(parts) == 3:  # `self.a.m()`: a method of what field `a` holds
            held = self.types.field_type(parts[0], parts[1])
            found = self._of_class(held, parts[2]) if held else ()
            return (found, "") if found else ((), parts[2])
        cls, name = parts
        if name.endswith(_FIELD_CALL):  # `self.sub(x)` of a field the class assigns: what it holds, never by name
            field = name[: -len(_FIELD_CALL)]
            held = self.types.field_type(cls, field)
            return (*self._aliased(cls, field), *(self._of_class(held, "__call__") if held else ())), ""
        found = self._of_class(cls, name)
        if not found:
            held = self.types.field_type(cls, name)  # `self.sub(x)`: the object field `sub` holds
            found = self._of_class(held, "__call__") if held else ()
        if found:
            return found, ""
        # Not a method of the class, its bases or subclasses in the repository: inherited from
        # a library base (`self.to()`, `self.generate()`) or a field assigned elsewhere, not a
        # method of an unrelated class that happens to share the name. By name only where the
        # class's lineage leaves the repository through a base it cannot follow.
        return (), ("" if self._whole_lineage(cls) else name)

    def _whole_lineage(self, cls: str) -> bool:
        """Whether every base of `cls`, up its lineage, is a class of the repository or a
        well-known library base (`nn.Module`, `object`)."""
        bases = self.types.bases
        if cls not in bases:
            return False
        pending, seen = [cls], {cls}
        while pending:
            for parent in bases.get(pending.pop(), ()):
                if parent in seen:
                    continue
                seen.add(parent)
                if parent in bases:
                    pending.append(parent)
                elif parent.rpartition(".")[2] not in _LIBRARY_BASES:
                    return False
        return True

    def _of_class(self, cls: str, name: str) -> tuple:
        """The definitions `obj.<name>()` runs for an object of class `cls`: the nearest in
        `cls` and its bases, and those of its subclasses; `__call__` of an `nn.Module` is
        its `forward`. For `A|B` (built from a registry of classes), those of each."""
        if _CLASS_UNION in cls:
            return tuple(dict.fromkeys(d for one in cls.split(_CLASS_UNION) for d in self._of_class(one, name)))
        found = self._in_family(cls, name)
        if not found and name == "__call__":
            found = self._in_family(cls, "forward")
        aliased = self._aliased(cls, name)
        return tuple(dict.fromkeys((*found, *aliased))) if aliased else found

    def aliased_by(self, ref: str) -> tuple:
        """The functions a call `ref` (`Cls.f`, `Cls.f!`, `Cls.a.f`) reaches through a method
        alias only (`_aliased`): the calls the alias stands for, `obj.update(x)` for
        `obj.update_windowed(x)`."""
        if ">" in ref or ":" in ref or ref[:1] == ".":
            return ()
        parts = ref.split(".")
        if len(parts) == 2:
            held, name = parts[0], parts[1].removesuffix(_FIELD_CALL)
        elif len(parts) == 3:
            held, name = self.types.field_type(parts[0], parts[1]), parts[2]
        else:
            return ()
        if not held:
            return ()
        return tuple(dict.fromkeys(t for one in held.split(_CLASS_UNION) for t in self._aliased(one, name)))

    def _aliased(self, cls: str, name: str) -> tuple:
        """What `obj.<name>(...)` runs for an object of class `cls` where a method of it, of a
        base or of a subclass binds the field `name` to a function (`_method_aliases`):
        `self.update = self.update_windowed` makes it run `update_windowed` of the object's
        class (the nearest definition, and the overrides of its subclasses), `self.act =
        helper` the function `helper`. Beside a method of that name (a stub that raises), the
        field set on the object is what runs."""
        field_types = self.types.field_types
        bases = self.types.bases
        if self.alias_names is None:
            self.alias_names = frozenset(f[: -len(ALIAS)] for _, f in field_types if f.endswith(ALIAS))
        if name not in self.alias_names or cls not in bases:
            return ()
        lineage = self.types._lineage(cls)
        classes = [(one, cls) for one in lineage] + [(child, child) for child in self._subclasses(cls)]
        out = []
        for one, against in classes:
            refs = field_types.get((one, name + ALIAS))
            if not refs:
                continue
            for ref in refs.split(","):
                if ref.startswith("self."):
                    out.extend(self._in_family(against, ref[5:]))
                else:
                    out.extend(t for t in self.resolve(ref)[0] if "." not in t)
        return tuple(dict.fromkeys(out))

    def _in_family(self, cls: str, name: str, overrides: bool = True) -> tuple:
        """The nearest `name` in `cls` and its bases, and (`overrides`) those of its
        subclasses; nothing for a class the repository does not define (`nn.Module`: the
        call goes by name)."""
        classes = self.methods.get(name)
        if not classes or cls not in self.types.bases:
            return ()
        out = []
        for one in self.types._lineage(cls):
            if one in classes:
                out.append(f"{one}.{name}")
                break
        if overrides:
            out.extend(f"{child}.{name}" for child in self._subclasses(cls) if child in classes)
        return tuple(out)

    def _subclasses(self, cls: str) -> list[str]:
        return _descendants(self.children, cls)

    def crowded(self) -> frozenset[str]:
        """The method names more than `_FEW_FAMILIES` unrelated class families define."""
        return frozenset(name for name in self.methods if not self._few(name))

    def _few(self, name: str) -> bool:
        """At most `_FEW_FAMILIES` unrelated class families (module-level functions count as
        one) define `name`: a call by name reaches them all."""
        families = {self._root(cls) for cls in self.methods.get(name, ())}
        return len(families) + (name in self.functions) <= _FEW_FAMILIES

    def _root(self, cls: str) -> str:
        """The topmost class of the repository above `cls` along its first bases."""
        root = self.roots.get(cls)
        if root is None:
            root, seen = cls, {cls}
            while True:
                parents = [p for p in self.types.bases.get(root, ()) if p in self.types.bases and p not in seen]
                if not parents:
                    break
                root = parents[0]
                seen.add(root)
            self.roots[cls] = root
        return root


def tiers_hook(settings):
    """The repository's verdict on how often a function runs (the hook of
    synclint/analysis/tier.py). Without a call graph it has no verdict (None for every
    function), and a cached result records that it asked."""
    return _CallGraphTiers(FACTS, settings)


class _CallGraphTiers:
    """A function is hot when a hot root (`hot-functions`: `forward`, `execute_model`, ...)
    reaches it through the calls the index resolves (`_CallGraph`); cold when every way in
    starts at a cold root (`cold-functions`: loading, warm-up, profiling, capture; or a
    constructor). A function whose own name decides is left to the local signals.

    The graph's functions are `Cls.method` for methods of module-level classes and bare
    names for the rest; a pattern with a dot matches `Cls.method`, one without the name.
    Calls by name of a method of an unknown object reach every definition of the name:
    `callers[".m"]`, or `callers["?m"]` where many unrelated classes define `m` (a weak way
    in: from a hot root, it says the function may run every step, `unknown` with the way
    shown, where no resolved call says it runs once; it never makes a function hot)."""

    def __init__(self, facts: Facts, settings) -> None:
        self.facts = facts
        self.callers = facts.callers
        self.hot = tuple(settings.hot_functions)
        self.cold = tuple(getattr(settings, "cold_functions", ()))
        self.targets = frozenset(getattr(settings, "target_platforms", ("cuda",)))
        self.memo: dict[str, object] = {}
        self._host_classes: dict[str, bool] = {}
        self._hot_nodes: dict[str, bool] = {}
        self._cold_nodes: dict[str, bool] = {}
        # Functions defined only in vendored folders: a vendored function every way into which
        # starts at one of them that nothing calls is code the repository does not use.
        self.vendored = facts.vendored
        self.host_functions = frozenset(self.callers.get(HOST_MARK, ())) if self.callers else frozenset()
        self.worker_functions = _worker_functions(self.callers) if self.callers else frozenset()
        self.thread_targets = frozenset(self.callers.get(THREAD_MARK, ())) if self.callers else frozenset()
        self.script_entries = frozenset(self.callers.get(SCRIPT_MARK, ())) if self.callers else frozenset()
        self.handlers = frozenset(self.callers.get(HANDLER_MARK, ())) if self.callers else frozenset()
        self._down: dict[str, list[str]] | None = None  # caller -> what it calls (`_serving_loop`)
        self._searching: set[str] = set()
        # `passed_by`'s questions being answered, each with its depth on the stack, and the
        # shallowest of them the answer being worked out has met again (a cycle).
        self._passing: dict[tuple, int] = {}
        self._met_again = 1 << 30
        self._given_fields = None  # guards.GivenFields, on first use
        self._children: dict[str, list[str]] | None = None  # class -> its subclasses (`_built_elsewhere`)
        self._class_guards: dict[tuple[str, str], frozenset[str]] = {}  # (class, method asked) -> where it is used (`_uses_of`)

    @staticmethod
    def _matches(node: str, patterns: tuple) -> bool:
        name = node.rpartition(".")[2]
        return any(fnmatchcase(node if "." in p else name, p) for p in patterns)

    def _is_hot(self, node: str) -> bool:
        found = self._hot_nodes.get(node)
        if found is None:
            found = self._hot_nodes[node] = not node.endswith((COLD_CALLER, UNTAKEN_CALLER)) and self._matches(node, self.hot)
        return found

    def _is_cold(self, node: str) -> bool:
        # Asked of the same functions again and again by the searches of the ways in (a
        # file's branches asked about its callers: millions of pattern matches); a function's
        # name decides, so the answer is kept.
        found = self._cold_nodes.get(node)
        if found is None:
            found = self._cold_nodes[node] = self._cold_by_name(node)
        return found

    def _cold_by_name(self, node: str) -> bool:
        if node.endswith((COLD_CALLER, UNTAKEN_CALLER)):
            return True
        name = node.rpartition(".")[2]
        return (name[:1].isupper() or name == "__init__" or self._matches(node, self.cold) or coldcode.vae_function(name)
                or self._handler(node)
                or node in self.worker_functions or node in self.thread_targets and not self._serving_loop(node)
                or node in self.script_entries and not self.callers.get(node)
                or self._host_side(node))

    def _handler(self, node: str) -> bool:
        """Whether `node` is a method registered in a dispatch table keyed by message types
        (`HANDLER_MARK`), by its name, and no hot root's pattern names it."""
        return "." in node and node.rpartition(".")[2] in self.handlers and not self._matches(node, self.hot)

    def _serving_loop(self, target: str) -> bool:
        """Whether a thread's target runs the model: a call it makes, or one a function it
        reaches through resolved calls makes, is of a hot root (by name too: `self.worker.forward(batch)`
        (`forward`, `execute_model`, ...). Such a thread is the serving loop moved off the main
        thread (an executor loop started with `Thread(target=self._event_loop)`), and what it
        calls runs every step; a transfer or I/O thread that reaches no hot root is a worker.
        Calls made on a branch that runs once do not count; a search that grows past
        `_MAX_VISITED` functions is taken for a serving loop."""
        if self._down is None:
            down: dict[str, list[str]] = {}
            for callee, callers in self.callers.items():
                if callee[:1] == MARK_CALLER:
                    continue
                for caller in callers:
                    if not caller.endswith((COLD_CALLER, UNTAKEN_CALLER)):
                        down.setdefault(caller.partition(GUARDED_CALLER)[0], []).append(callee)
            self._down = down
        if target in self._searching:
            return True  # two threads' targets that reach each other: neither is known to be a worker
        self._searching.add(target)
        try:
            return self._reaches_a_hot_root(target)
        finally:
            self._searching.discard(target)

    def _reaches_a_hot_root(self, target: str) -> bool:
        seen, queue = {target}, [target]
        for node in queue:
            for callee in self._down.get(node, ()):
                by_name = callee[:1] in ".?"
                if self._is_hot(callee[1:] if by_name else callee):
                    return True  # `self.model.forward(batch)`, by name or resolved
                if by_name or callee in seen or self._is_cold(callee):
                    continue
                seen.add(callee)
                if len(seen) > _MAX_VISITED:
                    return True
                queue.append(callee)
        return False

    def _host_side(self, node: str) -> bool:
        """A method of a host-side pre-processing class (a Hugging Face-style processor or
        feature extractor: `platform_words.host_class`), or a function of a pre-processing
        file or folder (`platform_words.host_file`), which runs on the CPU per request."""
        if node in self.host_functions:
            return True  # defined in a pre-processing file or folder (`platform_words.host_file`)
        cls = node.rpartition(".")[0]
        if not cls or " " in cls:
            return False
        found = self._host_classes.get(cls)
        if found is None:
            bases = self.facts.types.bases.get(cls)
            found = self._host_classes[cls] = bases is not None and host_class(cls, [b.rpartition(".")[2] for b in bases])
        return found

    def node(self, qualname: str) -> str:
        """The graph's function for a finding's enclosing scopes (`Class.method`,
        `outer.inner`, `Class.method.inner`)."""
        parts = qualname.split(".")
        if len(parts) >= 2 and self.facts.types.is_class(parts[-2]):
            return f"{parts[-2]}.{parts[-1]}"
        return parts[-1]

    def __call__(self, filename: str, qualname: str):
        name = self.node(qualname)
        reads = self.facts.reads
        if _vendored(filename):
            verdict = self.vendored_verdict(name)
            if reads is not None:
                reads[("tv", name)] = _plain_verdict(verdict)
            return verdict
        verdict = self.verdict(name)
        if reads is not None:
            reads[("t", name)] = _plain_verdict(verdict)
        return verdict

    def passed(self, filename: str, qualname: str, param: str, position: int, default: str, shape: str = "") -> tuple[str, ...] | None:
        """The kinds of argument (synclint/analysis/guards.py) that the calls of the function
        enclosing a finding pass for its parameter `param`, from code not known to be cold,
        of the calls that fit its `shape`; None where the index knows no call of it."""
        name = self.node(qualname)
        found = self.passed_kinds(name, param, position, default, shape)
        reads = self.facts.reads
        if reads is not None:
            reads[("g", name, param, position, default, shape)] = found
        return found

    def passed_from(self, filename: str, qualname: str, param: str, position: int, default: str, shape: str = "") -> tuple[tuple[str, str], ...] | None:
        """As `passed`, with the caller beside each kind (`passed_by`): for a reason that
        cites the calls."""
        name = self.node(qualname)
        found = self.passed_by(name, param, position, default, shape)
        reads = self.facts.reads
        if reads is not None:
            reads[("gb", name, param, position, default, shape)] = found
        return found

    def passed_kinds(self, name: str, param: str, position: int, default: str, shape: str = "", depth: int = 0) -> tuple[str, ...] | None:
        """The kinds of argument the calls of `name` from code not known to be cold pass for
        its parameter `param` (a parameter passed on: what its own callers pass), of the
        calls that fit `shape`; None where the index knows no call of it."""
        pairs = self.passed_by(name, param, position, default, shape, depth)
        return None if pairs is None else tuple(sorted({kind for kind, _ in pairs}))

    def passed_by(self, name: str, param: str, position: int, default: str, shape: str = "", depth: int = 0) -> tuple[tuple[str, str], ...] | None:
        """(kind, caller) for each kind of argument a call of `name` from code not known to
        be cold passes for `param` (as `passed_kinds`), with the function making the call
        (a kind passed on from further up is cited by the caller that passes it on)."""
        key = ("g", name, param, position, default, shape)
        if key in self.memo:
            return self.memo[key]
        # A cycle of calls passing the parameter on (wrappers of one name delegating to each
        # other, a recursive helper) adds no kind the calls into the cycle do not pass: met
        # again, the question answers nothing, and the kinds are the least fixpoint. An
        # answer worked out while a question further up the stack was open may lack what that
        # one adds: it is not kept, and is worked out again when asked on its own.
        if key in self._passing:
            self._met_again = min(self._met_again, self._passing[key])
            return ()
        level = self._passing[key] = len(self._passing)
        outer_met, self._met_again = self._met_again, 1 << 30
        try:
            found = self._passed_by(name, param, position, default, shape, depth)
        finally:
            del self._passing[key]
            met, self._met_again = self._met_again, min(outer_met, self._met_again)
        if found == () and met == level:
            found = None  # only the cycle's own calls pass it: nothing says what
        if met >= level:
            self.memo[key] = found
        return found

    def _passed_by(self, name: str, param: str, position: int, default: str, shape: str, depth: int) -> tuple[tuple[str, str], ...] | None:
        arguments = self.facts.arguments
        short = name.rpartition(".")[2]
        unreached = self._unreached_by(name)
        # A hot root's calls by a crowded name (`x.forward(...)`, defined by hundreds of classes)
        # say nothing of what this one is passed: a module's `forward` runs through `module(x)`,
        # and the calls of its name are the other classes'.
        by_name = ("." + short,) if self._is_hot(name) else ("." + short, "?" + short)
        calls = [*arguments.get(name, ()), *(c for target in by_name for c in arguments.get(target, ()) if c[0] not in unreached)]
        found = None
        if calls and depth <= _MAX_PASSED_ON:
            from synclint.analysis.path_tiers import Tier

            pairs: set[tuple[str, str]] = set()
            for caller, signature in calls:
                caller = self._caller(caller)
                if self._is_cold(caller) or not guards.fits(signature, shape):
                    continue
                verdict = self.verdict(caller)
                if verdict is not None and verdict.tier is Tier.COLD:
                    continue
                kind = guards.passed_kind(signature, param, position, default)
                if kind[:1] == guards.FIELD:  # a field's value: given where the repository never makes it None
                    kind = guards.GIVEN if kind[1:] in self.given_fields() else guards.UNKNOWN
                if kind.startswith(guards.PLATFORM):
                    kind = guards.on_targets(kind, self.targets)
                if kind.startswith("@"):  # the caller's own parameter, passed on
                    outer, at, outer_default, *declared = kind[1:].split("#")
                    upstream = self.passed_kinds(caller, outer, int(at), outer_default, "", depth + 1)
                    kinds = upstream if upstream is not None else (guards.UNKNOWN,)
                    if declared == [guards.NARROWED[1:]]:  # tested not None around the call: None never reaches it
                        kinds = {guards.GIVEN if k in (guards.UNKNOWN, guards.NONE) else k for k in kinds}
                    elif declared:  # declared never None (`max_top_k: int`): what may be None is a value
                        kinds = {guards.GIVEN if k == guards.UNKNOWN else k for k in kinds}
                    pairs.update((k, caller) for k in kinds)
                else:
                    pairs.add((kind, caller))
            found = tuple(sorted(pairs))
        return found

    def given_fields(self) -> guards.GivenFields:
        """The fields the repository never makes None (`guards.GivenFields` of the values it
        assigns them, marked beside the calls: `_CallGraph.graph`), a class's field by the
        classes of its lineage."""
        if self._given_fields is None:
            kinds = {mark[len(FIELD_MARK):]: set(found) for mark, found in self.callers.items() if mark.startswith(FIELD_MARK)} if self.callers else {}
            types = self.facts.types
            children: dict[str, list] = {}
            for name, parents in types.bases.items():
                for parent in parents:
                    children.setdefault(parent, []).append(name)

            def lineage(cls: str) -> set:
                found = set(types._lineage(cls))
                pending = [cls]
                while pending and len(found) < 256:
                    for child in children.get(pending.pop(), ()):
                        if child not in found:
                            found.add(child)
                            pending.append(child)
                return found

            self._given_fields = guards.GivenFields(kinds, lineage)
        return self._given_fields

    def field_given(self, filename: str, field: str) -> bool:
        """Whether the repository never makes field `field` None (for a finding's branch
        that tests it: `if meta.lens is None:`)."""
        found = field in self.given_fields()
        reads = self.facts.reads
        if reads is not None:
            reads[("fg", field)] = found
        return found

    def inherited_host_fields(self, filename: str) -> frozenset[str]:
        """The multimodal fields kept on the host by the modules the bases of this file's
        classes come from, and by theirs (synclint/analysis/host_fields.py), less those each
        of them moves to the device."""
        name = module_name(filename)
        found = self.inherited_of(name)
        reads = self.facts.reads
        if reads is not None:
            reads[("hf", name)] = found
        return found

    def inherited_of(self, name: str) -> frozenset[str]:
        callers = self.callers or {}
        modules = self.facts.field_modules
        if modules is None:  # once per index, not per file: a scan of every callee
            modules = self.facts.field_modules = tuple(sorted(
                {mark[len(kind):] for mark in callers if mark[:1] == MARK_CALLER for kind in _MODULE_MARKS if mark.startswith(kind)}))
        found: set[str] = set()
        seen = {name}
        pending = [(name, 0)]
        while pending:
            module, depth = pending.pop()
            if depth >= 4:
                continue
            for spec in callers.get(BASE_MODULE_MARK + module, ()):
                for base in modules:
                    if base not in seen and (base == spec or base.endswith("/" + spec)):
                        seen.add(base)
                        kept = set(callers.get(KEPT_FIELD_MARK + base, ())) - set(callers.get(DEVICE_FIELD_MARK + base, ()))
                        found |= kept
                        pending.append((base, depth + 1))
        return frozenset(found)

    def vendored_verdict(self, name: str):
        """The verdict on a function of a vendored folder: as any other, but cold when every
        way into it starts at vendored functions nothing calls."""
        verdict = self.verdict(name)
        if verdict is None and self.callers and not (self._is_hot(name) or self._is_cold(name)):
            entries = self._entries(name)
            if entries is not None and {e.rpartition(".")[2] for e in entries} <= self.vendored:
                from synclint.analysis.path_tiers import Tier, TierVerdict

                shown = name.rpartition(".")[2]
                return TierVerdict(Tier.COLD, f"vendored third-party code that no hot code of the repository calls (`{shown}()`)")
        return verdict

    def verdict(self, name: str):
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = None  # asked again while searching (through the kinds of argument a caller passes): no verdict
        verdict = self._built_elsewhere(name)
        if verdict is not None:
            self.memo[name] = verdict
            return verdict
        if self.callers and self._handler(name):
            from synclint.analysis.path_tiers import Tier, TierVerdict

            self.memo[name] = verdict = TierVerdict(Tier.COLD, _HANDLER_REASON.format(name.rpartition(".")[2]))
            return verdict
        verdict = None if not self.callers or self._is_hot(name) or self._is_cold(name) else self._search(name)
        if verdict is None and self.facts.orphans and self.callers and not (self._is_hot(name) or self._is_cold(name)):
            verdict = self._unused(name)
        self.memo[name] = verdict
        return verdict

    def _built_elsewhere(self, name: str):
        """Cold (for the target platforms) where `name` is a method of a class that the
        repository builds only on branches for other platforms (`if current_platform.is_xpu():
        return BatchedPrepare(...)`), it and its subclasses alike, and uses in no other way
        (passed as a class, stored in a registry, `Cls.from_config()`: built anywhere)."""
        cls = name.rpartition(".")[0]
        if not cls or "." in cls or not self.callers:
            return None
        found = self._uses_of(cls)
        if not found or self._on_targets(found):
            return None
        from synclint.analysis.path_tiers import Tier, TierVerdict

        where = sorted({p for g in found for p in g[len(guards.ON_PLATFORMS):].split("+")})
        return TierVerdict(Tier.COLD, f"a method of `{cls}`, which the repository builds only on branches for other platforms "
                                      f"({', '.join(where)}) than the targets")

    def _uses_of(self, cls: str, asking: str = "") -> frozenset[str]:
        """The guards of the uses of class `cls` and its subclasses (`guards.class_uses`):
        a registry entry's dotted path stands for the uses of the entry
        (`Registry.FLASH.get_class()`; one nothing uses may be chosen by name: anywhere); a
        class-level call `Cls.m(...)` counts where `m` may build the class (or is `asking`, the
        method that hands out the class whose uses are sought); a class another class's method
        hands out (`return Impl` in `Backend.get_impl_cls`) is used where that class is."""
        memo = self._class_guards
        key = (cls, asking)
        if key in memo:
            return memo[key]
        memo[key] = frozenset()  # asked again while searching (a cycle of classes handed out): nothing more
        if self._children is None:
            self._children = _children_of(self.facts.types.bases)
        anywhere = frozenset((guards.ANY_USE,))
        found: set[str] = set()
        for one in (cls, *_descendants(self._children, cls)):
            for guard in self.callers.get(BUILT_MARK + one, ()):
                head = guard[:1]
                if head == guards.SELF_BUILT:
                    continue
                if head == guards.QUERY:
                    method, _, where = guard[1:].partition("\t")
                    if method == asking or self._may_build(one, method):
                        found.add(where)
                elif head == guards.HANDED:
                    owner, _, method = guard[1:].rpartition(".")
                    found.update(self._uses_of(owner, method))
                else:
                    found.add(guard)
        deferred = [g for g in found if g[:1] == guards.REGISTERED]
        found.difference_update(deferred)
        for guard in deferred:
            found.update(self.callers.get(BUILT_MARK + guards.MEMBER + guard[1:], None) or anywhere)
        memo[key] = anywhere if self._on_targets(found) else frozenset(found)
        return memo[key]

    def _may_build(self, cls: str, method: str) -> bool:
        """Whether `cls.method(...)` may build `cls`: the method of its lineage calls or returns
        its class object (`guards.SELF_BUILT`), or no class of the lineage in the repository
        defines it (a library's `from_pretrained`)."""
        lineage = self.facts.types._lineage(cls)
        mark = guards.SELF_BUILT + method
        if any(mark in self.callers.get(BUILT_MARK + one, ()) for one in lineage):
            return True
        defined = self.facts.methods.get(method, ())
        return not any(one in defined for one in lineage)

    def _on_targets(self, found) -> bool:
        """Whether one of these guards of a class's uses runs on a target platform."""
        return any(not g.startswith(guards.ON_PLATFORMS) or guards.runs_on_targets(g, self.targets) for g in found)

    def _unused(self, name: str):
        """Cold when every way into `name` starts at a module-level function that nothing in
        the repository names (`Facts.orphans`): code kept for tests or for users of the
        package, which serving never runs."""
        entries = self._entries(name)
        if not entries:
            return None
        orphans = self.facts.orphans
        unbuilt = {e: self._unbuilt(e.rpartition(".")[0]) for e in entries if e not in orphans}
        if not all(unbuilt.values()):
            return None
        from synclint.analysis.path_tiers import Tier, TierVerdict

        shown = ", ".join(f"`{e}()`" for e in sorted(entries)[:3]) + (", ..." if len(entries) > 3 else "")
        if not unbuilt:
            return TierVerdict(Tier.COLD, f"reached only from {shown}, which nothing in the repository calls or names (code for tests or users, not serving)")
        builders = sorted({b for found in unbuilt.values() for b in found})
        built = ", ".join(f"`{b}()`" for b in builders[:3]) + (", ..." if len(builders) > 3 else "")
        return TierVerdict(Tier.COLD, f"reached only from {shown}, on objects only {built} builds, which nothing in the repository "
                                      "calls or names (code for tests or users, not serving)")

    def _unbuilt(self, cls: str, depth: int = 0) -> frozenset[str]:
        """The functions that build class `cls` (and its subclasses) where every one is code
        nothing runs (a function nothing names, or a method of a class only such code builds)
        and the class is used in no other way than built (not handed on as a class, nor kept
        in a registry); empty otherwise."""
        if not cls or "." in cls or depth > 3:
            return frozenset()
        key = ("b", cls)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = frozenset()  # asked again while searching (a cycle of builders): not unbuilt
        self.memo[key] = found = self._unbuilt_search(cls, depth)
        return found

    def _unbuilt_search(self, cls: str, depth: int) -> frozenset[str]:
        if self._children is None:
            self._children = _children_of(self.facts.types.bases)
        lineage = (cls, *_descendants(self._children, cls))
        builders = {b for one in lineage for b in self.callers.get(BUILDER_MARK + one, ())}
        if not builders:
            return frozenset()
        for one in lineage:
            for guard in self.callers.get(BUILT_MARK + one, ()):
                if guard[:1] in (guards.ANY_USE, guards.QUERY, guards.HANDED, guards.REGISTERED, guards.MEMBER):
                    return frozenset()  # handed on or looked up as a class: built where that goes
        orphans = self.facts.orphans
        for builder in builders:
            if builder in orphans:
                continue
            owner = builder.rpartition(".")[0]
            if owner == cls or not self._unbuilt(owner, depth + 1):
                entries = self._entries(builder)
                if not entries or not all(e in orphans or self._unbuilt(e.rpartition(".")[0], depth + 1) for e in entries):
                    return frozenset()
        return frozenset(builders)

    def _ways_in(self, node: str, weak: bool = True):
        """(caller, by a weak call by name) for each call of `node`: by name, only the calls
        that can bind to its parameters (`SHAPE_MARK`: `parser.process(token)` does not reach
        a `process(self, layer, role)`)."""
        callers = self.callers
        name = node.rpartition(".")[2]
        for caller in callers.get(node, ()):
            yield self._caller(caller), False
        shapes = callers.get(SHAPE_MARK + node)
        unreached = self._unreached_by(node)
        for target, by_weak_name in (("." + name, False), ("?" + name, True)):
            if by_weak_name and not weak:
                continue
            for caller in callers.get(target, ()):
                if caller in unreached:
                    continue  # `markov_head.init_state(h)` is no call of `LoRAManager.init_state`
                if shapes is None or self._may_bind(caller, target, shapes):
                    yield self._caller(caller), by_weak_name

    def _unreached_by(self, node: str) -> frozenset[str]:
        key = ("u", node)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = frozenset(self.callers.get(UNREACHED_MARK + node, ()))
        return found

    def _may_bind(self, caller: str, target: str, shapes) -> bool:
        """Whether a call of `target` (`.m`, `?m`: by name) that `caller` makes can bind to
        a method of one of `shapes`."""
        signatures = self._signatures_by_caller(target).get(caller)
        return signatures is None or any(guards.fits(signature, shape) for signature in signatures for shape in shapes)

    def _signatures_by_caller(self, target: str) -> dict[str, list[str]]:
        key = ("sig", target)
        found = self.memo.get(key)
        if found is None:
            found = {}
            for caller, signature in self.facts.arguments.get(target, ()):
                found.setdefault(caller, []).append(signature)
            self.memo[key] = found
        return found

    def _caller(self, caller: str) -> str:
        """A caller as the graph's function: one whose call is made only under a condition on
        its parameter or on the platform (`GUARDED_CALLER`) is that function, or a cold caller
        where no call of it outside cold code takes the branch, or the branch runs on none of
        the target platforms."""
        if GUARDED_CALLER not in caller:
            return caller
        base, _, conditions = caller.partition(GUARDED_CALLER)
        for guard in conditions[:-1].split(";"):
            if guard.startswith(guards.ON_PLATFORMS):
                if not guards.runs_on_targets(guard, self.targets):
                    return base + UNTAKEN_CALLER
                continue
            name, position, default, condition = guard.split("#")
            kinds = self.passed_kinds(base, name, int(position), default)
            if kinds is not None and not guards.can_take(condition, kinds):
                return base + UNTAKEN_CALLER
        return base

    def _entries(self, name: str) -> frozenset[str] | None:
        """The functions without callers (but themselves) that every way into `name` starts
        at (`name` itself when nothing calls it), or None when a hot root reaches it or the
        search is too big. Where the ways in only go round (wrappers of one name handing the
        call on to each other's namesakes) and no cold root calls in, every function on them."""
        seen = {name}
        queue = [name]
        entries = set()
        closed = True  # no cold root calls in
        while queue:
            current = queue.pop()
            empty = True
            for caller, _ in self._ways_in(current):
                if caller == current:  # a recursive call, or one handed on to the namesake of another object
                    continue
                empty = False
                if self._is_hot(caller):
                    return None
                if caller in seen:
                    continue
                if self._is_cold(caller):
                    closed = False
                    continue
                seen.add(caller)
                if len(seen) > _MAX_VISITED:
                    return None
                queue.append(caller)
            if empty:
                entries.add(current)
        return frozenset(entries or (seen if closed else ()))

    def _search(self, name: str):
        """Hot when a hot root reaches `name` through resolved calls; else, through every
        call (weak calls by name too), `unknown` with the way in when one reaches it and no
        resolved call comes from a cold root, no verdict when one does; cold when every way
        in ends at a cold root; no verdict when a way in has no callers."""
        from synclint.analysis.path_tiers import Tier, TierVerdict

        found, _, _ = self._walk(name, weak=False)
        if found is not None and found[0]:
            return TierVerdict(Tier.HOT, f"runs every step (called from {found[1]})")
        resolved_cold = found is not None
        found, cold_root, open_entry = self._walk(name, weak=True)
        if found is not None and found[0]:
            if resolved_cold:
                return None  # a weak way in from a hot root, a resolved one from a cold root
            # A weak way in: the call names a method that many unrelated classes define, on
            # an object of a class the index does not know. It may be this one: the code may
            # run every step, and nothing says it does (`Tier.UNKNOWN`, the way shown).
            return TierVerdict(Tier.UNKNOWN, f"may run every step: called by name from {found[1]}, "
                                             "a name many unrelated classes define")
        if cold_root is not None and not open_entry:
            root = cold_root.partition(" -> ")[0].partition(":")[0]
            if self._handler(root.partition(" ")[0]):  # less a `[on a branch ...]` note
                return TierVerdict(Tier.COLD, f"reached only from cold code, here a message handler that runs once per message of its kind ({cold_root})")
            if self._host_side(root):
                return TierVerdict(Tier.COLD, f"reached only from cold code or host-side pre-processing, which runs on the CPU per request ({cold_root})")
            return TierVerdict(Tier.COLD, f"reached only from cold code ({cold_root})")
        return None

    def _walk(self, name: str, weak: bool):
        """Breadth first up the callers of `name`: ((True, path) at the first hot root, or
        (False, path) of the first cold root, or None; the path of the first cold root;
        whether a way in has no callers). None for all when the search is too big."""
        parent: dict[str, str | None] = {name: None}
        queue = [name]
        cold_root = None
        open_entry = False
        for current in queue:
            empty = True
            for caller, _ in self._ways_in(current, weak):
                empty = False
                if caller in parent:
                    continue
                parent[caller] = current
                if self._is_hot(caller):
                    return (True, f"{caller}: {_path(parent, caller)}"), None, False
                if self._is_cold(caller):
                    cold_root = cold_root or caller
                    continue  # nothing above a cold root makes it hot
                if len(parent) > _MAX_VISITED:
                    return None, None, True
                queue.append(caller)
            if empty and current != name:
                open_entry = True  # a way in the index cannot follow
        shown = _path(parent, cold_root) if cold_root is not None else None
        return ((False, shown) if shown else None), shown, open_entry


_HANDLER_REASON = ("`{}()` is registered in a dispatch table keyed by message types: it runs once per message "
                   "of its kind (a request, a control command), not every step")


def _vendored(filename: str) -> bool:
    from synclint.analysis.pathkinds import VENDORED_FOLDERS

    parts = filename.replace("\\", "/").lower().split("/")
    return any(p in VENDORED_FOLDERS for p in parts[:-1])


def _path(parent: dict, start: str) -> str:
    """`Runner.execute_model -> _prepare_inputs -> plan_step`: a method's class is written
    where the path enters it (the next methods of the same class go by their names)."""
    steps = [start]
    while parent.get(steps[-1]) is not None and len(steps) < 8:
        steps.append(parent[steps[-1]])
    shown, previous = [], None
    for step in steps:
        cls, _, rest = step.partition(".") if "." in step.split(" ", 1)[0] else ("", "", step)
        shown.append(rest if cls and cls == previous else step)
        previous = cls
    return " -> ".join(shown)
