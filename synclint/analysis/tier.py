"""How often does the code around a finding run? Every finding gets a tier:

- `hot`: reachable every step (a hot function: `hot-functions`, a compiled function, a
  function nested in one; or CUDA graph capture);
- `cold`: runs once or rarely: initialisation and weight loading (`cold-functions`),
  memoised values (`@cached_property`, `@functools.cache`, code after
  `if key in cache: return cache[key]`), code after a first-use guard (`if self.inited:
  return` with `self.inited` set further down), training-only branches (`if self.training:`),
  periodic branches (`if self.step >= self.interval: self.step = 0; ...`),
  functions run on a worker thread (`threading.Thread(target=f)`, `executor.submit(f)`),
  tests and benchmarks (by file and folder name), model loading, VAE and diffusion
  condition-encoder code (by folder);
- `unknown`: nothing says.

The default report shows `hot` and `unknown` findings; `--include-cold` shows all.

This module decides from *local* signals: the file's path, the enclosing functions (names,
decorators, how the module uses them) and the branches around the finding. A repository
call graph knows more (a helper called only from `__init__` is cold whatever its name). It
plugs in through one hook, `FunctionTiers`: a callable that, given the file name and the
qualified name of the function that encloses a finding (`Class.method`, `outer.inner`),
returns a `TierVerdict` where the call graph resolves it and None where it does not. The
engine passes it to `LintContext` (`lint_source(..., function_tiers=...)`), and
`local_tier` combines it with the local signals:

1. signals inside the function win (a training-only or memoised branch is cold wherever the
   function is called from), and so does the file (tests and benchmarks);
2. else the repository's verdict for the function, where it is hot or cold;
3. else the enclosing functions, innermost first: a function that runs on a worker thread
   or matches `cold-functions` or a caching decorator is cold, a hot function is hot;
4. else `unknown`, with the repository's reason where it has one (a way in from a hot root
   through a call by a name many classes define: the code may run every step).

Hot code in the fallback for a missing host copy (`if seq_lens_cpu is None:`,
`host_copy_fallback`) is `unknown`: whether it runs every step depends on whether callers
hand the copy over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase

import libcst as cst

from synclint.analysis import guarded_branches, guards, hotpath
from synclint.analysis.coldcode import (
    CAMEL_WORDS,
    INITIALISERS,
    LONG_LIVED_OWNERS,
    SET_UP_FLAG,
    debug_word,
    loop_methods,
    per_step_holder,
    pipeline_entry,
    pipeline_name,
    segment_loop,
    step_loop,
    vae_function,
)
from synclint.analysis.coldcode import worker_functions as worker_functions
from synclint.analysis.imports import ImportTable, dotted_name
from synclint.analysis.nodes import always_leaves, innermost_function, per_file_memo
from synclint.analysis.path_tiers import (  # noqa: F401 - re-exported: the tiers' names
    _VAE_REASON,
    UNKNOWN_TIER,
    Tier,
    TierVerdict,
    _vae_words,
    file_tier,
)


# The hook a repository call graph supplies: (filename, function qualname) -> verdict or None.
FunctionTiers = Callable[[str, str], "TierVerdict | None"]

# Decorators whose function computes its value once (per key).
CACHING_DECORATORS = frozenset(
    {"functools.cache", "functools.lru_cache", "functools.cached_property", "cached_property", "cache", "lru_cache"}
)

def _pipeline_verdict(chain, index: int, stack) -> TierVerdict | None:
    """A generation pipeline or stage's entry (`coldcode.pipeline_entry`): called once per
    request; the loop in it (the denoise loop) runs every step."""
    func = chain[index]
    owner = chain[index - 1] if index > 0 else None
    if not isinstance(owner, cst.ClassDef):
        return None
    name = pipeline_name(owner.name.value, [(dotted_name(base.value) or "").rpartition(".")[2] for base in owner.bases])
    if not pipeline_entry(name, func.name.value):
        return None
    inside = False
    for position, node in enumerate(stack):
        if node is func:
            inside = True
        elif inside and isinstance(node, (cst.For, cst.While)) and step_loop(name, _loop_header(node)):
            holding = _loop_methods(owner)
            header = _loop_header(node)
            if segment_loop(name, header, _self_calls(node.body), holding):
                if _beside_step_calls(node, stack[position + 1:], holding):
                    return TierVerdict(Tier.COLD, f"runs once per segment (in the loop over `{header}` of `{owner.name.value}.{func.name.value}()`, beside the call that runs the denoise loop)")
                continue
            return TierVerdict(Tier.HOT, f"runs every step (in the loop of `{owner.name.value}.{func.name.value}()`: the denoise loop)")
    return TierVerdict(Tier.COLD, f"`{owner.name.value}.{func.name.value}()` runs once per request (a generation pipeline or stage); only its denoise loop runs every step")


def _beside_step_calls(loop, below, holding: frozenset[str]) -> bool:
    """Whether the finding (inside `loop`, a segment loop, through the nodes `below` it) is
    in a statement that calls no method holding the step loop and holds no loop, looking
    inside the branches and `with` blocks that do call one (coldcode.beside_step_calls)."""
    statements = getattr(loop.body, "body", ())
    while True:
        statement = next((node for node in below if any(node is s for s in statements)), None)
        if statement is None:
            return False
        seen = _visited(statement)
        if seen.loops:
            return False
        if not seen.names & holding:
            return True
        if isinstance(statement, cst.If):
            orelse = statement.orelse
            rest = [orelse] if isinstance(orelse, cst.If) else list(getattr(getattr(orelse, "body", None), "body", ()))
            statements = [*getattr(statement.body, "body", ()), *rest]
        elif isinstance(statement, cst.With):
            statements = getattr(statement.body, "body", ())
        else:
            return False


_LOOP_METHODS: dict[int, tuple[cst.ClassDef, frozenset[str]]] = per_file_memo()


def _loop_methods(owner: cst.ClassDef) -> frozenset[str]:
    """coldcode.loop_methods of a class: the methods that hold a loop."""
    known = _LOOP_METHODS.get(id(owner))
    if known is not None and known[0] is owner:
        return known[1]
    shapes = {}
    for stmt in owner.body.body:
        if isinstance(stmt, cst.FunctionDef):
            body = _visited(stmt.body)
            shapes[stmt.name.value] = (body.loops, frozenset(body.names))
    if len(_LOOP_METHODS) > 64:
        _LOOP_METHODS.clear()
    found = loop_methods(shapes)
    _LOOP_METHODS[id(owner)] = (owner, found)
    return found


class _SelfCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.loops = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            self.names.add(func.attr.value)

    def visit_For(self, node) -> None:
        self.loops = True

    def visit_While(self, node) -> None:
        self.loops = True

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _visited(node: cst.CSTNode) -> _SelfCalls:
    """One walk of `node`: the methods it calls on `self` and whether it holds a loop."""
    visitor = _SelfCalls()
    node.visit(visitor)
    return visitor


def _self_calls(node: cst.CSTNode) -> frozenset[str]:
    """The names of the methods `node` calls on `self` (coldcode.segment_loop)."""
    return frozenset(_visited(node).names)


def _loop_header(loop: cst.For | cst.While) -> str:
    code = cst.Module([]).code_for_node
    return f"{code(loop.target)} {code(loop.iter)}" if isinstance(loop, cst.For) else code(loop.test)


def function_qualname(chain: Sequence[cst.CSTNode]) -> str:
    """`Class.method`, `outer.inner`: the scopes of `chain` below the module, joined by dots."""
    return ".".join(s.name.value for s in chain if isinstance(s, (cst.FunctionDef, cst.ClassDef)))


def _decorator_names(func: cst.FunctionDef, imports: ImportTable) -> list[str]:
    out = []
    for decorator in func.decorators:
        target = decorator.decorator
        target = target.func if isinstance(target, cst.Call) else target
        out.append(imports.qualname(target) or dotted_name(target) or "")
    return out


def function_verdict(
    func: cst.FunctionDef,
    class_name: str | None,
    settings,
    imports: ImportTable,
    compiled: frozenset[str] = frozenset(),
    workers: frozenset[str] = frozenset(),
) -> TierVerdict | None:
    """What the function itself says: cold by name, caching decorator or worker thread; hot
    by `hot-functions`, decorator or `torch.compile(fn)`; None when it says nothing."""
    name = func.name.value
    if name in workers:
        return TierVerdict(Tier.COLD, f"`{name}()` runs on a worker thread, off the serving loop")
    for d in _decorator_names(func, imports):
        if d in CACHING_DECORATORS or d.split(".")[-1] in ("cached_property", "cache", "lru_cache"):
            return TierVerdict(Tier.COLD, f"`{name}()` is memoised by @{d}: computed once")
    qualified = f"{class_name}.{name}" if class_name else name
    if class_name and _vae_words(CAMEL_WORDS.findall(class_name)):
        return TierVerdict(Tier.COLD, f"{_VAE_REASON} (class `{class_name}`)")
    if vae_function(name):
        return TierVerdict(Tier.COLD, f"{_VAE_REASON} (`{name}()`)")
    for pattern in settings.cold_functions:
        if fnmatchcase(name, pattern) or ("." in pattern and fnmatchcase(qualified, pattern)):
            return TierVerdict(Tier.COLD, f"in {name}(): matches cold-functions `{pattern}` (runs once or rarely)")
    hot = hotpath.function_reason(func, class_name, settings.hot_functions, imports, compiled)
    if hot is not None:
        return TierVerdict(Tier.HOT, f"runs every step ({hot})")
    return None


# --- signals inside the function --------------------------------------------------------


def _is_training(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == "training"


def _training_branch(test: cst.BaseExpression) -> bool | None:
    """True: the `if` body runs only in training; False: the `else` does; None: neither."""
    if _is_training(test):
        return True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and _is_training(test.expression):
        return False
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        if _training_branch(test.left) is True or _training_branch(test.right) is True:
            return True
    return None


def _names(expr: cst.CSTNode) -> str:
    try:
        return cst.Module(body=[]).code_for_node(expr)
    except Exception:  # noqa: BLE001 - a node that cannot stand alone
        return ""


def _cache_like(text: str) -> bool:
    low = text.lower()
    return "cache" in low or "memo" in low


def _returns_only(body: cst.BaseSuite) -> cst.Return | None:
    """The `return` a block ends with, when the block is short (a memo hit returns at once)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    if not statements or len(statements) > 3:
        return None
    last = statements[-1]
    small = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
    for s in small:
        if isinstance(s, cst.Return):
            return s
    return None


