"""Code that runs once or rarely inside a function, read with `ast` (the repository index must
not import libcst): the branches that synclint/analysis/tier.py calls cold, so that a call
made only from such a branch is not a way in for the call graph (`slice_geometry()` calls
`_build_geometry()` only on a cache miss: the builder runs once per key, however hot its
caller is). Also which functions a module hands to a thread (read by both).

The signals, each a branch of one function:
- an `except` handler;
- a training-only branch (`if self.training:`, the `else` of `if not self.training:`);
- a debug-only branch (`if self.debug_mode:`, `if os.environ.get("X_DEBUG") == "1":`,
  `if logger.isEnabledFor(logging.DEBUG):`, the `else` of `if not debug:`), and a
  profiling-only one (`if is_profile: self.rearrange(is_profile=True)`: the profiling run
  made once at start-up);
- a cache miss: `if key not in cache:` / `if self._cache is None:` (a name with `cache` or
  `memo` in it), `v = table.get(k)` then `if v is None:` where the body stores `table[k]`
  (or `table` is named like a cache);
- a first use: `if self._x is None:` whose body assigns `self._x` (also through a local,
  `x = self._x; if x is None: ...; self._x = x`) or calls the initialiser named for it
  (`if self.step_index is None: self._init_step_index(t)`), and
  `if key not in self._table:` whose body assigns `self._table[key]`;
- the code after a memo hit: `if key in cache: return cache[key]`,
  `if (v := cache.get(k)) is not None: return v`, `v = cache.get(k); if v is not None: return v`.
"""

from __future__ import annotations

import ast
import re

from synclint.analysis import astwalk

# `threading.Thread(target=f)`, `Process(target=f)`, `pool.submit(f, ...)`,
# `loop.run_in_executor(pool, f)`, `asyncio.to_thread(f)`: f runs off the calling thread.
_WORKER_PATTERNS = (
    re.compile(r"\b(?:Thread|Process)\s*\([^)]*?\btarget\s*=\s*(?:self\.)?(\w+)", re.S),
    re.compile(r"\.submit\(\s*(?:self\.)?(\w+)"),
    re.compile(r"\brun_in_executor\(\s*[^,()]+,\s*(?:self\.)?(\w+)"),
    re.compile(r"\bto_thread\(\s*(?:self\.)?(\w+)"),
)


# `Thread(target=f)` alone, and the pools alone (`pool.submit(f)`, `run_in_executor`,
# `to_thread`): a pool runs tasks, while a thread or a process may run the serving loop
# itself (`Process(target=run_scheduler_process)`, an executor loop on a thread of its own).
_THREAD_PATTERN = re.compile(r"\bThread\s*\([^)]*?\btarget\s*=\s*(?:self\.)?(\w+)", re.S)
_POOL_PATTERNS = _WORKER_PATTERNS[1:]


def worker_functions(text: str) -> frozenset[str]:
    """Names of the functions a module hands to a thread, process or executor. Read from the
    whole text (not the screened module) with patterns, so the answer does not depend on
    which functions the screen kept."""
    if "Thread" not in text and "submit(" not in text and "executor" not in text and "to_thread" not in text and "Process" not in text:
        return frozenset()
    found: set[str] = set()
    for pattern in _WORKER_PATTERNS:
        found.update(pattern.findall(text))
    return frozenset(found)


def pool_tasks(text: str) -> frozenset[str]:
    """Names of the functions a module hands to an executor or `asyncio.to_thread`."""
    if "submit(" not in text and "executor" not in text and "to_thread" not in text:
        return frozenset()
    return frozenset(name for pattern in _POOL_PATTERNS for name in pattern.findall(text))


def script_calls(tree: ast.Module) -> set[str]:
    """The functions a module's `if __name__ == "__main__":` blocks call by name (`main()`,
    `run(args)`): the entries of a script."""
    out: set[str] = set()
    for node in tree.body:
        if type(node) is not ast.If:
            continue
        test = node.test
        if not (type(test) is ast.Compare and type(test.left) is ast.Name and test.left.id == "__name__"
                and len(test.comparators) == 1 and type(test.comparators[0]) is ast.Constant
                and test.comparators[0].value == "__main__"):
            continue
        for stmt in node.body:
            for sub in astwalk.walk(stmt):
                if type(sub) is ast.Call and type(sub.func) is ast.Name:
                    out.add(sub.func.id)
    return out


def thread_classes(tree: ast.Module) -> list[str]:
    """The module-level classes that subclass `threading.Thread` or `multiprocessing.Process`
    and define `run`: the body their `start()` runs on another thread or process."""
    out = []
    for node in tree.body:
        if type(node) is not ast.ClassDef:
            continue
        bases = [b.id if type(b) is ast.Name else b.attr if type(b) is ast.Attribute else "" for b in node.bases]
        if any(base in ("Thread", "Process") for base in bases) and any(
                type(m) in (ast.FunctionDef, ast.AsyncFunctionDef) and m.name == "run" for m in node.body):
            out.append(node.name)
    return out


def thread_targets(text: str) -> frozenset[str]:
    """Names of the functions a module runs as a `threading.Thread`'s target."""
    return frozenset(_THREAD_PATTERN.findall(text)) if "Thread" in text else frozenset()


