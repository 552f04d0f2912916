"""Which platforms can the code around a finding run on?

A sync costs only where the code runs. Serving engines carry code for several accelerators
side by side (a CUDA path, a ROCm path, an XPU path, a CPU fallback...). With the setting
`target-platforms` (default `["cuda"]`), code that only runs on other platforms is not
reported, and code for a target platform is.

The rules are conventions that hold across projects, not any one project's names:

| where | convention | platforms |
|---|---|---|
| a folder of the path, or a `_`/`-`/`.`-separated part of the file name | a platform word (table below) | that platform |
| a class name, split at its CamelCase words | a platform word; `CPU` only as the first or last word | that platform |
| a class's `__init__`, at its top level | `if not _is_xpu: raise ...` / `assert current_platform.is_npu()` (a platform test, as an `if` test below), an `import` of a package only one vendor's stack installs (below), or a use of a name the module imports only under a platform branch (`ms.set_context(...)` after `if _is_npu: import mindspore as ms`) | where the constructor does not raise |
| a function name | `forward_<platform>` (the custom-op dispatch convention), or a `_`-separated part that is a platform word other than `cpu` | that platform |
| a module's top-level imports | an unconditional `import` / `from ... import` of a package only one vendor's stack installs (`aiter`, `torch_npu`, ...: `platform_words.VENDOR_PACKAGES`) | that platform |
| an `if` test | `is_<platform>()` / `is_<platform>` / `_is_<platform>` / `use_<platform>` (a call, a module flag or an attribute: `current_platform.is_xpu()`, `_is_npu`, `is_hip()`, `t.is_cuda`), combined with `not`, `and`, `or` | the body runs on that platform, the `else` on the others |
| an `if` test on a device's type | `x.device.type == "cuda"` / `!= "cuda"`, `device_type in ("npu", "xpu")` (as `t.is_cuda` reads; `"cuda"` is also ROCm's type) | the body runs where the data lives on that platform, the `else` on the others (and, where the body always returns or raises, the code after the `if`) |

Triton's availability (`supports_triton`, `HAS_TRITON`, `is_triton_available()`) holds on
cuda, rocm and xpu: its `not` branch is the fallback of the platforms without Triton.

Platform words: `cuda`, `nvidia` -> cuda; `rocm`, `hip`, `aiter`, `amd`, `gfx<N>` -> rocm;
`xpu` -> xpu; `tpu` -> tpu; `npu`, `ascend` -> npu; `hpu`, `habana`, `gaudi` -> hpu;
`mps`, `mlx` -> mps; `cpu`, `amx` (Intel's CPU matrix instructions) -> cpu. `is_cuda_alike()` is cuda or rocm. A path, class or function
whose words also speak of moving data to the host (`offload`, `swap`, `transfer`,
`connector`) or of a GPU (`gpu`) is not CPU-platform code: CPU offloading runs on an
accelerator platform.

Pre-processing runs on the host (the CPU platform): Hugging Face-style processors, feature
extractors and image/video processors, i.e. classes deriving from `*Processor`,
Hugging Face's `ProcessorMixin`, `FeatureExtractionMixin`, `ImageProcessingMixin` (by those
names: a scheduler's `SchedulerOutputProcessorMixin` is not pre-processing), `*FeatureExtractor`,
`*ImageProcessor`, `*VideoProcessor` (not logits or
attention processors, which run on the device every step), and files named `processing_*.py`,
`image_processing_*.py`, `video_processing_*.py`, `feature_extraction_*.py` or kept in a
`processors` / `processing` folder.

The signals are intersected: a ROCm branch inside a CUDA file runs nowhere a CUDA target
cares about, and a generic file with no signal runs everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from synclint.analysis.platform_words import PLATFORMS as _PLATFORMS
from synclint.analysis.platform_words import WORDS as _WORDS
from synclint.analysis.imports import dotted_name
from synclint.analysis.nodes import always_leaves, per_file_memo
from synclint.analysis.platform_words import (
    device_type_platforms,
    host_class,
    host_file,
    names_device_type,
    package_platforms,
    path_platforms,
    platforms_of_words,
    predicate_platforms,
)
from synclint.analysis.platform_words import word_platform as _word_platform

PLATFORMS = _PLATFORMS

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+")


# Acronyms that also count when run together with another capital word (`FusedMoENPU`).
_ACRONYMS = ("XPU", "NPU", "HPU", "TPU", "MPS", "HIP", "AMD")


def class_platforms(name: str) -> frozenset[str] | None:
    words = []
    for word in _CAMEL.findall(name):
        if word.isupper() and len(word) > 3 and word.lower() not in _WORDS:
            word = next((a for a in _ACRONYMS if word.startswith(a) or word.endswith(a)), word)
        words.append(word)
    return platforms_of_words(words, cpu_anywhere=False, cpu_positions=(0, -1))


def function_platforms(name: str) -> frozenset[str] | None:
    parts = [p for p in name.split("_") if p]
    if len(parts) >= 2 and parts[-2] == "forward":
        platform = _word_platform(parts[-1])
        if platform is not None:
            return frozenset({platform})
    return platforms_of_words([p for p in parts if p.lower() != "cpu"])


# --- branches --------------------------------------------------------------------------

_ALL = PLATFORMS


def _predicate(expr: cst.BaseExpression) -> frozenset[str] | None:
    """`is_xpu()`, `current_platform.is_rocm()`, `_is_npu`, `t.is_cuda`, `use_aiter`."""
    if isinstance(expr, cst.Call) and not expr.args:
        expr = expr.func
    if isinstance(expr, cst.Attribute):
        return predicate_platforms(expr.attr.value)
    if isinstance(expr, cst.Name):
        return predicate_platforms(expr.value)
    return None


def branch_sets(test: cst.BaseExpression, fields: dict | None = None) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """(platforms where the body runs, platforms where the `else` runs); None: any.
    `fields`: the platform fields of the enclosing class (`platform_fields`)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        body, orelse = branch_sets(test.expression, fields)
        return orelse, body
    if isinstance(test, cst.BooleanOperation):
        left, right = branch_sets(test.left, fields), branch_sets(test.right, fields)
        if isinstance(test.operator, cst.And):
            return _intersect(left[0], right[0]), _union(left[1], right[1])
        return _union(left[0], right[0]), _intersect(left[1], right[1])
    if (fields and isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self"
            and test.attr.value in fields):
        return fields[test.attr.value]  # (where its value holds, where it does not)
    platforms = _device_type_test(test) if isinstance(test, cst.Comparison) else _predicate(test)
    if platforms is None:
        return None, None
    return platforms, _ALL - platforms


