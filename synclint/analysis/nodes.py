"""A node's children, as libcst's `CSTNode.children` gives them (every child node, in source
order), without its cost: libcst collects them by rebuilding the node through its generic
visit, which validates a new node each time; in a walk over a large module that was most of
the walk. The order of each node type's fields is learnt once from libcst itself."""

from __future__ import annotations

import libcst as cst

_ORDER: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}


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