# A debug or profiling switch: `debug_mode`, `X_KPOOL_DEBUG_BOUNDS`, `is_profile` (a profiling
# run, made once at start-up to size memory), not `debugger` or `profiler`.
# Also a switch for consistency checks, which only catch bugs: `SANITY_CHECK`,
# `X_CHECK_KV_PAGE_INVARIANTS` (the plural: not `batch_invariant`, a serving mode), a canary
# or checksum of transferred data (`X_KV_CANARY_ENABLE_TOKEN_ORACLE`, `enable_kv_checksum`),
# and a test-only mode (`X_ENABLE_MM_COMPARISON_TEST`, `test_mode`), and a tracing switch
# (`X_TRACE_LOGITS_SYNC`, `trace_e2e`: prints or records each stage; not `is_tracing`, a
# tracer's query, nor `tracer`).
_DEBUG_WORD = re.compile(r"(^|_)(debug|profile|profiling|sanity|invariants|canary|checksum|checksums|test|trace)(_|$)")
# A predicate of a rare phase, by its whole name: a warm-up request or run (`batch.is_warmup`),
# an elastic scale-up or scale-down in progress (`StateManager.is_scaling()`) or a CUDA graph
# being captured (`if in_capture:`, `torch.cuda.is_current_stream_capturing()`), the phases
# the default cold functions name (`*warmup*`, `*scale_up*`, `*capture*`). Only these exact
# forms: not `warmup_done` (true in the steady state), `rope_scaling` (a model option) nor
# `capture_hidden_mode` (what a step keeps).
_PHASE_PREDICATE = re.compile(
    r"^_*(is|in)_(warmup|warm_up|warming_up|scaling|capture|capturing|graph_capture|cuda_graph_capture|current_stream_capturing)$")
_INIT_WORD = re.compile(r"(^|_)(init|initialize|initialise|setup|build|create|compute|load)(_|$)")


def debug_word(text: str) -> bool:
    """An identifier or string that names a switch on only in a rare phase: debugging or
    profiling (`debug`, `debug_mode`, `X_KPOOL_DEBUG_BOUNDS`, `DEBUG`, `is_profile`,
    `X_CHECK_INVARIANTS`, `sanity_check`, `X_KV_CANARY_...`, `enable_kv_checksum`,
    `X_COMPARISON_TEST`, `X_TRACE_LOGITS_SYNC`; not `debugger`, `profiler`, `batch_invariant`,
    `latest`, `is_tracing`), a warm-up, an elastic scaling or a CUDA graph capture
    (`is_warmup`, `is_scaling`, `in_capture`)."""
    low = text.lower()
    return bool(_DEBUG_WORD.search(low) or _PHASE_PREDICATE.match(low))


def cache_like(text: str) -> bool:
    low = text.lower()
    return "cache" in low or "memo" in low


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - a node that cannot be written back
        return ""


def _is_none(node: ast.AST) -> bool:
    return type(node) is ast.Constant and node.value is None


def _training(test: ast.expr) -> bool | None:
    if type(test) is ast.Attribute and test.attr == "training":
        return True
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not and _training(test.operand) is True:
        return False
    if type(test) is ast.BoolOp and type(test.op) is ast.And and any(_training(v) is True for v in test.values):
        return True
    return None


def debug_switch(expr: ast.expr) -> bool:
    """Whether `expr` is true only while debugging (`self.debug_mode`, `n > 1 and
    pool.debug_mode`, `os.environ.get("X_DEBUG") == "1"`)."""
    return _debug(expr) is True


def _debug(test: ast.expr) -> bool | None:
    """True: the body runs only when debugging; False: the `else` does; None: neither."""
    kind = type(test)
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        return False if _debug(test.operand) is True else None
    if kind is ast.BoolOp and type(test.op) is ast.And:
        return True if any(_debug(v) is True for v in test.values) else None
    if kind is ast.Compare and len(test.ops) == 1:
        op, right = type(test.ops[0]), test.comparators[0]
        if op in (ast.Eq, ast.In) or (op is ast.Is and type(right) is ast.Constant and right.value is True):
            return True if _debug(test.left) is True else None
        return None
    if kind is ast.Name:
        return True if debug_word(test.id) else None
    if kind is ast.Attribute:
        return True if debug_word(test.attr) else None
    if kind is ast.Call:
        func = test.func
        if type(func) is ast.Attribute and func.attr in ("get", "getenv", "isEnabledFor", "get_bool", "value"):
            if _debug(func.value) is True:
                return True
            for arg in test.args[:1]:
                if type(arg) is ast.Constant and isinstance(arg.value, str) and debug_word(arg.value):
                    return True
                if type(arg) in (ast.Name, ast.Attribute) and _debug(arg) is True:
                    return True
        if type(func) in (ast.Name, ast.Attribute) and _debug(func) is True:
            return True
    return None


def _debug_local(test: ast.expr, switches: frozenset[str]) -> bool | None:
    """As `_debug`, for a test of a local bound only to a debug switch (`if check:`, `if
    not check:`, `if check and n > 0:`)."""
    kind = type(test)
    if kind is ast.Name:
        return True if test.id in switches else None
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        return False if _debug_local(test.operand, switches) is True else None
    if kind is ast.BoolOp and type(test.op) is ast.And:
        return True if any(_debug_local(v, switches) is True for v in test.values) else None
    return None


