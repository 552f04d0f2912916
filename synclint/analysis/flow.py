"""Carries the placement environment (name -> Placement) through one scope's statements:
assignment, augmented assignment, unpacking, branches (joined), loops (to a fixpoint), `with`,
`try`, parameters (annotations, device-named, defaults), and records `self.<attr> = ...` and
`self.register_buffer(...)` in methods for the class-wide view of `self.<attr>`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from synclint.analysis import evidence, guarded_branches, guards
from synclint.analysis.annotations import annotation_placement
from synclint.analysis.nodes import OWN_SCOPES, always_leaves, children
from synclint.analysis.scopeenv import FlowEnv
from synclint import repo
from synclint.screen.facts import NESTED
from synclint.analysis.sources import DEVICE_CONTEXT, is_module_class, repository_placement, resolve_by_method, string_value
from synclint.analysis.values import TENSOR_PLACES, UNKNOWN, Env, Evidence, Place, Placement, join, placed
from synclint.apis import torch_api as api
from synclint.violation import Confidence

if TYPE_CHECKING:
    from synclint.analysis.placement import PlacementAnalysis, ScopeFacts

HIGH, MEDIUM = Confidence.HIGH, Confidence.MEDIUM

# A loop body is re-walked until no name's placement changes; the lattice is finite (sets of
# a few places, three confidences), so this bound is only a guard.
_MAX_LOOP_ROUNDS = 6


class FlowWalker:
    """Carries an environment through the statements of one scope, recording it before each."""

    def __init__(
        self, analysis: PlacementAnalysis, chain: tuple[cst.CSTNode, ...], facts: ScopeFacts, promoted: Env | None = None,
        origins: dict | None = None,
    ) -> None:
        self.analysis = analysis
        self.chain = chain
        self.scope = chain[-1]
        self.facts = facts
        self.evaluator = analysis.evaluator
        # Parameters shown to be device tensors by their uses (evidence.device_uses), and the
        # parameters whose place nothing states, for that search. A local bound to a tensor
        # of unsaid place (`ids = batch.input_ids`, a field the repository gives device and
        # host tensors) is a candidate too, keyed by its name, with the node its value comes
        # from (`origins`); a name bound to values of two origins is none.
        self.promoted = promoted or {}
        self._moved_memo: dict[int, frozenset] = {}
        self.origins = origins or {}
        self.candidates: dict[str, cst.CSTNode] = {}
        self._local_origins: dict[str, cst.CSTNode | None] = {}

    def eval(self, expr: cst.BaseExpression, env: Env) -> Placement:
        return self.evaluator.eval(expr, env, self.chain)

    def run(self, env: Env) -> None:
        env = FlowEnv(env)  # the outer scope's view is never written
        scope = self.scope
        if isinstance(scope, cst.FunctionDef):
            self._bind_parameters(scope, env)
            self.facts.entry_env = env.snapshot()
            self._block(scope.body, env)
            for name, origin in self._local_origins.items():
                if origin is not None and name not in self.candidates:
                    self.candidates[name] = origin
        elif isinstance(scope, cst.ClassDef):
            self._block(scope.body, env)
        elif isinstance(scope, cst.Module):
            self._statements(scope.body, env)

    def _bind_parameters(self, func: cst.FunctionDef, env: Env) -> None:
        params = func.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        names = {p.name.value for p in every}
        for param in every:
            name = param.name.value
            if name in ("self", "cls"):
                continue
            value = annotation_placement(param.annotation, self.analysis.imports, param)
            if value is not None and value.is_(Place.HOST, Place.DEVICE) and self._is_module_forward(func) and not repo.convention(name) & (repo.HOST | repo.NUMPY | repo.LIST) and not _given_host_data(func, self.chain, name) \
                    and name not in self._moved_inputs(func):
                # A tensor input of an nn.Module's forward(): it lives where the module runs
                # (unless the forward moves it to the device itself: then it holds host data).
                reason = f"tensor input `{name}` of an nn.Module's forward() (inferred: inputs live where the module runs)"
                value = placed(Place.DEVICE, MEDIUM, param, reason)
            if (value is None and param.annotation is None) or (value is not None and value.confidence == Confidence.LOW and value.is_(Place.HOST, Place.DEVICE)):
                # No evidence here (or a tensor of unsaid place): what every caller in the
                # repository passes, or what the name says (synclint/repo/).
                found = repository_placement(_param_fact(func, self.chain, name), param)
                if found is not None and found.confidence == Confidence.LOW:
                    found = _resolved_by_use(found, func, name)
                if found is not None:
                    value = found
                elif name in self.promoted:
                    value = self.promoted[name]
                else:
                    mirror = evidence.mirror_of(name, names)
                    if mirror is not None:
                        value = placed(
                            Place.DEVICE, MEDIUM, param,
                            f"parameter `{name}` sits beside its host mirror `{mirror}` (inferred: `{name}` is the device copy)",
                        )
                    elif (param.default is None or _is_none(param.default)) and name not in self._moved_inputs(func):
                        # (a parameter the function moves to the device holds host data: its
                        # uses do not make it a device tensor)
                        self.candidates[name] = param
            if value is not None and value.is_(Place.SCALAR) and param.annotation is not None:
                # Annotated a number: a caller may still pass a 0-dim device tensor (the
                # element of a loop over a device tensor, `counts[rank]`, `pids.max() + 1`);
                # the repository says so, for the method through its class or by its name (for
                # a name several modules define, what this module's own calls pass).
                found = repo.file_relay_fact(self.analysis.filename, _method_key(func, self.chain) or _function_key(func, self.chain), name)
                if found is None:
                    found = _param_fact(func, self.chain, name)
                if found is None or found[0] != repo.DEVICE | repo.SCALAR:
                    found = repo.param_fact(_function_key(func, self.chain), name)
                if found is not None and found[0] == repo.DEVICE | repo.SCALAR:
                    value = join(value, placed(Place.DEVICE, MEDIUM, param, found[1]))
            if value is None:
                # No evidence: unknown, never guessed.
                value = UNKNOWN.because(param, f"parameter `{name}` has no annotation or default that places it")
                if name in api.DEVICE_LIKE_NAMES:
                    value = placed(Place.ACCEL_DEVICE, MEDIUM, param, f"parameter `{name}` is named like a device (inferred)")
            if param.default is not None:
                default = self.eval(param.default, env)
                if default.known and not default.is_(Place.OTHER):
                    # The caller may pass anything else: the default is one possibility.
                    value = join(value, default)
            if name in self.analysis.host_fields:
                value = placed(Place.HOST, MEDIUM, param, f"the field `{name}` is kept on the host (`keep_on_cpu=True`)")
            if value.may_be(Place.ACCEL_DEVICE):
                value = self._given_only_the_cpu(func, name, param) or value
            env[name] = value
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                kind = Place.SEQUENCE if star is params.star_arg else Place.OTHER
                env[star.name.value] = placed(kind, HIGH, star, "a `*args`/`**kwargs` container")

    def _given_only_the_cpu(self, func: cst.FunctionDef, name: str, param: cst.Param) -> Placement | None:
        """A device parameter (`.to(device)`, `torch.tensor(x, device=device)`) that every
        call of the function from code not known to be cold gives the CPU (`"cpu"`,
        `torch.device("cpu")`, a local bound only to one; or leaves out / passes None, which
        moves nothing: `.to(None)` returns the tensor itself, and a factory builds on the
        default device, the CPU), by the repository's call graph (synclint/repo/
        `_CallGraphTiers.passed_by`). The move is then host to host: the CPU device, at low
        confidence (a caller the index cannot see, such as a call through a reference to the
        function, may still pass an accelerator), so the findings it decides are hidden by
        default and `--explain` says why. None where a call passes anything else (another
        device, a tensor's `.device`, `**kwargs`, a parameter of callers the index does not
        know), where no call is known, or where no call names the CPU at all."""
        tiers = self.analysis.function_tiers
        passed_from = getattr(tiers, "passed_from", None)
        if passed_from is None or not self.chain or self.chain[-1] is not func:
            return None
        own = guarded_branches.function_parameters(func)
        if name not in own:
            return None
        position, default = own[name]
        qualname = ".".join(s.name.value for s in self.chain if isinstance(s, (cst.FunctionDef, cst.ClassDef)))
        pairs = passed_from("", qualname, name, position, default, guarded_branches.shape_of(func))
        if not pairs or any(kind not in (guards.CPU_DEVICE, guards.NONE) for kind, _ in pairs):
            return None
        if not any(kind == guards.CPU_DEVICE for kind, _ in pairs):
            return None  # never given a device at all: nothing here says where it points
        callers = sorted({caller for _, caller in pairs})
        shown = ", ".join(f"`{c}()`" for c in callers[:3]) + (f" and {len(callers) - 3} more" if len(callers) > 3 else "")
        left_none = " (or leave it None, which moves nothing)" if any(kind == guards.NONE for kind, _ in pairs) else ""
        reason = (
            f"parameter `{name}` of `{func.name.value}()` is given only the CPU by its callers outside cold code ({shown}){left_none}: "
            "the move stays on the host, unless a call the index cannot see passes an accelerator"
        )
        return Placement(frozenset({Place.ACCEL_DEVICE, Place.CPU_DEVICE}), Confidence.LOW, (Evidence(param, reason, Place.CPU_DEVICE.value),))

    def _moved_inputs(self, func: cst.FunctionDef) -> frozenset:
        found = self._moved_memo.get(id(func))
        if found is None:
            class_def = self._method_of()
            methods = frozenset(s.name.value for s in class_def.body.body if isinstance(s, cst.FunctionDef)) if class_def is not None else frozenset()
            found = self._moved_memo[id(func)] = moved_inputs(func.body, methods)
        return found

    def _is_module_forward(self, func: cst.FunctionDef) -> bool:
        class_def = self._method_of()
        return func.name.value == "forward" and class_def is not None and is_module_class(class_def, self.analysis.imports)

    def _block(self, body: cst.BaseSuite, env: Env) -> None:
        if isinstance(body, cst.IndentedBlock):
            self._statements(body.body, env)
        else:  # SimpleStatementSuite: `if x: y = 1`
            self.facts.env_before[id(body)] = env.snapshot()
            for small in body.body:
                self._small(small, env, body)

    def _statements(self, statements, env: Env) -> None:
        for stmt in statements:
            self._statement(stmt, env)

    def _statement(self, stmt: cst.BaseStatement, env: Env) -> None:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            fact = evidence.host_named_readback(stmt.body[0], env, stmt)
            if fact is not None:
                env[fact[0]] = fact[1]
        self.facts.env_before[id(stmt)] = env.snapshot()  # O(1): see scopeenv.py
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._small(small, env, stmt)
        elif isinstance(stmt, cst.If):
            fallback = _none_test(stmt.test)
            before = env.get(fallback) if fallback is not None else None
            then_facts, else_facts = host_narrowing(stmt.test, self.analysis.imports, env)
            then_env = env.fork()
            then_env.update(_keeping_pinned(then_facts, env))
            self._block(stmt.body, then_env)
            else_env = env.fork()
            else_env.update(_keeping_pinned(else_facts, env))
            if stmt.orelse is not None:
                if isinstance(stmt.orelse, cst.If):
                    self._statement(stmt.orelse, else_env)
                else:
                    self._block(stmt.orelse.body, else_env)
            # A branch that always leaves (`return`, `raise`) does not reach what follows:
            # after `if isinstance(x, torch.Tensor): ...; return ...`, x is no tensor.
            if always_leaves(stmt.body) and not (stmt.orelse is not None and always_leaves(stmt.orelse)):
                _adopt(env, else_env)
            elif stmt.orelse is not None and not isinstance(stmt.orelse, cst.If) and always_leaves(stmt.orelse.body):
                _adopt(env, then_env)
            else:
                _merge_into(env, then_env, else_env)
                if before is not None:
                    _host_unless_missing(env, fallback, before, else_env.get(fallback), stmt)
            normalised = _normalised_to_host(stmt, self.analysis.imports)
            if normalised is not None:
                env[normalised] = placed(
                    Place.HOST,
                    MEDIUM,
                    stmt,
                    f"`if not isinstance({normalised}, torch.Tensor): {normalised} = torch.tensor({normalised})` "
                    "builds a host tensor: the code expects host data (inferred)",
                )
        elif isinstance(stmt, (cst.For, cst.While)):
            self._loop(stmt, env)
        elif isinstance(stmt, cst.With):
            context = None
            for item in stmt.items:
                if item.asname is not None:
                    self._bind_target(item.asname.name, UNKNOWN, env, stmt)
                if isinstance(item.item, cst.Call) and self.evaluator.qualname(item.item.func, env) in api.DEVICE_CONTEXTS:
                    # `with torch.device(d):` the factories in it build where d says
                    context = self.evaluator.device_target(item.item, env, self.chain)
            if context is None:
                self._block(stmt.body, env)
            else:
                saved = env.get(DEVICE_CONTEXT)
                env[DEVICE_CONTEXT] = context.because(stmt, "built inside `with torch.device(...)`")
                self._block(stmt.body, env)
                if saved is None:
                    env.pop(DEVICE_CONTEXT, None)
                else:
                    env[DEVICE_CONTEXT] = saved
        elif isinstance(stmt, cst.Try):
            body_env = env.fork()
            self._block(stmt.body, body_env)
            branches = [body_env]
            for handler in stmt.handlers:
                h_env = env.fork()
                self._block(handler.body, h_env)
                branches.append(h_env)
            _merge_into(env, *branches)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body, env)
            if stmt.finalbody is not None:
                self._block(stmt.finalbody.body, env)
        elif isinstance(stmt, cst.Match):
            branches = []
            for case in stmt.cases:
                case_env = env.fork()
                self._block(case.body, case_env)
                branches.append(case_env)
            _merge_into(env, env.snapshot(), *branches)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self.analysis.remember_outer_env(stmt, env)
            env[stmt.name.value] = placed(Place.OTHER, HIGH, stmt, "a definition")
        else:
            body = getattr(stmt, "body", None)
            if isinstance(body, cst.BaseSuite):
                self._block(body, env)

    def _loop(self, stmt: cst.For | cst.While, env: Env) -> None:
        """The body may run zero or more times: join the entry environment with the body's
        exit, and walk again until nothing changes (a fixpoint)."""
        for _ in range(_MAX_LOOP_ROUNDS):
            before = env.snapshot()
            body_env = env.fork()
            if isinstance(stmt, cst.For):
                pairs = loop_bindings(stmt.target, stmt.iter, env, lambda e: self._element_of(e, env))
                if pairs is not None:
                    for target, value in pairs:
                        self._bind_target(target, value, body_env, stmt)
                else:
                    self._bind_target(stmt.target, self._element_of(stmt.iter, env), body_env, stmt)
            self._block(stmt.body, body_env)
            changed = _merge_into(env, before, body_env)
            if _same(env, before, changed):
                break
        if stmt.orelse is not None:
            self._block(stmt.orelse.body, env)

    def _small(self, small: cst.BaseSmallStatement, env: Env, stmt: cst.CSTNode) -> None:
        if isinstance(small, cst.Assign):
            value = self.eval(small.value, env)
            for target in small.targets:
                self._bind_target(target.target, value, env, stmt, small.value)
                self._record_self_attribute(target.target, value, stmt)
                if isinstance(small.value, (cst.List, cst.ListComp)):
                    self._record_elements(target.target, self._list_elements(small.value, env), env, stmt, fresh=True)
        elif isinstance(small, cst.AnnAssign):
            declared = annotation_placement(small.annotation, self.analysis.imports, small)
            if small.value is not None:
                value = self.eval(small.value, env)
                if not value.known and declared is not None:
                    value = declared
                self._bind_target(small.target, value, env, stmt, small.value)
                self._record_self_attribute(small.target, value, stmt)
            elif declared is not None:
                self._bind_target(small.target, declared, env, stmt)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            self._record_buffer(small.value)
            call = small.value
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("append", "insert") and call.args:
                self._record_elements(call.func.value, self.eval(call.args[-1].value, env), env, stmt, fresh=False)
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "extend" and len(call.args) == 1:
                # `masks.extend([m, n])`: each element of the literal is one of the list's; an
                # iterable that is no literal adds elements nothing here places.
                self._record_elements(call.func.value, self._added_elements(call.args[0].value, env), env, stmt, fresh=False)
        elif isinstance(small, cst.Assert):
            env.update(_keeping_pinned(host_narrowing(small.test, self.analysis.imports, env)[0], env))
        elif isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name):
                combined = self.evaluator._combine([small.target, small.value], env, small, "augmented assignment")
                if combined.known:
                    combined = combined.because(stmt, f"`{small.target.value}` updated in place")
                if isinstance(small.operator, cst.AddAssign) and combined.is_(Place.SEQUENCE):
                    # `masks += [mask]`: the list grows by the literal's elements
                    self._record_elements(small.target, self._added_elements(small.value, env), env, stmt, fresh=False)
                env[small.target.value] = combined
        elif isinstance(small, cst.Return) and small.value is not None:
            self.facts.returns.append(self.eval(small.value, env))
            value = small.value
            if isinstance(value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                self.facts.return_parts.append(tuple(self.eval(e.value, env) for e in value.elements))
            else:
                self.facts.return_parts.append(None)
        elif isinstance(small, cst.Return):
            self.facts.return_parts.append(None)  # a bare `return`: None, no tuple
        elif isinstance(small, cst.Del):
            for target in _del_targets(small.target):
                env.pop(target, None)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self.analysis.imports.add_import(small)
            for alias in small.names if not isinstance(small.names, cst.ImportStar) else ():
                bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                env.pop(bound, None)

    # --- `self.<attr>` across the class ----------------------------------------------------
    def _method_of(self) -> cst.ClassDef | None:
        """The class when this scope is one of its methods (where `self` is the instance)."""
        chain = self.chain
        if len(chain) >= 2 and isinstance(chain[-1], cst.FunctionDef) and isinstance(chain[-2], cst.ClassDef):
            return chain[-2]
        return None

    def _record_self_attribute(self, target, value: Placement, stmt) -> None:
        """`self.x = value` in a method: one of the values `self.x` may hold in every method.
        Recorded as the walk meets it, so later assignments (in this method or the next) see
        it: `self.device = device` then `self.buf = torch.zeros(..., device=self.device)`."""
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
            return
        if self.promoted:
            return  # a second walk (evidence.device_uses): the first recorded it
        class_def = self._method_of()
        if class_def is None:
            return
        name = target.attr.value
        if value.known:
            value = value.because(stmt, f"`self.{name}` assigned in `{self.scope.name.value}()`")
        self.analysis.record_class_attribute(class_def, name, value, moved=is_self_move(stmt, name))

    # --- lists of tensors: `bufs = [torch.zeros(..., device=d) for _ in r]`, `self.bufs.append(t)` ---
    def _list_elements(self, value: cst.List | cst.ListComp | cst.Tuple, env: Env) -> Placement | None:
        if isinstance(value, cst.ListComp):
            return self.eval(value.elt, env)
        elements = [self.eval(e.value, env) for e in value.elements if not isinstance(e, cst.StarredElement)]
        return join(*elements) if elements else None

    def _added_elements(self, value: cst.BaseExpression, env: Env) -> Placement:
        """What `lst += value` / `lst.extend(value)` adds: the elements of a literal, else
        elements nothing here places (the list's elements are then no longer all known)."""
        if isinstance(value, (cst.List, cst.ListComp, cst.Tuple)):
            found = self._list_elements(value, env)  # None for `[]`: nothing added
            if not isinstance(value, cst.ListComp) and any(isinstance(e, cst.StarredElement) for e in value.elements):
                found = join(found, UNKNOWN) if found is not None else UNKNOWN  # `[*more, m]`
            return found
        return UNKNOWN

    def _record_elements(self, target, value: Placement | None, env: Env, stmt, fresh: bool) -> None:
        """What the elements of the list `target` hold, kept as `name[]` (a name) or
        `self.attr[]` (a field of the class), read by `lst[i]` (sources.py `_subscript`)."""
        if isinstance(target, cst.Name):
            key = target.value + "[]"
            if value is None:
                env.pop(key, None) if fresh else None
                return
            if not fresh and key not in env:
                if not (target.value in env and env[target.value].is_(Place.SEQUENCE)):
                    return  # not a list this scope built: its other elements are unknown
            elif not fresh:
                value = join(env[key], value)
            env[key] = value
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            class_def = self._method_of()
            if class_def is None or self.promoted or value is None:
                return
            self.analysis.record_class_attribute(class_def, target.attr.value + "[]", value)

    def _record_buffer(self, call: cst.Call) -> None:
        """`self.register_buffer("name", tensor)`: a buffer that moves with the module."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "register_buffer"
            and len(call.args) >= 2
            and isinstance(call.args[0].value, cst.SimpleString)
        ):
            return
        class_def = self._method_of()
        if self.promoted:
            return
        name = string_value(call.args[0].value)
        if class_def is not None and name:
            reason = "a registered buffer moves with the module (inferred)"
            self.analysis.record_class_attribute(class_def, name, placed(Place.DEVICE, MEDIUM, call, reason))

    def _element_of(self, iterable: cst.BaseExpression, env: Env) -> Placement:
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range":
            if "range" not in env:
                return placed(Place.SCALAR, HIGH, iterable, "a `range()` index")
        value = self.eval(iterable, env)
        if value.is_tensor:
            return value  # iterating a tensor gives its rows, where the tensor lives
        if value.is_(Place.SEQUENCE):
            # A list this scope (or its class) built and filled with tensors: `for m in masks`
            # gives one of its elements (sources.py `_list_element`).
            element = self.evaluator.list_element(iterable, env, self.chain)
            if element is not None and element.is_tensor:
                return element.because(iterable, "an element of a list of tensors")
        return UNKNOWN

    def _bind_target(self, target, value: Placement, env: Env, stmt, value_expr=None) -> None:
        if isinstance(target, cst.Name):
            name = target.value
            # A device tensor at low (a field the repository also gives host data): the
            # screen's model has it on the device too, so a promotion never hides a finding.
            origin = evidence.unplaced_origin(value) if value.on_device else None
            if origin is not None and self.origins.get(name) is origin:
                # Its uses show the device (evidence.device_uses): the value from its origin,
                # placed by them.
                found = self.promoted[name]
                value = Placement(found.places, found.confidence, (*value.evidence[:3], *found.evidence))
            elif value.known and value_expr is not None and (not value.evidence or value.evidence[-1].node is not value_expr):
                value = value.because(stmt, f"assigned to `{name}`")
            if not self.promoted and isinstance(self.scope, cst.FunctionDef):
                known = self._local_origins.get(name, origin)
                self._local_origins[name] = origin if known is origin and not isinstance(origin, cst.Param) else None
            env[name] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            if isinstance(value_expr, (cst.Tuple, cst.List)) and len(value_expr.elements) == len(elements):
                for el, val in zip(elements, value_expr.elements):
                    self._bind_target(el, self.eval(val.value, env), env, stmt, val.value)
                return
            if isinstance(value_expr, cst.Call) and not any(isinstance(e, cst.StarredElement) for e in elements):
                parts = self.evaluator.tuple_parts(value_expr, env, self.chain, len(elements))
                if parts is not None:
                    # `emb, mask, ids = helper(...)` where every `return` of the helper is a
                    # tuple of that many elements: each name gets its own position.
                    for el, part in zip(elements, parts):
                        self._bind_target(el, part, env, stmt)
                    return
            part = _element_part(value, value_expr)
            starred = any(isinstance(el, cst.StarredElement) for el in elements)
            for position, el in enumerate(elements):
                inner = el.value if isinstance(el, cst.StarredElement) else el
                item = None
                if isinstance(value_expr, cst.Call) and not starred:
                    # `start, n = f(batch)`: the element `f` returns there (the repository index).
                    item = self.evaluator.call_item(value_expr, position, env, self.chain)
                self._bind_target(inner, item if item is not None else part, env, stmt)
        # Attribute and subscript targets change no name's placement.


def _method_key(func: cst.FunctionDef, chain) -> str | None:
    """`Cls.method` for a method of a module-level class (the index's qualified name), else None."""
    if len(chain) == 3 and isinstance(chain[1], cst.ClassDef) and chain[-1] is func:
        return f"{chain[1].name.value}.{func.name.value}"
    return None


def _param_fact(func: cst.FunctionDef, chain, name: str):
    """What the repository passes parameter `name`: to this method (`Cls.method`) where the
    calls that reach it through their class say it, else to every function of its name
    (not where many unrelated classes define a method of that name)."""
    method = _method_key(func, chain) if func.name.value != "__init__" else None
    found = repo.param_fact(method, name) if method else None
    if found is None and method and repo.crowded_method(func.name.value):
        return None  # `free()` of many unrelated classes: their calls pooled say nothing of this one
    return found if found is not None else repo.param_fact(_function_key(func, chain), name)


def _given_host_data(func: cst.FunctionDef, chain, name: str) -> bool:
    """Whether the calls that reach this method through its class pass parameter `name`
    host data only (`self.merger(x, meta.grid_thw_cpu)` with `self.merger = Merger(...)`):
    then "the inputs of forward() live where the module runs" is not assumed for it."""
    method = _method_key(func, chain)
    found = repo.facts.FACTS.get(("p", method, name)) if method else None
    return found is not None and found[0] in (repo.HOST, repo.NUMPY, repo.HOST | repo.NUMPY)


def _function_key(func: cst.FunctionDef, chain) -> str:
    """The name a function's parameters are read by (as synclint/screen/facts.py's
    `function_key`, and `nested_key` for a function nested in another: `f<outer`, with
    `outer` the outermost function around it)."""
    if func.name.value == "__init__" and len(chain) >= 2 and isinstance(chain[-2], cst.ClassDef):
        return chain[-2].name.value
    at = next((i for i, scope in enumerate(chain) if scope is func), len(chain))
    outer = next((scope for scope in chain[:at] if isinstance(scope, cst.FunctionDef)), None)
    if outer is not None:
        return f"{func.name.value}{NESTED}{outer.name.value}"
    return func.name.value


# --- host facts from tests: `assert t.is_cpu`, `if t.device.type == "cpu":` ---------------

TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.Parameter"})


def _names_cpu(expr: cst.BaseExpression) -> bool:
    return string_value(expr) == "cpu"


def host_narrowing(test: cst.BaseExpression, imports, env: Env | None = None) -> tuple[Env, Env]:
    """Names known to be host data where `test` holds (first) and where it fails (second):
    `t.is_cpu`, `t.device.type == "cpu"`, `str(t.device) == "cpu"`, `not t.is_cuda`,
    `not isinstance(x, torch.Tensor)` or `not torch.is_tensor(x)` (Python or numpy data),
    combined with `not` and `and`. Where `isinstance(x, torch.Tensor)` or `torch.is_tensor(x)`
    holds, `x` is a tensor: what `env` says of it less what is no tensor (a tensor of unsaid
    place where `env` says nothing of one)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        holds, fails = host_narrowing(test.expression, imports, env)
        return fails, holds
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        left, right = host_narrowing(test.left, imports, env), host_narrowing(test.right, imports, env)
        return {**left[0], **right[0]}, {}
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name):
        name = test.value.value
        if test.attr.value == "is_cpu":
            return {name: placed(Place.HOST, HIGH, test, f"`{name}.is_cpu` holds: a CPU tensor")}, {}
        if test.attr.value == "is_cuda":
            return {}, {name: placed(Place.HOST, MEDIUM, test, f"`{name}.is_cuda` is false: not on the GPU")}
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if _names_cpu(left):
            left, right = right, left
        name = _device_owner(left)
        if name is not None and _names_cpu(right) and isinstance(op, (cst.Equal, cst.NotEqual)):
            fact = {name: placed(Place.HOST, HIGH, test, f"`{name}` is on the CPU where this test holds")}
            return (fact, {}) if isinstance(op, cst.Equal) else ({}, fact)
    name = tensor_test(test, imports)
    if name is not None:
        not_tensor = Placement(
            frozenset({Place.SCALAR, Place.SEQUENCE, Place.NUMPY}),
            HIGH,
            placed(Place.SEQUENCE, HIGH, test, f"`{name}` is not a tensor here: Python or numpy data").evidence,
        )
        return ({name: _as_tensor(env.get(name), name, test)} if env is not None else {}), {name: not_tensor}
    return {}, {}


def tensor_test(test: cst.BaseExpression, imports) -> str | None:
    """`x` of `isinstance(x, torch.Tensor)` or `torch.is_tensor(x)`."""
    if not (isinstance(test, cst.Call) and test.args and isinstance(test.args[0].value, cst.Name)):
        return None
    subject = test.args[0].value.value
    if isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2:
        return subject if (imports.qualname(test.args[1].value) or "") in TENSOR_CLASSES else None
    if len(test.args) == 1 and imports.qualname(test.func) == "torch.is_tensor":
        return subject
    return None


def _as_tensor(before: Placement | None, name: str, test: cst.CSTNode) -> Placement:
    """`name` where a test says it is a tensor: the tensor places of what was known of it
    (`before`), or a tensor of unsaid place."""
    if before is not None and before.known and before.places & TENSOR_PLACES:
        return Placement(before.places & TENSOR_PLACES, before.confidence, before.evidence)
    return Placement(TENSOR_PLACES, Confidence.LOW, placed(Place.DEVICE, Confidence.LOW, test, f"`{name}` is a tensor here, of unsaid place").evidence)


def _keeping_pinned(facts: Env, env) -> Env:
    """Host facts from a test, less what they would forget: a name that may be a pinned
    buffer before `assert t.is_cpu` is a host tensor that may be pinned after it."""
    out = {}
    for name, fact in facts.items():
        before = env.get(name)
        if before is not None and before.may_be(Place.PINNED) and fact.is_(Place.HOST):
            fact = Placement(frozenset({Place.HOST, Place.PINNED}), fact.confidence, fact.evidence)
        out[name] = fact
    return out


def _device_owner(expr: cst.BaseExpression) -> str | None:
    """`t` in `t.device.type`, `t.device`, `str(t.device)`."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "str" and len(expr.args) == 1:
        expr = expr.args[0].value
    if isinstance(expr, cst.Attribute) and expr.attr.value == "type":
        expr = expr.value
    if isinstance(expr, cst.Attribute) and expr.attr.value == "device" and isinstance(expr.value, cst.Name):
        return expr.value.value
    return None


def _none_test(test: cst.BaseExpression) -> str | None:
    """`x is None`: the name `x`."""
    if (
        isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is) and _is_none(test.comparisons[0].comparator)
    ):
        return test.left.value
    return None


def _host_unless_missing(env: FlowEnv, name: str, before: Placement, given: Placement | None, stmt: cst.If) -> None:
    """After `if x is None: x = <device tensor>` (`else: x = x.to(dtype)`), where `x` held
    host data and still does on the path where it was given: the device tensor is only the
    fallback for a missing value (a multimodal field kept on the host, left out by an older
    processor), so a read of `x` after the join reads host data on the common path. Low: the
    finding is shown with --min-confidence low, and --explain says why."""
    merged = env.get(name)
    if merged is None or not merged.maybe_device or merged.confidence < MEDIUM:
        return
    if not (before.is_host_data and before.confidence >= MEDIUM and given is not None and given.is_host_data):
        return
    env[name] = merged.at_most(Confidence.LOW).because(
        stmt, f"`{name}` is host data where it is given; only the fallback for `{name} is None` puts it on the device")


_HOST_BUILDERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray", "torch.from_numpy", "torch.LongTensor", "torch.Tensor"})


def _normalised_to_host(stmt: cst.If, imports) -> str | None:
    """`if not isinstance(x, torch.Tensor): x = torch.tensor(x)` (no `device=`, no `else`):
    the name `x`, which the code expects to be host data (a list or a CPU tensor)."""
    test = stmt.test
    if stmt.orelse is not None or not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return None
    check = test.expression
    if not (isinstance(check, cst.Call) and isinstance(check.func, cst.Name) and check.func.value == "isinstance" and len(check.args) == 2):
        return None
    subject = check.args[0].value
    if not isinstance(subject, cst.Name) or (imports.qualname(check.args[1].value) or "") not in TENSOR_CLASSES:
        return None
    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
    if len(body) != 1 or not isinstance(body[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return None
    small = body[0].body
    if len(small) != 1 or not isinstance(small[0], cst.Assign) or len(small[0].targets) != 1:
        return None
    target, value = small[0].targets[0].target, small[0].value
    if not (isinstance(target, cst.Name) and target.value == subject.value and isinstance(value, cst.Call)):
        return None
    if (imports.qualname(value.func) or "") not in _HOST_BUILDERS:
        return None
    if any(a.keyword is not None and a.keyword.value == "device" for a in value.args):
        return None  # built on a device: not host data
    return subject.value


def loop_bindings(target, iterable, env, element_of):
    """`for i, x in enumerate(it)` binds `i` to a Python int and `x` to an element of `it`;
    `for a, b in zip(p, q)` binds each name to an element of its own iterable. None for
    other loops. `element_of(expr)`: the placement of an element of `expr`."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call):
        return None
    func = iterable.func
    if not isinstance(func, cst.Name) or func.value in env or any(a.keyword is not None or a.star for a in iterable.args):
        return None
    names = [e.value for e in target.elements]
    if any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    if func.value == "enumerate" and len(names) == 2 and len(iterable.args) == 1:
        return [(names[0], placed(Place.SCALAR, HIGH, iterable, "an `enumerate()` count")), (names[1], element_of(iterable.args[0].value))]
    if func.value == "zip" and len(names) == len(iterable.args):
        return [(name, element_of(arg.value)) for name, arg in zip(names, iterable.args)]
    return None


def _element_part(value: Placement, value_expr) -> Placement:
    """What each name gets from `a, b = value`."""
    if value.is_tensor:
        return value  # `q, k = qkv.split(...)`: the pieces live where the tensor lives
    if value.is_(Place.SEQUENCE) and value_expr is not None and _is_shape_like(value_expr):
        return placed(Place.SCALAR, HIGH, value_expr, "a dimension of a shape")
    return UNKNOWN


def _is_shape_like(expr) -> bool:
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "shape"
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value in ("size", "stride")
    if isinstance(expr, cst.Subscript):  # x.shape[:2]
        return _is_shape_like(expr.value)
    return False


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _del_targets(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _del_targets(el.value)]
    return []


def _same(a: Env, b: Env, names) -> bool:
    """`a` and `b` bind the same places to `names` (the only names where they may differ)."""
    for name in names:
        x, y = a.get(name), b.get(name)
        if (x is None) != (y is None):
            return False
        if x is not None and (x.places != y.places or x.confidence != y.confidence):
            return False
    return True


def _adopt(env: FlowEnv, branch: FlowEnv) -> None:
    """`env` becomes what `branch` (a fork of it, taken since its last write) holds: only the
    names the branch wrote (or deleted) can differ."""
    for name in list(branch.written()):
        value = branch.get(name)
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value


def _merge_into(env: FlowEnv, *branches) -> set:
    """Join the branches (each a fork or a snapshot of `env` taken since its last write) into
    `env`. Only a name some branch wrote can differ from `env`'s own value: those are the
    names looked at (and returned)."""
    names = set()
    for branch in branches:
        if isinstance(branch, FlowEnv):
            names.update(branch.written())
    for name in names:
        values = [b.get(name) for b in branches]
        if any(v is None for v in values):
            present = [v for v in values if v is not None]
            if not present:
                continue  # deleted on every path: left as it was
            # Bound on some paths only. A later read happens only where it was bound (else
            # NameError), so a name new here takes the bound values; a name bound before the
            # branch may still hold its old value.
            env[name] = join(*present) if name not in env else join(env[name], *present)
        elif all(v is values[0] for v in values):
            env[name] = values[0]
        else:
            env[name] = join(*values)
    return names


def is_self_move(stmt, name: str) -> bool:
    """`self.<name> = self.<name>.to(...)` / `.cuda(...)`: the field moved where it is."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(is_self_move(small, name) for small in stmt.body)
    value = getattr(stmt, "value", None)
    if not isinstance(stmt, (cst.Assign, cst.AnnAssign)) or not isinstance(value, cst.Call):
        return False
    func = value.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda")):
        return False
    source = func.value
    return (
        isinstance(source, cst.Attribute)
        and isinstance(source.value, cst.Name)
        and source.value.value == "self"
        and source.attr.value == name
    )


# Attributes numpy arrays have too: reading them says nothing of a tensor.
_NUMPY_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "T", "itemsize", "nbytes", "flat", "real", "imag",
                               "strides", "data", "base", "flags"})


def _resolved_by_use(value: Placement, func: cst.FunctionDef, name: str) -> Placement:
    """A parameter the repository gives a device tensor in some calls and Python values (or
    numpy arrays) in others (low): where this function uses it as only a tensor can be used
    (`mask.to(torch.bool)`, `mask.dtype` where the other values are ints), this function is
    given the tensor, at every use (medium; `sources.resolve_by_method` decides)."""
    moves = _device_moves(func.body, name)
    for attr, node in _attribute_uses(func.body, name):
        if attr in _NUMPY_ATTRIBUTES and attr not in ("T",) and _numpy_possible(value):
            continue
        if id(node) in moves:
            continue  # `mask.to(device, non_blocking=True)`: the code moves host data, it holds no device tensor
        resolved = resolve_by_method(value, attr, node, how=f"`{name}.{attr}` in `{func.name.value}()` is a tensor's")
        if resolved.confidence != value.confidence:
            return resolved
    return value


def _device_moves(body: cst.CSTNode, name: str) -> set[int]:
    """The ids of the `name.to` / `name.cuda` attributes of `body` that move `name` to a
    device (`.cuda()`, `.to(device)`, `.to(device=d, non_blocking=True)`; not `.to(torch.bool)`
    nor `.to(x.dtype)`): a use a host tensor has as much as a device one, and the reason to
    write it is that the value is on the host."""
    found: set[int] = set()
    pending = [body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in OWN_SCOPES and node is not body:
            continue
        if kind is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name \
                and node.func.value.value == name and node.func.attr.value in ("to", "cuda") and _moves(node):
            found.add(id(node.func))
        pending.extend(children(node))
    return found


def moved_inputs(body: cst.CSTNode, methods: frozenset = frozenset()) -> frozenset:
    """The names whose data `body` moves to a device (`grid_thw.to(x.device)`,
    `f(grid_thw[:, 1]).to(torch.int32).to(x.device)`, `x.cuda()`; not `.to(torch.int32)`, nor
    `h` of `y.to(h.device)`), not inside a nested function or class (synclint/screen/facts.py
    `moved_inputs` reads the `ast` the same way). Also the data a moved local was computed
    from (`lengths = grid[:, 0] * grid[:, 1]`, then `lengths.to(x.device)`), and, with
    `methods` (the names of the class's own methods), the arguments of such a method whose
    result it moves (`window_index, cu = self.get_window_index(sizes)` then
    `window_index.to(device)`): what is made of host data is host data, so its sources are."""
    found: set[str] = set()
    made: dict[str, set[str]] = {}  # a local bound to what was made of data -> the names of that data
    pending = [body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in OWN_SCOPES and node is not body:
            continue
        if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("to", "cuda") and _moves(node) \
                and not _to_the_cpu(node):
            found.update(_data_names(node.func.value))
        elif kind is cst.Assign and ((own := _own_method_call(node.value, methods)) or _made_of_data(node.value, methods)):
            value = node.value
            given = set().union(*(_data_names(a.value) for a in value.args)) if own else _data_names(value)
            for target in node.targets:
                for name in _bound_names(target.target):
                    made.setdefault(name, set()).update(given)
        pending.extend(children(node))
    for name in list(found):
        found.update(made.get(name, ()))
    return frozenset(found)


def _made_of_data(value: cst.BaseExpression, methods: frozenset) -> bool:
    """`lengths = grid[:, 0] * grid[:, 1]`, `sizes = grid.prod(-1)`: a value computed from the
    data of the names it reads, by operators, tensor methods and functions; not by a
    submodule (`self.proj(x)`, a field of the object called) nor a lambda."""
    pending: list[cst.CSTNode] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                    and func.attr.value not in methods:
                return False
        elif isinstance(node, (cst.Lambda, cst.Await, cst.Yield)):
            return False
        pending.extend(children(node))
    return not isinstance(value, (cst.Name, cst.Attribute))  # not a plain alias (`y = x`)


def _own_method_call(value: cst.BaseExpression, methods: frozenset) -> bool:
    """`self.m(...)` with `m` a method the class defines (not a submodule field)."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Name) \
        and value.func.value.value == "self" and value.func.attr.value in methods


def _bound_names(target: cst.BaseExpression) -> list[str]:
    """`a` of `a = ...`, `a`, `b` of `a, b, _ = ...`."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
    return []


def _to_the_cpu(call: cst.Call) -> bool:
    """`.to("cpu")`, `.to(device="cpu")`, `.to(torch.device("cpu"))`: a copy to the host."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "device":
            value = arg.value
            if isinstance(value, cst.Call) and value.args:
                value = value.args[0].value  # `torch.device("cpu")`
            if string_value(value) == "cpu":
                return True
            if arg.keyword is None:
                break  # only the first positional argument is a destination
    return False


def _data_names(expr: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    pending = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Name):
            out.add(node.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in api.HOST_COPY_METHODS or (node.func.attr.value == "to" and _to_the_cpu(node))):
            continue  # `x.type(torch.BoolTensor).to(d)`: what is moved is a host copy, whatever `x` is
        elif isinstance(node, cst.Attribute):
            if node.attr.value not in api.METADATA_ATTRIBUTES:
                pending.append(node.value)
        elif isinstance(node, cst.Arg):
            pending.append(node.value)  # not the keyword's name
        elif not isinstance(node, (cst.Lambda, cst.FunctionDef)):
            pending.extend(children(node))
    return out


def _moves(call: cst.Call) -> bool:
    """`.cuda()`, `.to(device=...)`, `.to(..., non_blocking=...)`, `.to("cuda")`, `.to(d)` of a
    target not named as a dtype (`torch.bool`, `x.dtype`, `dtype`: `api.DTYPES`)."""
    if call.func.attr.value == "cuda":
        return True
    if any(a.keyword is not None and a.keyword.value in ("device", "non_blocking") for a in call.args):
        return True
    first = next((a.value for a in call.args if a.keyword is None), None)
    if isinstance(first, cst.SimpleString):
        return True
    name = first.attr.value if isinstance(first, cst.Attribute) else first.value if isinstance(first, cst.Name) else None
    return name is not None and name not in api.DTYPES and "dtype" not in name.lower()


def _numpy_possible(value: Placement) -> bool:
    return any(repo.RESOLVABLE_NOTE_TORCH_ONLY in e.reason for e in value.evidence[:3])


def _attribute_uses(body: cst.CSTNode, name: str):
    """(attribute, node) of every `name.<attribute>` in `body`, in source order, not inside a
    nested function or class."""
    pending = [body]
    out = []
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not body:
            continue
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name:
            out.append((node.attr.value, node))
        pending.extend(reversed(children(node)))
    return out

