"""Where can this expression live? The screen's `ast` mirror of the placement analysis
(synclint/analysis/sources.py), answering with the places it *may* have.

Rules that report only device values (SL203, SL204, SL3xx, SL401, SL2xx readbacks) report
where the analysis places a value on the device with medium confidence or more; SL103 and
SL301 also need host data (the source of a copy, an index). This module answers, without
libcst, which of these places an expression may have, as a mask of DEVICE, HOST (a host or
pinned tensor), NUMPY and LIST (a Python list the analysis can see as one), and errs only
towards "may": each case below follows the evaluator's own case (a name looks up its
bindings, `.shape` is host metadata, `x.size(0)` a Python int, `torch.cat(xs)` lives with
its inputs, a call to an unknown function is unknown, `self.proj(x)` calls a submodule...),
and where the evaluator can give a place, so does this. Bindings are joined over the whole
function (not per statement), so this says "may" more often than the analysis, never less.

A low-confidence placement (a `torch.Tensor` annotation outside forward()) cannot make a
medium finding (the analysis joins confidences by their minimum), so it is not a source.
"""

from __future__ import annotations

import ast

from synclint.analysis import astwalk
from synclint.apis import torch_api as api

# Places, as bits of a mask.
# DEVICE: a device tensor or an accelerator device object; CPU: a CPU device object.
DEVICE, HOST, NUMPY, LIST, CPU = 1, 2, 4, 8, 16
ANYTHING = DEVICE | HOST | NUMPY | LIST | CPU
# What indexing, methods and arithmetic carry over: the tensor places and, while the
# repository index summarises a file (synclint/repo/), the bits above ANYTHING that stand
# for what another file decides (a field, a parameter, a function's result).
TENSORS = ~(LIST | CPU)
# Displays that build a Python list or tuple: `[n] * count` repeats one.
SEQUENCE_DISPLAYS = (ast.List, ast.Tuple, ast.ListComp)


def _is_property(func) -> bool:
    """`@property`, `@functools.cached_property` (analysis/sources.py `_is_property`)."""
    for decorator in getattr(func, "decorator_list", ()):
        name = decorator.attr if type(decorator) is ast.Attribute else decorator.id if type(decorator) is ast.Name else None
        if name in api.PROPERTY_DECORATORS:
            return True
    return False


class NoRepository:
    """What the rest of the repository says about a field, a parameter or a function's result,
    as a place mask: nothing, until synclint/repo/ installs what its index found."""

    symbolic = False  # True while the index summarises a file: answers are symbols

    def attr(self, name: str) -> int:
        return 0

    def param(self, function: str, name: str) -> int:
        return 0

    def ret(self, function: str) -> int:
        return 0

    def ret_item(self, function: str, position: int) -> int:
        """Element `position` of the tuple a function returns (`a, b = f()`)."""
        return 0

    def method_ret(self, cls: str, name: str) -> int:
        """The result of `obj.<name>()` with `obj` an instance of `cls`: what the method
        that call runs returns (that of `cls` or a base, or an override of a subclass)."""
        return 0

    def method_ret_item(self, cls: str, name: str, position: int) -> int:
        """Element `position` of the tuple `obj.<name>()` returns (`a, b = obj.m()`)."""
        return 0

    def method_passed(self, cls: str, name: str, call, place) -> int:
        """Where the arguments of `obj.<name>(...)` are (`place(arg)`), for a method that
        returns one of its parameters as it is: only the index's recorder has symbols."""
        return 0

    # --- the types of objects (synclint/repo/): a field read through its class ---------
    def field(self, cls: str, name: str) -> int:
        """`obj.<name>` where `obj` is an instance of `cls`: what the repository assigns to
        that class's field (its bases' and subclasses' too), else what the name says."""
        return self.attr(name)

    def field_type(self, cls: str, name: str) -> str | None:
        """The class of the field `cls.<name>` (its annotation, or the class it is built as)."""
        return None

    def returns_class(self, owner: str, name: str) -> str | None:
        """The class a function (owner "") or a method of `owner` returns: its `-> Cls`
        annotation, or `cls(...)` / `Cls(...)` returned by a classmethod constructor."""
        return None

    def parameter_class(self, cls: str, method: str, param: str) -> str | None:
        return None

    def is_class(self, name: str) -> bool:
        return False

    def passed(self, mask: int, func, func_unit, call, place) -> int:
        """`mask` (what `func` returns) with its parameters' symbols replaced by where the
        arguments of `call` are (`place(arg)`): only the index's recorder has symbols."""
        return mask


REPO = NoRepository()
_FIRST_REPOSITORY_BIT = 1 << 6  # bits from here are the index's symbols (synclint/repo/)
# A list literal or comprehension may hold its elements' places (read by indexing it); off
# while the repository index summarises a file (synclint/repo/), which reads places as facts.
LIST_ELEMENTS = True

ACCELERATOR_PREFIXES = api.ACCELERATOR_PREFIXES
DEVICE_NAMES = frozenset(api.DEVICE_LIKE_NAMES)
PARAMETER_ATTRIBUTES = api.PARAMETER_ATTRIBUTES
SELF_DEVICE_ATTRIBUTES = PARAMETER_ATTRIBUTES | DEVICE_NAMES
_MODULE_MEMBERS = frozenset({"Parameter", "Buffer", "register_buffer"})
_DEVICE_WORDS = ("device", "cuda")
_HOST_ATTRIBUTES = api.SEQUENCE_ATTRIBUTES | api.SCALAR_ATTRIBUTES | api.OTHER_ATTRIBUTES
_HOST_METHODS = (api.SCALAR_RESULT_METHODS | api.SEQUENCE_RESULT_METHODS | api.NUMPY_RESULT_METHODS | api.NON_TENSOR_RESULT_METHODS
                 | {"cpu", "pin_memory"})
_MODULE_MEMBER_CALLS = frozenset(q.removeprefix("torch.") for q in api.MODULE_MEMBER_CALLS)
_TENSOR_ARG_KEYWORDS = frozenset({"input", "other", "tensors"})


# --- tables the fact reader uses -------------------------------------------------------------


def device_identifier(identifiers: set[str]) -> bool:
    """An identifier that makes a device in the analysis (`device=`, `.cuda()`, `dev`, a
    registered buffer or parameter). Used for the coarse test of rules without sites."""
    if not identifiers.isdisjoint(DEVICE_NAMES) or not identifiers.isdisjoint(_MODULE_MEMBERS):
        return True
    return any(word in name.lower() for name in identifiers for word in _DEVICE_WORDS)


def moves_to_a_device(call: ast.Call) -> bool:
    """`.to(x)` with a target that is not plainly a dtype (`torch.float16`, `x.dtype`)."""
    for kw in call.keywords:
        if kw.arg in ("device", "other", None):
            return True
    return any(not plainly_a_dtype(arg) for arg in call.args[:1])


def plainly_a_dtype(expr: ast.expr) -> bool:
    if type(expr) is ast.Attribute:
        if expr.attr == "dtype":
            return True
        return type(expr.value) is ast.Name and expr.value.id == "torch" and expr.attr in api.DTYPES
    return type(expr) is ast.Name and "dtype" in expr.id


def tensor_annotation(annotation: ast.expr) -> bool:
    for node in ast.walk(annotation):
        if type(node) is ast.Name and "Tensor" in node.id:
            return True
        if type(node) is ast.Attribute and "Tensor" in node.attr:
            return True
        if type(node) is ast.Constant and type(node.value) is str and "Tensor" in node.value:
            return True
    return False


def unquoted(annotation: ast.expr) -> ast.expr | None:
    """An annotation as an expression: a string annotation (`"ForwardBatch"`, `"list[int]"`)
    parsed; None where the string is no expression."""
    if type(annotation) is ast.Constant and type(annotation.value) is str:
        try:
            return ast.parse(annotation.value.strip(), mode="eval").body
        except SyntaxError:
            return None
    return annotation