def leaves(body: list[ast.stmt]) -> bool:
    """The block always ends in `return` or `raise` (its last statement)."""
    return bool(body) and type(body[-1]) in (ast.Return, ast.Raise)


def _assigned(body: list[ast.stmt]) -> set[str]:
    """The targets the statements of `body` (not nested blocks) assign, as written."""
    out: set[str] = set()
    for stmt in body:
        targets = stmt.targets if type(stmt) is ast.Assign else [stmt.target] if type(stmt) in (ast.AnnAssign, ast.AugAssign) else []
        for target in targets:
            for node in (target.elts if type(target) is ast.Tuple else [target]):
                out.add(_text(node))
                if type(node) is ast.Subscript:
                    out.add(_text(node.value) + "[]")
    return out


def _called(body: list[ast.stmt]) -> list[str]:
    names = []
    for stmt in body:
        for node in astwalk.walk(stmt):
            if type(node) is ast.Call:
                func = node.func
                names.append(func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else "")
    return names


def _previous(block: list[ast.stmt], stmt: ast.stmt) -> ast.stmt | None:
    previous = None
    for sibling in block:
        if sibling is stmt:
            return previous
        previous = sibling
    return None


def _binding_above(block: list[ast.stmt], stmt: ast.stmt, name: str) -> ast.Assign | None:
    """The assignment of `name` in the run of plain one-target assignments just above `stmt`
    (`g = self._g`, `l = self._l`, then `if g is None or l is None:`), or None (the twin of
    synclint/analysis/tier.py's `_alias_of_self`)."""
    index = next((i for i, sibling in enumerate(block) if sibling is stmt), 0)
    for sibling in reversed(block[:index]):
        if type(sibling) is not ast.Assign or len(sibling.targets) != 1 or type(sibling.targets[0]) is not ast.Name:
            return None
        if sibling.targets[0].id == name:
            return sibling
    return None


def _none_test(test: ast.expr) -> ast.expr | None:
    """`x is None` (also the left of `x is None or ...`, grown on demand): x."""
    if type(test) is ast.BoolOp and type(test.op) is ast.Or:
        test = test.values[0]
    if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.Is and _is_none(test.comparators[0]):
        return test.left
    return None


# An object named for one step's inputs (`self.forward_metadata`, `attn_metadata`,
# `forward_batch`, `meta`) is built again every step: a value cached on it lives one step.
_PER_STEP_HOLDER = re.compile(r"(?:^|_)(?:meta|metadata|batch)$")


def per_step_holder(text: str) -> bool:
    """Whether the attribute `text` (`self.forward_metadata.plan_cache`) is held by an object
    of one step: a cache or first use stored there is filled again every step, not once."""
    parts = text.split(".")[:-1]
    return any(_PER_STEP_HOLDER.search(part.lower()) for part in parts if part != "self")


def _held(missing: ast.expr, stmt: ast.If, block: list[ast.stmt]) -> str:
    """What the test of `stmt` finds missing, as written: the attribute a local stands for
    where it is bound just before (`x = self.meta.x; if x is None:`)."""
    if type(missing) is ast.Name:
        previous = _binding_above(block, stmt, missing.id)
        if type(previous) is ast.Assign and len(previous.targets) == 1 and _text(previous.targets[0]) == missing.id:
            if type(previous.value) is ast.Attribute:
                return _text(previous.value)
    return _text(missing)


def _missing_key(test: ast.expr, stored: set[str], filled: frozenset[str]) -> bool:
    """`key not in self.table` where the body, or a method of the class (`filled`), stores
    `self.table[...]`, or the table is named a cache; `a not in T or b not in U` where each is."""
    if type(test) is ast.BoolOp and type(test.op) is ast.Or:
        return all(_missing_key(value, stored, filled) for value in test.values)
    if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.NotIn:
        container = _text(test.comparators[0])
        if per_step_holder(container):
            return False
        return cache_like(container) or (container + "[]") in stored or (container + "[]") in filled
    return False


def filled_tables(class_node: ast.ClassDef) -> frozenset[str]:
    """The tables the methods of a class fill by key (`self.table[key] = ...`), as
    `self.table[]`: a test that finds a key missing in one of them is a miss filled once."""
    out = set()
    for node in astwalk.walk(class_node):
        if type(node) in (ast.Assign, ast.AnnAssign):
            for target in node.targets if type(node) is ast.Assign else [node.target]:
                if type(target) is ast.Subscript and type(target.value) is ast.Attribute and type(target.value.value) is ast.Name \
                        and target.value.value.id == "self":
                    out.add(_text(target.value) + "[]")
    return frozenset(out)


