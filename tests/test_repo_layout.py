"""The repository index's modules (synclint/repo/) import one another in one direction only:
`repo/__init__.py` imports them in an order, and each module imports only modules before it
in that order (docs/architecture.md). A cycle would make the package's import order matter
to every caller."""

from __future__ import annotations

import ast
from pathlib import Path

from synclint import repo

PACKAGE = Path(repo.__file__).resolve().parent


def _init_order() -> list[str]:
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "synclint.repo":
            return [alias.name for alias in node.names]
    raise AssertionError("repo/__init__.py imports no module of the package")


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("synclint.repo"):
            parts = node.module.split(".")
            found.update([parts[2]] if len(parts) > 2 else [alias.name for alias in node.names])
    return found


def test_every_module_of_the_package_is_imported_in_the_order():
    order = _init_order()
    assert sorted(order) == sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def test_each_module_imports_only_modules_before_it():
    order = _init_order()
    rank = {name: i for i, name in enumerate(order)}
    later = {
        name: sorted(other for other in _imported_modules(PACKAGE / f"{name}.py") if rank[other] >= rank[name])
        for name in order
    }
    assert {name: found for name, found in later.items() if found} == {}