_WRAPPERS = ("Optional", "Final", "ClassVar", "Annotated")


def unwrapped(expr: ast.expr) -> ast.expr:
    """What `Optional[X]`, `Final[X]`, `ClassVar[X]` and `Annotated[X, ...]` wrap: `X`."""
    while type(expr) is ast.Subscript and _last_name(expr.value) in _WRAPPERS:
        expr = expr.slice.elts[0] if type(expr.slice) is ast.Tuple else expr.slice
    return expr


def annotation_mask(annotation: ast.expr) -> int:
    """What an annotation says with high confidence: a numpy array, or a Python list (the
    analysis reads `list[int]` parameters as list indices)."""
    expr = unquoted(annotation)
    if expr is None:
        return 0
    expr = unwrapped(expr)
    if type(expr) is ast.BinOp and type(expr.op) is ast.BitOr:
        return annotation_mask(expr.left) | annotation_mask(expr.right)
    head = expr.value if type(expr) is ast.Subscript else expr
    name = _last_name(head)
    if name in ("ndarray", "NDArray", "ArrayLike"):
        return NUMPY
    if name in ("list", "List"):
        return LIST
    return 0


# Annotations that name no class of the project: typing forms, builtins, tensors.
_NOT_CLASSES = frozenset({
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Sequence", "Iterable", "Iterator",
    "Callable", "Type", "Mapping", "MutableMapping", "Literal", "Tensor", "Parameter", "ndarray", "NDArray", "Generator",
    "Awaitable", "Coroutine", "Self", "TypeVar", "Generic", "Protocol", "None", "NoneType", "Enum", "IntEnum", "Module",
})


def annotation_class(annotation, imports=None) -> str | None:
    """The class an annotation names (`ForwardBatch`, `Optional[ForwardBatch]`,
    `"ForwardBatch"`, `ForwardBatch | None`, `mod.ForwardBatch`), by its last name through
    the file's imports (`from m import A as B`: `B` is `A`); None for a container, a
    typing form, a builtin or a tensor. One implementation: the libcst analysis parses the
    annotation's text with `ast` and asks this too."""
    expr = unquoted(annotation)
    if expr is None:
        return None
    while type(expr) is ast.Subscript and _last_name(expr.value) in ("Optional", "Final", "ClassVar", "Annotated", "Union"):
        inner = expr.slice
        if type(inner) is ast.Tuple:
            parts = [e for e in inner.elts if not (type(e) is ast.Constant and e.value is None) and _last_name(e) != "None"]
            if _last_name(expr.value) == "Annotated":
                parts = parts[:1]
            if len(parts) != 1:
                return None
            inner = parts[0]
        expr = inner
    if type(expr) is ast.BinOp and type(expr.op) is ast.BitOr:
        left, right = expr.left, expr.right
        if type(right) is ast.Constant and right.value is None:
            return annotation_class(left, imports)
        if type(left) is ast.Constant and left.value is None:
            return annotation_class(right, imports)
        return None
    if type(expr) is ast.Constant and type(expr.value) is str:
        return annotation_class(expr, imports)
    if type(expr) not in (ast.Name, ast.Attribute):
        return None
    name = resolved_name(_last_name(expr) if type(expr) is ast.Attribute else expr.id, imports)
    return name if names_a_class(name) else None


def names_a_class(name: str) -> bool:
    """Whether a name is spelt as a project's class (`ForwardBatch`, not `MAX_LEN`, a typing
    form, a builtin or a tensor type); a private class too (`_PLEBatch`)."""
    return spelt_as_class(name) and "Tensor" not in name


# A class the index's solve resolves (`_Types.resolved_class`): what a method returns, the
# class of a field, of a class another file defines (`Worker+>forward_step`).
RETURNED_CLASS, FIELD_CLASS = "+>", "+~"


def deferred(cls: str) -> bool:
    return RETURNED_CLASS in cls or FIELD_CLASS in cls or "|" in cls  # `|`: alternatives


def _call_bindings(name: str, unit) -> list:
    """The values a local is bound to, where the scope binds it only to calls or field reads
    (`out = self.worker.step(batch)` on one branch, `out = self.verify(batch)` on another);
    else []."""
    if name not in unit.bound or name in unit.imported or unit.iterated.get(name):
        return []
    found = [value for names, value in unit.bindings if name in names]
    if not found or len(found) > 4 or any(type(v) not in (ast.Call, ast.Attribute) for v in found):
        return []
    return found


def spelt_as_class(name: str) -> bool:
    """Capitalised, leading underscores aside, and not all capitals (`MAX_LEN`), nor a typing
    form or a builtin."""
    bare = name.lstrip("_")
    return bare[:1].isupper() and not bare.isupper() and name not in _NOT_CLASSES


# The key suffix under which the index keeps the class of a field's elements (`reqs[]`).
ELEMENTS = "[]"


def parameter_key(method: str, param: str) -> str:
    """The field-types key under which a class records the class its method `method`
    declares for parameter `param` (`build(common_attn_metadata)`): an override that leaves
    the parameter unannotated takes it from the nearest base that declares it, as a type
    checker infers it (pyright's parameter inference from the parent method)."""
    return f"{method}({param})"


def inherited_parameter_class(cls: str, method: str, param: str) -> str | None:
    """The class an unannotated parameter of `cls.method` is declared by a base's `method`,
    where the repository says it (`REPO.field_type` walks the bases); while a file is
    summarised, a base in another file is not known yet: then a placeholder class
    `Cls.method(param)` that the solve resolves (synclint/repo/facts.py `_Family.keys`)."""
    found = REPO.parameter_class(cls, method, param)
    if found is None and REPO.symbolic:
        return f"{cls}.{parameter_key(method, param)}"
    return found


_SEQUENCES = frozenset({"list", "List", "Sequence", "Iterable", "Iterator", "tuple", "Tuple", "set", "Set", "MutableSequence", "deque", "Deque"})


def element_class(annotation, imports=None) -> str | None:
    """The class of the elements an annotation holds: `list[Req]`, `List["Req"]`,
    `Optional[Sequence[Req]]`, `tuple[Req, ...]`; None for anything else."""
    expr = unquoted(annotation)
    if expr is None:
        return None
    expr = unwrapped(expr)
    if type(expr) is ast.BinOp and type(expr.op) is ast.BitOr:
        none = lambda e: type(e) is ast.Constant and e.value is None  # noqa: E731
        expr = expr.left if none(expr.right) else expr.right if none(expr.left) else None
    if type(expr) is not ast.Subscript or _last_name(expr.value) not in _SEQUENCES:
        return None
    inner = expr.slice
    if type(inner) is ast.Tuple:
        if len(inner.elts) != 2 or not (type(inner.elts[1]) is ast.Constant and inner.elts[1].value is Ellipsis):
            return None
        inner = inner.elts[0]
    return annotation_class(inner, imports)


def resolved_name(name: str, imports=None) -> str:
    """A local name's last dotted part through the imports (`from m import A as B`: `A`; of
    a name imported from several places, the least, so that every run reads the same)."""
    if imports:
        quals = imports.get(name)
        if quals:
            return min(quals).rpartition(".")[2]
    return name


def tests_availability(test: ast.expr) -> bool:
    """Whether a condition asks if an accelerator is there (`torch.cuda.is_available()`,
    `x.is_cuda`, `torch.cuda.device_count() > 0`: `api.ACCELERATOR_AVAILABILITY_TESTS`)."""
    return any(type(node) is ast.Attribute and node.attr in api.ACCELERATOR_AVAILABILITY_TESTS for node in ast.walk(test))