def _runs_once(stmt: ast.If, block: list[ast.stmt], filled: frozenset[str] = frozenset()) -> bool:
    """The body of `stmt` fills what its test found missing (a cache miss, a first use),
    except on an object of one step (`per_step_holder`). `filled`: the tables the class of
    the function fills by key (`filled_tables`), where a callee fills what the test found missing."""
    test = stmt.test
    missing = _none_test(test)
    if missing is not None and per_step_holder(_held(missing, stmt, block)):
        return False
    stored = _assigned(stmt.body)
    if _missing_key(test, stored, filled):
        return True
    held = _held_where(test)
    if held and held in stored:
        return True  # `if self._x.device != d: self._x = self._x.to(d)`: moved once, kept there
    missing = _none_test(test)
    if missing is None:
        return False
    name = _text(missing)
    if type(test) is ast.Compare and cache_like(name):
        return True
    if name in stored and name.startswith("self."):
        return True
    if type(missing) is ast.Attribute:
        stem = missing.attr.strip("_")
        return any(stem and stem in called and _INIT_WORD.search(called.lower()) for called in _called(stmt.body))
    if type(missing) is ast.Name:
        previous = _binding_above(block, stmt, name)
        if type(previous) is ast.Assign and len(previous.targets) == 1 and _text(previous.targets[0]) == name:
            value = previous.value
            if type(value) is ast.Attribute and _text(value).startswith("self.") and _text(value) in stored:
                return True  # `x = self._x; if x is None: ...; self._x = x`
            if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "get":
                table = _text(value.func.value)
                return cache_like(table) or (table + "[]") in stored  # `v = T.get(k); if v is None: T[k] = ...`
        looked_up = _lookup_before(block, stmt, name)
        if looked_up is not None:
            # `v = T.get(k)`, statements that leave `v` as it is, then `if v is None or
            # v.sizes != sizes: ...; T[k] = v`: a cache miss (or a stale entry) rebuilt
            return (looked_up + "[]") in stored
    return False