def _is_lookup(expr: cst.BaseExpression) -> bool:
    """`table.get(key)`, `table[key]`: a value looked up by key."""
    if isinstance(expr, cst.Call):
        return isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get" and len(expr.args) >= 1
    return isinstance(expr, cst.Subscript)


def _memo_hit(stmt: cst.CSTNode, block: cst.IndentedBlock | None = None) -> bool:
    """`if key in cache: return cache[key]`, `if self._x is not None: return self._x`,
    `if (v := cache.get(k)) is not None: return v`: the code after it runs on a miss only.
    Also `if key in self.active: return False` (any return) where the code after it in
    `block` stores `self.active[key]`: it runs once per key."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return False
    ret = _returns_only(stmt.body)
    if ret is None:
        return False
    test = stmt.test
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        test = test.left
    if (block is not None and isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.In)
            and _stores_key(block, stmt, _names(test.left), _names(test.comparisons[0].comparator))):
        return True
    if ret.value is None:
        return False
    if isinstance(test, cst.NamedExpr) and _is_lookup(test.value):
        # `if values := TABLE.get(key): return values`: a hit returns what was stored.
        return _names(test.target) == _names(ret.value)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    op = test.comparisons[0].operator
    returned = _names(ret.value)
    if isinstance(op, cst.In):
        container = _names(test.comparisons[0].comparator)
        return bool(container) and (container in returned or _cache_like(container))
    if isinstance(op, cst.IsNot) and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None":
        left = test.left.value if isinstance(test.left, cst.NamedExpr) else test.left
        target = _names(test.left.target) if isinstance(test.left, cst.NamedExpr) else _names(left)
        return bool(target) and (returned == target or _cache_like(_names(left)))
    return False


class _StoresKey(cst.CSTVisitor):
    """Whether statements store `key` in `container` (`self.active[key] = ...`, `.add(key)`)."""

    def __init__(self, key: str, container: str) -> None:
        self.key, self.container, self.found = key, container, False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if (isinstance(target, cst.Subscript) and _names(target.value) == self.container and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index) and _names(target.slice[0].slice.value) == self.key):
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value in ("add", "setdefault") and node.args
                and _names(func.value) == self.container and _names(node.args[0].value) == self.key):
            self.found = True


def _stores_key(block: cst.IndentedBlock, stmt: cst.CSTNode, key: str, container: str) -> bool:
    """Whether a statement after `stmt` in `block` stores `key` in `container`, an attribute
    (`self.active[key] = ...`): the table the test looked the key up in."""
    statements = list(block.body)
    if not key or not container.startswith("self.") or stmt not in statements:
        return False
    visitor = _StoresKey(key, container)
    for later in statements[statements.index(stmt) + 1:]:
        later.visit(visitor)
        if visitor.found:
            return True
    return False


def _memo_miss_branch(test: cst.BaseExpression) -> bool:
    """`if key not in cache:` / `if self._cache is None:`: the body fills a cache."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    op = test.comparisons[0].operator
    if isinstance(op, cst.NotIn):
        return _cache_like(_names(test.comparisons[0].comparator))
    if isinstance(op, cst.Is) and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None":
        return _cache_like(_names(test.left))
    return False