def _device_string(text: str) -> int:
    head = text.split(":", 1)[0]
    return DEVICE if head in ACCELERATOR_PREFIXES else CPU if head == "cpu" else 0


def _last_name(expr) -> str:
    if type(expr) is ast.Attribute:
        return expr.attr
    return expr.id if type(expr) is ast.Name else ""


# The word the fact reader adds to a function's called names when it indexes with a literal
# list of integers (`t[:, [0, 2]]`): SL106 lists it among its shape words.
LITERAL_LIST_INDEX = "[literal list index]"


def _arithmetic_place(*operands: int) -> tuple[int, bool]:
    """Where the result of arithmetic or a comparison is, and whether an operand's places were
    left out. An operand surely on the device (nothing else, nothing another file decides)
    makes a device tensor, whatever the others are (numbers, 0-dim tensors; PyTorch raises on
    anything else), as analysis/sources.py `_combine` reads it: `torch.arange(n, device=d) %
    (h * w)`, with `h` and `w` taken from a list a caller passes, is a device tensor.
    Otherwise, what any operand may be."""
    masks = [mask & TENSORS for mask in operands]
    out = 0
    for mask in masks:
        out |= mask
    if DEVICE in masks:
        return DEVICE, out != DEVICE
    return out, False


def literal_int_list(expr: ast.expr) -> bool:
    """`[0, 2, -1]`: a non-empty list literal of integer literals (as helpers.literal_kind)."""
    return (
        type(expr) is ast.List
        and bool(expr.elts)
        and all(type(e.operand if type(e) is ast.UnaryOp else e) is ast.Constant and type((e.operand if type(e) is ast.UnaryOp else e).value) is int for e in expr.elts)
    )


def _literal(expr: ast.expr) -> bool:
    """A number, None or `...` (negative numbers too): an index or bound that copies nothing."""
    if type(expr) is ast.UnaryOp:
        expr = expr.operand
    return type(expr) is ast.Constant and not isinstance(expr.value, str)


# --- the model -----------------------------------------------------------------------------


class TooCostly(Exception):
    """The model's work on one file went over `WORK_LIMIT`."""


# Bindings evaluated per file before the model gives up (`TooCostly`): the screen then keeps
# the whole file (the findings are those of a whole-file parse) and the repository index has
# no summary of it. A safety net: scopes that read each other are solved once per group
# (`taint`), so the work grows with the file. Before, they were evaluated again on every
# question that reached them, and a generated table of test cases of 27,820 lines
# (docs/benchmarks.md, "the torch file") went past this limit; it now needs 7,381 in the
# screen and 9,693 in the index. The largest of vLLM 0.33.0 and SGLang 0.5.23 (7,950 files)
# need 6,519 (screen) and 30,722 (index).
WORK_LIMIT = 500_000