def _held_where(test: ast.expr) -> str:
    """`self._freqs` of `self._freqs.device != d` (`.dtype`, `.device.type`, `is not`), the
    twin of synclint/analysis/tier.py's; "" otherwise."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) not in (ast.NotEq, ast.IsNot):
        return ""
    expr = test.left
    if type(expr) is ast.Attribute and expr.attr == "type" and type(expr.value) is ast.Attribute:
        expr = expr.value
    if type(expr) is ast.Attribute and expr.attr in ("device", "dtype"):
        held = _text(expr.value)
        return held if held.startswith("self.") and held.count(".") == 1 else ""
    return ""


def _lookup_before(block: list[ast.stmt], stmt: ast.stmt, name: str) -> str | None:
    """The table `T` of the last `name = T.get(k)` before `stmt` in `block`, where no
    statement between them binds `name` again (nested blocks included); else None."""
    index = next((i for i, sibling in enumerate(block) if sibling is stmt), None)
    if index is None:
        return None
    for sibling in reversed(block[:index]):
        if type(sibling) is ast.Assign and len(sibling.targets) == 1 and _text(sibling.targets[0]) == name:
            value = sibling.value
            if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "get":
                return _text(value.func.value)
            return None
        if any(type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Store for node in astwalk.walk(sibling)):
            return None
    return None


def periodic(stmt: ast.If) -> bool:
    """The body of `stmt` runs once every N calls: `if self.step >= self.interval:` whose body
    resets the counter (`self.step = 0`), or `if self.step % interval == 0:` (N a literal above
    1 or a name)."""
    test = stmt.test
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return False
    op, left, right = type(test.ops[0]), test.left, test.comparators[0]
    if type(left) is ast.BinOp and type(left.op) is ast.Mod and op is ast.Eq and type(right) is ast.Constant and right.value == 0:
        every = left.right
        return type(every) in (ast.Name, ast.Attribute) or (type(every) is ast.Constant and isinstance(every.value, int) and every.value > 1)
    if op not in (ast.GtE, ast.Gt, ast.Eq) or type(left) not in (ast.Name, ast.Attribute):
        return False
    counter = _text(left)
    for child in stmt.body:
        if type(child) is ast.Assign and len(child.targets) == 1 and _text(child.targets[0]) == counter:
            value = child.value
            if type(value) is ast.Constant and value.value == 0:
                return True
    return False


def _stores_key(block: list[ast.stmt], stmt: ast.stmt, key: str, container: str) -> bool:
    """Whether a statement after `stmt` in `block` stores `key` in `container` (an attribute:
    `self.active[key] = ...`, `self.active.add(key)`), the table the test looked the key up in."""
    if not key or not container.startswith("self.") or stmt not in block:
        return False
    for later in block[block.index(stmt) + 1:]:
        for node in astwalk.walk(later):
            kind = type(node)
            if kind is ast.Subscript and type(node.ctx) is ast.Store and _text(node.value) == container and _text(node.slice) == key:
                return True
            if (kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("add", "setdefault")
                    and node.args and _text(node.func.value) == container and _text(node.args[0]) == key):
                return True
    return False


def _memo_hit(stmt: ast.stmt, block: list[ast.stmt]) -> bool:
    """`if key in cache: return cache[key]` and the like: what follows runs on a miss only.
    Also `if key in self.active: return False` (any return) where the code after it stores
    `self.active[key]`: what follows runs once per key."""
    if type(stmt) is not ast.If or stmt.orelse or not stmt.body or len(stmt.body) > 3:
        return False
    last = stmt.body[-1]
    if type(last) is not ast.Return:
        return False
    test = stmt.test
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        test = test.values[0]
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return False
    op = type(test.ops[0])
    if op is ast.In and _stores_key(block, stmt, _text(test.left), _text(test.comparators[0])):
        return True  # `if key in self.active: return False`, then `self.active[key] = ...`: once per key
    if last.value is None:
        return False
    returned = _text(last.value)
    if op is ast.In:
        container = _text(test.comparators[0])
        return bool(container) and (container in returned or cache_like(container))
    if op is ast.IsNot and _is_none(test.comparators[0]):
        left = test.left
        if type(left) is ast.NamedExpr:
            return _text(left.target) in returned or cache_like(_text(left.value))
        name = _text(left)
        if cache_like(name):
            return True
        previous = _previous(block, stmt)
        if type(left) is ast.Name and type(previous) is ast.Assign and _text(previous.targets[0]) == name:
            value = previous.value
            if type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "get":
                return name in returned and (cache_like(_text(value.func.value)) or returned == name)
        return returned == name and name.startswith("self.")
    return False


# The objects whose state outlives a step: the object itself, a module (the layer a quantisation
# method is handed: `layer`, `module`, `model`), a module-level singleton (`IPC_STATE`).
LONG_LIVED_OWNERS = frozenset({"self", "layer", "module", "model"})
# Methods that set an object's state up (`STATE.init(group)`): called after the guard, they set its flag.
INITIALISERS = re.compile(r"^_*(init|initialize|initialise|setup)(_|$)")
SET_UP_FLAG = re.compile(r"\.(_*is_)?(init|inited|initialized|initialised|ready|set_up|setup)$", re.I)


def _guard_flag(test: ast.expr) -> str | None:
    """`self.inited` of `if self.inited:`, `layer._wrapper` of `if layer._wrapper is not None:`,
    `STATE.inited` of `if STATE.inited:`: an attribute of a long-lived object (the twin of
    synclint/analysis/tier.py's, on `ast`)."""
    if type(test) is ast.Compare:
        if not (len(test.ops) == 1 and type(test.ops[0]) is ast.IsNot and _is_none(test.comparators[0])):
            return None
        test = test.left
    if type(test) is ast.Attribute and type(test.value) is ast.Name:
        owner = test.value.id
        if owner in LONG_LIVED_OWNERS or (owner.isupper() and len(owner) > 1):
            return _text(test)
    return None


def _sets_flag(stmt: ast.stmt, flag: str) -> bool:
    """Whether a statement sets the flag: assigns it, fills it in place (`.copy_`, `.fill_`,
    also through `.data`), or calls its object's initialiser (`STATE.init(group)` for `STATE.inited`)."""
    owner = flag.partition(".")[0]

    def is_flag(node) -> bool:
        if type(node) is ast.Attribute and node.attr == "data":
            node = node.value
        return type(node) is ast.Attribute and _text(node) == flag

    for node in astwalk.walk(stmt):
        kind = type(node)
        if kind is ast.Assign and any(is_flag(t) for t in node.targets):
            return True
        if kind in (ast.AnnAssign, ast.AugAssign) and is_flag(node.target):
            return True
        if kind is ast.Call and type(node.func) is ast.Attribute:
            func = node.func
            if func.attr in ("copy_", "fill_") and is_flag(func.value):
                return True
            if (type(func.value) is ast.Name and func.value.id == owner and owner != "self"
                    and INITIALISERS.match(func.attr) and SET_UP_FLAG.search(flag)):
                return True
    return False


def first_use_guard(stmt: ast.stmt, block: list[ast.stmt]) -> bool:
    """`if self.inited: return` (or `if layer._wrapper is not None: return`, `if STATE.inited:
    return True`) followed, in the same block, by a statement that sets the flag: what runs
    after the guard runs until the flag is set, once."""
    if type(stmt) is not ast.If or stmt.orelse or len(stmt.body) != 1 or type(stmt.body[0]) is not ast.Return:
        return False
    flag = _guard_flag(stmt.test)
    value = stmt.body[0].value
    # (a bare return, or a constant: `return True` of a readiness check; not `return data`)
    if flag is None or (value is not None and not (type(value) is ast.Constant and value.value in (None, True, False))):
        return False
    later = block[block.index(stmt) + 1:]
    return any(_sets_flag(one, flag) for one in later)


# A generation pipeline or stage (`FluxPipeline.__call__`, `DecodingStage.forward`): called
# once per request; the loop in it (the denoise loop) runs every step. Read by the tiers
# (synclint/analysis/tier.py) and by the call graph of the repository index.
_PIPELINE_WORDS = frozenset({"Pipeline", "Stage"})
_PIPELINE_ENTRIES = frozenset({"__call__", "forward"})
CAMEL_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+")
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def pipeline_entry(class_name: str | None, function_name: str) -> bool:
    """`__call__` / `forward` of a class whose last CamelCase word is `Pipeline` or `Stage`."""
    return bool(class_name) and function_name in _PIPELINE_ENTRIES and _pipeline_word(class_name)


def _pipeline_word(class_name: str) -> bool:
    words = CAMEL_WORDS.findall(class_name)
    return bool(words) and words[-1] in _PIPELINE_WORDS


def pipeline_name(class_name: str, base_names) -> str:
    """The name a class is read by as a pipeline or stage: its own, or, where that says
    nothing, the first of its direct bases named for one (`class HunyuanImage3AR(PipelineStage)`
    is a stage: its `forward` runs once per request)."""
    if _pipeline_word(class_name):
        return class_name
    return next((base for base in base_names if base and _pipeline_word(base)), class_name)


# A VAE (image/video autoencoder) encodes before the denoise loop and decodes after it: once
# per generation, never per denoise step. By folder, file-name part, class-name or
# function-name word (`vae_decode`, `_encode_vae_image`).
VAE_WORDS = frozenset({"vae", "vaes", "autoencoder", "autoencoders", "vqvae"})
# Decorators whose function computes its value once per key: what it calls runs on a miss.
MEMO_DECORATORS = frozenset({"cache", "lru_cache", "cached_property", "cache_on_self"})


def vae_function(name: str) -> bool:
    """A function named for VAE work: `vae_decode`, `_encode_with_vae`."""
    return any(w.lower() in VAE_WORDS for w in name.split("_"))


def decorator_names(func: ast.AST) -> list[str]:
    """The dotted names of a function's decorators (`functools.lru_cache` of
    `@functools.lru_cache(maxsize=8)`, `triton.jit`); "" for one that is no dotted name."""
    out = []
    for decorator in getattr(func, "decorator_list", ()):
        node = decorator.func if type(decorator) is ast.Call else decorator
        parts = []
        while type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        parts.append(node.id if type(node) is ast.Name else "")
        out.append(".".join(reversed(parts)) if parts[-1] else "")
    return out


def memoised(func: ast.AST) -> bool:
    """`@functools.lru_cache(...)`, `@cache`, `@cached_property`: computed once per key."""
    return any(name.rpartition(".")[2] in MEMO_DECORATORS for name in decorator_names(func))


def once_per_request(func: ast.AST, class_name: str, class_node: ast.ClassDef | None = None) -> list[ast.stmt]:
    """The statements of a pipeline entry's body that hold no step loop
    (`step_loop`): they run once per request. With the class (`class_node`), also the
    statements of a loop over segments (`segment_loop`) that call no method holding the
    step loop: they run once per clip, chunk or resolution stage."""
    out = [stmt for stmt in func.body if not any(isinstance(n, _LOOPS) and step_loop(class_name, n) for n in astwalk.walk(stmt))]
    if class_node is not None:
        holding = loop_methods(_method_shapes(class_node))
        for loop in _own_nodes(func):
            if isinstance(loop, _LOOPS) and segment_loop(class_name, _loop_header(loop), _self_calls(loop.body), holding):
                out.extend(beside_step_calls(loop.body, holding))
    return out


def beside_step_calls(stmts, holding: frozenset[str]):
    """The statements of a segment loop's body (`segment_loop`) that call no method holding
    the step loop and hold no loop: they run once per segment. A branch or `with` that calls
    one is read inside (`if stage2: self._denoise_stage2(...) else: scheduler.set_timesteps(...);
    self._denoise_chunk(...)`: the `set_timesteps` runs once per segment)."""
    for stmt in stmts:
        if any(isinstance(n, _LOOPS) for n in astwalk.walk(stmt)):
            continue
        if not _self_calls([stmt]) & holding:
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from beside_step_calls(stmt.body, holding)
            yield from beside_step_calls(stmt.orelse, holding)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from beside_step_calls(stmt.body, holding)


# A loop over segments: a generation stage's entry that denoises clip by clip, chunk by
# chunk or resolution stage by resolution stage calls, in a loop whose header names no
# steps (`for clip in request.schedule:`, `for stage in range(1, n + 1):`), the method that
# holds the step loop (`self._denoise_single_clip(...)`, `self._run_stage_steps(...)`);
# the rest of that loop's body (building the clip's conditioning, decoding it, changing the
# resolution) runs once per segment, a few times per request.
_LOOP_WORD = re.compile(r"(^|_)loop(_|$)")
# A header that counts steps (`for t in timesteps`, `range(num_inference_steps)`); a word
# of denoising alone (`for clip_denoising_metadata in schedule:`) names what a segment is for.
_COUNTED_STEP_WORD = re.compile(r"(^|_)(timesteps?|steps?|sigmas?|progress_bar|num_inference_steps)(_|$)", re.I)


def loop_methods(methods: dict[str, tuple[bool, frozenset[str]]]) -> frozenset[str]:
    """The methods of a class that hold a loop, from each method's (whether its body has a
    loop, the methods it calls on `self`): one whose body has a loop, one that calls (up to
    three calls deep) a method that does, or one named for a loop (`_run_denoising_loop`,
    perhaps a base's)."""
    holding = {name for name, (has_loop, _) in methods.items() if has_loop}
    for _ in range(3):
        more = {name for name, (_, called) in methods.items()
                if name not in holding and any(c in holding or _LOOP_WORD.search(c) for c in called)}
        if not more:
            break
        holding |= more
    return frozenset(holding)


def segment_loop(class_name: str, header: str, called: frozenset[str], holding: frozenset[str]) -> bool:
    """Whether a loop of a pipeline or stage entry (read as a step loop by `step_loop`) is a
    loop over segments: its header names no steps and its body calls on `self` a method
    that holds a loop (`loop_methods`) or is named for one."""
    if not step_loop(class_name, header) or any(_COUNTED_STEP_WORD.search(w) for w in re.findall(r"[A-Za-z_]\w*", header)):
        return False
    return any(name in holding or _LOOP_WORD.search(name) for name in called)


def _method_shapes(class_node: ast.ClassDef) -> dict[str, tuple[bool, frozenset[str]]]:
    out = {}
    for stmt in class_node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nodes = list(_own_nodes(stmt))
            out[stmt.name] = (any(isinstance(n, _LOOPS) for n in nodes), _self_calls(stmt.body))
    return out


def _own_nodes(func: ast.AST):
    """The nodes of a function's body, not of the functions and classes nested in it."""
    pending = list(func.body)
    while pending:
        node = pending.pop()
        yield node
        pending.extend(c for c in astwalk.children(node)
                       if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))


