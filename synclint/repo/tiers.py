"""Hot and cold through the call graph: a function is hot when a hot root (`forward` of a
module, the configured hot functions) reaches it through calls the index resolves, cold
when only `__init__`, weight loading, warm-up, capture or other platforms' code reach it.
`--explain` prints the path.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from synclint.analysis import class_uses, coldcode, guards, platform_branches
from synclint.analysis.given_fields import GivenFields
from synclint.analysis.platform_words import host_class
from synclint.repo import facts as index_facts
from synclint.repo.callgraph import _MAX_PASSED_ON, _MAX_VISITED, _children_of, _descendants, _path, _vendored
from synclint.repo.delta import Affected
from synclint.repo.edges import _worker_functions, module_name
from synclint.repo.facts import Facts, _plain_verdict, dependency_digest
from synclint.repo.keys import (
    BASE_MODULE_MARK, BUILDER_MARK, BUILT_MARK, COLD_CALLER, DEVICE_FIELD_MARK, FIELD_MARK, GUARDED_CALLER,
    HANDLER_MARK, HOST_MARK, KEPT_FIELD_MARK, MARK_CALLER, SCRIPT_MARK, SHAPE_MARK, THREAD_MARK,
    UNREACHED_MARK, UNTAKEN_CALLER, _MODULE_MARKS,
)

_VERIFIERS: dict = {}


def verifier(settings) -> Verifier:
    """One `Verifier` per installed index and settings in this process, shared by the cache's
    lookups and the reuse of a changed file's findings: its answers (the call graph's tier
    verdicts above all) are worked out once for all the files it checks."""
    key = (id(index_facts.FACTS), settings)
    found = _VERIFIERS.get(key)
    if found is None or found.facts is not index_facts.FACTS:
        _VERIFIERS.clear()
        found = _VERIFIERS[key] = Verifier(index_facts.FACTS, settings)
    return found


class Verifier:
    """Answers the questions a cached file asked, again, with the facts installed now: its
    findings are still valid when every answer is the same (`digest(keys) == stored`)."""

    def __init__(self, facts: Facts, settings) -> None:
        self.facts = facts
        self.tiers = _CallGraphTiers(facts, settings)
        self.answers: dict[tuple, object] = {}
        self._affected: dict[str, Affected | None] = {}

    def affected(self, index: str) -> Affected | None:
        """Whether a question may be answered otherwise than under the index of fingerprint
        `index` (`delta.Affected`); None where these facts were not derived from that one by
        an edit that changed places alone (every question must be asked)."""
        if not index:
            return None
        found = self._affected.get(index, self)
        if found is self:
            changes = self.facts.delta.get(index)
            found = self._affected[index] = Affected(changes) if changes is not None else None
        return found

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


def tiers_hook(settings):
    """The repository's verdict on how often a function runs (the hook of
    synclint/analysis/tier.py). Without a call graph it has no verdict (None for every
    function), and a cached result records that it asked."""
    return _CallGraphTiers(index_facts.FACTS, settings)


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
        # Answers that met an open question again: key -> (answer, the level of that question),
        # and the keys kept aside by the level they wait on (`passed_by`).
        self._provisional: dict[tuple, tuple] = {}
        self._kept_aside: dict[int, list[tuple]] = {}
        self._given_fields = None  # GivenFields, on first use
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
        # Such an answer is kept aside while the question it met again is open: asked again
        # meanwhile (a cycle's members ask each other many times over), it is the same answer,
        # and it is dropped when that question is answered.
        provisional = self._provisional.get(key)
        if provisional is not None:
            self._met_again = min(self._met_again, provisional[1])
            return provisional[0]
        level = self._passing[key] = len(self._passing)
        outer_met, self._met_again = self._met_again, 1 << 30
        try:
            found = self._passed_by(name, param, position, default, shape, depth)
        finally:
            del self._passing[key]
            met, self._met_again = self._met_again, min(outer_met, self._met_again)
            for open_level in [lv for lv in self._kept_aside if lv >= level]:
                for aside in self._kept_aside.pop(open_level):
                    self._provisional.pop(aside, None)
        if found == () and met == level:
            found = None  # only the cycle's own calls pass it: nothing says what
        if met >= level:
            self.memo[key] = found
        else:
            self._provisional[key] = (found, met)
            self._kept_aside.setdefault(met, []).append(key)
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

    def given_fields(self) -> GivenFields:
        """The fields the repository never makes None (`GivenFields` of the values it
        assigns them, marked beside the calls: `_CallGraph.graph`), a class's field by the
        classes of its lineage."""
        if self._given_fields is None and self.facts.given_fields is not None:
            self._given_fields = self.facts.given_fields.fresh()
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

            self._given_fields = GivenFields(kinds, lineage)
            self.facts.given_fields = self._given_fields.fresh()  # once per index, not per file
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

        where = sorted({p for g in found for p in g[len(platform_branches.ON_PLATFORMS):].split("+")})
        return TierVerdict(Tier.COLD, f"a method of `{cls}`, which the repository builds only on branches for other platforms "
                                      f"({', '.join(where)}) than the targets")

    def _uses_of(self, cls: str, asking: str = "") -> frozenset[str]:
        """The guards of the uses of class `cls` and its subclasses (`class_uses.class_uses`):
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
        anywhere = frozenset((class_uses.ANY_USE,))
        found: set[str] = set()
        for one in (cls, *_descendants(self._children, cls)):
            for guard in self.callers.get(BUILT_MARK + one, ()):
                head = guard[:1]
                if head == class_uses.SELF_BUILT:
                    continue
                if head == class_uses.QUERY:
                    method, _, where = guard[1:].partition("\t")
                    if method == asking or self._may_build(one, method):
                        found.add(where)
                elif head == class_uses.HANDED:
                    owner, _, method = guard[1:].rpartition(".")
                    found.update(self._uses_of(owner, method))
                else:
                    found.add(guard)
        deferred = [g for g in found if g[:1] == class_uses.REGISTERED]
        found.difference_update(deferred)
        for guard in deferred:
            found.update(self.callers.get(BUILT_MARK + class_uses.MEMBER + guard[1:], None) or anywhere)
        memo[key] = anywhere if self._on_targets(found) else frozenset(found)
        return memo[key]

    def _may_build(self, cls: str, method: str) -> bool:
        """Whether `cls.method(...)` may build `cls`: the method of its lineage calls or returns
        its class object (`class_uses.SELF_BUILT`), or no class of the lineage in the repository
        defines it (a library's `from_pretrained`)."""
        lineage = self.facts.types._lineage(cls)
        mark = class_uses.SELF_BUILT + method
        if any(mark in self.callers.get(BUILT_MARK + one, ()) for one in lineage):
            return True
        defined = self.facts.methods.get(method, ())
        return not any(one in defined for one in lineage)

    def _on_targets(self, found) -> bool:
        """Whether one of these guards of a class's uses runs on a target platform."""
        return any(not g.startswith(platform_branches.ON_PLATFORMS) or platform_branches.runs_on_targets(g, self.targets) for g in found)

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
                if guard[:1] in (class_uses.ANY_USE, class_uses.QUERY, class_uses.HANDED, class_uses.REGISTERED, class_uses.MEMBER):
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
            if guard.startswith(platform_branches.ON_PLATFORMS):
                if not platform_branches.runs_on_targets(guard, self.targets):
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