def _small_statements(line: cst.CSTNode) -> Sequence[cst.BaseSmallStatement]:
    """The statements of a simple line (`a = 1; b = 2`); none for a compound statement, whose
    `.body` is a block, not a list of statements."""
    if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return line.body
    return ()


def _fills_what_it_tests(stmt: cst.If) -> bool:
    """`if self._x is None: self._x = ...`, `if key not in self._table: self._table[key] =
    ...` and `if self._x.device != d: self._x = self._x.to(d)`: the body stores the very
    thing the test found missing (or elsewhere), so it runs once (per key, per device)."""
    test = stmt.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or stmt.orelse is not None:
        return False
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, cst.Is) and isinstance(right, cst.Name) and right.value == "None":
        missing, subscripted = _names(test.left), False
    elif isinstance(op, cst.NotIn):
        missing, subscripted = _names(right), True
    elif isinstance(op, (cst.NotEqual, cst.IsNot)) and _held_where(test.left):
        # `if self._freqs.device != x.device: self._freqs = self._freqs.to(x.device)`: a
        # held tensor moved where it is used, kept there; the next test finds it in place.
        missing, subscripted = _held_where(test.left), False
    else:
        return False
    if not missing.startswith("self."):
        return False
    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
    for line in body:
        for small in _small_statements(line):
            if not isinstance(small, (cst.Assign, cst.AnnAssign)):
                continue
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            for target in targets:
                stored = target.value if subscripted and isinstance(target, cst.Subscript) else target
                if not subscripted or isinstance(target, cst.Subscript):
                    if _names(stored) == missing:
                        return True
    return False