class PlaceModel:
    """Per file: the places names, `self.` attributes and function results may hold."""

    def __init__(self, by_name, class_defines, imports: dict[str, tuple[str, ...]], h2d_helpers=None) -> None:
        self.by_name = by_name  # module-level name -> units binding it
        # Host-to-device helpers (qualified name -> device keyword, position), as the analysis has them.
        self.h2d_helpers = api.H2D_HELPERS if h2d_helpers is None else h2d_helpers
        self.class_defines = class_defines  # (class, name) -> class-level units binding it
        self.imports = imports  # local name -> dotted names (`F` -> torch.nn.functional)
        # Multimodal fields vLLM moves to the device (analysis/host_fields.py `device_fields`),
        # and those it keeps on the host (`host_fields`: `keep_on_cpu=True`).
        self.device_fields: frozenset[str] = frozenset()
        self.host_fields: frozenset[str] = frozenset()
        self._taint: dict[int, dict[str, int]] = {}
        # How often arithmetic left out an operand's places beside one surely on the device
        # (`_arithmetic_place`): a scope's fixpoint that saw it is narrowed (`taint`).
        self._device_wins = 0
        # Scopes whose fixpoint is under way (`taint`): id -> (their places so far, their
        # position on `_open_stack`). A scope that read an unfinished scope below it stays
        # open until that one's cycle (strongly connected scopes) is solved.
        self._open: dict[int, tuple[dict[str, int], int]] = {}
        self._open_stack: list = []
        # Per `taint` and `_memoized` under way: the lowest position of an open scope it read
        # (an answer that read a scope still open is not remembered: it may change as it grows).
        self._lows: list[int] = []
        self._memo: dict[tuple, int] = {}
        self._active: set = set()
        self._cuts = 0  # answers `_memoized` gave for a question already under way (a cycle)
        self._returns_of: dict[int, list] = {}
        self._classes: dict[tuple, str | None] = {}
        self.work = 0  # bindings evaluated (`WORK_LIMIT`)

    # --- sites --------------------------------------------------------------------------
    def holds(self, unit, kind: str, words=()) -> bool:
        """Whether some site of `kind` in `unit` may see what the rule reports. `words`: the
        names of the calls a rule flags (for "data" and "factory")."""
        sites = unit.sites
        dev = self.dev
        if kind == "receiver":  # `t.item()`, `t.cpu()`: the tensor the method is called on
            return any(
                type(call.func) is ast.Attribute and dev(call.func.value, unit)
                for word in words or ()
                for call in unit.calls.get(word, ())
            )
        if kind == "data":  # a device receiver or argument of a call the rule flags
            return any(
                (type(call.func) is ast.Attribute and dev(call.func.value, unit))
                or any(dev(a, unit) for a in call.args)
                or any(dev(kw.value, unit) for kw in call.keywords)
                for word in words or ()
                for call in unit.calls.get(word, ())
            )
        if kind == "factory":  # `torch.tensor(data, device=<maybe an accelerator>)`
            return any(
                kw.arg == "device" and self._target(kw.value, unit) & DEVICE
                for word in words or ()
                for call in unit.calls.get(word, ())
                for kw in call.keywords
            )
        if kind == "host_read":  # ops that copy a tensor argument to the host wherever it is placed
            return any(unit.calls.get(name.rpartition(".")[2]) for name in api.HOST_READ_ARGUMENT_FUNCTIONS)
        if kind == "tensor_check":  # `torch._check_tensor_all(cond)`: a tensor read back wherever it is placed
            return not unit.called.isdisjoint(api.TENSOR_CHECK_FUNCTIONS)
        if kind == "truth":
            return any(dev(leaf, unit) for site in sites.get("truth", ()) for leaf in _truth_leaves(site))
        if kind in ("convert", "sizing"):
            return any(dev(e, unit) for e in sites.get(kind, ()))
        if kind == "text":
            return any(dev(e, unit) for site in sites.get("text", ()) for e in _elements(site))
        if kind == "move":  # host data sent to the device
            return any(_is_move(call) and self.place(call.func.value, unit) & HOST for call in sites.get("move", ()))
        if kind == "store":
            return any(dev(target.value, unit) for target in sites.get("store", ()))
        if kind == "loop":  # iterated values (`for x in t`, `enumerate(t)`, `zip(t, u)`, `list(t)`)
            return any(dev(e, unit) for site in sites.get("loop", ()) for e in _iterated(site))
        if kind == "numbers":  # arguments read as Python numbers, and the elements of size tuples
            return any(
                dev(e, unit)
                for site in sites.get("numbers", ())
                for e in (site.elts if type(site) in (ast.Tuple, ast.List) else (site,))
            )
        if kind == "stored":  # `t[...] = v`: the value written
            return any(dev(value, unit) for value in sites.get("stored", ()))
        if kind == "copy":  # `t.copy_(src)`: the tensor written
            return any(dev(call.func.value, unit) for call in sites.get("copy", ()))
        subscripts = sites.get("subscript", ())
        if kind == "index":  # a device tensor indexed by host data
            return any(
                any(type(e) is not ast.Slice and not _literal(e) and self.place(e, unit) & (HOST | NUMPY | LIST) for e in _index_elements(s))
                and dev(s.value, unit)
                for s in subscripts
            )
        if kind == "list_index":  # a device tensor indexed by a literal list of integers
            return any(dev(s.value, unit) for s in subscripts if any(literal_int_list(e) for e in _index_elements(s)))
        if kind == "mask":
            return any(dev(e, unit) for s in subscripts for e in _index_elements(s) if type(e) is not ast.Slice)
        if kind == "bound":
            return any(
                dev(b, unit)
                for s in subscripts
                for e in _index_elements(s)
                if type(e) is ast.Slice
                for b in (e.lower, e.upper, e.step)
                if b is not None and not _literal(b)
            )
        return True  # a kind this model does not know: assume it may

    # --- expressions --------------------------------------------------------------------
    def _arithmetic(self, *operands: int) -> int:
        mask, dropped = _arithmetic_place(*operands)
        if dropped:
            self._device_wins += 1
        return mask

    def dev(self, expr, unit) -> bool:
        return bool(self.place(expr, unit) & DEVICE)

    def place(self, expr, unit) -> int:
        kind = type(expr)
        if kind is ast.Name:
            version = unit.versions.get(id(expr)) if unit.versions else None
            if version is not None:
                # Read after an unconditional rebinding (screen/facts.py `_versions`): that value only.
                return (DEVICE if expr.id in DEVICE_NAMES and expr.id not in self.imports else 0) | self.taint(unit).get(version, 0)
            return self._name(expr.id, unit)
        if kind is ast.Attribute:
            return self._attribute(expr, unit)
        if kind is ast.Call:
            return self._call(expr, unit)
        if kind is ast.Subscript:
            key = expr.slice
            if self.host_fields and type(key) is ast.Constant and key.value in self.host_fields:
                # `inputs["image_grid_hws"]` of a field the module declares `keep_on_cpu=True`
                # (analysis/sources.py `_host_field`): host data, in the index's summaries too,
                # so that the module it is handed to is given host data.
                return HOST
            if self.device_fields and type(key) is ast.Constant and key.value in self.device_fields and not REPO.symbolic:
                # `image_input["pixel_values"]` (analysis/sources.py `_input_field`). Not in the
                # index's summaries: the processor of the same module reads the HF outputs on
                # the host by the same names.
                return DEVICE
            return self.place(expr.value, unit) & TENSORS  # indexing keeps a tensor's place
        if kind is ast.Constant:
            return _device_string(expr.value) if type(expr.value) is str else 0
        if kind is ast.JoinedStr:
            head = expr.values[0] if expr.values else None
            return _device_string(str(head.value)) if type(head) is ast.Constant else 0
        if kind is ast.BinOp:
            if type(expr.op) is ast.Mult and (type(expr.left) in SEQUENCE_DISPLAYS or type(expr.right) in SEQUENCE_DISPLAYS):
                # `[n] * count`: the list repeated (analysis/sources.py); the count is a number.
                return self.place(expr.left if type(expr.left) in SEQUENCE_DISPLAYS else expr.right, unit)
            return self._arithmetic(self.place(expr.left, unit), self.place(expr.right, unit))
        if kind is ast.UnaryOp:
            return 0 if type(expr.op) is ast.Not else self.place(expr.operand, unit) & TENSORS
        if kind is ast.Compare:
            if any(type(op) in (ast.Is, ast.IsNot, ast.In, ast.NotIn) for op in expr.ops):
                return 0  # identity and membership give a Python bool
            if any(type(o) in (ast.Constant, ast.JoinedStr) and type(getattr(o, "value", "")) is str for o in (expr.left, *expr.comparators)):
                return 0  # a comparison with a string gives a Python bool
            return self._arithmetic(self.place(expr.left, unit), *(self.place(o, unit) for o in expr.comparators))
        if kind is ast.BoolOp:
            mask = 0
            for value in expr.values:
                mask |= self.place(value, unit)
            return mask
        if kind is ast.IfExp:
            body, orelse = self.place(expr.body, unit), self.place(expr.orelse, unit)
            if {body, orelse} == {DEVICE, CPU} and tests_availability(expr.test):
                return DEVICE  # `"cuda" if torch.cuda.is_available() else "cpu"` (sources.py)
            return body | orelse
        if kind is ast.NamedExpr:
            return self.place(expr.value, unit)
        if kind is ast.List:
            # a Python list; indexing it gives an element (flow.py `_record_elements`)
            mask = LIST
            if not LIST_ELEMENTS:
                return mask
            for element in expr.elts:
                mask |= self.place(element.value if type(element) is ast.Starred else element, unit) & TENSORS
            return mask
        if kind is ast.ListComp:
            return LIST | (self.place(expr.elt, unit) & TENSORS if LIST_ELEMENTS else 0)
        # Tuples, dicts, sets, comprehensions, lambdas are Python objects; anything else
        # (await, yield, starred) the analysis does not place.
        return 0

    def _name(self, name: str, unit) -> int:
        mask = DEVICE if name in DEVICE_NAMES and name not in self.imports else 0
        if name in unit.bound:
            mask |= self.taint(unit).get(name, 0)
        cls = unit.owner
        if cls is not None:
            for other in self.class_defines.get((id(cls), name), ()):
                if other is not unit:
                    mask |= self.taint(other).get(name, 0)
        for other in self.by_name.get(name, ()):
            if other is not unit and not isinstance(other.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                mask |= self.taint(other).get(name, 0)
        return mask

    def _attribute(self, expr: ast.Attribute, unit) -> int:
        attr = expr.attr
        if attr == "device":
            # `.device` of a host tensor is the CPU; of anything else an accelerator, inferred.
            base = self.place(expr.value, unit) if not is_self_name(expr.value) else self._self_attribute("device", unit)
            return DEVICE | (CPU if base & (HOST | CPU) else 0)
        if is_self_name(expr.value):
            return self._self_attribute(attr, unit)
        if attr in PARAMETER_ATTRIBUTES:
            return DEVICE  # a submodule's parameter, or that of a module on the device
        if attr in api.SAME_PLACE_ATTRIBUTES:
            return self.place(expr.value, unit) & TENSORS
        if attr in _HOST_ATTRIBUTES:
            return 0  # host metadata (`.shape`, `.dtype`)
        if api.names_a_configuration(_last_name(expr.value)) and (REPO.symbolic or not self.place(expr.value, unit) & TENSORS):
            return 0  # `config.logit_scale`: a field of a configuration object is a Python value
        # A field: what the repository assigns to it through the object's class where that is
        # known, else to any field of that name, or what its name says.
        owner = self.class_of(expr.value, unit)
        if owner is None and REPO.symbolic:
            owner = self.deferred_class_of(expr.value, unit)
        return REPO.field(owner, attr) if owner else REPO.attr(attr)

    def _self_attribute(self, attr: str, unit) -> int:
        cls = unit.owner
        if attr in SELF_DEVICE_ATTRIBUTES:
            mask = DEVICE
        elif cls is not None and type(cls.header.node) is ast.ClassDef:
            mask = REPO.field(cls.header.node.name, attr)
            if REPO.symbolic:
                # The index's summary: the field is a symbol its solve answers (every write of
                # it, these included, flows there), not the writes evaluated here (one that
                # reads the field itself, `self.x = pad(self.x)`, would be a cycle).
                return mask
        else:
            mask = REPO.attr(attr)
        if cls is None:
            return mask
        return mask | self._memoized(("attr", id(cls), attr), lambda: self._written(cls, attr))

    def _written(self, cls, attr: str) -> int:
        """The places `self.<attr> = value` may assign anywhere in the class (the analysis
        joins every write); a registered buffer is on the device."""
        mask = 0
        for member in cls.members:
            if member.method and member.name == attr and _is_property(member.node):
                mask |= self._returns(member.node, member)  # `@property def table(self)` (sources.py)
            for value in member.self_writes.get(attr, ()):
                if type(value) is int:
                    mask |= value
                elif isinstance(value, tuple) and value[0] == "item":  # `self.a, self.b = f()`
                    mask |= self.call_item(value[1], value[2], member)
                elif isinstance(value, tuple):  # `self.x += v`: v (the other writes give x)
                    mask |= self.place(value[2], member) & TENSORS
                else:
                    mask |= self.place(value, member)
        return mask

    def _call(self, call: ast.Call, unit) -> int:
        func = call.func
        mask = 0
        for qual in self._qualnames(func):
            helper = self.h2d_helpers.get(qual)
            if helper is not None:
                mask |= self._h2d_helper(helper, call, unit)
            elif qual.startswith("torch."):
                mask |= self._torch_call(qual[6:], call, unit)
            elif qual.startswith("numpy."):
                mask |= NUMPY
        if type(func) is ast.Name:
            name = func.id
            if name not in unit.bound and name not in self.by_name:
                if name in api.SCALAR_BUILTINS:
                    return mask
                if name in api.SEQUENCE_BUILTINS:
                    return mask | (LIST if name in ("list", "sorted") else 0)
                if name in api.TENSOR_PRESERVING_BUILTINS:
                    for arg in call.args:
                        mask |= self.place(arg, unit) & TENSORS
                    return mask
            local = self._local_function_returns(name, unit, call)
            # `from pkg.common import async_d2h as _async_d2h`: the repository's `async_d2h`.
            return mask | (local if local or name in unit.bound or mask else REPO.ret(resolved_name(name, self.imports)))
        if type(func) is ast.Attribute:
            method = func.attr
            if is_self_name(func.value) and unit.owner is not None:
                for member in unit.owner.members:
                    if member.method and member.name == method:
                        mask |= self._passed(self._returns(member.node, member), member.node, member, call, unit)
            return mask | self._method(method, call, func.value, unit)
        return mask

    def _h2d_helper(self, helper, call: ast.Call, unit) -> int:
        """`async_tensor_h2d(data, device=d)`: where `d` sends a tensor (the device when unseen)."""
        keyword, position = helper
        arg = next((kw.value for kw in call.keywords if kw.arg == keyword), None)
        if arg is None and position is not None and len(call.args) > position:
            arg = call.args[position]
        if arg is None:
            return DEVICE
        return self._target(arg, unit) or DEVICE

    def _torch_call(self, name: str, call: ast.Call, unit) -> int:
        if name == "cuda.current_device":
            return DEVICE
        if name == "device":  # torch.device("cuda:0"), torch.device(0), torch.device(type="cpu")
            first = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "type"), None)
            if first is None:
                return 0
            if type(first) is ast.Constant:
                return _device_string(first.value) if type(first.value) is str else DEVICE
            return DEVICE | CPU
        if name in api.DTYPE_RESULT_FUNCTIONS or name in api.HOST_RESULT_FUNCTIONS:
            return 0
        if name == "from_numpy":
            return HOST
        legacy = api.legacy_constructor(name)
        if legacy is not None:  # `torch.LongTensor(ids)`: the host; `torch.cuda.LongTensor(ids)`: the GPU
            return HOST if legacy == "cpu" else DEVICE
        if name in api.TENSOR_FACTORIES:
            for kw in call.keywords:
                if kw.arg == "device":
                    return self._target(kw.value, unit)
            if any(kw.arg is None for kw in call.keywords):
                return 0  # `torch.arange(n, **kwargs)`: the keywords may say `device=`
            if name in api.LIKE_FACTORIES:
                # `torch.full_like(x, v)` builds where `x` lives (what the repository says of
                # `x` included), as the analysis reads it (analysis/sources.py).
                return self.place(call.args[0], unit) & ~(LIST | CPU) if call.args else 0
            data = self.place(call.args[0], unit) & (DEVICE | HOST) if call.args else 0
            context = self._device_context(call, unit)
            if context and name not in api.LIKE_FACTORIES and not data:
                return context  # inside `with torch.device(d):` it builds where d says
            return data | HOST  # without device= on the host (or where a tensor argument is)
        if name in _MODULE_MEMBER_CALLS:
            return DEVICE
        if name.startswith(api.NOT_TENSOR_NAMESPACES):
            return 0
        if name.startswith("nn.") and not name.startswith("nn.functional."):
            return 0  # a module, not a tensor
        mask = 0
        if name in _CONCATENATIONS and call.args and type(call.args[0]) not in (ast.List, ast.Tuple):
            listed = _listed_comprehension(call.args[0])
            if listed is not None and not LIST_ELEMENTS and _loop_object_field(listed):
                # `torch.stack(flatten_nested_list([item.tgt_size for item in items]))`: a
                # helper that flattens or copies the list keeps its elements, read as below.
                return HOST
            if not LIST_ELEMENTS and (type(call.args[0]) is ast.Attribute or (type(call.args[0]) is ast.Name and not self.place(call.args[0], unit) & TENSORS)):
                # The repository index reads a list as one value, not its elements: of
                # `parts = []; parts.append(kv[a:b]); free(torch.cat(parts))` it knows
                # nothing, and a guess of "host" would vote against the device tensors
                # the other calls of `free` pass. So of a list held in a field
                # (`self.free_group = []`, appended to elsewhere: `torch.cat(self.free_group)`).
                return 0
            if LIST_ELEMENTS:
                # `torch.stack(parts)` of a comprehension or a name: the analysis may find a host
                # element in it (rules/helpers.py `concatenated_host_tensor`); assume it may.
                mask |= HOST
            elif type(call.args[0]) in (ast.ListComp, ast.GeneratorExp):
                comprehension = call.args[0]
                if not _loop_object_field(comprehension):
                    # The index: what the element says, not a guess (`torch.cat([buf[a:b] for
                    # ...])` of an unknown buffer is no host tensor a rule should report).
                    return self.place(comprehension.elt, unit) & TENSORS
                # `torch.cat([item.feature for item in items])`: the objects' own data (requests,
                # multimodal items), which the host holds; whatever else the repository gives
                # the field, this flow votes host (a move, `item.x.to(d)`, is no such element).
                return HOST
            # The index: a local list holds what the scope appends to it (`parts.append(t)`),
            # read below as the list's places.
        for value in [*call.args, *(kw.value for kw in call.keywords if kw.arg in _TENSOR_ARG_KEYWORDS)]:
            if type(value) in (ast.List, ast.Tuple):
                for element in value.elts:
                    mask |= self.place(element, unit)
            else:
                mask |= self.place(value, unit)
        return mask & TENSORS

    def _device_context(self, call: ast.Call, unit) -> int:
        """Where `with torch.device(d):` around `call` sends the tensors built without
        `device=` (0: no such context)."""
        mask = 0
        for context, first, last in unit.sites.get("device_with", ()):
            if first <= call.lineno <= last and any(q in api.DEVICE_CONTEXTS for q in self._qualnames(context.func)):
                arg = context.args[0] if context.args else next((kw.value for kw in context.keywords if kw.arg == "type"), None)
                if arg is not None:
                    mask |= self._target(arg, unit) & (DEVICE | HOST)
        return mask

    # --- the classes of objects -------------------------------------------------------------
    def class_of(self, expr, unit, depth: int = 0) -> str | None:
        """The class of the object `expr` evaluates to, where the code says it: `self`, a
        parameter annotated with a class, a name bound to `Cls(...)`, `Cls.constructor(...)`
        or a function annotated `-> Cls`, a field of a known class (`self.info.x`)."""
        if depth > 8:
            return None
        kind = type(expr)
        if kind is ast.Name:
            return self._name_class(expr.id, unit, depth)
        if kind is ast.Attribute:
            base = self.class_of(expr.value, unit, depth + 1)
            return REPO.field_type(base, expr.attr) if base else None
        if kind is ast.Call:
            return self.call_class(expr, unit, depth)
        return None

    def deferred_class_of(self, expr, unit, depth: int = 0) -> str | None:
        """While the index summarises one file: the class of an object that another file
        decides, as the path the solve resolves against every file's classes
        (`Worker` + RETURNED_CLASS + `forward_step`: what that method returns;
        `Engine` + FIELD_CLASS + `worker`: the class of that field). For `out.ids` with
        `out = self.worker.forward_step(batch)` and the worker's class or its method in
        another module. None where the chain starts at no class at all."""
        if depth > 4:
            return None
        kind = type(expr)
        if kind is ast.Name:
            values = _call_bindings(expr.id, unit)
            if not values:
                return None
            found = set()
            for value in values:
                one = self.class_of(value, unit, depth + 1) or self.deferred_class_of(value, unit, depth + 1)
                if one is None:
                    return None
                found.add(one)
            return "|".join(sorted(found))
        if kind is ast.Call and type(expr.func) is ast.Attribute:
            head, link, name = expr.func.value, RETURNED_CLASS, expr.func.attr
        elif kind is ast.Attribute and not is_self_name(expr):
            head, link, name = expr.value, FIELD_CLASS, expr.attr
        else:
            return None
        base = self.class_of(head, unit) or self.deferred_class_of(head, unit, depth + 1)
        return f"{base}{link}{name}" if base else None

    def _name_class(self, name: str, unit, depth: int) -> str | None:
        key = (id(unit), name)
        if key in self._classes:
            return self._classes[key]
        self._classes[key] = None  # a cycle (`x = x.next`) says nothing
        found = None
        owner = unit.owner
        if name in ("self", "cls") and owner is not None and type(owner.header.node) is ast.ClassDef:
            found = owner.header.node.name
        elif name in unit.annotations:
            found = annotation_class(unit.annotations[name], self.imports)
        elif _unannotated_parameter(unit, name):
            found = inherited_parameter_class(owner.header.node.name, unit.node.name, name)
        elif name in unit.bound:
            classes = set()
            for names, value in unit.bindings:
                if name not in names or type(value) is int or type(value) is ast.Constant:
                    continue
                if self._copied(value) is not None and type(self._copied(value)) is ast.Name and self._copied(value).id == name:
                    continue  # `x = copy.deepcopy(x)`: the same class
                if any(value is it for it in unit.iterated.get(name, ())):
                    one = self.element_class(value, unit, depth + 1)  # `for req in reqs`
                else:
                    one = self.class_of(value, unit, depth + 1) if type(value) is not tuple else None
                if one is None:
                    classes = None
                    break
                classes.add(one)
            if classes and len(classes) == 1:
                found = classes.pop()
        self._classes[key] = found
        return found

    def element_class(self, expr, unit, depth: int = 0) -> str | None:
        """The class of the elements of `expr`: a name annotated `list[Req]` (`Sequence`,
        `Iterable`, `tuple[Req, ...]`), a field so declared (`batch.reqs`)."""
        if type(expr) is ast.Name and expr.id in unit.annotations:
            return element_class(unit.annotations[expr.id], self.imports)
        if type(expr) is ast.Attribute:
            base = self.class_of(expr.value, unit, depth + 1)
            return REPO.field_type(base, expr.attr + ELEMENTS) if base else None
        return None

    def call_class(self, call: ast.Call, unit, depth: int = 0) -> str | None:
        """The class a call builds: `Cls(...)`, `cls(...)` in a classmethod, a classmethod
        constructor `Cls.init_new(...)`, a function or method annotated `-> Cls`."""
        func = call.func
        copied = self._copied(call)
        if copied is not None:
            return self.class_of(copied, unit, depth + 1)
        if type(func) is ast.Name:
            name = func.id
            if name == "cls":
                return self._name_class("cls", unit, depth + 1)
            if name in unit.bound and name not in unit.imported:
                return None
            name = resolved_name(name, self.imports)
            return name if REPO.is_class(name) else REPO.returns_class("", name)
        if type(func) is ast.Attribute:
            head = func.value
            if type(head) is ast.Name and head.id not in ("self", "cls") and (head.id not in unit.bound or head.id in unit.imported):
                name = resolved_name(head.id, self.imports)
                if REPO.is_class(name):
                    return REPO.returns_class(name, func.attr)
            base = self.class_of(head, unit, depth + 1)
            if base:
                return REPO.returns_class(base, func.attr)
        return None

    def _copied(self, value):
        """`copy.copy(x)`, `copy.deepcopy(x)`: x (a copy has x's class), else None."""
        if type(value) is ast.Call and len(value.args) == 1 and any(api.copies(q) for q in self._qualnames(value.func)):
            return value.args[0]
        return None

    def _method(self, method: str, call: ast.Call, base, unit) -> int:
        if method == "cuda":
            return DEVICE
        if method == "cpu" or method == "pin_memory":
            return HOST
        if method == "type" and len(call.args) == 1:
            arg = call.args[0]
            names = [arg.value] if type(arg) is ast.Constant and type(arg.value) is str else self._qualnames(arg)
            kind = next((k for k in map(api.legacy_tensor_type, names) if k), None)
            if kind is not None:
                return HOST if kind == "cpu" else DEVICE  # `t.type(torch.BoolTensor)`: a CPU tensor type
        if method in api.NUMPY_RESULT_METHODS:
            return NUMPY
        if method == "tolist":
            return LIST
        if method in _HOST_METHODS:
            return 0
        if method == "to":
            keywords = {kw.arg: kw.value for kw in call.keywords}
            target = keywords.get("device", keywords.get("other", call.args[0] if call.args else None))
            if target is not None and not plainly_a_dtype(target):
                moved = self._target(target, unit)
                if moved & (DEVICE | HOST):
                    return moved  # a device or a tensor target: where it sends the tensor
                return (self.place(base, unit) & TENSORS) | moved
            return self.place(base, unit) & TENSORS
        if method in ("pop", "get") and self.host_fields and call.args and type(call.args[0]) is ast.Constant \
                and call.args[0].value in self.host_fields and type(base) is ast.Name:
            return HOST  # `kwargs.pop("image_grid_hws")` of a field kept on the host
        if method in ("pop", "get") and self.device_fields and call.args and type(call.args[0]) is ast.Constant \
                and call.args[0].value in self.device_fields and type(base) is ast.Name:
            return DEVICE  # `kwargs.pop("pixel_values")` (the analysis also asks that it be `**kwargs`)
        if method in api.NEW_METHODS:
            for kw in call.keywords:
                if kw.arg == "device":
                    return self._target(kw.value, unit) | (self.place(base, unit) & (DEVICE | HOST))
        cls = self._receiver_class(base, unit)
        if cls is not None:
            # `self.pool.alloc(n)`: what the method of the object's class returns. While the
            # index summarises, that alone (an object of a class is no tensor whose place a
            # method keeps); in a lint, also the tensor the analysis may take it for.
            found = REPO.method_ret(cls, method)
            if REPO.symbolic:
                # ... or the argument it returns as it is (`pool.translate(loc)`: where `loc` is).
                return found | REPO.method_passed(cls, method, call, lambda arg: self.place(arg, unit))
            return found | (self.place(base, unit) & TENSORS)
        return self.place(base, unit) & TENSORS

    def _receiver_class(self, base, unit) -> str | None:
        """The class of the object a method is called on, where the code says it (not `self`
        calling a method its own class defines: the class's own returns answer that)."""
        if is_self_name(base) and unit.owner is not None:
            return None
        return self.class_of(base, unit)

    def call_item(self, call, position: int, unit) -> int:
        """Element `position` of what `call` returns, unpacked (`a, b = f(x)`): the element
        the function returns there, where the repository says it; else the whole result."""
        whole = self.place(call, unit)
        func = call.func
        if type(func) is ast.Name:
            name = func.id
            if name in unit.bound or self._local_function_returns(name, unit, call) or any(
                q in self.h2d_helpers or q.startswith(("torch.", "numpy.")) for q in self._qualnames(func)
            ):
                return whole  # as `_call`: a function of the file, a local or a library's answers itself
            found = REPO.ret_item(resolved_name(name, self.imports), position)
        elif type(func) is ast.Attribute:
            cls = self._receiver_class(func.value, unit)
            if cls is None and is_self_name(func.value) and unit.method and unit.owner is not None:
                # `packed, shapes_cpu = self._pack(items)`: the element its own class's method
                # (or a subclass's override) returns there
                cls = unit.owner.header.node.name
            if cls is None:
                return whole
            found = REPO.method_ret_item(cls, func.attr, position)
        else:
            return whole
        return found if REPO.symbolic else found | whole

    def _target(self, expr, unit) -> int:
        """Where a `device=` / `.to()` target may send a tensor: to the device for an
        accelerator, an integer index or a name the analysis reads as an index
        (`local_rank`); to the host for the CPU; where a tensor target lives."""
        if type(expr) is ast.Constant:
            if type(expr.value) is int:
                return DEVICE
            return HOST if type(expr.value) is str and _device_string(expr.value) & CPU else (DEVICE if type(expr.value) is str and _device_string(expr.value) else 0)
        place = self.place(expr, unit)
        mask = (place & TENSORS) | (HOST if place & CPU else 0)
        name = expr.attr if type(expr) is ast.Attribute else expr.id if type(expr) is ast.Name else ""
        if any(word in name.lower() for word in api.DEVICE_INDEX_WORDS):
            mask |= DEVICE
        return mask

    # --- scopes ---------------------------------------------------------------------------
    def taint(self, unit) -> dict[str, int]:
        """Name -> the places it may hold, over every binding in `unit` (a fixpoint).

        Scopes read each other's names (module-level statements that share names, a function
        and the module-level names it reads), so the fixpoints are solved per strongly
        connected group of scopes, found as the questions reach them (Tarjan's order): while
        a scope is worked out, questions that reach it see the places found so far; a scope
        that read an unfinished scope below it on the stack belongs to that one's group and
        stays open, and the group's first scope evaluates every member's bindings again,
        round after round, until none grows. Every scope is then final and remembered: each
        binding is evaluated a few times, not once per question that reaches it."""
        key = id(unit)
        done = self._taint.get(key)
        if done is not None:
            return done
        opened = self._open.get(key)
        if opened is not None:
            lows = self._lows
            if opened[1] < lows[-1]:
                lows[-1] = opened[1]
            return opened[0]
        stack = self._open_stack
        index = len(stack)
        places: dict[str, int] = {}
        self._open[key] = (places, index)
        stack.append(unit)
        self._lows.append(index)
        cuts = self._cuts
        wins = self._device_wins
        try:
            while self._evaluate(unit, places):
                pass
            if self._device_wins != wins and len(stack) == index + 1 and self._lows[-1] == index:
                self._narrow(unit, places)
            while self._lows[-1] == index and len(stack) > index + 1:
                # The first scope of a group: every member again until no place grows (a
                # member evaluated here may open more scopes, or reach below this one).
                size = len(stack)
                changed = False
                for member in stack[index:size]:
                    changed |= self._evaluate(member, self._open[id(member)][0])
                if not changed and len(stack) == size:
                    break
        finally:
            low = self._lows.pop()
        if low < index:
            # It read an unfinished scope below it: it is solved with that one's group.
            if low < self._lows[-1]:
                self._lows[-1] = low
            return places
        if self._cuts == cuts:
            for member in stack[index:]:
                member_key = id(member)
                self._taint[member_key] = self._open.pop(member_key)[0]
        else:
            # A cycle of `_memoized` questions was cut with ANYTHING meanwhile: that answer
            # stands in the first scope's places (as it would have without the group), the
            # other members are worked out again when asked (the cut may not recur then).
            self._taint[key] = self._open.pop(key)[0]
            for member in stack[index + 1:]:
                del self._open[id(member)]
        del stack[index:]
        return places

    def _narrow(self, unit, places: dict[str, int]) -> None:
        """A scope's places evaluated again from its fixpoint, each name's taken as what its
        bindings give now (not joined with what they gave before), until nothing shrinks: four
        rounds at most, one per step of a chain `a = d % w; b = a // w; xs.append(b)`. The
        fixpoint joins every round's answer, and arithmetic beside an operand surely on the
        device (`_arithmetic_place`) keeps the other operand's places only while that operand
        is not yet known to be on the device: `s = image_pids // w` read before `image_pids =
        torch.arange(n, device=d)` would keep what `w` may be."""
        for _ in range(4):
            fresh: dict[str, int] = {}
            for names, value in unit.bindings:
                mask = self._binding(value, unit, places)
                for name in names:
                    fresh[name] = fresh.get(name, 0) | mask
            fresh = {name: mask & places.get(name, 0) for name, mask in fresh.items()}
            if fresh == places:
                return
            places.clear()
            places.update(fresh)

    def _evaluate(self, unit, places: dict[str, int]) -> bool:
        """One pass over `unit`'s bindings into `places`: whether any place grew."""
        self.work += len(unit.bindings)
        if self.work > WORK_LIMIT:
            raise TooCostly
        changed = False
        for names, value in unit.bindings:
            mask = self._binding(value, unit, places)
            for name in names:
                old = places.get(name, 0)
                if mask | old != old:
                    places[name] = mask | old
                    changed = True
        return changed

    def _binding(self, value, unit, places) -> int:
        if type(value) is int:
            return value
        if isinstance(value, tuple) and value[0] == "devuse":
            # ("devuse", operands, calls): a device operand of a device-only use, or a
            # function of the file with a parameter that may be a device tensor, may show
            # the parameters bound to it on the device (synclint/analysis/evidence.py).
            for operand in value[1]:
                if self.place(operand, unit) & DEVICE:
                    return DEVICE
            for call in value[2]:
                if self._callee_takes_device(call, unit):
                    return DEVICE
            return 0
        if isinstance(value, tuple) and value[0] == "item":  # ("item", call, position): `a, b = f()`
            return self.call_item(value[1], value[2], unit)
        if isinstance(value, tuple):  # ("aug", target, value)
            _, target, operand = value
            old = places.get(target.id, 0) if type(target) is ast.Name else 0
            return (old | self.place(operand, unit)) & TENSORS
        return self.place(value, unit)

    def _callee_takes_device(self, call: ast.Call, unit) -> bool:
        """A method of the class or a function of the file called here may take a device
        tensor for one of its parameters."""
        func = call.func
        callees = []
        if type(func) is ast.Attribute:
            if unit.owner is not None:
                callees = [m for m in unit.owner.members if m.method and m.name == func.attr and m is not unit]
                if not callees and _submodule(func.attr, unit.owner):
                    return True  # `self.encoder(x)`: inputs live where the module runs (evidence.py)
        else:
            callees = [u for u in self.by_name.get(func.id, ()) if isinstance(u.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and u is not unit]
        for callee in callees:
            args = callee.node.args
            params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg not in ("self", "cls")]
            places = self.taint(callee)
            if any(places.get(name, 0) & DEVICE for name in params):
                return True
        return False

    def _local_function_returns(self, name: str, unit, call=None) -> int:
        mask = 0
        for node in unit.local_defs.get(name, ()):
            mask |= self._passed(self._returns(node, unit), node, unit, call, unit)
        for other in self.by_name.get(name, ()):
            if isinstance(other.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                mask |= self._passed(self._returns(other.node, other), other.node, other, call, unit)
        return mask

    def _passed(self, mask: int, func, func_unit, call, unit) -> int:
        """A result that is (made from) a parameter of the function is where this call's
        argument for it is: `self._pad(self.mask, bs)` returns what `self.mask` holds, not
        what every caller of `_pad` passes (only the repository index, which keeps the
        parameter as a symbol, can tell; otherwise the mask is kept)."""
        if call is None or mask < _FIRST_REPOSITORY_BIT:
            return mask
        return REPO.passed(mask, func, func_unit, call, lambda arg: self.place(arg, unit))

    def _returns(self, func, unit) -> int:
        """The places `func` (evaluated in `unit`'s bindings) may return."""
        values = self._returns_of.get(id(func))
        if values is None:
            values = self._returns_of[id(func)] = _return_values(func)

        def compute() -> int:
            mask = 0
            for value in values:
                mask |= self.place(value, unit)
            return mask

        return self._memoized(("returns", id(func)), compute)

    def _memoized(self, key, compute) -> int:
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            self._cuts += 1
            return ANYTHING  # a cycle (recursion, attributes written from each other): anything
        self._active.add(key)
        depth = len(self._open_stack)
        lows = self._lows
        lows.append(depth)
        try:
            value = compute()
        finally:
            self._active.discard(key)
            low = lows.pop()
        if low < depth:
            if low < lows[-1]:
                lows[-1] = low  # the scope under way read it too
        else:
            self._memo[key] = value
        return value

    def _qualnames(self, func) -> list[str]:
        """Every dotted name `func` can stand for through the file's imports (a name imported
        twice may mean either: both are tried, so the answer is the union)."""
        parts = []
        while type(func) is ast.Attribute:
            parts.append(func.attr)
            func = func.value
        if type(func) is not ast.Name:
            return []
        rest = ".".join(reversed(parts))
        return [f"{head}.{rest}" if rest else head for head in self.imports.get(func.id, ())]


def _unannotated_parameter(unit, name: str) -> bool:
    """Whether `name` is a parameter without annotation of a method of a module-level class
    (not `__init__`, whose parameters no base declares for it)."""
    func = unit.node
    if not unit.method or unit.owner is None or type(unit.owner.header.node) is not ast.ClassDef:
        return False
    if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef) or func.name == "__init__":
        return False
    args = func.args
    return any(a.arg == name and a.annotation is None for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


def is_self_name(node) -> bool:
    return type(node) is ast.Name and node.id == "self"


def _truth_leaves(expr):
    """What Python truth-tests in `expr`: the operands of `and`/`or`/`not`, recursively."""
    kind = type(expr)
    if kind is ast.BoolOp:
        return [leaf for value in expr.values for leaf in _truth_leaves(value)]
    if kind is ast.UnaryOp and type(expr.op) is ast.Not:
        return _truth_leaves(expr.operand)
    return [expr]


def _submodule(attr: str, owner) -> bool:
    """A field some method of the class assigns what a call built (`self.encoder =
    build_encoder(cfg)`) and no method of that name: a submodule where the class is an
    nn.Module (synclint/analysis/evidence.py `submodule_fields`; the screen does not ask
    whether it is one, and so may keep more, never less)."""
    if any(m.method and m.name == attr for m in owner.members):
        return False
    return any(type(value) is ast.Call for m in owner.members for value in m.self_writes.get(attr, ()))


_CONCATENATIONS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "column_stack"})


