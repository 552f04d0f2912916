"""A project's own sync wrappers, read with `ast`: functions and methods whose body only
synchronizes (`def _wait(self): self.event.synchronize()`). A call of one is a sync, so the
screen keeps its callers for SL501 (synclint/rules/sl501_explicit_sync_hot_path.py)."""

from __future__ import annotations

import ast

SYNC_WORDS = ("synchronize",)


def only_syncs(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every statement but a docstring is a `....synchronize()` call, bare or returned."""
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return bool(body) and all(
        isinstance(stmt, (ast.Expr, ast.Return))
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "synchronize"
        and not stmt.value.args
        for stmt in body
    )


def wrapper_words(tree: ast.Module) -> tuple[str, ...]:
    """`synchronize`, and the names of the module's functions and methods whose body only
    synchronizes."""
    names = []
    for stmt in tree.body:
        members = stmt.body if isinstance(stmt, ast.ClassDef) else [stmt]
        for member in members:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and only_syncs(member):
                names.append(member.name)
    return (*SYNC_WORDS, *names)
