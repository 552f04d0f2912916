"""Walks of an `ast` tree for the repository index (synclint/repo/ and the readers it calls:
synclint/analysis/guards.py and the modules beside it, synclint/analysis/coldcode.py).

`walk(node)` gives what `ast.walk(node)` gives, in the same order (breadth first, the node
itself first), at about twice the speed. A summary reads each function many times over (its
bindings, the branches its parameters decide, the calls made on them, its destinations, the
classes it uses, ...), so while a summary is made (`with keeping():`, in `repo.summarize`)
the walk of a scope (a module, a class, a function, a lambda) is kept and handed out again.
Smaller nodes are walked afresh each time: their walks are cheap, and often stopped early.
Outside a summary nothing is kept.
"""

from __future__ import annotations

import ast
from collections import deque
from contextlib import contextmanager

_FIELDS: dict[type, tuple] = {}
_SCOPES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# id -> (the node, its walk): the node is kept so that its id is not reused while it is here.
_KEPT: dict[int, tuple[ast.AST, list[ast.AST]]] = {}
_MOST_KEPT = 8192  # scopes kept at once: a module of more is walked again past this
_keeping = False
_KIDS = "_synclint_kids"  # the attribute a node's children are kept in while walks are kept


def children(node: ast.AST):
    """`ast.iter_child_nodes(node)`, in the same order."""
    kids = getattr(node, _KIDS, None) if _keeping else None
    if kids is not None:
        return iter(kids)
    return _children(node)


def _children(node: ast.AST):
    kind = type(node)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = kind._fields
    for name in names:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            yield value
        elif type(value) is list:
            for item in value:
                if isinstance(item, ast.AST):
                    yield item


def _fresh(node: ast.AST):
    # The field loop of `children`, written out: a generator call per node would cost about
    # what this walk saves over `ast.walk`.
    todo = deque([node])
    fields = _FIELDS
    node_type = ast.AST
    while todo:
        node = todo.popleft()
        kind = type(node)
        names = fields.get(kind)
        if names is None:
            names = fields[kind] = kind._fields
        for name in names:
            value = getattr(node, name, None)
            if isinstance(value, node_type):
                todo.append(value)
            elif type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        todo.append(item)
        yield node


def _fresh_kept(node: ast.AST):
    # `_fresh` while a summary is made: each node's children are listed once, kept on the
    # node (`_KIDS`), and every later walk through it reads the list.
    todo = deque([node])
    while todo:
        node = todo.popleft()
        kids = getattr(node, _KIDS, None)
        if kids is None:
            kids = list(_children(node))
            setattr(node, _KIDS, kids)
        todo.extend(kids)
        yield node


def walk(node: ast.AST):
    """Every node under `node` (itself included), breadth first, as `ast.walk`."""
    if not _keeping:
        return _fresh(node)
    if not isinstance(node, _SCOPES):
        return _fresh_kept(node)
    kept = _KEPT.get(id(node))
    if kept is not None and kept[0] is node:
        return kept[1]
    nodes = list(_fresh_kept(node))
    if len(_KEPT) < _MOST_KEPT:
        _KEPT[id(node)] = (node, nodes)
    return nodes


@contextmanager
def keeping():
    """Keep the walks of scopes inside the block (one module's summary); drop them after."""
    global _keeping
    _keeping = True
    try:
        yield
    finally:
        _keeping = False
        _KEPT.clear()
