"""Where an expression's value comes from: `Evaluator` gives the placement of an expression
in an environment (name -> Placement). The environment itself is carried through a scope's
statements by `flow.FlowWalker`.

The sources: number/list literals and comprehensions, torch factories with and without
`device=`, `.cuda()`, `.to(...)`, `.cpu()`, `.pin_memory()`, `torch.from_numpy`, `np.*`,
`.tolist()`/`.item()`/`.numpy()`, nn.Module parameters and buffers, local functions' return
values, and ops that keep the placement of their inputs (arithmetic, indexing, torch
functions, tensor methods).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from synclint.analysis.imports import dotted_name
from synclint.screen.places import names_a_class
from synclint.analysis.nodes import children, is_expression, per_file_memo
from synclint.analysis.scopeenv import FlowEnv
from synclint.analysis.values import (
    TENSOR_PLACES,
    UNKNOWN,
    none_value,
    Env,
    Place,
    Placement,
    join,
    placed,
)
from synclint import repo
from synclint.apis import torch_api as api
from synclint.apis.tensor_members import TENSOR_MEMBERS
from synclint.violation import Confidence

if TYPE_CHECKING:
    from synclint.analysis.placement import PlacementAnalysis

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW
# The environment's entry for `with torch.device(d):` (a key no name can have): where the
# factories without `device=` inside it build.
DEVICE_CONTEXT = "<with torch.device>"
# Displays that build a Python list or tuple: `[n] * count` repeats one.
SEQUENCE_DISPLAYS = (cst.List, cst.Tuple, cst.ListComp)


def _is_property(func: cst.FunctionDef) -> bool:
    """`@property`, `@functools.cached_property`: read as an attribute, computed by the getter."""
    for decorator in func.decorators:
        expr = decorator.decorator
        name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else None
        if name in api.PROPERTY_DECORATORS:
            return True
    return False


def kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def string_value(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString):
        try:
            value = expr.evaluated_value
        except Exception:  # noqa: BLE001 - odd literal: treat as unknown
            return None
        return value if isinstance(value, str) else None
    return None


def _fstring_prefix(expr: cst.FormattedString) -> str:
    """The literal text an f-string starts with (f"cuda:{rank}" -> "cuda:")."""
    first = expr.parts[0] if expr.parts else None
    return first.value if isinstance(first, cst.FormattedStringText) else ""


def _device_place_of_text(text: str) -> Place | None:
    head = text.split(":")[0]
    if head == "cpu":
        return Place.CPU_DEVICE
    if head in api.ACCELERATOR_PREFIXES:
        return Place.ACCEL_DEVICE
    return None


def _head_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


_MASK_PLACES = {1: Place.DEVICE, 2: Place.HOST, 4: Place.NUMPY, 8: Place.SEQUENCE}


def repository_placement(found, node) -> Placement | None:
    """A fact of the repository index (synclint/repo/): (mask, reason) -> a placement,
    medium: inferred from other files or from a name, and `--explain` says which."""
    if found is None:
        return None
    mask, reason = found
    if mask & repo.AMBIGUOUS:
        # A name that is a device tensor in some places and host data in others: low (a
        # tensor method called on it may resolve it: `resolve_by_method`).
        return placed(Place.DEVICE, LOW, node, reason)
    if mask == repo.SCALAR:
        # A field declared a Python number that nothing in the repository gives a tensor.
        return placed(Place.SCALAR, MEDIUM, node, reason)
    place = _MASK_PLACES.get(mask)
    if place is None:
        return None
    value = placed(place, MEDIUM, node, reason)
    if place is Place.HOST:
        # A host tensor from another file or a name may be pinned (a staging buffer): say
        # both, so that no rule reports it as surely pageable.
        return Placement(frozenset({Place.HOST, Place.PINNED}), MEDIUM, ()).because(node, reason)
    return value


# Methods of Python values (ints, floats, strings, lists, dicts): calling one says nothing of
# whether a name that may be a tensor is one.
_PYTHON_VALUE_METHODS = frozenset(
    {"append", "extend", "pop", "index", "count", "copy", "sort", "reverse", "insert", "remove", "clear",
     "bit_length", "to_bytes", "conjugate", "as_integer_ratio", "is_integer", "hex", "keys", "values", "items",
     "get", "update", "setdefault", "split", "join", "strip", "format", "startswith", "endswith", "lower",
     "upper", "replace", "encode", "decode"}
)


# Methods and attributes numpy arrays have as well as tensors (and the numpy functions that
# torch mirrors): calling one does not tell a tensor from an array.
_NUMPY_TOO = frozenset(
    {"max", "min", "sum", "any", "all", "item", "tolist", "nonzero", "argmax", "argmin", "mean", "cumsum", "prod",
     "astype", "copy", "reshape", "flatten", "ravel", "squeeze", "transpose", "view", "fill", "clip", "round",
     "sort", "argsort", "std", "var", "dot", "repeat", "take", "where", "unique", "cat", "concatenate", "stack",
     "abs", "maximum", "minimum", "isin", "diff", "count_nonzero", "searchsorted", "full_like", "zeros_like", "ones_like"}
)


def resolve_by_method(value: Placement, method: str, node, how: str | None = None, torch_function: bool = False) -> Placement:
    """`x.max()`, `x.tolist()`, `x.device`, `torch.max(x)` where `x` is a name that holds a
    device tensor in one class and a Python int or list in another (low): no int or list has
    the method or goes into a torch function, so here `x` is the tensor (medium). A method
    `torch.Tensor` does not have (`x.validate()`, `x.get()`) says nothing: `x` is some other
    object there (synclint/apis/tensor_members.py)."""
    if value.confidence is not LOW or method in _PYTHON_VALUE_METHODS or method.startswith("__"):
        return value
    if not torch_function and method not in TENSOR_MEMBERS:
        return value
    notes = [e.reason for e in value.evidence[:3]]
    if any(repo.RESOLVABLE_NOTE_TORCH_ONLY in r for r in notes):
        # The name also holds numpy arrays: `.max()`, `.any()`, `.tolist()` are theirs too.
        if method in _NUMPY_TOO:
            return value
    elif not any(repo.RESOLVABLE_NOTE in r for r in notes):
        return value
    how = how or f"`.{method}()` is a tensor method"
    return Placement(value.places, MEDIUM, value.evidence).because(node, f"{how}: here it is the tensor")


def is_module_class(class_def: cst.ClassDef, imports) -> bool:
    """Whether a class is (by its bases) an nn.Module: its parameters move with it."""
    for base in class_def.bases:
        qual = imports.qualname(base.value) or dotted_name(base.value) or ""
        last = qual.split(".")[-1]
        if qual.startswith("torch.nn.") or last.endswith(("Module", "Model", "Layer", "Linear", "Embedding", "Attention")):
            return True
    return False


class Evaluator:
    def __init__(self, analysis: PlacementAnalysis) -> None:
        self.analysis = analysis
        self.imports = analysis.imports
        # The scope chain lets `self.attr` find its class. Saved and restored around each
        # query: evaluating a call may analyse another scope with this same evaluator.
        self.chain: tuple[cst.CSTNode, ...] = ()

    def eval(self, expr: cst.BaseExpression, env: Env, chain: tuple[cst.CSTNode, ...] = ()) -> Placement:
        saved = self.chain
        self.chain = chain
        try:
            result = self._eval(expr, env)
        finally:
            self.chain = saved
        if not result.evidence and not result.known:
            # Say so: `--explain` then shows that nothing placed the value, not an empty chain.
            result = result.because(expr, "nothing in this file shows where it lives")
        return result

    def device_target(self, expr: cst.BaseExpression, env: Env, chain: tuple[cst.CSTNode, ...] = ()) -> Placement | None:
        saved = self.chain
        self.chain = chain
        try:
            return self._device_target(expr, env)
        finally:
            self.chain = saved

    def call_item(self, call: cst.Call, position: int, env: Env, chain: tuple[cst.CSTNode, ...] = ()) -> Placement | None:
        """Element `position` of the tuple `call` returns, unpacked (`a, b = f(x)`), where the
        repository says it (every `return` of `f` gives a tuple, element by element), else None.
        The screen's mirror: synclint/screen/places.py `call_item`."""
        saved = self.chain
        self.chain = chain
        try:
            func = call.func
            if isinstance(func, cst.Name):
                name = func.value
                if name in env or self._local_function(name) is not None or self.qualname(func, env) is not None and (
                    self.qualname(func, env).startswith(("torch.", "numpy.")) or self.qualname(func, env) in self.analysis.h2d_helpers
                ):
                    return None
                return repository_placement(repo.ret_item_fact(name, position), call)
            if isinstance(func, cst.Attribute):
                cls = self._receiver_class(func.value, env)
                if cls is not None:
                    return repository_placement(repo.method_ret_fact(cls, func.attr.value, position), call)
            return None
        finally:
            self.chain = saved

    def _receiver_class(self, expr: cst.BaseExpression, env: Env) -> str | None:
        """The class of the object a method is called on (not `self`: its own class's methods
        answer for themselves)."""
        if isinstance(expr, cst.Name) and expr.value == "self":
            return None
        return self.class_of(expr, env)

    def qualname(self, expr: cst.BaseExpression, env: Env) -> str | None:
        """The imported name `expr` spells, unless its head is rebound locally (a parameter or
        variable called `torch` or `tensor` shadows the import)."""
        head = _head_name(expr)
        if head is None or head in env:
            return None
        return self.imports.qualname(expr)

    # --- dispatch ------------------------------------------------------------------------
    def _eval(self, expr: cst.BaseExpression, env: Env) -> Placement:
        if isinstance(expr, cst.Name):
            return self._name(expr, env)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, env)
        if isinstance(expr, cst.Call):
            return self._call(expr, env)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, env)
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return placed(Place.SCALAR, HIGH, expr, "a number literal")
        if isinstance(expr, cst.SimpleString):
            return self._string(expr)
        if isinstance(expr, cst.FormattedString):
            place = _device_place_of_text(_fstring_prefix(expr))
            if place is not None:
                return placed(place, HIGH, expr, "a device string")
            return placed(Place.OTHER, HIGH, expr, "a string")
        if isinstance(expr, cst.ConcatenatedString):
            return placed(Place.OTHER, HIGH, expr, "a string")
        if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.Set, cst.SetComp)):
            return placed(Place.SEQUENCE, HIGH, expr, "a Python list/tuple")
        if isinstance(expr, (cst.Dict, cst.DictComp, cst.Lambda)):
            return placed(Place.OTHER, HIGH, expr, "a Python object")
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Multiply) and any(isinstance(side, SEQUENCE_DISPLAYS) for side in (expr.left, expr.right)):
                # `[n] * count`: a list repeated; a tensor count is read as a Python number (SL208).
                return placed(Place.SEQUENCE, HIGH, expr, "a repeated Python list")
            return self._combine([expr.left, expr.right], env, expr, "arithmetic")
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return placed(Place.SCALAR, HIGH, expr, "`not` gives a Python bool")
            return self._eval(expr.expression, env)
        if isinstance(expr, cst.Comparison):
            operands = [expr.left, *(c.comparator for c in expr.comparisons)]
            if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in expr.comparisons):
                return placed(Place.SCALAR, HIGH, expr, "identity/membership test")
            if any(isinstance(o, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)) for o in operands):
                return placed(Place.SCALAR, HIGH, expr, "a comparison with a string is a Python bool")
            return self._combine(operands, env, expr, "comparison")
        if isinstance(expr, cst.BooleanOperation):
            return join(self._eval(expr.left, env), self._eval(expr.right, env))
        if isinstance(expr, cst.IfExp):
            body, orelse = self._eval(expr.body, env), self._eval(expr.orelse, env)
            if _tests_availability(expr.test):
                # `"cuda" if torch.cuda.is_available() else "cpu"`: the accelerator, where one is.
                for one, other in ((body, orelse), (orelse, body)):
                    if one.is_(Place.ACCEL_DEVICE) and other.is_(Place.CPU_DEVICE):
                        return one.at_most(MEDIUM).because(expr, "the accelerator where one is available")
            return join(body, orelse)
        if isinstance(expr, cst.NamedExpr):
            return self._eval(expr.value, env)
        return UNKNOWN

    def _string(self, expr: cst.SimpleString) -> Placement:
        value = string_value(expr)
        place = _device_place_of_text(value) if value is not None else None
        if place is not None:
            return placed(place, HIGH, expr, "a device string")
        return placed(Place.OTHER, HIGH, expr, "a string")

    def _name(self, expr: cst.Name, env: Env) -> Placement:
        name = expr.value
        if name in env:
            return env[name]
        if name in ("True", "False"):
            return placed(Place.SCALAR, HIGH, expr, "a bool literal")
        if name == "None":
            return none_value(expr)
        if name in api.DEVICE_LIKE_NAMES and name not in self.imports.aliases:
            return placed(Place.ACCEL_DEVICE, MEDIUM, expr, f"`{name}` is named like an accelerator device (inferred)")
        return UNKNOWN

    def _host_field(self, name: str | None, node) -> Placement | None:
        if name is not None and name in self.analysis.host_fields:
            return placed(Place.HOST, MEDIUM, node, f"the field `{name}` is kept on the host (`keep_on_cpu=True`)")
        return None

    def _device_field(self, name: str | None, kwargs: cst.BaseExpression, node) -> Placement | None:
        """`kwargs.pop("pixel_values", None)` of the function's own `**kwargs`, in a module that
        declares `pixel_values` with vLLM's `MultiModalFieldConfig` (not `keep_on_cpu`)."""
        if name is None or name not in self.analysis.device_fields or not isinstance(kwargs, cst.Name):
            return None
        func = next((s for s in reversed(self.chain) if isinstance(s, cst.FunctionDef)), None)
        star = func.params.star_kwarg if func is not None else None
        if not isinstance(star, cst.Param) or star.name.value != kwargs.value:
            return None
        return self._input_field(name, node)

    def _input_field(self, name: str | None, node) -> Placement | None:
        """`image_input["pixel_values"]`: a multimodal input built from the model's
        `**kwargs` and read by the name of a field the module declares with vLLM's
        `MultiModalFieldConfig` (not `keep_on_cpu`), which the model runner moved to the device."""
        if name is None or name not in self.analysis.device_fields:
            return None
        reason = f"the multimodal field `{name}` is moved to the device by vLLM's model runner (declared with `MultiModalFieldConfig`, not `keep_on_cpu`)"
        return placed(Place.DEVICE, MEDIUM, node, reason)

    def _attribute(self, expr: cst.Attribute, env: Env) -> Placement:
        attr = expr.attr.value
        kept = self._host_field(attr, expr)
        if kept is not None:
            return kept
        qual = self.qualname(expr, env)
        if qual is not None and qual.startswith("torch.") and qual[6:] in api.DTYPES:
            return placed(Place.OTHER, HIGH, expr, "a dtype")
        if attr == "device":
            return self._device_of(expr.value, expr, env)
        if isinstance(expr.value, cst.Name) and expr.value.value == "self" and "self" not in env:
            return self._self_attribute(expr, attr)
        base = self._eval(expr.value, env)
        if attr in api.PARAMETER_ATTRIBUTES:
            if self._is_submodule(expr.value, env):
                return placed(Place.DEVICE, MEDIUM, expr, "a parameter of an nn.Module moves with the module (inferred)")
            if self._is_submodule(_first_field(expr.value), env):
                # `self.embeddings.position_embedding.weight`: a submodule's submodule
                return placed(Place.DEVICE, MEDIUM, expr, "a parameter of a submodule moves with the module (inferred)")
            if base.on_device:  # `.weight` of a module placed on the device
                return base.at_most(MEDIUM).because(expr, "a parameter of a module on the device")
        if attr in api.SAME_PLACE_ATTRIBUTES and base.is_tensor:
            return base
        if attr in api.SEQUENCE_ATTRIBUTES:
            if base.is_tensor or base.is_(Place.NUMPY):
                return placed(Place.SEQUENCE, HIGH, expr, "a shape is host data")
            return placed(Place.SEQUENCE, MEDIUM, expr, "`.shape` is host metadata")
        if attr in api.SCALAR_ATTRIBUTES:
            return placed(Place.SCALAR, MEDIUM, expr, f"`.{attr}` is host metadata")
        if attr in api.OTHER_ATTRIBUTES:
            return placed(Place.OTHER, HIGH, expr, f"`.{attr}` is metadata")
        if not base.is_tensor and _config_object(expr.value):
            # `config.num_heads`, `self.model_config.max_len`: a configuration holds Python values.
            return placed(Place.SCALAR, MEDIUM, expr, f"a field of a configuration object `{_last_name(expr.value)}`: a Python value (inferred from the name)")
        if not base.is_tensor and isinstance(expr.value, cst.Name) and expr.value.value not in env \
                and names_a_class(expr.value.value):
            # `InputTypeEnum.tensor`, `Defaults.WINDOW`: an attribute of a class itself (an
            # enum's member, a class constant), never an object's field of that name: the
            # class's own fields where the repository defines it, else nothing.
            cls = self._resolved(expr.value.value)
            if not repo.facts.FACTS.is_class(cls):
                return UNKNOWN
            return repository_placement(repo.field_fact(cls, attr), expr) or UNKNOWN
        if not base.is_tensor:
            # A field: what the repository assigns to it through the object's class where
            # the code says the class, else to any field of that name (synclint/repo/).
            owner = self.class_of(expr.value, env)
            found = repository_placement(repo.field_fact(owner, attr) if owner else repo.attr_fact(attr), expr)
            if found is not None:
                return found
        return UNKNOWN

    # --- the classes of objects (the rules: synclint/screen/places.py `class_of`) ------------
    def class_of(self, expr: cst.BaseExpression, env: Env, depth: int = 0) -> str | None:
        """The class of `expr`'s object: `self`, a parameter annotated with a class, a local
        bound only to `Cls(...)` / `Cls.constructor(...)`, a field of a known class."""
        if depth > 8:
            return None
        if isinstance(expr, cst.Name):
            return self._name_class(expr.value, depth)
        if isinstance(expr, cst.Attribute):
            base = self.class_of(expr.value, env, depth + 1)
            return repo.facts.FACTS.field_type(base, expr.attr.value) if base else None
        if isinstance(expr, cst.Call):
            return self._call_class(expr, env, depth)
        return None

    def _resolved(self, name: str) -> str:
        full = self.imports.aliases.get(name)
        return full.rpartition(".")[2] if full else name

    def _name_class(self, name: str, depth: int) -> str | None:
        if name in ("self", "cls"):
            class_chain = self._enclosing_class()
            return class_chain[-1].name.value if class_chain else None
        func = next((s for s in reversed(self.chain) if isinstance(s, cst.FunctionDef)), None)
        if func is None:
            return None
        for param in [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]:
            if param.name.value == name:
                if param.annotation is None:
                    # An override that leaves it unannotated: as the nearest base's method
                    # declares it (screen/places.py `inherited_parameter_class`).
                    owner = self._enclosing_class()
                    if owner is None or func is not self.chain[-1] or func.name.value == "__init__":
                        return None
                    found = repo.facts.FACTS.parameter_class(owner[-1].name.value, func.name.value, name)
                    return found if found and "(" not in found else None
                text = self.analysis.module.code_for_node(param.annotation.annotation)
                found = repo.class_of_annotation(text)
                return self._resolved(found) if found else None
        values = _local_bindings(func).get(name)
        if not values:
            return None
        classes = set()
        for value in values:
            copied = self._copied(value)
            if isinstance(copied, cst.Name) and copied.value == name:
                continue  # `x = copy.deepcopy(x)`: the same class
            if isinstance(value, cst.Annotation):
                one = repo.class_of_annotation(self.analysis.module.code_for_node(value.annotation))
                one = self._resolved(one) if one else None
            elif isinstance(value, tuple):
                one = self._element_class(value[1], func, depth + 1)
            else:
                one = self.class_of(value, {}, depth + 1)
            if one is None:
                return None
            classes.add(one)
        return classes.pop() if len(classes) == 1 else None

    def _element_class(self, expr, func: cst.FunctionDef, depth: int) -> str | None:
        """The class of the elements of `expr` (a parameter annotated `list[Req]`, a field so
        declared): the rules of synclint/screen/places.py `element_class`."""
        if isinstance(expr, cst.Name):
            annotation = None
            for param in [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]:
                if param.name.value == expr.value and param.annotation is not None:
                    annotation = param.annotation
            if annotation is None:
                annotation = next((v for v in _local_bindings(func).get(expr.value, ()) if isinstance(v, cst.Annotation)), None)
            if annotation is None:
                return None
            found = repo.elements_of_annotation(self.analysis.module.code_for_node(annotation.annotation))
            return self._resolved(found) if found else None
        if isinstance(expr, cst.Attribute):
            base = self.class_of(expr.value, {}, depth + 1)
            return repo.facts.FACTS.field_type(base, expr.attr.value + "[]") if base else None
        return None

    def _copied(self, value):
        """`copy.copy(x)`, `copy.deepcopy(x)`: x (a copy has x's class), else None."""
        if isinstance(value, cst.Call) and len(value.args) == 1 and value.args[0].keyword is None:
            if api.copies(self.imports.qualname(value.func) or ""):
                return value.args[0].value
        return None

    def _call_class(self, call: cst.Call, env: Env, depth: int) -> str | None:
        func = call.func
        facts = repo.facts.FACTS
        copied = self._copied(call)
        if copied is not None:
            return self.class_of(copied, env, depth + 1)
        if isinstance(func, cst.Name):
            if func.value == "cls":
                return self._name_class("cls", depth + 1)
            name = self._resolved(func.value)
            return name if facts.is_class(name) else facts.returns_class("", name)
        if isinstance(func, cst.Attribute):
            head = func.value
            if isinstance(head, cst.Name) and head.value not in ("self", "cls"):
                name = self._resolved(head.value)
                if facts.is_class(name):
                    return facts.returns_class(name, func.attr.value)
            base = self.class_of(head, env, depth + 1)
            if base:
                return facts.returns_class(base, func.attr.value)
        return None

    def _device_of(self, obj: cst.BaseExpression, expr: cst.BaseExpression, env: Env) -> Placement:
        """`obj.device` (`expr`: the expression that reads it, `obj.device` or `getattr(obj,
        "device")`)."""
        if isinstance(obj, cst.Name) and obj.value == "self" and "self" not in env:
            assigned = self._self_attributes().get("device")
            if assigned is not None and assigned.is_(Place.ACCEL_DEVICE, Place.CPU_DEVICE):
                return assigned
        base = resolve_by_method(self._eval(obj, env), "device", expr, "`.device` is a tensor's")
        if base.is_(Place.DEVICE):
            return placed(Place.ACCEL_DEVICE, base.confidence, expr, "the device of a device tensor")
        if base.is_(Place.HOST, Place.PINNED):
            return placed(Place.CPU_DEVICE, base.confidence, expr, "the device of a host tensor")
        if base.is_tensor and not self._in_module_forward():
            # `device=x.device` of a tensor nothing places (`x: torch.Tensor` in a helper):
            # x may as well be a CPU tensor, so this is no proof of a device: either, inferred.
            reason = "`.device` of a tensor nothing in this file places: an accelerator or the CPU (inferred)"
            evidence = placed(Place.ACCEL_DEVICE, MEDIUM, expr, reason).evidence
            return Placement(frozenset({Place.ACCEL_DEVICE, Place.CPU_DEVICE}), MEDIUM, evidence)
        return placed(Place.ACCEL_DEVICE, MEDIUM, expr, "`.device` of a model or tensor, assumed an accelerator (inferred)")

    def _getattr_device(self, call: cst.Call, env: Env) -> Placement | None:
        """`getattr(group, "device", t.device)`: the object's `.device` (an accelerator unless
        the object is placed on the host), or the default's where it may not have one."""
        args = call.args
        if not 2 <= len(args) <= 3 or any(a.keyword is not None or a.star for a in args):
            return None
        if string_value(args[1].value) != "device":
            return None
        found = self._device_of(args[0].value, call, env)
        if len(args) == 3:
            found = join(found, self._eval(args[2].value, env))
        return found

    def _self_attribute(self, expr: cst.Attribute, attr: str) -> Placement:
        attrs = self._self_attributes()
        if attr in attrs:
            value = attrs[attr]
            if value.known and value.confidence > LOW:
                return value
            # Not placed by this class: what the repository gives the field (a base class or
            # a builder in another file assigns it), if it says more.
            found = repository_placement(self._self_field(attr), expr)
            return found if found is not None else value
        if attr in api.DEVICE_LIKE_NAMES:
            return placed(Place.ACCEL_DEVICE, MEDIUM, expr, f"`self.{attr}` is named like a device (inferred)")
        if attr in api.PARAMETER_ATTRIBUTES and self._in_module_class():
            return placed(Place.DEVICE, MEDIUM, expr, "a parameter of an nn.Module moves with the module (inferred)")
        method = self._class_method(attr)
        if method is not None and _is_property(method):
            # `@property` / `@cached_property def table(self): ...`: what the getter returns
            value = self.analysis.returns_of(method, self._enclosing_class())
            if value.known:
                return value.because(expr, f"`self.{attr}` is a property: what `{attr}()` returns")
        found = repository_placement(self._self_field(attr), expr)
        return found if found is not None else UNKNOWN

    def _self_field(self, attr: str):
        class_chain = self._enclosing_class()
        return repo.field_fact(class_chain[-1].name.value, attr) if class_chain else repo.attr_fact(attr)

    def _enclosing_class(self) -> tuple[cst.CSTNode, ...] | None:
        chain = self.chain
        if len(chain) >= 2 and isinstance(chain[-1], cst.FunctionDef) and isinstance(chain[-2], cst.ClassDef):
            return chain[:-1]
        return None

    def _self_attributes(self) -> Env:
        class_chain = self._enclosing_class()
        return self.analysis.class_attributes(class_chain) if class_chain else {}

    def _in_module_forward(self) -> bool:
        return bool(self.chain) and isinstance(self.chain[-1], cst.FunctionDef) and self.chain[-1].name.value == "forward" and self._in_module_class()

    def _in_module_class(self) -> bool:
        class_chain = self._enclosing_class()
        return class_chain is not None and is_module_class(class_chain[-1], self.imports)

    def _is_submodule(self, expr: cst.BaseExpression, env: Env) -> bool:
        """`self.proj` in an nn.Module class, not assigned anything we can place: a submodule."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return False
        if "self" in env or not self._in_module_class():
            return False
        value = self._self_attributes().get(expr.attr.value)
        return value is None or value.is_(Place.OTHER) or not value.known

    def _subscript(self, expr: cst.Subscript, env: Env) -> Placement:
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            kept = self._host_field(key, expr) or self._input_field(key, expr)
            if kept is not None:
                return kept
        base = self._eval(expr.value, env)
        if not base.is_tensor and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            element = self._list_element(expr.value, env)
            if element is not None and element.is_tensor and (base.is_(Place.SEQUENCE) or not base.known):
                return element.because(expr, "an element of a list of tensors")
        if base.is_tensor or base.is_(Place.NUMPY):
            if base.is_(Place.PINNED) and _leading_slice(expr):
                return base.because(expr, "a slice of the first dimension of a pinned tensor (a contiguous view)")
            if base.is_(Place.PINNED):  # an indexed pinned tensor is a (maybe strided) view or a copy
                return placed(Place.HOST, base.confidence, expr, "indexing a pinned tensor")
            return base  # indexing keeps the placement
        if base.is_(Place.SEQUENCE) and _is_shape(expr.value):
            return placed(Place.SCALAR, HIGH, expr, "a dimension of a shape")
        return UNKNOWN

    def list_element(self, value: cst.BaseExpression, env: Env, chain: tuple[cst.CSTNode, ...]) -> Placement | None:
        saved = self.chain
        self.chain = chain
        try:
            return self._list_element(value, env)
        finally:
            self.chain = saved

    def _list_element(self, value: cst.BaseExpression, env: Env) -> Placement | None:
        """What the elements of a list hold (`name[]` / `self.attr[]`, flow.py `_record_elements`)."""
        if isinstance(value, cst.Name):
            return env.get(value.value + "[]")
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self" and "self" not in env:
            return self._self_attributes().get(value.attr.value + "[]")
        return None

    def _operands(self, exprs, env: Env) -> list[Placement]:
        """Placements of operands; a list/tuple literal argument (`torch.cat([a, b])`)
        contributes its elements."""
        out = []
        for e in exprs:
            if isinstance(e, (cst.List, cst.Tuple)) and e.elements:
                out.extend(self._eval(el.value, env) for el in e.elements if not isinstance(el, cst.StarredElement))
            elif isinstance(e, (cst.ListComp, cst.GeneratorExp)):
                out.append(self._comprehension_element(e, env))
            else:
                value = self._eval(e, env)
                if value.is_(Place.SEQUENCE):
                    # `parts = []; parts.append(torch.arange(h)); torch.cat(parts)`: the list's
                    # elements, where this scope saw every one of them added
                    elements = self._list_element(e, env)
                    if elements is not None and elements.is_tensor:
                        value = elements.because(e, f"the elements of `{dotted_name(e) or 'the list'}`")
                out.append(value)
        return out

    def _comprehension_element(self, comp, env: Env) -> Placement:
        """What an element of `[f(p) for p in ps]` holds, where the element says it whatever
        its loop variables hold (`torch.arange(p.shape[0])`: a host tensor; `t.cuda()`: a
        device one): the element with every `for` target unknown, and nothing placed where it
        reads one (`[t for t in ts]`)."""
        inner = FlowEnv(env)
        comp_for = comp.for_in
        while comp_for is not None:
            for name in _names_in(comp_for.target):
                inner[name] = UNKNOWN
            comp_for = comp_for.inner_for_in
        value = self._eval(comp.elt, inner)
        return value if value.is_tensor else UNKNOWN

    def _combine(self, operands, env: Env, node, what: str, values: list[Placement] | None = None) -> Placement:
        """Arithmetic/comparison: a device operand makes a device result, and so on."""
        values = values if values is not None else [self._eval(o, env) for o in operands]
        for place in (Place.DEVICE, Place.HOST, Place.PINNED, Place.NUMPY):
            hits = [v for v in values if v.is_(place)]
            if hits:
                best = max(hits, key=lambda v: v.confidence)
                out = place if place != Place.PINNED else Place.HOST  # results are new, pageable
                return Placement(frozenset({out}), best.confidence, best.evidence)
        if values and all(v.is_(Place.SCALAR) for v in values):
            return placed(Place.SCALAR, min(v.confidence for v in values), node, f"{what} of Python scalars")
        if values and all(v.is_(Place.SEQUENCE) for v in values):
            return placed(Place.SEQUENCE, HIGH, node, f"{what} of Python sequences")
        if isinstance(node, cst.BinaryOperation) and any(v.is_(Place.SEQUENCE) for v in values):
            # `[0] * n`, `lst + more`: no tensor operand, so Python list arithmetic.
            return placed(Place.SEQUENCE, HIGH, node, "list arithmetic gives a Python list")
        maybe = [v for v in values if v.is_tensor or v.may_be(Place.DEVICE)]
        if maybe:
            joined = join(*maybe)
            if Place.SCALAR in joined.places and any(v.is_tensor for v in values):
                # `timesteps == t` with `timesteps` a tensor wherever it lives: a tensor, even
                # where `t` may be a Python number.
                joined = Placement(joined.places - {Place.SCALAR}, joined.confidence, joined.evidence)
            return joined
        return UNKNOWN

    # --- calls ---------------------------------------------------------------------------
    def _call(self, call: cst.Call, env: Env) -> Placement:
        func = call.func
        qual = self.qualname(func, env)
        if qual is not None:
            result = self._qualified_call(qual, call, env)
            if result is not None:
                return result
        if isinstance(func, cst.Name):
            return self._plain_call(func.value, call, env)
        if isinstance(func, cst.Attribute):
            if isinstance(func.value, cst.Name) and func.value.value == "self" and "self" not in env:
                method = self._class_method(func.attr.value)
                if method is not None:
                    owner = self._enclosing_class()
                    # a method that returns its parameters alone gives this call its own
                    # arguments, not what every call of it passes
                    found = self._passed_through(repo.passes_fact(func.attr.value, owner[-1].name.value) if owner else None,
                                                 call, env, func.attr.value)
                    return found if found is not None else self.analysis.returns_of(method, owner)
            return self._method(call, func, env)
        return UNKNOWN

    def tuple_parts(self, call: cst.Call, env: Env, chain: tuple[cst.CSTNode, ...], count: int) -> tuple[Placement, ...] | None:
        """For `a, b, c = f(...)` with `f` a function of an enclosing scope or the module, or
        `self.f(...)` a method of the class: what each name gets, where every `return` of `f`
        is a tuple literal of `count` elements (`PlacementAnalysis.return_parts_of`)."""
        saved = self.chain
        self.chain = chain
        try:
            func = call.func
            if isinstance(func, cst.Name) and func.value not in api.SCALAR_BUILTINS and func.value not in api.SEQUENCE_BUILTINS:
                local = self._local_function(func.value)
                if local is not None:
                    return self.analysis.return_parts_of(local[0], local[1], count)
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and "self" not in env:
                method = self._class_method(func.attr.value)
                if method is not None:
                    return self.analysis.return_parts_of(method, self._enclosing_class(), count)
            return None
        finally:
            self.chain = saved

    def _plain_call(self, name: str, call: cst.Call, env: Env) -> Placement:
        if name == "getattr" and name not in env:
            found = self._getattr_device(call, env)
            if found is not None:
                return found
        if name not in env:
            if name in api.SCALAR_BUILTINS:
                return placed(Place.SCALAR, HIGH, call, f"`{name}()` gives host data")
            if name in api.SEQUENCE_BUILTINS:
                return placed(Place.SEQUENCE, HIGH, call, f"`{name}()` gives a Python sequence")
            if name in api.TENSOR_PRESERVING_BUILTINS:
                return self._combine([a.value for a in call.args], env, call, f"`{name}()`")
        local = self._local_function(name)
        if local is not None:
            func, chain = local
            return self.analysis.returns_of(func, chain)
        if name not in env:
            found = self._passed_through(repo.passes_fact(name), call, env, name)
            if found is None:
                found = repository_placement(repo.ret_fact(name), call)
            if found is not None:
                return found
        return UNKNOWN

    def _passed_through(self, passes, call: cst.Call, env: Env, name: str) -> Placement | None:
        """Where the arguments are that a function of another file returns alone (`passes`:
        its parameters, from the index), so each call gets its own: a helper called with
        host lengths here and device lengths elsewhere gives host data here."""
        if not passes:
            return None
        positional = []
        for arg in call.args:
            if arg.star:
                return None  # `*args` / `**kwargs`: which parameter gets what, the call hides
            if arg.keyword is None:
                positional.append(arg.value)
        values = []
        for position, parameter in passes:
            value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == parameter), None)
            if value is None and 0 <= position < len(positional):
                value = positional[position]
            if value is not None:
                values.append(value)
        if not values:
            return None
        found = self._combine(values, env, call, f"`{name}()`")
        if Place.UNKNOWN in found.places:
            return None
        shown = ", ".join(f"`{p}`" for _, p in passes)
        return found.because(call, f"`{name}()` returns what it is passed ({shown}) and nothing else")

    def _local_function(self, name: str):
        """A function defined in an enclosing scope (innermost first) or the module, with the
        chain of scopes that encloses it."""
        chain = self.chain or (self.analysis.module,)
        for depth in range(len(chain), 0, -1):
            scope = chain[depth - 1]
            if isinstance(scope, cst.ClassDef):
                continue  # methods are reached through `self.`, not by bare name
            body = scope.body if isinstance(scope, cst.Module) else getattr(scope.body, "body", ())
            for stmt in body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                    return stmt, chain[:depth]
        return None

    def _class_method(self, name: str) -> cst.FunctionDef | None:
        class_chain = self._enclosing_class()
        if class_chain is None:
            return None
        for stmt in getattr(class_chain[-1].body, "body", ()):
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        return None

    def _device_target(self, expr: cst.BaseExpression, env: Env) -> Placement | None:
        """Placement that a `device=` value sends a tensor to (DEVICE or HOST), or None."""
        d = self._eval(expr, env)
        if d.is_(Place.ACCEL_DEVICE):
            return Placement(frozenset({Place.DEVICE}), d.confidence, d.evidence)
        if d.is_(Place.CPU_DEVICE):
            return Placement(frozenset({Place.HOST}), d.confidence, d.evidence)
        if d.is_(Place.ACCEL_DEVICE, Place.CPU_DEVICE):
            if _cpu_on_a_branch(d):
                # `device = group.device if use_nccl else "cpu"`: the code itself runs this on
                # the CPU in one configuration (a gloo group, a CPU fallback), so nothing says
                # the tensor is on the device where it is used. (`"cuda" if
                # torch.cuda.is_available() else "cpu"` is an accelerator: sources.py reads it.)
                return Placement(frozenset({Place.DEVICE, Place.HOST}), LOW, d.evidence).because(
                    expr, "a device that the code sets to the CPU on another branch: a host tensor in that configuration"
                )
            return Placement(frozenset({Place.DEVICE, Place.HOST}), min(d.confidence, MEDIUM), d.evidence).because(
                expr, "a device that may be the CPU"
            )
        if d.is_(*TENSOR_PLACES):  # `.to(other_tensor)`: where the other tensor is
            return _unpinned(d)
        if isinstance(expr, cst.Integer):
            return placed(Place.DEVICE, MEDIUM, expr, "an integer device index")
        if d.is_(Place.SCALAR) and _names_a_device_index(expr):
            # `.to(local_rank)`: an int names a CUDA device. Only where the name says so: a
            # scalar could also be a dtype the analysis did not recognise.
            return placed(Place.DEVICE, MEDIUM, expr, "an integer device index (inferred from its name)")
        return None

    def _qualified_call(self, qual: str, call: cst.Call, env: Env) -> Placement | None:
        helper = self.analysis.h2d_helpers.get(qual)
        if helper is not None:
            return self._h2d_helper(qual, helper, call, env)
        if qual.startswith("numpy."):
            name = qual[6:]
            if name in api.NUMPY_CONSTRUCTORS or name.startswith("random."):
                return placed(Place.NUMPY, HIGH, call, f"`np.{name}()` builds a numpy array")
            return placed(Place.NUMPY, MEDIUM, call, f"`np.{name}()` returns numpy data")
        if not qual.startswith("torch."):
            return None
        name = qual[6:]
        if name == "device":
            return self._torch_device(call, env)
        if name == "cuda.current_device":
            return placed(Place.ACCEL_DEVICE, HIGH, call, "the current CUDA device")
        if name in api.DTYPE_RESULT_FUNCTIONS:
            return placed(Place.OTHER, HIGH, call, f"`torch.{name}()` returns a dtype")
        if name in api.HOST_RESULT_FUNCTIONS:
            return placed(Place.SCALAR, HIGH, call, f"`torch.{name}()` returns a Python value")
        if name == "from_numpy":
            return placed(Place.HOST, HIGH, call, "`torch.from_numpy()` wraps pageable host memory")
        legacy = api.legacy_constructor(name)
        if legacy == "cpu":
            return placed(Place.HOST, HIGH, call, f"the legacy constructor `torch.{name}()` builds on the host")
        if legacy == "cuda":
            return placed(Place.DEVICE, HIGH, call, f"the legacy constructor `torch.{name}()` builds on the GPU")
        if name in api.TENSOR_FACTORIES:
            return self._factory(name, call, env)
        if name.startswith(api.NOT_TENSOR_NAMESPACES):
            return None
        if qual in api.MODULE_MEMBER_CALLS:
            if self._in_module_class():
                return placed(Place.DEVICE, MEDIUM, call, "a parameter of an nn.Module moves with it (inferred)")
            return None
        if name.startswith("nn.") and not name.startswith("nn.functional."):
            # `nn.Linear(...)`: a submodule, not a tensor (its `.weight` is placed on its own).
            return placed(Place.OTHER, MEDIUM, call, f"`torch.{name}()` builds a module")
        out = kwarg(call, "out")
        if out is not None:
            # `torch.cat(parts, out=buf)` writes into `buf` and returns it: it lives where `buf` does.
            written = self._eval(out.value, env)
            if written.known:
                return written.because(call, f"`torch.{name}(..., out=...)` returns its `out=` tensor")
        # Other torch functions (torch.cat, torch.where, F.softmax): the result lives with
        # their tensor inputs.
        tensor_args = [a.value for a in call.args if a.keyword is None or a.keyword.value in ("input", "other", "tensors")]
        if not tensor_args:
            return UNKNOWN
        # A 0-dim host tensor (`torch.tensor(5)`) is an operand on any device: it does not
        # say where `torch.minimum(x, torch.tensor(5))` lives, `x` does.
        others = [a for a in tensor_args if not self._host_scalar_tensor(a, env)]
        tensor_args = others or tensor_args
        operands = [resolve_by_method(v, name, call, f"`torch.{name}()` takes tensors", torch_function=True) for v in self._operands(tensor_args, env)]
        combined = self._combine(tensor_args, env, call, f"`torch.{name}()`", operands)
        if combined.is_(Place.SCALAR, Place.SEQUENCE):
            return UNKNOWN
        return combined

    def _h2d_helper(self, qual: str, helper, call: cst.Call, env: Env) -> Placement:
        """`async_tensor_h2d(data, device=d)` and the like: a tensor where `d` sends it."""
        keyword, position = helper
        name = qual.rpartition(".")[2]
        arg = kwarg(call, keyword)
        if arg is None and position is not None:
            args = positional(call)
            arg = args[position] if len(args) > position else None
        target = self._device_target(arg.value, env) if arg is not None else None
        if target is None:
            return placed(Place.DEVICE, MEDIUM, call, f"`{name}()` copies host data to a device")
        return target.because(call, f"`{name}()` copies host data where its device says")

    def _host_scalar_tensor(self, expr: cst.BaseExpression, env: Env) -> bool:
        """`torch.tensor(<a number>)` / `torch.scalar_tensor(...)` without `device=`."""
        if not isinstance(expr, cst.Call) or kwarg(expr, "device") is not None:
            return False
        qual = self.qualname(expr.func, env) or ""
        if qual == "torch.scalar_tensor":
            return True
        args = positional(expr)
        if qual not in ("torch.tensor", "torch.as_tensor") or not args:
            return False
        data = args[0].value
        if isinstance(data, (cst.Integer, cst.Float)):
            return True
        # `n + 1`, `-x`: arithmetic with a number literal gives a number (a list would raise)
        if isinstance(data, cst.BinaryOperation) and isinstance(data.operator, (cst.Add, cst.Subtract, cst.Divide, cst.FloorDivide)):
            if isinstance(data.left, (cst.Integer, cst.Float)) or isinstance(data.right, (cst.Integer, cst.Float)):
                return True
        return self._eval(data, env).is_(Place.SCALAR)

    def _torch_device(self, call: cst.Call, env: Env) -> Placement:
        """torch.device("cuda", i), torch.device("cuda:0"), torch.device(f"cuda:{rank}"), torch.device(type="cpu")."""
        args = positional(call)
        first = args[0].value if args else getattr(kwarg(call, "type"), "value", None)
        if first is None:
            return UNKNOWN
        value = self._eval(first, env)
        if value.is_(Place.ACCEL_DEVICE, Place.CPU_DEVICE):
            return value.because(call, "`torch.device(...)`")
        if value.is_(Place.SCALAR):  # torch.device(0) is cuda:0
            return placed(Place.ACCEL_DEVICE, HIGH, call, "`torch.device(<index>)` is an accelerator")
        return UNKNOWN

    def _factory(self, name: str, call: cst.Call, env: Env) -> Placement:
        device = kwarg(call, "device")
        pin = getattr(kwarg(call, "pin_memory"), "value", None)
        pinned = is_true(pin)
        # `pin_memory=self.pin_memory`: pinned or pageable, decided at run time.
        maybe_pinned = pin is not None and not pinned and not (isinstance(pin, cst.Name) and pin.value in ("False", "None"))
        if device is not None:
            target = self._device_target(device.value, env)
            if target is None:
                return UNKNOWN.because(call, "`device=` with an unknown value")
            if (pinned or maybe_pinned) and target.is_(Place.HOST):
                return self._pinned_factory(name, call, target.confidence, maybe_pinned)
            return target.because(call, f"`torch.{name}(..., device=...)` builds where `device=` says")
        if any(a.star == "**" for a in call.args):
            return UNKNOWN.because(call, f"`torch.{name}(..., **kwargs)`: the keywords may say `device=`")
        args = positional(call)
        if name in api.LIKE_FACTORIES and args:
            like = self._eval(args[0].value, env)
            if like.is_tensor:
                return like.because(call, f"`torch.{name}()` builds where its argument lives")
            return UNKNOWN
        if name in api.DATA_FACTORIES and args and not (pinned or maybe_pinned):
            data = self._eval(args[0].value, env)
            if data.is_(*TENSOR_PLACES):  # torch.tensor(t) / as_tensor(t) keep t's device
                if data.may_be(Place.PINNED):
                    return placed(Place.HOST, data.confidence, call, "a copy of a host tensor")
                return data.because(call, f"`torch.{name}()` of a tensor keeps its device")
            if not data.known:
                if name != "tensor":
                    return UNKNOWN.because(call, f"`torch.{name}()` of a value that may be a device tensor")
                # torch.tensor() of a tensor warns ("use sourceTensor.clone().detach()"), so its
                # data is host data in practice: an inference, not a proof.
                if env.get(DEVICE_CONTEXT) is not None:
                    return env[DEVICE_CONTEXT].at_most(MEDIUM).because(call, "`torch.tensor()` inside `with torch.device(...)`")
                return placed(Place.HOST, MEDIUM, call, "`torch.tensor()` without device= builds on the host (data unknown)")
        if pinned or maybe_pinned:
            return self._pinned_factory(name, call, HIGH, maybe_pinned)
        context = env.get(DEVICE_CONTEXT)
        if context is not None and name not in api.LIKE_FACTORIES:
            return context.because(call, f"`torch.{name}()` without device= builds in the `with torch.device(...)` it is in")
        return placed(Place.HOST, HIGH, call, f"`torch.{name}()` without device= builds on the host")

    @staticmethod
    def _pinned_factory(name: str, call: cst.Call, confidence: Confidence, only_maybe: bool) -> Placement:
        if not only_maybe:
            return placed(Place.PINNED, confidence, call, f"`torch.{name}(..., pin_memory=True)`")
        reason = f"`torch.{name}(..., pin_memory=<flag>)` is pinned only when the flag is true"
        evidence = placed(Place.PINNED, confidence, call, reason).evidence
        return Placement(frozenset({Place.PINNED, Place.HOST}), confidence, evidence)

    def _method(self, call: cst.Call, func: cst.Attribute, env: Env) -> Placement:
        method = func.attr.value
        if method in ("pop", "get") and call.args and (self.analysis.host_fields or self.analysis.device_fields):
            key = string_value(call.args[0].value)
            field = self._host_field(key, call) or self._device_field(key, func.value, call)
            if field is not None:
                return field
        base = resolve_by_method(self._eval(func.value, env), method, call)
        if method == "cuda":
            return placed(Place.DEVICE, HIGH, call, "`.cuda()`")
        if method == "cpu":
            if base.is_(Place.PINNED):
                return base  # `.cpu()` of a host tensor is the tensor itself
            return placed(Place.HOST, HIGH, call, "`.cpu()`")
        if method == "pin_memory":
            return placed(Place.PINNED, HIGH, call, "`.pin_memory()`")
        if method == "type":
            kind = legacy_type(call, lambda target: self.qualname(target, env))
            if kind == "cpu":
                return placed(Place.HOST, HIGH, call, "`.type(torch.<T>Tensor)`: a CPU tensor type")
            if kind == "cuda":
                return placed(Place.DEVICE, HIGH, call, "`.type(torch.cuda.<T>Tensor)`: a CUDA tensor type")
        if method in api.NUMPY_RESULT_METHODS:
            return placed(Place.NUMPY, HIGH, call, f"`.{method}()`")
        if method in ("size", "stride") and positional(call):
            return placed(Place.SCALAR, HIGH, call, f"`.{method}(dim)` gives a Python int")
        if method in api.SEQUENCE_RESULT_METHODS:
            return placed(Place.SEQUENCE, HIGH, call, f"`.{method}()` gives Python data")
        if method in api.SCALAR_RESULT_METHODS:
            return placed(Place.SCALAR, HIGH, call, f"`.{method}()` gives a Python scalar")
        if method in api.NON_TENSOR_RESULT_METHODS:
            return placed(Place.OTHER, HIGH, call, f"`.{method}()` gives a storage object, not a tensor")
        if method == "to":
            return self._to(call, base, env)
        if method in api.NEW_METHODS:
            device = kwarg(call, "device")
            if device is not None:
                target = self._device_target(device.value, env)
                if target is not None:
                    return target.because(call, f"`.{method}(..., device=...)`")
            if base.is_tensor:
                return _unpinned(base).because(call, f"`.{method}()` builds where its tensor lives")
            return UNKNOWN
        cls = self._receiver_class(func.value, env)
        if cls is not None:
            # `self.pool.alloc(n)`: what the method of the object's class returns.
            found = self._passed_through(repo.passes_fact(method, cls), call, env, method)
            if found is None:
                found = repository_placement(repo.method_ret_fact(cls, method), call)
            if found is not None:
                return found
        if base.is_tensor or base.is_(Place.NUMPY):
            # Tensor methods (view, float, sum, max, ...) keep the placement; pinned-ness is
            # kept only by views that keep the memory contiguous (`.view(dtype)`,
            # `.reshape(shape)` of a slice of a pinned pool): other results are pageable.
            if base.may_be(Place.PINNED) and method not in _CONTIGUOUS_VIEWS:
                return placed(Place.HOST, base.confidence, call, f"`.{method}()` of a pinned tensor")
            return base
        return UNKNOWN

    def _to(self, call: cst.Call, base: Placement, env: Env) -> Placement:
        non_blocking = is_true(getattr(kwarg(call, "non_blocking"), "value", None))
        device_kw = kwarg(call, "device") or kwarg(call, "other")
        args = positional(call)
        target_expr = device_kw.value if device_kw is not None else (args[0].value if args else None)
        if target_expr is None:
            return base  # `.to(dtype=...)`
        qual = self.qualname(target_expr, env)
        if qual is not None and qual.startswith("torch.") and qual[6:] in api.DTYPES:
            return base  # a dtype change keeps the placement
        target = self._device_target(target_expr, env)
        if target is None:
            if self._eval(target_expr, env).is_(Place.OTHER):
                return base  # `.to(x.dtype)`, `.to(memory_format=...)`
            return UNKNOWN.because(call, "`.to()` of an unknown target")
        if target.is_(Place.HOST) and non_blocking and not base.is_(Place.HOST, Place.PINNED):
            # PyTorch returns pinned memory for a non_blocking device-to-host copy.
            confidence = min(target.confidence, base.confidence if base.known else MEDIUM)
            return placed(Place.PINNED, confidence, call, "`.to('cpu', non_blocking=True)` returns pinned memory")
        if target.is_(Place.HOST) and base.is_(Place.PINNED, Place.HOST):
            return base
        return target.because(call, "`.to(...)` moves it there")


def _tests_availability(test: cst.BaseExpression) -> bool:
    """Whether a condition asks if an accelerator is there (`torch.cuda.is_available()`,
    `not x.is_cuda`, `torch.cuda.device_count() > 0`)."""
    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute) and node.attr.value in api.ACCELERATOR_AVAILABILITY_TESTS:
            return True
        stack.extend(children(node))
    return False


def _cpu_on_a_branch(device: Placement) -> bool:
    """Whether a device that may be an accelerator or the CPU is the CPU by the code's own
    choice on one branch (`"cpu"`, `torch.device("cpu")`, the device of a host tensor), not
    by a guess about a tensor nothing places. A parameter's default (`device="cpu"`) is no
    such choice: the callers decide (flow.py reads what they pass)."""
    steps = device.evidence
    return not any(isinstance(step.node, cst.Param) for step in steps) and any(step.result == Place.CPU_DEVICE.value for step in steps)


def _names_a_device_index(expr: cst.BaseExpression) -> bool:
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return any(word in name.lower() for word in api.DEVICE_INDEX_WORDS)


def _leading_slice(expr: cst.Subscript) -> bool:
    """`pool[a:b]`: one slice without a step, on the first dimension (a contiguous view)."""
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Slice):
        return False
    return expr.slice[0].slice.step is None


# Methods whose result shares the storage of a contiguous tensor, contiguous itself: a view
# of pinned memory is pinned (a copy from it with `non_blocking=True` does not block).
_CONTIGUOUS_VIEWS = frozenset({"view", "view_as", "reshape", "flatten", "unflatten", "unsqueeze", "squeeze", "detach", "contiguous"})


def _unpinned(value: Placement) -> Placement:
    """A new tensor made where `value` lives: on the host it is pageable, even when `value`
    is pinned (pinned-ness is a property of the allocation, not of the device)."""
    if not value.may_be(Place.PINNED):
        return value
    return Placement((value.places - {Place.PINNED}) | {Place.HOST}, value.confidence, value.evidence)


def _is_shape(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Attribute) and expr.attr.value == "shape") or (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size"
    )


_BINDINGS: dict[int, tuple] = per_file_memo()
def _bind_loop(node: cst.For, out: dict[str, list]) -> None:
    """`for req in reqs` binds `req` to an element of `reqs`; `for i, req in enumerate(reqs)`
    too (and `i` to a number); any other target is bound to something unknown."""
    target, iterable = node.target, node.iter
    if (
        type(target) is cst.Tuple and len(target.elements) == 2 and type(iterable) is cst.Call
        and type(iterable.func) is cst.Name and iterable.func.value == "enumerate" and len(iterable.args) == 1
    ):
        for name in _names_in(target.elements[0].value):
            out.setdefault(name, []).append(None)
        target, iterable = target.elements[1].value, iterable.args[0].value
    if type(target) is cst.Name:
        out.setdefault(target.value, []).append(("iter", iterable))
        return
    for name in _names_in(target):
        out.setdefault(name, []).append(None)


def _local_bindings(func: cst.FunctionDef) -> dict[str, list]:
    """name -> the values a function binds to it with a plain `name = value` (or the
    annotation of `name: T = ...`); a name bound any other way (a loop, a tuple, `with ...
    as`) maps to None among its values, so that its class is unknown."""
    cached = _BINDINGS.get(id(func))
    if cached is not None and cached[0] is func:
        return cached[1]
    out: dict[str, list] = {}
    # The statements of the function, in source order, not going into expressions (none of
    # them binds a name the way these do: a comprehension's `for` and a lambda's parameters
    # are their own scopes), nested functions or classes.
    pending: list = [func]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Assign:
            for target in node.targets:
                t = target.target
                if type(t) is cst.Name:
                    out.setdefault(t.value, []).append(node.value)
                else:
                    for name in _names_in(t):
                        out.setdefault(name, []).append(None)
            continue
        if kind is cst.AnnAssign:
            if type(node.target) is cst.Name:
                out.setdefault(node.target.value, []).append(node.annotation)
            continue
        if kind is cst.AugAssign:
            for name in _names_in(node.target):
                out.setdefault(name, []).append(None)
            continue
        if kind is cst.AsName:
            for name in _names_in(node.name):
                out.setdefault(name, []).append(None)
            continue
        if kind is cst.For:
            _bind_loop(node, out)
        elif (kind is cst.FunctionDef and node is not func) or kind is cst.ClassDef or is_expression(kind):
            continue
        below = children(node)
        below.reverse()
        pending.extend(below)
    if len(_BINDINGS) > 4096:
        _BINDINGS.clear()
    _BINDINGS[id(func)] = (func, out)
    return out


def _names_in(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names_in(el.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []


def _last_name(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return ""


def _config_object(expr: cst.BaseExpression) -> bool:
    """`config`, `hf_config`, `self.model_config`, `cfg`: an object named as a configuration."""
    return api.names_a_configuration(_last_name(expr))


def legacy_type(call: cst.Call, qualname) -> str | None:
    """"cpu" / "cuda" for `t.type(torch.BoolTensor)` / `t.type(torch.cuda.BoolTensor)` (also
    as a string, or `dtype=`), else None; `qualname` resolves a name through the imports."""
    args = positional(call)
    target = args[0].value if len(args) == 1 else getattr(kwarg(call, "dtype"), "value", None)
    if target is None:
        return None
    return api.legacy_tensor_type(string_value(target) or qualname(target))


def _first_field(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`self.a` of an attribute chain `self.a.b.c` (two links or more), else None."""
    if not isinstance(expr, cst.Attribute) or not isinstance(expr.value, cst.Attribute):
        return None
    while isinstance(expr.value, cst.Attribute):
        expr = expr.value
    return expr if isinstance(expr.value, cst.Name) and expr.value.value == "self" else None