def _self_calls(stmts) -> frozenset[str]:
    """The names of the methods the statements call on `self` (`self._denoise(...)`)."""
    found = set()
    for stmt in stmts:
        for node in astwalk.walk(stmt):
            if (type(node) is ast.Call and type(node.func) is ast.Attribute and type(node.func.value) is ast.Name
                    and node.func.value.id == "self"):
                found.add(node.func.attr)
    return frozenset(found)


# A stage whose class names a generation loop: its loops are the denoise (or rollout) loop.
_LOOP_STAGE_WORDS = frozenset({"Denoising", "Denoise", "Denoiser", "Rollout", "Sampling", "Sampler", "Refinement", "Step", "Generation"})
# ... unless the word before says the stage runs around the loop, not in it
# (`BeforeDenoisingStage`, `PostDenoisingStage`): its loops go over prompts and images.
_AROUND_WORDS = frozenset({"Before", "After", "Pre", "Post"})
# A loop over these runs once per denoise step: `for i, t in enumerate(timesteps)`,
# `for sigma in sigmas`, `while step < num_steps`, `with self.progress_bar(...)`.
_STEP_WORD = re.compile(r"(^|_)(timesteps?|steps?|sigmas?|progress_bar|num_inference_steps|denois\w*)(_|$)", re.I)


