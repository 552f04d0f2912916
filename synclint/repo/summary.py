"""One module's summary: its flows (what it assigns to fields, passes to parameters and
returns), its signatures, declared tensors and numbers, the calls each function makes and
the names it mentions. Computed with `ast` alone, cached by content (synclint/repo/store.py).
"""

from __future__ import annotations

import ast
from collections import Counter

from synclint.analysis import astwalk, class_uses, coldcode, given_fields, guards, platform_branches
from synclint.analysis.host_fields import base_modules, declares_fields, device_fields, host_fields
from synclint.apis import torch_api as api
from synclint.apis.tensor_members import ARRAY_ONLY_MEMBERS, TENSOR_MEMBERS
from synclint.repo.classes import _as_host_copy, _class_info
from synclint.repo.declarations import (
    _CLASS_NAME_SUFFIXES, _by_name_method, _class_method, _container_annotation, _container_value, _declared,
    _device_kernel, _has_number_parameter, _held_functions, _number_annotation, _number_field_annotation,
    _python_iterable, _receiver, _scalar, _sequence_parameters, _tuple_annotation, _tuple_length,
    _zero_dim_of,
)
from synclint.repo.edges import _built_class, _generic_host_methods
from synclint.repo.keys import (
    BASE_MODULE_MARK, BUILDER_MARK, BUILT_MARK, COLD_CALLER, DEVICE, DEVICE_FIELD_MARK, FIELD_MARK,
    GUARDED_CALLER, HANDLER_MARK, HELD_CALL, HELD_MARK, HOST, HOST_MARK, KEPT_FIELD_MARK, MARK_CALLER, NUMPY,
    PASSED_FUNCTION_MARK, PASSES_THROUGH, RECEIVER_MARK, RESULT_ITEM, SCALAR, SCRIPT_MARK, SHAPE_MARK,
    THREAD_MARK, WORKER_MARK, WORKER_PARAM_MARK, _EXTERNAL, _FIELD_CALL, _NO_SUMMARY, _SUPER_CALL,
)
from synclint.repo.recorder import _Recorder
from synclint.repo.references import _MAY_BE_NONE, name_references
from synclint.screen import places
from synclint.screen.facts import FactReader, NESTED, function_key, nested_key, parsed


def _copied_field(target: ast.Attribute, value) -> str | None:
    """The field of the same object that `obj.a = value` copies (`torch.zeros_like(obj.b,
    device=d)`, `obj.b.to(d)`): "b", or None."""
    if type(value) is not ast.Call:
        return None
    func = value.func
    candidates = [func.value] if type(func) is ast.Attribute else []
    if value.args:
        candidates.append(value.args[0])
    base = ast.dump(target.value)
    for node in candidates:
        if type(node) is ast.Attribute and node.attr != target.attr and ast.dump(node.value) == base:
            return node.attr
    return None


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
        # What the module assigns to fields, by name (given_fields.field_values), as marks beside its calls.
        marks = {(MARK_CALLER, FIELD_MARK + field, kind) for field, kind in given_fields.field_values(tree)}
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
        marks.update((MARK_CALLER, BUILT_MARK + name, guard) for name, guard in class_uses.class_uses(tree))
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
        copies: list[tuple] = []  # (class, field, the field of the same object it copies, the copy's places)
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
                            before = len(self.flows)
                            self._flow(("A", owner, target.attr), node.value, unit, node.lineno)
                            source = _copied_field(target, node.value)
                            if source is not None and len(self.flows) > before:
                                copies.append((owner, target.attr, source, self.flows[before][1]))
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
        self._device_copies(copies)
        return (tuple(self.flows), tuple(self.signatures), tuple(self.mirrors), tuple(self.tensors), tuple(sorted(self.edges)))

    def _device_copies(self, copies: list[tuple]) -> None:
        """A class that holds a host tensor and its copy on the device (`self.cpu =
        torch.zeros(n, pin_memory=True)`, `self.gpu = torch.zeros_like(self.cpu, device=device)`,
        whatever the fields are called): the copy is declared a tensor, as an annotation would
        declare it, so that where every assignment gives it a device tensor it is read as one
        (`Facts.typed_fact`). The source must be given host data alone in this module, and
        the copy a device tensor alone (the assignments of other modules join in the solve)."""
        if not copies:
            return
        host: dict[tuple, bool] = {}
        for target, local, symbols, _ in self.flows:
            if target[0] == "A":
                alone = bool(local & (HOST | NUMPY)) and not local & DEVICE and not symbols
                host[target[1:]] = host.get(target[1:], True) and alone
        for owner, field, source, local in copies:
            if host.get((owner, source)) and local & DEVICE and not local & (HOST | NUMPY):
                self.tensors.append(("A", owner, field))

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
        on_platforms = platform_branches.platform_calls(func, self._platform_fields(unit.owner) if unit.owner is not None else None)
        # ... or in a method of a class built only on some platforms (`if not _is_xpu: raise` in its `__init__`).
        built_on = self._constructor_platforms(unit.owner) if unit.method and unit.owner is not None and func.name != "__init__" else None
        if built_on is not None:
            platform_branches.on_platforms_within(on_platforms, func.body, built_on)

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
                # `mod = Sub(...)`, then `mod(x)`; or one class per branch (`check =
                # DeferredCheck(...)` / `check = Check()`): each one's `__call__`
                classes = self._classes_of_object(func, unit)
                if classes:
                    return tuple(f"{cls}.__call__" for cls in classes)
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
        """The fields the class only ever sets to a platform predicate (`platform_branches.platform_fields`)."""
        found = self._platforms_memo.get(id(owner))
        if found is None:
            found = self._platforms_memo[id(owner)] = platform_branches.platform_fields(owner.header.node)
        return found

    def _constructor_platforms(self, owner) -> frozenset[str] | None:
        """The platforms the class can be built on (`platform_branches.constructor_platforms`)."""
        key = id(owner)
        if key not in self._built_on_memo:
            self._built_on_memo[key] = platform_branches.constructor_platforms(owner.header.node)
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

    def _classes_of_object(self, name: ast.Name, unit) -> tuple:
        """The classes of the object a local name holds: its one class, or the class of each
        of its bindings where every one says its class (`check = DeferredCheck(...)` in one
        branch, `check = Check()` in the other); () where any does not."""
        one = self._class_of(name, unit)
        if one:
            return (one,)
        found = []
        for names, value in unit.bindings:
            if name.id not in names:
                continue
            if type(value) is not ast.Call:
                return ()
            cls = self._class_of(value, unit)
            if not cls:
                return ()
            if cls not in found:
                found.append(cls)
        return tuple(found)

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
        # object, `self.sub(x)`, `Cls.m()`, `super().m()`, `check(x)` of a local object
        # `check = StopCheck()`: its `__call__`), or `.m` (any method `m`): resolved in the solve.
        refs = () if built else tuple(
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
