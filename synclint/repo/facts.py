"""What the solve found (`Facts`) and the questions the lint asks of it: the place of a field,
a parameter or a function's result, and the classes of fields and annotations. `install`
makes a solution the one the lint reads (`FACTS`); `recording` keeps what a lint asked, so
that a cached result is reused only while the answers it read are the same.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

from synclint.apis import torch_api as api
from synclint.repo.callgraph import _CallGraph, methods_of_class
from synclint.repo.classes import _Types
from synclint.repo.conventions import convention
from synclint.repo.keys import DEVICE, HOST, LIST, NUMPY, PASSES_THROUGH, PLACES, RESULT_ITEM, SCALAR
from synclint.screen import places


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
    # the kinds of value the repository assigns each field (`_CallGraphTiers.given_fields`),
    # on first use: a `GivenFields` whose answers each lint works out afresh (`fresh`)
    given_fields: object = field(default=None, compare=False, repr=False)
    # fingerprint of an earlier index -> the names of the facts changed since (synclint/repo/delta.py):
    # a cached file none of whose questions names one of them holds without asking them again
    delta: dict = field(default_factory=dict, compare=False, repr=False)
    # a digest of the call graph and the classes (`structure_digest`): the call graph's fingerprint
    structure: str = field(default="", compare=False, repr=False)

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


def graph_fingerprint(facts: Facts | None = None) -> str:
    """A digest of everything the call graph's answers (GRAPH_QUESTIONS) read of the facts:
    the callers, the arguments they pass, the classes, the vendored, crowded, unnamed
    functions and the methods (`Facts.structure`). Equal for two indexes, those answers are
    equal too."""
    facts = FACTS if facts is None else facts
    if not facts.structure:
        facts.structure = structure_digest(facts.callers, facts.classes, facts.arguments, facts.crowded, facts.orphans, facts.methods,
                                           facts.vendored)
    return facts.structure


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


def structure_digest(graph: dict, classes: tuple, arguments: dict, crowded: frozenset, orphans: frozenset, methods: dict,
                     vendored: frozenset) -> str:
    """A digest of the facts' structure: the call graph, the classes but for their typed fields,
    the arguments callers pass, the crowded, unused and vendored functions and the methods.
    Worked out once per solve (about 0.4 s for a repository of 140,000 call edges) and kept
    with the facts: an edit that changes places alone keeps it (`refingerprint`)."""
    # repr, not marshal: the same facts read back from disk must give the same digest.
    _typed, declared, bases, field_types, returns = classes
    blob = repr((sorted(graph.items()), sorted(tuple(d) for d in declared), sorted((k, tuple(v)) for k, v in bases.items()),
                 sorted(field_types.items()), sorted(returns.items()), sorted(arguments.items()), sorted(crowded), sorted(orphans),
                 sorted(methods.items()), sorted(vendored)))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _fingerprint(values: dict, typed: dict, structure: str) -> str:
    """The facts' fingerprint: their places, the masks of their typed fields and their
    structure (`structure_digest`)."""
    blob = repr((sorted(values.items()), sorted((k, v[0]) for k, v in typed.items()), structure))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def fingerprinted(facts: Facts, structure: str = "") -> Facts:
    """`facts` with their structure digest (`structure`, where the caller knows it unchanged;
    else worked out) and their fingerprint."""
    facts.structure = structure or structure_digest(facts.callers, facts.classes, facts.arguments, facts.crowded, facts.orphans,
                                                    facts.methods, facts.vendored)
    facts.fingerprint = _fingerprint(facts.values, facts.classes[0], facts.structure)
    return facts


_FACTS_FIELDS = 12


def _facts_blob(facts: Facts) -> tuple:
    """What is stored of solved facts (read back by `_facts_of`)."""
    return (facts.values, facts.fingerprint, facts.callers, facts.examples, facts.vendored, facts.classes, facts.arguments, facts.crowded,
            facts.orphans, facts.methods, facts.delta, facts.structure)


def _facts_of(blob: tuple) -> Facts:
    values, fingerprint, callers, examples, vendored, classes, arguments, crowded, orphans, methods, delta, structure = blob
    return Facts(values, fingerprint, callers, examples=examples, vendored=vendored, classes=classes, arguments=arguments, crowded=crowded,
                 orphans=orphans, methods=methods, delta=delta, structure=structure)