def _iterated(expr):
    if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id in ("enumerate", "zip"):
        return list(expr.args)
    return [expr]


# Calls that return the elements of the one list they are given, in another order or shape:
# builtins, and a helper named for flattening (`flatten_nested_list`, `flatten`).
_LIST_KEEPING_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed"})


def _listed_comprehension(expr):
    """The comprehension a list-keeping call wraps (`list(...)`, `sorted(...)`,
    `flatten_nested_list([...])`), or None."""
    if type(expr) is not ast.Call or len(expr.args) != 1 or expr.keywords:
        return None
    func = expr.func
    name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
    if name not in _LIST_KEEPING_BUILTINS and "flatten" not in name.lower():
        return None
    inner = expr.args[0]
    return inner if type(inner) in (ast.ListComp, ast.GeneratorExp) else None


def _loop_object_field(comprehension) -> bool:
    """`[item.x for item in items]`, `(r.x[0] for r in reqs)`: the element reads a field of
    (or indexes into a field of) an object the comprehension loops over."""
    node = comprehension.elt
    while type(node) is ast.Subscript:
        node = node.value
    if type(node) is not ast.Attribute:
        return False
    while type(node) in (ast.Attribute, ast.Subscript):
        node = node.value
    if type(node) is not ast.Name:
        return False
    targets = {n.id for g in comprehension.generators for n in ast.walk(g.target) if type(n) is ast.Name}
    return node.id in targets