def _held_where(expr: cst.BaseExpression) -> str:
    """`self._freqs` of `self._freqs.device` / `.dtype` / `.device.type`; "" otherwise."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "type" and isinstance(expr.value, cst.Attribute):
        expr = expr.value
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("device", "dtype"):
        held = _names(expr.value)
        return held if held.startswith("self.") and held.count(".") == 1 else ""
    return ""


def _tested_none(stmt: cst.If) -> str | None:
    """`x` of `if x is None:`, or of `if x is None or ...:` (grown on demand: `if buf is None
    or buf.shape[0] < n:`); None for any other test."""
    test = stmt.test
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        test = test.left
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.left, cst.Name)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return test.left.value
    return None


def _alias_of_self(stmt: cst.If, block) -> str:
    """`x = self._x` just before `if x is None:`: the attribute the local stands for ("" if none)."""
    tested = _tested_none(stmt)
    if tested is None or not isinstance(block, cst.IndentedBlock):
        return ""
    before = []
    for sibling in block.body:
        if sibling is stmt:
            break
        before.append(sibling)
    # The run of plain assignments just above the test (`g = self._g`, `l = self._l`, then
    # `if g is None or l is None:`): the one that binds the tested name.
    for previous in reversed(before):
        if not isinstance(previous, cst.SimpleStatementLine) or len(previous.body) != 1:
            return ""
        assign = previous.body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
            return ""
        if assign.targets[0].target.value != tested:
            continue
        stored = _names(assign.value)
        if not stored.startswith("self.") or "(" in stored or "[" in stored:
            return ""
        return stored
    return ""


def _on_a_step_object(stmt: cst.If, block) -> bool:
    """`if self.forward_metadata.plan is None:` (or a local bound to it just before): what it
    fills lives on an object of one step (coldcode.per_step_holder), so it runs every step."""
    test = stmt.test
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        test = test.left
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Is)):
        return False
    held = _alias_of_self(stmt, block) or _names(test.left)
    return per_step_holder(held)


def _fills_alias(stmt: cst.If, block) -> bool:
    """`x = self._x`, then `if x is None: x = ...; self._x = x`: initialised on first use
    through a local name, so the body runs once."""
    attribute = _alias_of_self(stmt, block)
    if not attribute or stmt.orelse is not None:
        return False
    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
    for line in body:
        for small in _small_statements(line):
            if isinstance(small, cst.Assign) and any(_names(t.target) == attribute for t in small.targets):
                return True
    return False


_debug_word = debug_word  # `debug`, `debug_mode`, `X_KPOOL_DEBUG_BOUNDS`, `DEBUG` (not `debugger`)


def _debug_test(test: cst.BaseExpression) -> bool | None:
    """True: the `if` body runs only with debugging switched on (`if self.debug_mode:`,
    `if os.environ.get("X_DEBUG") == "1":`, `if DEBUG and ...:`); False: the `else` does
    (`if not DEBUG:`); None: neither."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return False if _debug_test(test.expression) is True else None
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return True if _debug_test(test.left) is True or _debug_test(test.right) is True else None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        if isinstance(test.comparisons[0].operator, (cst.Equal, cst.In)) or (
            isinstance(test.comparisons[0].operator, cst.Is)
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "True"
        ):
            return True if _debug_test(test.left) is True else None
        return None
    if isinstance(test, (cst.Name, cst.Attribute)):
        last = test.value if isinstance(test, cst.Name) else test.attr.value
        return True if _debug_word(last) else None
    if isinstance(test, cst.Call):
        # `envs.X_DEBUG.get()`, `os.environ.get("X_DEBUG")`, `logger.isEnabledFor(logging.DEBUG)`
        func = test.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("get", "getenv", "isEnabledFor", "get_bool", "value"):
            if isinstance(func.value, (cst.Name, cst.Attribute)) and _debug_test(func.value) is True:
                return True
            for arg in test.args[:1]:
                value = arg.value
                if isinstance(value, cst.SimpleString) and _debug_word(value.evaluated_value if isinstance(value.evaluated_value, str) else ""):
                    return True
                if isinstance(value, (cst.Name, cst.Attribute)) and _debug_test(value) is True:
                    return True
        if isinstance(func, (cst.Name, cst.Attribute)) and _debug_test(func) is True:
            return True  # `if is_debug():`, `if debug_enabled():`
    return None


