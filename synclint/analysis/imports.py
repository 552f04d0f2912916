"""Resolve names to the qualified names they were imported as.

`import torch as th` makes `th.tensor` read as `torch.tensor`; `from torch import tensor`
makes `tensor` read as `torch.tensor`. This is a cheap walk over import statements, not
libcst's QualifiedNameProvider (which would cost a scope analysis of the whole module).
"""

from __future__ import annotations

from collections import deque

import libcst as cst

from synclint.analysis.nodes import inner_statements


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


class ImportTable:
    """Local name -> qualified name, filled from import statements as they are met."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    def add_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _dotted(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.aliases[alias.asname.name.value] = full
                else:
                    top = full.split(".")[0]
                    self.aliases[top] = top
            return
        if node.relative or node.module is None:
            return  # relative imports name project code, never torch or numpy
        module = _dotted(node.module)
        if module is None or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = _dotted(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{module}.{name}"

    def collect_top_level(self, module: cst.Module) -> None:
        """Imports at module level, inside `try:` and `if` blocks too (cheap: no full walk)."""
        self._collect(list(module.body))

    def collect_function_level(self, func: cst.FunctionDef) -> None:
        """Imports at the top of a function body (`def f(): import torch`, common for lazy
        imports in inference engines). Added to the one table, without replacing a module-level
        name: a name imported in a function almost always means the same module everywhere."""
        if isinstance(func.body, cst.IndentedBlock):
            local = ImportTable()
            local._collect(list(func.body.body))
            for name, full in local.aliases.items():
                self.aliases.setdefault(name, full)

    def _collect(self, statements: list) -> None:
        pending = deque(statements)  # popleft: linear in the module's statements
        while pending:
            stmt = pending.popleft()
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        self.add_import(small)
            elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
                pending.extend(inner_statements(stmt))

    def qualname(self, node: cst.BaseExpression) -> str | None:
        """`th.cuda.synchronize` -> "torch.cuda.synchronize"; None for non-imported heads."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full

    def is_torch(self, node: cst.BaseExpression, *names: str) -> bool:
        """Whether `node` names one of `torch.<name>` (e.g. is_torch(func, "tensor"))."""
        q = self.qualname(node)
        return q is not None and any(q == f"torch.{n}" for n in names)


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` as text for Name/Attribute chains, else None."""
    return _dotted(node)
