"""Positions of a few nodes, at the cost of generating the module's code once.

libcst's PositionProvider tracks the line and column after every token and stores a range
for every node of the module: about six times the cost of generating the code, and about
twice the cost of parsing it. A file with findings needs the positions of a handful of
nodes (the flagged ones, their statements, the evidence, the nodes a fix replaces). This
generates the code once, notes the token index where each wanted node starts and ends, and
turns only those indices into lines and columns. The ranges are the same as
PositionProvider's (syntactic: a statement starts after its leading comments), which
tests/test_positions.py checks node by node.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Iterable

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

from synclint.lines import LINE_BREAK

# The line breaks of libcst and of Python's tokenizer: the ones every row here counts.
_NEWLINE = LINE_BREAK


class _MarkingState(CodegenState):
    """Code generation that records token indices for the wanted nodes only."""

    def __init__(self, module: cst.Module, wanted: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.opened: dict[int, int] = {}
        self.marks: dict[int, tuple[int, int]] = {}
        self.syntactic: set[int] = set()

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self.opened[id(node)] = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted and key not in self.syntactic:  # whitespace-inclusive, as libcst
            self.marks[key] = (self.opened[key], len(self.tokens))

    def pop_trailing_newline(self) -> None:
        """Keep it: libcst's positions count the newline a file without one loses at the end."""

    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ):
        # Called for most nodes: a shared do-nothing context for the nodes nobody asked
        # about (a generator-based context manager per node costs more than the codegen).
        if id(node) not in self.wanted:
            return _NOTHING
        # The range may be hoisted from children (a compound statement ends where its last
        # statement does): want them too, before they are generated.
        for child in (start_node, end_node):
            if child is not None:
                self.wanted.add(id(child))
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """Records a wanted node's syntactic range around the generation of its code."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _MarkingState, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None:
            return  # let the error out as it is (the marks of unfinished children are missing)
        state = self.state
        start, end = self.start, len(state.tokens)
        if self.start_node is not None:
            start = state.marks[id(self.start_node)][0]
        if self.end_node is not None:
            end = state.marks[id(self.end_node)][1]
        state.marks[id(self.node)] = (start, end)
        state.syntactic.add(id(self.node))


_NOTHING = nullcontext()


class NodePositions:
    """`positions[node]` -> CodeRange (1-based lines, 0-based columns, as libcst's)."""

    def __init__(self, ranges: dict[int, CodeRange], keep_alive: list[cst.CSTNode]) -> None:
        self._ranges = ranges
        self._nodes = keep_alive  # ids are only unique while the nodes live

    def __contains__(self, node: object) -> bool:
        return node is not None and id(node) in self._ranges

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        return self._ranges[id(node)]


def node_positions(module: cst.Module, nodes: Iterable[cst.CSTNode | None]) -> NodePositions:
    wanted_nodes = [n for n in nodes if n is not None]
    state = _MarkingState(module, {id(n) for n in wanted_nodes})
    module._codegen(state)
    indices = sorted({i for pair in state.marks.values() for i in pair})
    where: dict[int, CodePosition] = {}
    line, column, done = 1, 0, 0
    tokens = state.tokens
    for index in indices:
        text = "".join(tokens[done:index])
        breaks = _NEWLINE.findall(text)
        if breaks:
            line += len(breaks)
            column = len(text) - (text.rfind(breaks[-1]) + len(breaks[-1]))
        else:
            column += len(text)
        done = index
        where[index] = CodePosition(line, column)
    ranges = {key: CodeRange(where[start], where[end]) for key, (start, end) in state.marks.items()}
    return NodePositions(ranges, wanted_nodes)