def _debug_local(test: cst.BaseExpression, func: cst.FunctionDef) -> bool | None:
    """As `_debug_test`, for a test of a local that `func` binds only to debug switches, and
    never otherwise (`check = page_size > 1 and self.debug_mode`, then `if check:`; as
    guards.Bindings.debug reads it on `ast` for the index)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return False if _debug_local(test.expression, func) is True else None
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return True if _debug_local(test.left, func) is True or _debug_local(test.right, func) is True else None
    if not isinstance(test, cst.Name):
        return None
    name = test.value
    params = func.params
    if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)) or any(
            isinstance(p, cst.Param) and p.name.value == name for p in (params.star_arg, params.star_kwarg)):
        return None
    values = []
    pending: list[cst.CSTNode] = [func.body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    values.append(node.value)
                elif _target_binds(target.target, name):
                    return None  # `a, check = ...`
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)) and _target_binds(node.target, name):
            return None
        elif isinstance(node, cst.AsName) and _target_binds(node.name, name):
            return None
        pending.extend(node.children)
    return True if values and all(_debug_test(value) is True for value in values) else None


def _rare_phase_return(stmt: cst.CSTNode) -> bool:
    """`if not ElasticEPStateManager.is_scaling(): return`, `if not self.debug: return`: the
    statements after it run only with the switch on (as coldcode.cold_subtrees reads it)."""
    return (
        isinstance(stmt, cst.If)
        and stmt.orelse is None
        and _debug_test(stmt.test) is False
        and always_leaves(stmt.body)
    )




def _guard_flag(test: cst.BaseExpression) -> str | None:
    """`self.inited` of `if self.inited:`, `layer._wrapper` of `if layer._wrapper is not None:`,
    `STATE.inited` of `if STATE.inited:`: an attribute of a long-lived object."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        if not (isinstance(comparison.operator, cst.IsNot) and isinstance(comparison.comparator, cst.Name)
                and comparison.comparator.value == "None"):
            return None
        test = test.left
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name):
        owner = test.value.value
        if owner in LONG_LIVED_OWNERS or (owner.isupper() and len(owner) > 1):
            return _names(test)
    return None