def _device_type_test(test: cst.Comparison) -> frozenset[str] | None:
    """`x.device.type != "cuda"`, `device_type in ("npu", "xpu")`: where the data lives,
    as `t.is_cuda` says (`platform_words.device_type_platforms`)."""
    if len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    negated = isinstance(target.operator, (cst.NotEqual, cst.NotIn))
    if not negated and not isinstance(target.operator, (cst.Equal, cst.In)):
        return None
    subject, other = test.left, target.comparator
    if isinstance(subject, cst.SimpleString):
        subject, other = other, subject
    if not names_device_type(dotted_name(subject) or ""):
        return None
    items = [e.value for e in other.elements] if isinstance(other, (cst.Tuple, cst.List, cst.Set)) else [other]
    if not all(isinstance(i, cst.SimpleString) for i in items):
        return None
    return device_type_platforms([i.evaluated_value for i in items], negated=negated)


def _intersect(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _union(a, b):
    if a is None or b is None:
        return None
    return a | b


_HOST_ONLY = frozenset({"cpu"})
_host_file = host_file


def _host_class(class_def: cst.ClassDef) -> bool:
    bases = []
    for base in class_def.bases:
        expr = base.value
        if isinstance(expr, cst.Subscript):  # `BaseProcessor[Info]`
            expr = expr.value
        bases.append(expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else "")
    return host_class(class_def.name.value, bases)


def _bound_names(statements) -> set[str]:
    """Names that module-level statements bind (imports, assignments, definitions)."""
    out: set[str] = set()
    for stmt in statements:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.add(stmt.name.value)
            continue
        if isinstance(stmt, cst.If):
            out |= _bound_names(stmt.body.body)
            orelse = stmt.orelse
            while orelse is not None:
                out |= _bound_names([orelse] if isinstance(orelse, cst.If) else orelse.body.body)
                orelse = None
            continue
        if isinstance(stmt, cst.Try):
            out |= _bound_names(stmt.body.body)
            for handler in stmt.handlers:
                out |= _bound_names(handler.body.body)
            continue
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            smalls = stmt.body
        elif isinstance(stmt, cst.BaseSmallStatement):  # an item of a one-line suite (`if x: import y`)
            smalls = [stmt]
        else:  # another compound statement (for, while, with): its block is not read
            smalls = ()
        for small in smalls:
            if isinstance(small, cst.Import):
                out.update((a.asname.name.value if a.asname else cst.Module(body=[]).code_for_node(a.name).split(".")[0]) for a in small.names)
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                out.update((a.asname.name.value if a.asname else cst.Module(body=[]).code_for_node(a.name)) for a in small.names)
            elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                out.update(t.value for t in targets if isinstance(t, cst.Name))
    return out


_GUARDED: dict[int, tuple[cst.Module, dict[str, frozenset[str]]]] = per_file_memo()


def guarded_imports(module: cst.Module) -> dict[str, frozenset[str]]:
    """Names a module imports only under a platform branch (`if _is_npu: import torch_npu`),
    with the platforms where they exist: code that uses one runs only there (elsewhere the
    name is unbound). A name the module also binds another way says nothing."""
    known = _GUARDED.get(id(module))
    if known is not None and known[0] is module:
        return known[1]
    guarded: dict[str, frozenset[str]] = {}
    elsewhere: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.body, cst.IndentedBlock):
            where = branch_sets(stmt.test)[0]
            if where is not None:
                for name in _bound_names(stmt.body.body):
                    guarded[name] = where
                continue
        elsewhere |= _bound_names([stmt])
    result = {n: p for n, p in guarded.items() if n not in elsewhere}
    if len(_GUARDED) > 256:
        _GUARDED.clear()
    _GUARDED[id(module)] = (module, result)
    return result


