"""Solving the summaries of the whole repository: the classes and the call graph are
assembled, each file's flows are expanded through what their symbols stand for (a method's
result through its class, a tuple's element, an argument passed through), and the fixpoint
gives each field, parameter and result its place.
"""

from __future__ import annotations

from collections import Counter

from synclint.repo.callgraph import (
    MIN_MODULES_FOR_UNUSED, _CallGraph, _vendored, closed_methods, methods_of_class, unused,
)
from synclint.repo.citing import _cite, _device_reason, _mask_of, _what, _where, _written
from synclint.repo.declarations import _declared_fields
from synclint.repo.edges import _file_edges
from synclint.repo.facts import Facts, Types, _Family, fingerprinted
from synclint.repo.fixpoint import (
    _SYSTEM, _agreed_parameter, _ambiguous, _dominant, _dominant_reason, _fixpoint, _loop_numbers, _mirrored,
    _other, _passed_on, _relay_fact, _votes,
)
from synclint.repo.keys import (
    ALIAS, DEVICE, ELEMENT, HOST, LIST, METHOD_RESULT, NUMPY, PASSED_ARGUMENT, PASSES_THROUGH, PLACES_OF,
    RESULT_ITEM, SCALAR, _HOST_DATA, _RESOLVED_SYMBOLS,
)
from synclint.repo.recorder import _unique


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
    return fingerprinted(Facts(facts, "", graph, examples=examples, vendored=frozenset(vendored - elsewhere), classes=classes,
                               arguments=arguments, crowded=crowded, orphans=orphans, methods=methods))


def _methods_table(signatures) -> dict[str, tuple[str, ...]]:
    """Method name -> the classes of the repository that define it (`Facts.methods`)."""
    out: dict[str, set] = {}
    for name in signatures:
        cls, _, method = name.rpartition(".")
        if cls:
            out.setdefault(method, set()).add(cls)
    return {method: tuple(sorted(classes)) for method, classes in out.items()}


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
