"""The two halves of placement inference: `Evaluator` gives an expression's placement in an
environment; `FlowWalker` carries the environment through a scope's statements (assignment,
unpacking, branches joined, loops to a fixpoint, `with`, `try`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from synclint.apis import torch_api as api
from synclint.violation import Confidence

if TYPE_CHECKING:
    from synclint.analysis.placement import Env, PlacementAnalysis, ScopeFacts

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


def _p():  # late import: placement imports this module
    from synclint.analysis import placement

    return placement


def _kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _string_value(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString):
        try:
            value = expr.evaluated_value
        except Exception:  # noqa: BLE001 - odd literal: treat as unknown
            return None
        return value if isinstance(value, str) else None
    return None


class Evaluator:
    def __init__(self, analysis: PlacementAnalysis) -> None:
        self.analysis = analysis
        self.imports = analysis.imports

    # The scope chain lets `self.attr` find its class; set by the walker/analysis per query.
    chain: tuple[cst.CSTNode, ...] = ()

    def eval(self, expr: cst.BaseExpression, env: Env, chain: tuple[cst.CSTNode, ...] = ()) -> object:
        self.chain = chain
        return self._eval(expr, env)

    # --- dispatch ------------------------------------------------------------------------
    def _eval(self, expr: cst.BaseExpression, env: Env):
        P = _p()
        Place = P.Place
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return P.placed(Place.SCALAR, HIGH, expr, "a number literal")
        if isinstance(expr, cst.SimpleString):
            return self._string(expr)
        if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString)):
            return P.placed(Place.OTHER, HIGH, expr, "a string")
        if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.Set, cst.SetComp)):
            return P.placed(Place.SEQUENCE, HIGH, expr, "a Python list/tuple")
        if isinstance(expr, (cst.Dict, cst.DictComp, cst.Lambda)):
            return P.placed(Place.OTHER, HIGH, expr, "a Python object")
        if isinstance(expr, cst.Name):
            return self._name(expr, env)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, env)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, env)
        if isinstance(expr, cst.Call):
            return self._call(expr, env)
        if isinstance(expr, cst.BinaryOperation):
            return self._combine([expr.left, expr.right], env, expr, "arithmetic")
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return P.placed(Place.SCALAR, HIGH, expr, "`not` gives a Python bool")
            return self._eval(expr.expression, env)
        if isinstance(expr, cst.Comparison):
            operands = [expr.left, *(c.comparator for c in expr.comparisons)]
            if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in expr.comparisons):
                return P.placed(Place.SCALAR, HIGH, expr, "identity/membership test")
            return self._combine(operands, env, expr, "comparison")
        if isinstance(expr, cst.BooleanOperation):
            return P.join(self._eval(expr.left, env), self._eval(expr.right, env))
        if isinstance(expr, cst.IfExp):
            return P.join(self._eval(expr.body, env), self._eval(expr.orelse, env))
        if isinstance(expr, cst.NamedExpr):
            return self._eval(expr.value, env)
        if isinstance(expr, cst.Await):
            return P.UNKNOWN
        return P.UNKNOWN

    def _string(self, expr: cst.SimpleString):
        P = _p()
        value = _string_value(expr)
        if value is not None:
            head = value.split(":")[0]
            if head == "cpu":
                return P.placed(P.Place.CPU_DEVICE, HIGH, expr, f"the device string {value!r}")
            if head in ("cuda", "xpu", "mps", "hpu", "npu", "mlu", "meta") or value.startswith("cuda"):
                return P.placed(P.Place.ACCEL_DEVICE, HIGH, expr, f"the device string {value!r}")
        return P.placed(P.Place.OTHER, HIGH, expr, "a string")

    def _name(self, expr: cst.Name, env: Env):
        P = _p()
        name = expr.value
        if name in env:
            return env[name]
        if name in ("True", "False"):
            return P.placed(P.Place.SCALAR, HIGH, expr, "a bool literal")
        if name == "None":
            return P.placed(P.Place.OTHER, HIGH, expr, "None")
        if name in api.DEVICE_LIKE_NAMES and name not in self.imports.aliases:
            return P.placed(P.Place.ACCEL_DEVICE, MEDIUM, expr, f"`{name}` is named like an accelerator device")
        return P.UNKNOWN

    def _attribute(self, expr: cst.Attribute, env: Env):
        P = _p()
        Place = P.Place
        attr = expr.attr.value
        qual = self.imports.qualname(expr)
        if qual is not None and qual.startswith("torch.") and qual[6:] in api.DTYPES:
            return P.placed(Place.OTHER, HIGH, expr, "a dtype")
        if attr == "device":
            base = self._eval(expr.value, env)
            if base.is_(Place.DEVICE):
                return P.placed(Place.ACCEL_DEVICE, base.confidence, expr, "the device of a device tensor")
            if base.is_(Place.HOST, Place.PINNED):
                return P.placed(Place.CPU_DEVICE, base.confidence, expr, "the device of a host tensor")
            return P.placed(Place.ACCEL_DEVICE, MEDIUM, expr, f"`{_text(expr)}` carries a device (assumed accelerator)")
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            attrs = self._self_attributes()
            if attr in attrs:
                return attrs[attr]
            if attr in api.DEVICE_LIKE_NAMES:
                return P.placed(Place.ACCEL_DEVICE, MEDIUM, expr, f"`self.{attr}` is named like a device")
            return P.UNKNOWN
        base = self._eval(expr.value, env)
        if attr in api.SAME_PLACE_ATTRIBUTES and base.is_tensor:
            return base
        if attr in api.SEQUENCE_ATTRIBUTES and (base.is_tensor or base.is_(Place.NUMPY)):
            return P.placed(Place.SEQUENCE, HIGH, expr, "a shape is host data")
        if attr in api.SCALAR_ATTRIBUTES:
            return P.placed(Place.SCALAR, MEDIUM, expr, f"`.{attr}` is host metadata")
        if attr in api.OTHER_ATTRIBUTES:
            return P.placed(Place.OTHER, HIGH, expr, f"`.{attr}` is metadata")
        return P.UNKNOWN

    def _self_attributes(self) -> Env:
        chain = self.chain
        if len(chain) >= 2 and isinstance(chain[-1], cst.FunctionDef) and isinstance(chain[-2], cst.ClassDef):
            return self.analysis.class_attributes(chain[:-1])
        return {}

    def _subscript(self, expr: cst.Subscript, env: Env):
        P = _p()
        Place = P.Place
        base = self._eval(expr.value, env)
        if base.is_tensor or base.is_(Place.NUMPY):
            return base  # indexing keeps the placement
        if base.is_(Place.SEQUENCE) and _is_shape(expr.value):
            return P.placed(Place.SCALAR, HIGH, expr, "a dimension of a shape")
        return P.UNKNOWN

    def _combine(self, operands, env: Env, node, what: str):
        """Arithmetic/comparison: a device operand makes a device result, and so on."""
        P = _p()
        Place = P.Place
        values = [self._eval(o, env) for o in operands]
        for place in (Place.DEVICE, Place.HOST, Place.PINNED, Place.NUMPY):
            hits = [v for v in values if v.is_(place)]
            if hits:
                best = max(hits, key=lambda v: v.confidence)
                out = place if place != Place.PINNED else Place.HOST  # results are new, pageable
                return P.Placement(frozenset({out}), best.confidence, best.evidence)
        if all(v.is_(Place.SCALAR) for v in values):
            return P.placed(Place.SCALAR, min(v.confidence for v in values), node, f"{what} of Python scalars")
        if all(v.is_(Place.SEQUENCE) for v in values):
            return P.placed(Place.SEQUENCE, HIGH, node, f"{what} of Python sequences")
        maybe = [v for v in values if v.may_be(Place.DEVICE)]
        if maybe:
            return P.join(*maybe)
        return P.UNKNOWN

    # --- calls ---------------------------------------------------------------------------
    def _call(self, call: cst.Call, env: Env):
        P = _p()
        Place = P.Place
        func = call.func
        qual = self.imports.qualname(func)
        if qual is not None:
            result = self._qualified_call(qual, call, env)
            if result is not None:
                return result
        if isinstance(func, cst.Name):
            name = func.value
            if name in api.SCALAR_BUILTINS and name not in env:
                return P.placed(Place.SCALAR, HIGH, call, f"`{name}()` gives host data")
            if name in api.SEQUENCE_BUILTINS and name not in env:
                return P.placed(Place.SEQUENCE, HIGH, call, f"`{name}()` gives a Python sequence")
            if name in api.TENSOR_PRESERVING_BUILTINS and name not in env:
                return self._combine([a.value for a in call.args], env, call, f"`{name}()`")
            local = self._local_function(name)
            if local is not None:
                return self.analysis.returns_of(local)
            return P.UNKNOWN
        if isinstance(func, cst.Attribute):
            return self._method(call, func, env)
        return P.UNKNOWN

    def _local_function(self, name: str) -> cst.FunctionDef | None:
        for stmt in self.analysis.module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        return None

    def _device_of(self, expr: cst.BaseExpression, env: Env):
        """Placement that a `device=` value sends a tensor to (DEVICE or HOST), or None."""
        P = _p()
        Place = P.Place
        d = self._eval(expr, env)
        if d.is_(Place.ACCEL_DEVICE):
            return P.Placement(frozenset({Place.DEVICE}), d.confidence, d.evidence)
        if d.is_(Place.CPU_DEVICE):
            return P.Placement(frozenset({Place.HOST}), d.confidence, d.evidence)
        if d.is_(Place.ACCEL_DEVICE, Place.CPU_DEVICE):
            places = frozenset({Place.DEVICE, Place.HOST})
            return P.Placement(places, min(d.confidence, MEDIUM), d.evidence)
        if d.is_(*P.TENSOR_PLACES):  # `.to(other_tensor)`
            return d
        if isinstance(expr, cst.Integer) or d.is_(Place.SCALAR):
            return P.placed(Place.DEVICE, MEDIUM, expr, "an integer device index")
        return None

    def _qualified_call(self, qual: str, call: cst.Call, env: Env):
        P = _p()
        Place = P.Place
        if qual.startswith("numpy."):
            name = qual[6:]
            if name in api.NUMPY_CONSTRUCTORS or name.startswith("random."):
                return P.placed(Place.NUMPY, HIGH, call, f"`np.{name}()` builds a numpy array")
            return P.placed(Place.NUMPY, MEDIUM, call, f"`np.{name}()` returns numpy data")
        if not qual.startswith("torch."):
            return None
        name = qual[6:]
        if name == "device":
            args = _positional(call)
            if args:
                first = self._eval(args[0].value, env)
                if first.is_(Place.ACCEL_DEVICE, Place.CPU_DEVICE, Place.ACCEL_DEVICE):
                    return first
            return P.UNKNOWN
        if name in ("cuda.current_device",):
            return P.placed(Place.ACCEL_DEVICE, HIGH, call, "the current CUDA device")
        if name == "from_numpy":
            return P.placed(Place.HOST, HIGH, call, "`torch.from_numpy()` wraps pageable host memory")
        if name in api.TENSOR_FACTORIES:
            return self._factory(name, call, env)
        if name.startswith("cuda.") or name.startswith("nn.") or name.startswith("distributed."):
            return None
        # Other torch functions: the result lives with their tensor inputs.
        tensor_args = [a.value for a in call.args if a.keyword is None or a.keyword.value in ("input", "other")]
        if not tensor_args:
            return P.UNKNOWN
        combined = self._combine(tensor_args, env, call, f"`torch.{name}()`")
        if combined.is_(Place.SCALAR, Place.SEQUENCE):
            return P.UNKNOWN
        return combined

    def _factory(self, name: str, call: cst.Call, env: Env):
        P = _p()
        Place = P.Place
        device = _kwarg(call, "device")
        pinned = _is_true(getattr(_kwarg(call, "pin_memory"), "value", None))
        if device is not None:
            target = self._device_of(device.value, env)
            if target is not None:
                return target.because(call, f"`torch.{name}(..., device=...)`")
            return P.UNKNOWN.because(call, "device= with an unknown value")
        args = _positional(call)
        if name in api.LIKE_FACTORIES and args:
            return self._eval(args[0].value, env)
        if name in api.DATA_FACTORIES and args:
            data = self._eval(args[0].value, env)
            if data.is_(*P.TENSOR_PLACES):  # torch.tensor(t) keeps t's device
                return data if not data.is_(Place.PINNED) else P.placed(Place.HOST, data.confidence, call, "a copy of a host tensor")
        if pinned:
            return P.placed(Place.PINNED, HIGH, call, f"`torch.{name}(..., pin_memory=True)`")
        return P.placed(Place.HOST, HIGH, call, f"`torch.{name}()` without device= builds on the host")

    def _method(self, call: cst.Call, func: cst.Attribute, env: Env):
        P = _p()
        Place = P.Place
        method = func.attr.value
        base = self._eval(func.value, env)
        if method == "cuda":
            return P.placed(Place.DEVICE, HIGH, call, "`.cuda()`")
        if method == "cpu":
            return P.placed(Place.HOST, HIGH, call, "`.cpu()`")
        if method == "pin_memory":
            return P.placed(Place.PINNED, HIGH, call, "`.pin_memory()`")
        if method in api.NUMPY_RESULT_METHODS:
            return P.placed(Place.NUMPY, HIGH, call, f"`.{method}()`")
        if method in api.SEQUENCE_RESULT_METHODS and not base.is_(Place.NUMPY):
            return P.placed(Place.SEQUENCE, HIGH, call, f"`.{method}()` gives Python data")
        if method in api.SCALAR_RESULT_METHODS:
            return P.placed(Place.SCALAR, HIGH, call, f"`.{method}()` gives a Python scalar")
        if method == "to":
            return self._to(call, base, env)
        if method in api.NEW_METHODS:
            device = _kwarg(call, "device")
            if device is not None:
                target = self._device_of(device.value, env)
                if target is not None:
                    return target
            return base if base.is_tensor else P.UNKNOWN
        if base.is_tensor or base.is_(Place.NUMPY):
            # Tensor methods (view, float, sum, max, ...) keep the placement; pinned-ness is
            # kept only by views, which we cannot tell apart here: say pageable.
            if base.is_(Place.PINNED):
                return P.placed(Place.HOST, base.confidence, call, f"`.{method}()` of a pinned tensor")
            return base
        return P.UNKNOWN

    def _to(self, call: cst.Call, base, env: Env):
        P = _p()
        Place = P.Place
        non_blocking = _is_true(getattr(_kwarg(call, "non_blocking"), "value", None))
        target_expr = None
        device_kw = _kwarg(call, "device")
        if device_kw is not None:
            target_expr = device_kw.value
        else:
            args = _positional(call)
            if args:
                target_expr = args[0].value
        if target_expr is None:
            return base
        qual = self.imports.qualname(target_expr)
        if qual is not None and qual.startswith("torch.") and qual[6:] in api.DTYPES:
            return base  # a dtype change keeps the placement
        target = self._device_of(target_expr, env)
        if target is None:
            return P.UNKNOWN.because(call, "`.to()` of an unknown target")
        if target.is_(Place.HOST) and non_blocking and base.may_be(Place.DEVICE):
            # PyTorch returns pinned memory for a non_blocking device-to-host copy.
            return P.placed(Place.PINNED, target.confidence, call, "`.to('cpu', non_blocking=True)` returns pinned memory")
        if target.is_(Place.HOST) and base.is_(Place.PINNED, Place.HOST):
            return base
        return target.because(call, "`.to(...)`")


def _is_shape(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Attribute) and expr.attr.value == "shape") or (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size"
    )


def _text(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


# --- flow ---------------------------------------------------------------------------------


class FlowWalker:
    """Carries an environment through the statements of one scope, recording it before each."""

    def __init__(self, analysis: PlacementAnalysis, chain: tuple[cst.CSTNode, ...], facts: ScopeFacts) -> None:
        self.analysis = analysis
        self.chain = chain
        self.scope = chain[-1]
        self.facts = facts
        self.evaluator = analysis.evaluator

    def eval(self, expr: cst.BaseExpression, env: Env):
        return self.evaluator.eval(expr, env, self.chain)

    def run(self, env: Env) -> None:
        env = dict(env)
        scope = self.scope
        if isinstance(scope, cst.FunctionDef):
            self._bind_parameters(scope, env)
            self._block(scope.body, env)
        elif isinstance(scope, cst.ClassDef):
            self._block(scope.body, env)
        elif isinstance(scope, cst.Module):
            self._statements(scope.body, env)

    def _bind_parameters(self, func: cst.FunctionDef, env: Env) -> None:
        P = _p()
        params = func.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            name = param.name.value
            value = P.UNKNOWN
            if name in api.DEVICE_LIKE_NAMES:
                value = P.placed(P.Place.ACCEL_DEVICE, MEDIUM, param, f"parameter `{name}` is named like a device")
            if param.default is not None:
                default = self.eval(param.default, env)
                if default.known and not default.is_(P.Place.OTHER):
                    # The caller may pass anything else: the default is one possibility.
                    value = P.join(value, default) if value.known else P.join(P.UNKNOWN, default)
            if name in ("self", "cls"):
                continue
            env[name] = value

    def _block(self, body: cst.BaseSuite, env: Env) -> None:
        if isinstance(body, cst.IndentedBlock):
            self._statements(body.body, env)
        elif isinstance(body, cst.SimpleStatementSuite):
            self.facts.env_before[id(body)] = dict(env)
            for small in body.body:
                self._small(small, env)

    def _statements(self, statements, env: Env) -> None:
        for stmt in statements:
            self._statement(stmt, env)

    def _statement(self, stmt: cst.BaseStatement, env: Env) -> None:
        P = _p()
        self.facts.env_before[id(stmt)] = dict(env)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._small(small, env)
        elif isinstance(stmt, cst.If):
            then_env = dict(env)
            self._block(stmt.body, then_env)
            else_env = dict(env)
            if stmt.orelse is not None:
                if isinstance(stmt.orelse, cst.If):
                    self._statement(stmt.orelse, else_env)
                else:
                    self._block(stmt.orelse.body, else_env)
            _merge_into(env, then_env, else_env)
        elif isinstance(stmt, (cst.For, cst.While)):
            before = dict(env)
            for _ in range(2):  # two rounds reach the fixpoint of this finite-height lattice in practice
                body_env = dict(env)
                if isinstance(stmt, cst.For):
                    self._bind_target(stmt.target, self._element_of(stmt.iter, env), body_env)
                self._block(stmt.body, body_env)
                _merge_into(env, before, body_env)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body, env)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    self._bind_target(item.asname.name, P.UNKNOWN, env)
            self._block(stmt.body, env)
        elif isinstance(stmt, cst.Try):
            body_env = dict(env)
            self._block(stmt.body, body_env)
            branches = [body_env]
            for handler in stmt.handlers:
                h_env = dict(env)
                self._block(handler.body, h_env)
                branches.append(h_env)
            _merge_into(env, *branches)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body, env)
            if stmt.finalbody is not None:
                self._block(stmt.finalbody.body, env)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            self.analysis.remember_outer_env(stmt, env)
            env[stmt.name.value] = P.placed(P.Place.OTHER, HIGH, stmt, "a definition")
        else:
            body = getattr(stmt, "body", None)
            if isinstance(body, cst.BaseSuite):
                self._block(body, env)

    def _small(self, small: cst.BaseSmallStatement, env: Env) -> None:
        P = _p()
        if isinstance(small, cst.Assign):
            value = self.eval(small.value, env)
            for target in small.targets:
                self._bind_target(target.target, value, env, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._bind_target(small.target, self.eval(small.value, env), env, small.value)
        elif isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name):
                combined = self.evaluator._combine([small.target, small.value], env, small, "augmented assignment")
                env[small.target.value] = combined
        elif isinstance(small, cst.Return) and small.value is not None:
            self.facts.returns.append(self.eval(small.value, env))
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self.analysis.imports.add_import(small)
            for alias in small.names if not isinstance(small.names, cst.ImportStar) else ():
                bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                env.pop(bound, None)

    def _element_of(self, iterable: cst.BaseExpression, env: Env):
        P = _p()
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range":
            return P.placed(P.Place.SCALAR, HIGH, iterable, "a `range()` index")
        value = self.eval(iterable, env)
        if value.is_tensor:
            return value  # iterating a tensor gives its rows, where the tensor lives
        return P.UNKNOWN

    def _bind_target(self, target, value, env: Env, value_expr=None) -> None:
        P = _p()
        if isinstance(target, cst.Name):
            env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            if isinstance(value_expr, (cst.Tuple, cst.List)) and len(value_expr.elements) == len(elements):
                for el, val in zip(elements, value_expr.elements):
                    self._bind_target(el, self.eval(val.value, env), env)
                return
            part = value if value.is_tensor else P.UNKNOWN
            for el in elements:
                inner = el.value if isinstance(el, cst.StarredElement) else el
                self._bind_target(inner, part, env)
        # Attribute and subscript targets change no name's placement.


def _merge_into(env: Env, *branches: Env) -> None:
    P = _p()
    names = set().union(*branches)
    for name in names:
        values = [b.get(name) for b in branches]
        if any(v is None for v in values):
            present = [v for v in values if v is not None]
            # Bound on one path only: either that value or whatever it was before (unknown).
            env[name] = P.join(*present, P.UNKNOWN) if name not in env else P.join(env[name], *present)
        else:
            env[name] = P.join(*values)


def class_attribute_env(analysis: PlacementAnalysis, chain: tuple[cst.CSTNode, ...]) -> Env:
    """Join of every `self.<attr> = value` in the class's methods, each evaluated in its method."""
    P = _p()
    class_def = chain[-1]
    found: dict[str, list] = {}

    class Collector(cst.CSTVisitor):
        def __init__(self, method: cst.FunctionDef) -> None:
            self.method = method
            self.statement: cst.CSTNode | None = None

        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            self.statement = node

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is self.method  # nested functions are their own scopes

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    value = analysis.placement_of(node.value, self.statement, (*chain, self.method))
                    found.setdefault(t.attr.value, []).append(value)

        def visit_Call(self, node: cst.Call) -> None:
            # self.register_buffer("name", tensor): a buffer that moves with the module.
            func = node.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "register_buffer"
                and len(node.args) >= 2
                and isinstance(node.args[0].value, cst.SimpleString)
            ):
                name = _string_value(node.args[0].value)
                if name:
                    found.setdefault(name, []).append(
                        P.placed(P.Place.DEVICE, MEDIUM, node, "a registered buffer moves with the module")
                    )

    for stmt in getattr(class_def.body, "body", ()):
        if isinstance(stmt, cst.FunctionDef):
            stmt.visit(Collector(stmt))
    return {name: P.join(*values) for name, values in found.items()}
