"""The call graph of the repository: calls resolved by name, through the class of their object,
through method aliases and `super()`; its classes' families; and the functions nothing in
the repository names (`unused`).
"""

from __future__ import annotations

from synclint.analysis import receivers
from synclint.apis import torch_api as api
from synclint.apis.tensor_members import TENSOR_MEMBERS
from synclint.repo.classes import _Types
from synclint.repo.keys import (
    ALIAS, BUILDER_MARK, GENERIC_BASES, HELD_CALL, HELD_MARK, MARK_CALLER, NAME_PREFIX, RECEIVER_MARK,
    UNREACHED_MARK, _CLASS_UNION, _FIELD_CALL, _LIBRARY_BASES, _SUPER_CALL,
)

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


def methods_of_class(graph, ref: str) -> tuple:
    """The methods (`Cls.m`) a call `obj.m()` with `obj` of class `Cls` runs (`ref`: "Cls.m"),
    as the call graph resolves it; () where it resolves to no method of the repository."""
    targets, _ = graph.resolve(ref)
    return tuple(t for t in targets if "." in t)


_MAX_VISITED = 4000


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
        self.few: dict[str, bool] = {}  # `_few`, per name, once the methods are known
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

        def reached(target: str) -> bool:  # a function of the repository, or a name one of them has
            return target in defined or target[:1] in ".?" and target[1:] in named

        self.arguments = {target: tuple(sorted(found)) for target, found in passed.items() if reached(target)}
        graph = {callee: tuple(sorted(found)) for callee, found in callers.items() if reached(callee)}
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
            naming = receivers.word_index(candidates)
            named = frozenset(naming)
            for caller, words in by_caller.items():
                for cls in receivers.unreached(words, candidates, tensor_member, named, naming):
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
        found = self.few.get(name)
        if found is None:
            limit = _FEW_FAMILIES - (name in self.functions)
            families: set[str] = set()
            for cls in self.methods.get(name, ()):
                families.add(self._root(cls))
                if len(families) > limit:
                    break
            found = self.few[name] = len(families) <= limit
        return found

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