class _SetsFlag(cst.CSTVisitor):
    """Whether statements set the flag (`self.inited`): assign it, fill it in place
    (`self.inited.data.copy_(torch.Tensor([True]))`, `self.ready.fill_(1)`), or call its
    object's initialiser (`STATE.init(group)` for `STATE.inited`)."""

    def __init__(self, flag: str) -> None:
        self.flag = flag
        self.owner = flag.partition(".")[0]
        self.found = False

    def _is_flag(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            node = node.value
        return isinstance(node, cst.Attribute) and _names(node) == self.flag

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.found = self.found or self._is_flag(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("copy_", "fill_") and self._is_flag(func.value):
            self.found = True
        elif (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self.owner
              and self.owner != "self" and INITIALISERS.match(func.attr.value) and SET_UP_FLAG.search(self.flag)):
            self.found = True


def _first_use_guard(stmt: cst.CSTNode, block: cst.IndentedBlock) -> bool:
    """`if self.inited: return` (or `if layer._wrapper is not None: return`, `if STATE.inited:
    return True`) followed, in the same block, by a statement that sets the flag: what runs after the guard
    runs until the flag is set, once."""
    if not (isinstance(stmt, cst.If) and stmt.orelse is None):
        return False
    flag = _guard_flag(stmt.test)
    ret = _returns_only(stmt.body)
    # (a bare return, or a constant: `return True` of a readiness check; not `return data`,
    # which a switch that skips the work returns as often as a first use)
    if flag is None or ret is None or (ret.value is not None and _names(ret.value) not in ("None", "True", "False")):
        return False
    statements = list(block.body)
    setter = _SetsFlag(flag)
    for later in statements[statements.index(stmt) + 1:]:
        later.visit(setter)
        if setter.found:
            return True
    return False


def _cache_lookup_miss(stmt: cst.If, block) -> bool:
    """`t = CACHE.get(key)` followed by `if t is None:` (the body fills the cache), or by
    statements that leave `t` as it is and `if t is None or t.sizes != sizes:` whose body
    stores `CACHE[key]` (a missing or stale entry rebuilt; coldcode._runs_once)."""
    name = _tested_none(stmt)
    if name is None or not isinstance(block, cst.IndentedBlock):
        return False
    index = next((i for i, sibling in enumerate(block.body) if sibling is stmt), None)
    if index is None:
        return False
    for distance, sibling in enumerate(reversed(block.body[:index])):
        value = _bound_to(sibling, name)
        if value is None:
            if _binds(sibling, name):
                return False
            continue
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get"):
            return False
        table = _names(value.func.value)
        if distance == 0 and _cache_like(table):
            return True
        # `g = _GEOMETRY.get(key)`, `if g is None: ...; _GEOMETRY[key] = g`: the body fills the table.
        body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
        for line in body:
            for small in _small_statements(line):
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Subscript) and _names(target.target.value) == table:
                            return True
        return False
    return False


def _bound_to(stmt, name: str):
    """The value of `stmt` where it is the one assignment `name = value`, else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    assign = stmt.body[0]
    if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
            and assign.targets[0].target.value == name:
        return assign.value
    return None


def _binds(stmt, name: str) -> bool:
    """Whether `stmt` (nested blocks included) may bind `name`."""
    pending = [stmt]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) and node.target.value == name:
            return True
        if isinstance(node, (cst.AugAssign, cst.AnnAssign)) and isinstance(node.target, cst.Name) and node.target.value == name:
            return True
        if isinstance(node, (cst.For, cst.CompFor)) and _target_binds(node.target, name):
            return True
        if isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name) and node.target.value == name:
            return True
        pending.extend(node.children)
    return False


def _target_binds(target: cst.CSTNode, name: str) -> bool:
    """Whether an assignment target (`check`, `a, check`, `(a, check)`, `[a, check]`) binds
    `name` (not `self.check`)."""
    text = _names(target)
    for mark in ",()[]*":
        text = text.replace(mark, " ")
    return name in text.split()


def _periodic(stmt: cst.If) -> bool:
    """The body runs once every N calls (as coldcode.periodic reads an `ast.If`): `if
    self.step >= self.interval:` whose body resets the counter (`self.step = 0`), or `if
    self.step % interval == 0:`."""
    test = stmt.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    op, left, right = test.comparisons[0].operator, test.left, test.comparisons[0].comparator
    if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Modulo) and isinstance(op, cst.Equal):
        if not (isinstance(right, cst.Integer) and right.evaluated_value == 0):
            return False
        every = left.right
        return isinstance(every, (cst.Name, cst.Attribute)) or (isinstance(every, cst.Integer) and every.evaluated_value > 1)
    if not isinstance(op, (cst.GreaterThanEqual, cst.GreaterThan, cst.Equal)) or not isinstance(left, (cst.Name, cst.Attribute)):
        return False
    counter = _names(left)
    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
    for line in body:
        for small in _small_statements(line):
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and _names(small.targets[0].target) == counter:
                if isinstance(small.value, cst.Integer) and small.value.evaluated_value == 0:
                    return True
    return False


def branch_verdict(stack: Sequence[cst.CSTNode]) -> TierVerdict | None:
    """Signals between the innermost function and the finding: a training-only branch, a
    cache-miss branch, or code after a memo hit's early return."""
    start = innermost_function(stack)
    asserted: set[str] = set()  # names an `assert x is not None` above the finding has checked
    for i in range(start, len(stack) - 1):
        node, child = stack[i], stack[i + 1]
        if isinstance(node, cst.ExceptHandler) and child is node.body:
            return TierVerdict(Tier.COLD, "in an `except` handler: runs only when an exception is raised")
        if isinstance(node, cst.Raise):
            return TierVerdict(Tier.COLD, "builds the exception a `raise` throws: runs only when it is raised")
        if asserted and isinstance(node, (cst.If, cst.IfExp)):
            missing = _none_branch(node, child)
            if missing in asserted:
                return TierVerdict(Tier.COLD, f"in the branch where `{missing}` is None, after `assert {missing} is not None`: never runs")
        if isinstance(node, cst.If):
            in_body = child is node.body
            in_else = node.orelse is not None and child is node.orelse
            branch = True if in_body else False if in_else else None
            verdict = _training_verdict(node.test, branch)
            if verdict is not None:
                return verdict
            per_step = in_body and _on_a_step_object(node, stack[i - 1] if i > 0 else None)
            if in_body and not per_step and (_memo_miss_branch(node.test) or _cache_lookup_miss(node, stack[i - 1] if i > 0 else None)):
                return TierVerdict(Tier.COLD, "fills a cache on a miss: runs once per key")
            if in_body and not per_step and (_fills_what_it_tests(node) or _fills_alias(node, stack[i - 1] if i > 0 else None)):
                return TierVerdict(Tier.COLD, "initialises a value on first use (`if self._x is None: self._x = ...`): runs once")
            verdict = _switch_verdict(node.test, branch, stack[start])
            if verdict is not None:
                return verdict
            if in_body and _periodic(node):
                return TierVerdict(Tier.COLD, "in a branch that runs once every N calls (a step counter it tests and resets, or `step % N == 0`)")
        elif isinstance(node, cst.IfExp) and child is not node.test:
            # `seq_lens.cpu() if in_capture else seq_lens_cpu`: the branches of a conditional
            # expression, as those of an `if`
            branch = child is node.body
            verdict = _training_verdict(node.test, branch) or _switch_verdict(node.test, branch, stack[start])
            if verdict is not None:
                return verdict
        elif isinstance(node, cst.IndentedBlock) and i > start:
            for sibling in node.body:
                if sibling is child:
                    break
                asserted.difference_update(_rebound(sibling))
                asserted.update(_asserted_not_none(sibling))
                if _memo_hit(sibling, node):
                    return TierVerdict(Tier.COLD, "after a memo hit returns early: runs once per key")
                if _first_use_guard(sibling, node):
                    return TierVerdict(
                        Tier.COLD,
                        f"after `if {_names(sibling.test)}: return`, before the code sets it: runs until it is set, once",
                    )
                if _rare_phase_return(sibling):
                    return TierVerdict(
                        Tier.COLD,
                        f"after `if {_names(sibling.test)}: return`: runs only while debugging, profiling, warming up, scaling or capturing a CUDA graph",
                    )
    return None


def _training_verdict(test: cst.BaseExpression, branch: bool | None) -> TierVerdict | None:
    """Cold in the branch of `test` that runs only while training (`branch`: True for the
    body of an `if` or conditional expression, False for its `else`, None for neither)."""
    training = _training_branch(test)
    if branch is not None and training is branch:
        return TierVerdict(Tier.COLD, "in an `if self.training:` branch: training only, not inference")
    return None


def _switch_verdict(test: cst.BaseExpression, branch: bool | None, func: cst.CSTNode) -> TierVerdict | None:
    """Cold in the branch of `test` that runs only while a debug, profiling, warm-up, scaling
    or capture switch is on (`_debug_test`, or a local of `func` bound only to one);
    `branch` as `_training_verdict` takes it."""
    if branch is None:
        return None
    debug = _debug_test(test)
    if debug is None and isinstance(func, cst.FunctionDef):
        debug = _debug_local(test, func)
    if debug is branch:
        return TierVerdict(Tier.COLD, f"in a branch of `{_names(test)}`: runs only while debugging, profiling, warming up, scaling or capturing a CUDA graph")
    return None


def _asserted_not_none(stmt: cst.CSTNode) -> list[str]:
    """`assert x is not None`: ["x"] (also `self.x`)."""
    found = []
    for small in _small_statements(stmt):
        test = small.test if isinstance(small, cst.Assert) else None
        if (
            isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.IsNot)
            and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
            and isinstance(test.left, (cst.Name, cst.Attribute))
        ):
            found.append(_names(test.left))
    return found


