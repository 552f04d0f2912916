"""synclint's positions for a few nodes are exactly libcst's PositionProvider ranges."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from synclint.positions import node_positions

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "fixtures").rglob("*.py"))[:40] + sorted((ROOT / "synclint").rglob("*.py"))[:20]

ODD_LAYOUTS = {
    "crlf": "import torch\r\n\r\nclass A:\r\n    def f(self, x):\r\n        if x:\r\n            return x.item()  # c\r\n        return (\r\n            x\r\n        )\r\n",
    "comments-and-decorators": "# head\n\n@dec\n# between\ndef f(a,\n      b):\n    '''doc'''\n    return [a,\n            b]\n",
    "no-final-newline": "x = 1\nif x: y = 2; z = 3",
    "unicode": "s = 'héllo wörld'; t = s.upper()\n",
}


class _All(cst.CSTVisitor):
    def __init__(self) -> None:
        self.nodes: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.append(node)
        return True


def _compare(text: str) -> None:
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    collector = _All()
    module.visit(collector)
    # Ask for every other node (not all of them), as the engine asks for a few.
    asked = collector.nodes[::2]
    got = node_positions(module, asked)
    for node in asked:
        assert got[node] == expected[node], (type(node).__name__, cst.Module([]).code_for_node(node)[:60])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_ranges_as_libcst_on_real_files(path):
    _compare(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(ODD_LAYOUTS))
def test_same_ranges_as_libcst_on_odd_layouts(name):
    _compare(ODD_LAYOUTS[name])


def test_nodes_not_asked_for_are_not_computed():
    module = cst.parse_module("a = 1\nb = 2\n")
    first = module.body[0]
    got = node_positions(module, [first])
    assert first in got and module.body[1] not in got
