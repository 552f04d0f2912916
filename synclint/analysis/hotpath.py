"""Which code runs every step: the reasons `ctx.hot_path` gives.

A function is hot when its name matches a `hot-functions` pattern (forward, __call__,
execute_model, sample*, prepare_*_metadata, ...; see config.py), optionally spelled
`Class.method`, when a decorator compiles it, or when the module passes it to
`torch.compile(...)`. Code inside a hot function
(nested functions too), inside a loop body or a comprehension, or inside
`with torch.cuda.graph(...)` is hot. A sync there drains the GPU queue once per step, so
rules report it with the reason attached.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import libcst as cst

from synclint.analysis.imports import ImportTable, dotted_name

# Decorators (qualified through the imports) whose function runs compiled or graph-captured
# every step.
HOT_DECORATORS = frozenset(
    {"torch.compile", "torch.jit.script", "torch.jit.trace", "torch._dynamo.optimize", "torch.compiler.compile"}
)
# Project decorators known by their bare name (vLLM's `@support_torch_compile`).
HOT_DECORATOR_NAMES = frozenset({"support_torch_compile", "compile_in_capture_mode"})
# Context managers whose body is captured into a CUDA graph and replayed every step.
GRAPH_CONTEXTS = frozenset({"torch.cuda.graph", "torch.cuda.graphs.graph"})

COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})  # exact types: libcst has no subclasses of them


def _decorator_name(decorator: cst.Decorator, imports: ImportTable) -> str:
    target = decorator.decorator
    target = target.func if isinstance(target, cst.Call) else target
    return imports.qualname(target) or dotted_name(target) or ""


def function_reason(
    func: cst.FunctionDef,
    class_name: str | None,
    patterns: tuple[str, ...],
    imports: ImportTable,
    compiled: frozenset[str] = frozenset(),
) -> str | None:
    """Why `func` itself runs every step, or None. `compiled` holds the names this module
    passes to `torch.compile(...)` as a call (see `compiled_names`)."""
    name = func.name.value
    qualified = f"{class_name}.{name}" if class_name else name
    for pattern in patterns:
        if fnmatchcase(name, pattern) or ("." in pattern and fnmatchcase(qualified, pattern)):
            return f"in {name}()"
    for decorator in func.decorators:
        d = _decorator_name(decorator, imports)
        if d in HOT_DECORATORS or d.split(".")[-1] in HOT_DECORATOR_NAMES:
            return f"under @{d}"
    if name in compiled:
        return "compiled by torch.compile()"
    return None


def compiled_names(module: cst.Module, imports: ImportTable) -> frozenset[str]:
    """Functions compiled by a call rather than a decorator: `fast = torch.compile(fn)`,
    `self.forward = torch.compile(self._forward_impl)`, `return torch.compile(fn, ...)`.
    Gives the bare names (`fn`, `_forward_impl`). A walk over statements only, cheap: no
    libcst visit."""
    found: set[str] = set()
    pending: list[cst.CSTNode] = list(module.body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                value = getattr(small, "value", None)
                if isinstance(value, cst.Call) and imports.qualname(value.func) == "torch.compile" and value.args:
                    first = value.args[0].value
                    if isinstance(first, cst.Name):
                        found.add(first.value)
                    elif isinstance(first, cst.Attribute):
                        found.add(first.attr.value)
            continue
        body = getattr(stmt, "body", None)
        if isinstance(body, cst.BaseSuite):
            pending.extend(getattr(body, "body", ()))
        for extra in (getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None), *getattr(stmt, "handlers", ())):
            if extra is not None:
                pending.append(extra)
    return frozenset(found)


def is_graph_capture(with_node: cst.With, imports: ImportTable) -> bool:
    for item in with_node.items:
        target = item.item.func if isinstance(item.item, cst.Call) else item.item
        if imports.qualname(target) in GRAPH_CONTEXTS:
            return True
    return False


def in_comprehension_loop(stack: list[cst.CSTNode]) -> bool:
    """Whether the innermost node of `stack` runs once per element of a comprehension (its
    element or condition, not the outermost iterable, which is evaluated once)."""
    for i in range(len(stack) - 2, -1, -1):
        node = stack[i]
        kind = type(node)
        if kind is cst.Lambda or kind is cst.FunctionDef:
            return False
        if kind in COMPREHENSIONS:
            child = stack[i + 1]
            if child is node.for_in:
                grandchild = stack[i + 2] if i + 2 < len(stack) else None
                if grandchild is node.for_in.iter:
                    continue  # the first iterable: evaluated once, look further out
            return True
    return False