def _rebound(stmt: cst.CSTNode) -> set[str]:
    """The names and attributes a simple statement assigns."""
    out = set()
    for small in _small_statements(stmt):
        if isinstance(small, cst.Assign):
            out.update(_names(t.target) for t in small.targets)
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            out.add(_names(small.target))
    return out


def _none_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """`x is None`: ("x", True); `x is not None`: ("x", False); else None."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    if not (isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
        return None
    if isinstance(comparison.operator, (cst.Is, cst.IsNot)):
        return _names(test.left), isinstance(comparison.operator, cst.Is)
    return None


def _none_branch(node: cst.If | cst.IfExp, child: cst.CSTNode) -> str | None:
    """The name whose being None takes the branch of `node` that holds `child`
    (`if x is None:` its body, `a if x is not None else b` its `else`), or None."""
    tested = _none_test(node.test)
    if tested is None:
        return None
    name, is_none = tested
    in_body, in_else = child is node.body, node.orelse is not None and child is node.orelse
    return name if is_none and in_body or not is_none and in_else else None


def host_copy_fallback(stack: Sequence[cst.CSTNode]) -> str | None:
    """The host copy whose absence the code at the end of `stack` stands in for: the
    finding is in the branch where a value named for the host (`seq_lens_cpu`,
    `meta.cu_seqlens_host`, `lens_list`: `repo.convention`; or a local first bound to one)
    is None (`if x_cpu is None:`,
    the `else` of `if x_cpu is not None:`, `a if x_cpu is not None else b`), or after
    `if x_cpu is not None: return ...` in the same block. Such a branch is a fallback: it
    runs only where the caller did not hand the host copy over, which may be every step
    (a path that sets it None on purpose) or never."""
    from synclint.repo import DEVICE, convention

    start = innermost_function(stack)
    aliases: dict[str, str] | None = None

    def host_named(name: str | None) -> str | None:
        """`name` as the reason shows it where it names a host copy, else None."""
        nonlocal aliases
        if not name:
            return None
        place, shown = convention(name.rpartition(".")[2]), name
        if not place and "." not in name and isinstance(stack[start], cst.FunctionDef):
            # a local first bound to a host copy (`lens = batch.seq_lens_cpu; if lens is None:`)
            if aliases is None:
                aliases = _first_bindings(stack[start])
            bound = aliases.get(name)
            place, shown = (convention(bound.rpartition(".")[2]) if bound else 0), f"{name} = {bound}"
        return shown if place and not place & DEVICE else None

    for i in range(start, len(stack) - 1):
        node, child = stack[i], stack[i + 1]
        missing = None
        if isinstance(node, (cst.If, cst.IfExp)):
            missing = host_named(_none_branch(node, child))
        elif isinstance(node, cst.IndentedBlock):
            for statement in node.body:
                if statement is child:
                    break
                tested = _none_test(statement.test) if isinstance(statement, cst.If) else None
                if tested is not None and not tested[1] and statement.orelse is None and always_leaves(statement.body):
                    missing = missing or host_named(tested[0])
        if missing:
            return missing
    return None


def _first_bindings(func: cst.FunctionDef) -> dict[str, str]:
    """Each local of `func` -> the name or attribute its first plain assignment binds it to
    (`lens = batch.seq_lens_cpu`: "batch.seq_lens_cpu"); "" where that value is anything else."""
    found: dict[str, str] = {}

    class Bindings(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func  # not the functions nested in it

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value not in found:
                    value = node.value
                    found[target.target.value] = _names(value) if isinstance(value, (cst.Name, cst.Attribute)) else ""

    func.visit(Bindings())
    return found


def _untaken_branch(filename: str, chain, stack, function_tiers) -> TierVerdict | None:
    """Cold: a branch that a parameter decides (`if k_scale is None:`, `if wait:`) and that
    no call of the function from code not known to be cold takes, by the kinds of argument
    the repository's calls pass (synclint/analysis/guards.py)."""
    passed = getattr(function_tiers, "passed", None)
    if passed is None:
        return None
    func, conditions = guarded_branches.branch_conditions(stack)
    functions = [i for i, s in enumerate(chain) if isinstance(s, cst.FunctionDef)]
    if not conditions or not functions or chain[functions[-1]] is not func:
        return None
    qualname = function_qualname(chain[: functions[-1] + 1])
    own = guarded_branches.function_parameters(func)
    shape = guarded_branches.shape_of(func)
    field_given = getattr(function_tiers, "field_given", None)
    for name, condition in conditions:
        if name[:1] == guards.FIELD:
            # `if meta.lens is None:` (or a local bound to it) of a field the repository never makes None
            if condition == guards.IS_NONE and field_given is not None and field_given(filename, name[1:]):
                return TierVerdict(
                    Tier.COLD, f"runs only when field `{name[1:]}` is None, and the repository never assigns it None"
                )
            continue
        position, default = own[name]
        kinds = passed(filename, qualname, name, position, default, shape)
        if kinds is not None and not guards.can_take(condition, kinds):
            return TierVerdict(
                Tier.COLD, f"runs only when `{name}` {condition}, and no call of `{func.name.value}()` outside cold code passes that"
            )
    return None