def step_loop(class_name: str, loop_header: str | ast.AST) -> bool:
    """Whether a loop of a pipeline or stage entry runs every step: every loop of a
    `*Pipeline` (its `__call__` holds the denoise loop); in a `*Stage`, a loop of a stage
    named for a generation loop (`DenoisingStage`, `RolloutStage`; not `BeforeDenoisingStage`, which runs around it) or one whose header names
    steps (`for i, t in enumerate(timesteps)`). The loops of the other stages (text
    encoding, image preprocessing, decoding) go over prompts and images, once per request."""
    words = CAMEL_WORDS.findall(class_name or "")
    if not words or words[-1] != "Stage" or any(
        w in _LOOP_STAGE_WORDS and (i == 0 or words[i - 1] not in _AROUND_WORDS) for i, w in enumerate(words)
    ):
        return True
    if not isinstance(loop_header, str):
        loop_header = _loop_header(loop_header)
    return any(_STEP_WORD.search(w) for w in re.findall(r"[A-Za-z_]\w*", loop_header))


def _loop_header(loop: ast.AST) -> str:
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        return f"{_text(loop.target)} {_text(loop.iter)}"
    if isinstance(loop, ast.While):
        return _text(loop.test)
    return ""


def cold_subtrees(func: ast.AST, filled: frozenset[str] = frozenset(), switches: frozenset[str] = frozenset()) -> list[ast.AST]:
    """The nodes of `func`'s own body (not of functions nested in it) that run once or rarely:
    every node in their subtrees is cold. `filled`: as `_runs_once` takes it; `switches`: the
    locals bound only to a debug switch (`check = page_size > 1 and self.debug_mode`,
    guards.Bindings.debug), a test of which is a test of the switch."""
    out: list[ast.AST] = []
    pending: list[list[ast.stmt]] = [func.body]
    while pending:
        block = pending.pop()
        for index, stmt in enumerate(block):
            kind = type(stmt)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                continue
            if _memo_hit(stmt, block) or first_use_guard(stmt, block):
                out.extend(block[index + 1 :])
                break
            if kind is ast.If:
                training, debug = _training(stmt.test), _debug(stmt.test)
                if debug is None and switches:
                    debug = _debug_local(stmt.test, switches)
                if training is True or debug is True or _runs_once(stmt, block, filled) or periodic(stmt):
                    out.extend(stmt.body)
                    pending.append(stmt.orelse)
                    continue
                if debug is False and not stmt.orelse and leaves(stmt.body):
                    # `if not ElasticEP.is_scaling(): return`: the rest of the block is the switch's branch
                    out.extend(block[index + 1 :])
                    pending.append(stmt.body)
                    break
                if training is False or debug is False:
                    out.extend(stmt.orelse)
                    pending.append(stmt.body)
                    continue
                pending.extend((stmt.body, stmt.orelse))
            elif kind is ast.Try or kind.__name__ == "TryStar":
                out.extend(stmt.handlers)
                pending.extend((stmt.body, stmt.orelse, stmt.finalbody))
            elif kind in (ast.For, ast.AsyncFor, ast.While):
                pending.extend((stmt.body, stmt.orelse))
            elif kind in (ast.With, ast.AsyncWith):
                pending.append(stmt.body)
            elif kind is ast.Match:
                pending.extend(case.body for case in stmt.cases)
    return out


_HANDS_OFF = re.compile(r"executor|Executor|Thread|submit\(|to_thread")