_IMPORTED: dict[int, tuple[cst.Module, frozenset[str] | None]] = per_file_memo()


def import_platforms(module: cst.Module) -> frozenset[str] | None:
    """The platforms a module can be imported on, by the vendor packages it imports at its top
    level, outside any `if` or `try` (`from aiter.ops import ...`: ROCm alone); None: any."""
    known = _IMPORTED.get(id(module))
    if known is not None and known[0] is module:
        return known[1]
    result: frozenset[str] | None = None
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            result = _intersect(result, _statement_imports(stmt))
    if len(_IMPORTED) > 256:
        _IMPORTED.clear()
    _IMPORTED[id(module)] = (module, result)
    return result


def _statement_imports(stmt: cst.SimpleStatementLine) -> frozenset[str] | None:
    """The platforms where the vendor packages a statement imports install; None: any."""
    result: frozenset[str] | None = None
    for small in stmt.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                result = _intersect(result, package_platforms(dotted_name(alias.name) or ""))
        elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
            result = _intersect(result, package_platforms(dotted_name(small.module) or ""))
    return result


class _GuardedUses(cst.CSTVisitor):
    """The platforms of the guarded names a function uses outside platform branches of its own."""

    def __init__(self, guarded: dict[str, frozenset[str]]) -> None:
        self.guarded = guarded
        self.result: frozenset[str] | None = None

    def visit_If(self, node: cst.If) -> bool:
        if branch_sets(node.test) != (None, None):
            node.test.visit(self)
            return False  # the branch says where its own code runs
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False  # `x.ms` is an attribute, not the name `ms`

    def visit_Name(self, node: cst.Name) -> None:
        where = self.guarded.get(node.value)
        if where is not None:
            self.result = _intersect(self.result, where)


_USES: dict[int, tuple[cst.FunctionDef, frozenset[str] | None]] = per_file_memo()