def _elements(expr):
    return list(expr.elts) if type(expr) is ast.Tuple else [expr]


def _index_elements(subscript: ast.Subscript):
    index = subscript.slice
    return list(index.elts) if type(index) is ast.Tuple else [index]


def _is_move(call: ast.Call) -> bool:
    func = call.func
    return func.attr == "cuda" or moves_to_a_device(call)


def cpu_narrowed_returns(func) -> frozenset[int]:
    """ids of the values of `return t` statements in the body of `if t.device.type == "cpu":`
    (`if t.is_cpu:`, `if str(t.device) == "cpu":`, `if not t.is_cuda:`): there `t` is a host
    tensor, whatever its callers give (`async_d2h(t)`: `if t.device.type == "cpu": return t`)."""
    found = set()
    pending = list(func.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if kind is ast.If:
            name = _cpu_test(node.test)
            if name is not None:
                found.update(id(s.value) for s in node.body if type(s) is ast.Return and type(s.value) is ast.Name and s.value.id == name)
        if isinstance(node, ast.stmt):
            pending.extend(astwalk.children(node))
        elif kind is ast.ExceptHandler or kind is ast.match_case:
            pending.extend(node.body)
    return frozenset(found)


def _cpu_test(test) -> str | None:
    """`t` where `test` holds only for a CPU tensor `t` (as synclint/analysis/flow.py reads
    the same tests with libcst)."""
    kind = type(test)
    if kind is ast.Attribute and test.attr == "is_cpu" and type(test.value) is ast.Name:
        return test.value.id
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        inner = test.operand
        if type(inner) is ast.Attribute and inner.attr == "is_cuda" and type(inner.value) is ast.Name:
            return inner.value.id
        return None
    if kind is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.Eq:
        right = test.comparators[0]
        if not (type(right) is ast.Constant and right.value == "cpu"):
            return None
        left = test.left
        if type(left) is ast.Call and type(left.func) is ast.Name and left.func.id == "str" and len(left.args) == 1:
            left = left.args[0]  # `str(t.device) == "cpu"`
        elif type(left) is ast.Attribute and left.attr == "type":
            left = left.value  # `t.device.type == "cpu"`
        else:
            return None
        if type(left) is ast.Attribute and left.attr == "device" and type(left.value) is ast.Name:
            return left.value.id
    return None


def _return_values(func) -> list:
    """The values `func` returns (not those of functions nested in it)."""
    out = []
    pending = list(func.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Return:
            if node.value is not None:
                out.append(node.value)
            continue
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if isinstance(node, ast.stmt):
            pending.extend(astwalk.children(node))
        elif kind is ast.ExceptHandler or kind is ast.match_case:
            pending.extend(node.body)
    return out