def handed_on_workers(tree: ast.Module, text: str) -> tuple[set[str], set[str]]:
    """What a module says of callables handed to a pool through a helper's parameter
    (`submit_batches(self, executor, run_batch)` with `executor.submit(run_batch, records)`
    in its body; its caller `self.pushes.submit_batches(self._io_executor, self._push_batch)`):
    `"name:position:param"` for each parameter of a function or method `name` that its body
    hands to an executor (`pool_tasks` of its own text; the position counts the parameters
    after `self` / `cls`), and `"name:position:keyword:ref"`
    for each call of `name` that passes one of the module's own functions or methods
    (`self._push_batch` of the caller's class: `Cls._push_batch`; `f`) as an argument
    (position -1 for a keyword). Only modules that mention an executor or a thread are read."""
    if not _HANDS_OFF.search(text):
        return set(), set()
    lines = text.splitlines()
    params: set[str] = set()
    passed: set[str] = set()
    functions = {n.name for n in tree.body if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef)}

    def read(func, owner: str | None, methods: frozenset) -> None:
        args = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        if owner is not None and args and args[0] in ("self", "cls"):
            args = args[1:]
        handed = pool_tasks("\n".join(lines[func.lineno - 1:func.end_lineno or func.lineno]))
        for position, name in enumerate(args):
            if name in handed:
                params.add(f"{func.name}:{position}:{name}")
        for arg in func.args.kwonlyargs:
            if arg.arg in handed:
                params.add(f"{func.name}:-1:{arg.arg}")
        for node in astwalk.walk(func):
            if type(node) is not ast.Call:
                continue
            callee = node.func.attr if type(node.func) is ast.Attribute else node.func.id if type(node.func) is ast.Name else None
            if callee is None:
                continue
            for position, value, keyword in [*((i, a, "") for i, a in enumerate(node.args)), *((-1, k.value, k.arg or "") for k in node.keywords)]:
                if type(value) is ast.Attribute and type(value.value) is ast.Name and value.value.id == "self" and value.attr in methods:
                    passed.add(f"{callee}:{position}:{keyword}:{owner}.{value.attr}")
                elif type(value) is ast.Name and value.id in functions:
                    passed.add(f"{callee}:{position}:{keyword}:{value.id}")

    for node in tree.body:
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
            read(node, None, frozenset())
        elif type(node) is ast.ClassDef:
            methods = frozenset(m.name for m in node.body if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef))
            for member in node.body:
                if type(member) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    read(member, node.name, methods)
    return params, passed


# What the text of such a table holds somewhere: a class's name, then `self.m` as the next
# element (`(PauseReq, self.pause)`, `{FlushReq: self.flush,`); a module without it has none,
# and its tree is not walked.
_HANDLER_ENTRY = re.compile(r"[A-Z]\w*\s*[,:]\s*self\.\w+\s*[,)}]")


def dispatch_handlers(tree: ast.AST, text: str) -> frozenset[str]:
    """The methods a module registers in a table keyed by message types: a list, tuple or
    dict of at least two entries that each pair a class with a method of the object
    (`[(TokenizedGenerateReqInput, self.handle_generate_request), (PauseGenerationReqInput,
    self.pause_generation), ...]`, `{FlushCacheReq: self.flush_cache, ...}`). A server's
    request loop looks each message up by its type and calls the handler once per message
    of that kind: a request arriving, a control command (pause, weight update, storage
    attach), not the step. Only `self.m` handlers count (a field's method, `self.w.handle`,
    names too little)."""
    found: set[str] = set()
    if not _HANDLER_ENTRY.search(text):
        return frozenset()
    for node in astwalk.walk(tree):
        if type(node) in (ast.List, ast.Tuple):
            pairs = [(e.elts[0], e.elts[1]) for e in node.elts if type(e) is ast.Tuple and len(e.elts) == 2]
        elif type(node) is ast.Dict:
            pairs = [(k, v) for k, v in zip(node.keys, node.values) if k is not None]
        else:
            continue
        handlers = [_self_method(handler) for key, handler in pairs if _class_ref(key)]
        handlers = [h for h in handlers if h]
        if len(handlers) >= 2:
            found.update(handlers)
    return frozenset(found)


def _class_ref(node: ast.AST) -> bool:
    """`ReqInput`, `io_struct.ReqInput`: a name of a class (CamelCase)."""
    name = node.id if type(node) is ast.Name else node.attr if type(node) is ast.Attribute else ""
    return name[:1].isupper() and any(c.islower() for c in name)


def _self_method(node: ast.AST) -> str:
    if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":
        return node.attr
    return ""


# A field named for the functions it holds: `postprocess_text_funcs`, `preprocess_fn`,
# `on_done_callback`, `step_hooks` (the word ends the name).
_CALLABLE_WORDS = r"(funcs|fns|functions|callbacks|hooks|func|fn|callback|hook)"
_CALLABLE_FIELD = re.compile(rf"(^|_){_CALLABLE_WORDS}$")
# Such a field stored to in a module's text (`F: tuple = ...`, `F = (f,)`, `Cls(F=f)`): a
# module without one stores no function in a field, and its tree is not walked for them.
_CALLABLE_STORE = re.compile(rf"{_CALLABLE_WORDS}\s*[:=]")


def callable_field(name: str) -> bool:
    """Whether a field's name says it holds functions (`postprocess_text_funcs`)."""
    return bool(_CALLABLE_FIELD.search(name))


def stores_callable_fields(text: str) -> bool:
    """Whether a module's text may store functions in a field named for them."""
    return bool(_CALLABLE_STORE.search(text))