def _function_uses(func: cst.FunctionDef, guarded: dict[str, frozenset[str]]) -> frozenset[str] | None:
    known = _USES.get(id(func))
    if known is not None and known[0] is func:
        return known[1]
    visitor = _GuardedUses(guarded)
    func.body.visit(visitor)
    if len(_USES) > 4096:
        _USES.clear()
    _USES[id(func)] = (func, visitor.result)
    return visitor.result


class _PlatformFields(cst.CSTVisitor):
    """The fields a class sets with `self.<name> = ...`, and the platforms of the predicate
    each is set to (None where one value is no platform predicate)."""

    def __init__(self) -> None:
        self.found: dict[str, tuple | None] = {}
        self.locals: list[dict] = []  # per function: the locals it binds once (`flag = is_cuda() or is_hip()`)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        binds = _LocalBinds()
        node.body.visit(binds)
        self.locals.append({name: value for name, value in binds.values.items() if binds.counts[name] == 1})

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.locals.pop()

    def _set(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            name = target.attr.value
            if isinstance(value, cst.Name) and self.locals:  # `self.use = flag`: what the local was bound to
                value = self.locals[-1].get(value.value, value)
            # (where the value holds, where it does not: `is_cuda() or is_hip()` holds on those
            # two and fails on the others; `_is_cuda and flag` holds on CUDA only, and may fail anywhere)
            sets = branch_sets(value) if value is not None else None
            if sets == (None, None) or (name in self.found and self.found[name] != sets):
                sets = None
            self.found[name] = sets

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._set(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._set(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._set(node.target, None)


class _LocalBinds(cst.CSTVisitor):
    """The names a function body binds with `name = value`, how often, and the last value."""

    def __init__(self) -> None:
        self.values: dict[str, cst.BaseExpression] = {}
        self.counts: dict[str, int] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                name = target.target.value
                self.values[name] = node.value
                self.counts[name] = self.counts.get(name, 0) + 1

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.counts[node.target.value] = self.counts.get(node.target.value, 0) + 2


_FIELDS_MEMO: dict[int, tuple[cst.ClassDef, dict]] = per_file_memo()


def platform_fields(class_def: cst.ClassDef) -> dict[str, tuple]:
    """The fields a class only ever sets to one platform predicate
    (`self.sync_dbo_comm = current_platform.is_rocm()`), each with (the platforms where it
    holds, where it does not; None: any): a test of one is a platform branch."""
    memo = _FIELDS_MEMO.get(id(class_def))
    if memo is not None and memo[0] is class_def:
        return memo[1]
    visitor = _PlatformFields()
    class_def.visit(visitor)
    found = {name: platforms for name, platforms in visitor.found.items() if platforms is not None}
    if len(_FIELDS_MEMO) > 256:
        _FIELDS_MEMO.clear()
    _FIELDS_MEMO[id(class_def)] = (class_def, found)
    return found


def code_platforms(filename: str, chain: Sequence[cst.CSTNode], stack: Sequence[cst.CSTNode]) -> frozenset[str] | None:
    """Platforms the code at the end of `stack` can run on (None: any): the intersection of
    what its file, classes, functions and enclosing `if` branches say."""
    result = path_platforms(filename)
    if _host_file(filename):
        result = _intersect(result, _HOST_ONLY)
    for scope in chain:
        if isinstance(scope, cst.ClassDef):
            result = _intersect(result, class_platforms(scope.name.value))
            result = _intersect(result, constructor_platforms(scope))
            if _host_class(scope):
                result = _intersect(result, _HOST_ONLY)
        elif isinstance(scope, cst.FunctionDef):
            result = _intersect(result, function_platforms(scope.name.value))
    if chain and isinstance(chain[0], cst.Module):
        result = _intersect(result, import_platforms(chain[0]))
        guarded = guarded_imports(chain[0])
        if guarded:
            for scope in chain:
                if isinstance(scope, cst.FunctionDef):
                    result = _intersect(result, _function_uses(scope, guarded))
                elif isinstance(scope, cst.ClassDef):
                    result = _intersect(result, _constructor_uses(scope, guarded))
    owner = next((scope for scope in reversed(chain) if isinstance(scope, cst.ClassDef)), None)
    fields = None  # the class's platform fields, read once a branch tests a field of `self`
    for i in range(len(stack) - 1):
        node, child = stack[i], stack[i + 1]
        if isinstance(node, cst.IndentedBlock):
            # `if x.device.type == "cuda": ...; return` above: what follows is the `else`.
            for sibling in node.body:
                if sibling is child:
                    break
                if isinstance(sibling, cst.If) and sibling.orelse is None and always_leaves(sibling.body):
                    if fields is None and owner is not None and _tests_self(sibling.test):
                        fields = platform_fields(owner)
                    result = _intersect(result, branch_sets(sibling.test, fields)[1])
            continue
        if not isinstance(node, cst.If):
            continue
        if fields is None and owner is not None and _tests_self(node.test):
            fields = platform_fields(owner)
        if child is node.body:
            result = _intersect(result, branch_sets(node.test, fields)[0])
        elif node.orelse is not None and child is node.orelse:
            result = _intersect(result, branch_sets(node.test, fields)[1])
    return result


def _constructor_uses(class_def: cst.ClassDef, guarded: dict[str, frozenset[str]]) -> frozenset[str] | None:
    """The platforms of the guarded names a class's `__init__` uses in its top-level
    statements (`ms.set_context(...)` with `if _is_npu: import mindspore as ms`): elsewhere
    the constructor fails on an unbound name, so no object of the class exists there."""
    init = next((s for s in class_def.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return None
    uses = _GuardedUses(guarded)
    for stmt in init.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            stmt.visit(uses)
    return uses.result


_CONSTRUCTOR_PLATFORMS: dict[int, tuple] = per_file_memo()


def constructor_platforms(class_def: cst.ClassDef) -> frozenset[str] | None:
    """The platforms a class can be built on, as its `__init__` says at its top level:
    `if not _is_xpu: raise Exception("... only available for Intel XPU")` (where the test
    fails), `assert current_platform.is_npu()` (where it holds), `import wave_lang...` of a
    vendor's package (where it installs). None: any."""
    found = _CONSTRUCTOR_PLATFORMS.get(id(class_def))
    if found is not None and found[0] is class_def:
        return found[1]
    result = None
    init = next((s for s in class_def.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    body = init.body.body if init is not None and isinstance(init.body, cst.IndentedBlock) else ()
    for stmt in body:
        if isinstance(stmt, cst.If) and stmt.orelse is None and _always_raises(stmt.body) and _predicates_only(stmt.test):
            result = _intersect(result, branch_sets(stmt.test)[1])
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assert) and _predicates_only(small.test):
                    result = _intersect(result, branch_sets(small.test)[0])
            result = _intersect(result, _statement_imports(stmt))
    if len(_CONSTRUCTOR_PLATFORMS) > 4096:
        _CONSTRUCTOR_PLATFORMS.clear()
    _CONSTRUCTOR_PLATFORMS[id(class_def)] = (class_def, result)
    return result


def _predicates_only(test: cst.BaseExpression) -> bool:
    """A test of platform predicates alone (`not _is_xpu`, `not _is_cpu or not _is_cpu_amx_available`),
    not of a tensor's or an object's device (`self.generator.device.type != "cpu"` says where
    that object lives, not where the class runs)."""
    if isinstance(test, cst.UnaryOperation):
        return _predicates_only(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _predicates_only(test.left) and _predicates_only(test.right)
    return not isinstance(test, cst.Comparison)


def _always_raises(body: cst.BaseSuite) -> bool:
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body] if isinstance(body, cst.SimpleStatementSuite) else []
    last = statements[-1] if statements else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and bool(last.body) and isinstance(last.body[-1], cst.Raise)


def _tests_self(test: cst.BaseExpression) -> bool:
    """Whether a test reads a field of `self` directly (`self.flag`, `not self.flag and x`)."""
    while isinstance(test, cst.UnaryOperation):
        test = test.expression
    if isinstance(test, cst.BooleanOperation):
        return _tests_self(test.left) or _tests_self(test.right)
    return isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self"


def runs_on(platforms: frozenset[str] | None, targets: Sequence[str]) -> bool:
    return platforms is None or not platforms.isdisjoint(targets)
