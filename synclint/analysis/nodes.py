"""A node's children, as libcst's `CSTNode.children` gives them (every child node, in source
order), without its cost: libcst collects them by rebuilding the node through its generic
visit, which validates a new node each time; in a walk over a large module that was most of
the walk. The order of each node type's fields is learnt once from libcst itself."""

from __future__ import annotations

import libcst as cst

# The nodes with a scope of their own, which a walk of one function does not go into. A test
# `type(node) in OWN_SCOPES` is exact: libcst's node classes have no subclasses, and it is
# much cheaper than `isinstance` (they derive from abstract base classes).
OWN_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})

_ORDER: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}

# Memos of what one file's nodes say, keyed by `id(node)` and holding the node (so that the id
# is not reused while the entry lives). Each holds its nodes' subtrees alive: they are emptied
# once the file is linted (`forget_file`), or a worker would keep the trees of hundreds of
# files it linted before.
_PER_FILE: list[dict] = []


def per_file_memo() -> dict:
    """A new memo of one file's nodes, emptied by `forget_file`."""
    memo: dict = {}
    _PER_FILE.append(memo)
    return memo


def forget_file() -> None:
    """Empty every memo of the file just linted (`per_file_memo`)."""
    for memo in _PER_FILE:
        memo.clear()


class _FieldOrder(cst.CSTVisitor):
    """Records the fields libcst visits, in its order, without going into them."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in self.names:
            self.names.append(attribute)


def _is_node(kind: type) -> bool:
    found = _IS_NODE.get(kind)
    if found is None:
        found = _IS_NODE[kind] = isinstance(kind, type) and issubclass(kind, cst.CSTNode)
    return found


_IS_EXPRESSION: dict[type, bool] = {}


def is_expression(kind: type) -> bool:
    """Whether a node type is an expression (`issubclass(kind, cst.BaseExpression)`, kept)."""
    found = _IS_EXPRESSION.get(kind)
    if found is None:
        found = _IS_EXPRESSION[kind] = issubclass(kind, cst.BaseExpression)
    return found


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node.children`: its child nodes in source order."""
    kind = type(node)
    order = _ORDER.get(kind)
    if order is None:
        recorder = _FieldOrder()
        node._visit_and_replace_children(recorder)
        order = _ORDER[kind] = tuple(recorder.names)
    out: list[cst.CSTNode] = []
    for name in order:
        value = getattr(node, name)
        value_type = type(value)
        if value_type is tuple or value_type is list:
            out.extend(child for child in value if _is_node(type(child)))
        elif _is_node(value_type):
            out.append(value)
    return out


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a visitor that only reads (its `visit_<Node>` and
    `leave_<Node>` methods; not the attribute hooks), in libcst's order, without rebuilding
    the nodes it passes."""
    on_visit, on_leave = visitor.on_visit, visitor.on_leave
    pending: list = [(node, False)]
    pop, push = pending.pop, pending.append
    while pending:
        current, leaving = pop()
        if leaving:
            on_leave(current)
            continue
        if on_visit(current):
            push((current, True))
            below = children(current)
            below.reverse()
            pending.extend((child, False) for child in below)
        else:
            on_leave(current)


def always_leaves(body: cst.BaseSuite) -> bool:
    """The block always ends in `return` or `raise` (its last statement)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body] if isinstance(body, cst.SimpleStatementSuite) else []
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return bool(last.body) and isinstance(last.body[-1], (cst.Return, cst.Raise))
    return False


def innermost_function(stack) -> int:
    """The index in `stack` (the nodes from the module down to a finding) of the innermost
    function or lambda around the finding; 0 when there is none."""
    for i in range(len(stack) - 1, -1, -1):
        if type(stack[i]) in (cst.FunctionDef, cst.Lambda):
            return i
    return 0


def inner_statements(stmt: cst.BaseCompoundStatement) -> list[cst.CSTNode]:
    """The statements directly inside a compound statement's blocks: its body, each `except`
    handler's, its `else` (an `elif` as the `if` statement it is) and its `finally`."""
    out = list(getattr(stmt.body, "body", ()))
    for handler in getattr(stmt, "handlers", ()):
        out.extend(getattr(handler.body, "body", ()))
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        out.append(orelse)
    elif orelse is not None:
        out.extend(getattr(orelse.body, "body", ()))
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        out.extend(getattr(final.body, "body", ()))
    return out