def local_tier(
    filename: str,
    chain: Sequence[cst.CSTNode],
    stack: Sequence[cst.CSTNode],
    settings,
    imports: ImportTable,
    *,
    compiled: frozenset[str] = frozenset(),
    workers: frozenset[str] = frozenset(),
    graph_capture: bool = False,
    function_tiers: FunctionTiers | None = None,
) -> TierVerdict:
    """The tier of code at the end of `stack`, inside the scopes `chain` (Module, ClassDef?,
    FunctionDef...), in the order described in the module docstring."""
    verdict = _decided_tier(filename, chain, stack, settings, imports, compiled, workers, graph_capture, function_tiers)
    if verdict.tier is Tier.HOT:
        missing = host_copy_fallback(stack)
        if missing is not None and not _passed_none(filename, chain, missing, function_tiers):
            return TierVerdict(Tier.UNKNOWN, f"the fallback for when host copy `{missing}` is None, which may not run every "
                                             f"step; the code around it {verdict.reason}")
    return verdict


def _passed_none(filename: str, chain, name: str, function_tiers) -> bool:
    """Whether `name` is a parameter of the innermost function that a call from code not
    known to be cold passes as None (or leaves to a `None` default), by the repository's
    calls (`function_tiers.passed`): the branch for its absence then runs on a hot path."""
    passed = getattr(function_tiers, "passed", None)
    functions = [i for i, s in enumerate(chain) if isinstance(s, cst.FunctionDef)]
    if passed is None or not functions or "." in name:
        return False
    func = chain[functions[-1]]
    own = guarded_branches.function_parameters(func)
    if name not in own:
        return False
    position, default = own[name]
    kinds = passed(filename, function_qualname(chain[: functions[-1] + 1]), name, position, default,
                   guarded_branches.shape_of(func))
    return kinds is not None and guards.NONE in kinds


def _decided_tier(filename, chain, stack, settings, imports, compiled, workers, graph_capture, function_tiers) -> TierVerdict:
    """`local_tier` before a host copy's fallback is read (its arguments, in order)."""
    verdict = file_tier(filename) or branch_verdict(stack)
    if verdict is None and function_tiers is not None:
        verdict = _untaken_branch(filename, chain, stack, function_tiers)
    if verdict is not None:
        return verdict
    if graph_capture:
        return TierVerdict(Tier.HOT, "runs every step (under CUDA graph capture: replayed)")
    functions = [i for i, s in enumerate(chain) if isinstance(s, cst.FunctionDef)]
    if functions:
        staged = _pipeline_verdict(chain, functions[-1], stack)
        if staged is not None:
            return staged
    if functions:
        # What the innermost function says of itself when that is cold (memoised by a
        # decorator, run on a worker thread, a cold name) holds whoever calls it: the
        # repository's "hot" says only that a hot root reaches it.
        i = functions[-1]
        owner = chain[i - 1] if i > 0 else None
        own = function_verdict(
            chain[i], owner.name.value if isinstance(owner, cst.ClassDef) else None, settings, imports, compiled, workers
        )
        if own is not None and own.tier is Tier.COLD:
            return own
    repository = None
    if function_tiers is not None and functions:
        repository = function_tiers(filename, function_qualname(chain[: functions[-1] + 1]))
        if repository is not None and repository.tier is not Tier.UNKNOWN:
            return repository
    for i in reversed(functions):
        func = chain[i]
        owner = chain[i - 1] if i > 0 else None
        class_name = owner.name.value if isinstance(owner, cst.ClassDef) else None
        verdict = function_verdict(func, class_name, settings, imports, compiled, workers)
        if verdict is not None:
            return verdict
    # The repository's `unknown` (a way in from a hot root by a crowded name) says more than
    # nothing, where the enclosing functions say nothing either.
    return repository or UNKNOWN_TIER
