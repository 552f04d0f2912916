"""Lay out the code a fix writes so that it keeps the file's line structure.

A fix builds its replacement as a libcst node (synclint/rules/*), which renders on one line:
`torch.tensor(\\n    data,\\n    device=d,\\n)` became a 200-character line. Here the
replacement is broken, black-style, inside the brackets it owns (always valid Python: a line
break inside brackets joins the lines), when the call it replaces spanned several lines or
when it pushes its line more than SLACK characters past the file's line length:

    x = (
        torch.as_tensor(data).pin_memory()
        if torch.cuda.is_available()
        else torch.tensor(data)
    ).to(d, non_blocking=torch.cuda.is_available())

The first bracket of the call chain is opened first (the parenthesised `if`/`else`, or the
inner call), then the outer call's arguments on one line, then one argument a line. The
first layout whose lines all fit is taken.
"""

from __future__ import annotations

import re

import libcst as cst

from synclint.lines import LineIndex, line_length  # noqa: F401 - line_length: re-exported

STEP = "    "
# A fix that pushes its line fewer characters than this past the file's line length (or
# past the line's own length, when longer) leaves it whole: a break inside the replacement
# (`x[:, f(\n    a, b\n)]`) reads worse than a line a few characters long.
SLACK = 16
_TRAILING_COMMENT = re.compile(r"\s*#[^'\"]*$")
class Layout:
    """The file's text, read once per file: where each replacement sits on its line."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = LineIndex(text)
        self._limit: int | None = None

    @property
    def limit(self) -> int:
        if self._limit is None:
            self._limit = line_length(self.text, self.index)
        return self._limit

    def fit(self, node: cst.CSTNode, content: str, rng, render, block_indent: str = "", old: cst.CSTNode | None = None) -> str:
        """`content` (`node` rendered by `render(node)`) laid out for the place `rng` (the
        replaced code's range, 0-based columns) of the file; `block_indent`: the indentation
        the code generator puts before each continuation line (the enclosing blocks');
        `old`: the replaced node (one argument a line when its last argument has a comma)."""
        if not isinstance(node, cst.Call):
            return content
        first = _strip_end(self.index.line(rng.start.line) or "")
        last = _strip_end(self.index.line(rng.end.line) or "")
        prefix, suffix = first[: rng.start.column], last[rng.end.column :]
        multi_line = rng.start.line != rng.end.line
        if "\n" in content or "\r" in content:
            return content  # the fix kept the call's own line breaks (and comments)
        if not multi_line and _TRAILING_COMMENT.search(suffix):
            # A comment at the end of the line (`# noqa`, `# type: ignore`) belongs to that
            # line: broken, the line it would end would be another one.
            return content
        if not multi_line and _width(prefix, content, suffix) <= max(self.limit, len(first)) + SLACK:
            return content  # fits, or lengthens the line a little (breaking it would read worse)
        lead = first[: len(first) - len(first.lstrip())]
        # continuation lines: the line's own indentation, of which the generator adds the
        # blocks' part
        extra = lead[len(block_indent) :] if lead.startswith(block_indent) else ""
        narrowest = None
        for variant in _variants(node, extra, multi_line and _trailing_comma(old)):
            text = render(variant)
            width = _width(prefix, text, suffix)
            if width <= self.limit:
                return text
            if narrowest is None or width < narrowest[0]:
                narrowest = (width, text)
        if narrowest is None:
            return content
        # Nothing fits: the narrowest layout, where it is narrower (or the original was open)
        if multi_line or narrowest[0] < _width(prefix, content, suffix):
            return narrowest[1]
        return content


def _strip_end(line: str) -> str:
    return line.rstrip("\r\n")


def _lines(prefix: str, content: str, suffix: str) -> list[str]:
    rows = content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    rows[0] = prefix + rows[0]
    rows[-1] = rows[-1] + suffix
    return rows


def _width(prefix: str, content: str, suffix: str) -> int:
    return max(len(row) for row in _lines(prefix, content, suffix))


def _fits(prefix: str, content: str, suffix: str, limit: int) -> bool:
    return _width(prefix, content, suffix) <= limit


# --- the layouts ---------------------------------------------------------------------------


def _break(extra: str) -> cst.ParenthesizedWhitespace:
    """A line break, then the statement's indentation (the code generator's) and `extra`."""
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(), empty_lines=(), indent=True, last_line=cst.SimpleWhitespace(extra)
    )


def _head(call: cst.Call) -> cst.CSTNode | None:
    """The first bracket of the chain `call` ends: a parenthesised expression or the
    innermost call of `a(...).b(...)`; None when `call` is the only one."""
    value = call.func.value if isinstance(call.func, cst.Attribute) else None
    head = None
    while value is not None:
        if value.lpar and isinstance(value, cst.IfExp):
            return value
        if isinstance(value, cst.Call):
            head = value
            value = value.func.value if isinstance(value.func, cst.Attribute) else None
        elif isinstance(value, cst.Attribute):
            value = value.value
        else:
            break
    return head


def _open_ifexp(node: cst.IfExp, outer: str, deep: bool = False) -> cst.IfExp:
    """`(\n    body\n    if test\n    else orelse\n)`; `deep`: the first call of each branch's
    chain opened too."""
    inner = outer + STEP
    if deep:
        node = node.with_changes(body=_open_head(node.body, inner), orelse=_open_head(node.orelse, inner))
    return node.with_changes(
        lpar=[cst.LeftParen(whitespace_after=_break(inner))],
        whitespace_before_if=_break(inner),
        whitespace_before_else=_break(inner),
        rpar=[cst.RightParen(whitespace_before=_break(outer))],
    )


def _open_call(call: cst.Call, outer: str, one_per_line: bool) -> cst.Call:
    """The arguments on a line of their own (or one a line, with a trailing comma). A call
    already laid out over lines (its whitespace may hold comments) is kept as it is."""
    if not call.args or not _on_one_line(call):
        return call
    if one_per_line and any(isinstance(arg.value, cst.GeneratorExp) and not arg.value.lpar for arg in call.args):
        one_per_line = False  # `f(x for x in y,)` does not parse
    inner = outer + STEP
    args = []
    for i, arg in enumerate(call.args):
        last = i == len(call.args) - 1
        arg = arg.with_changes(whitespace_after_arg=cst.SimpleWhitespace(""))
        if one_per_line:
            comma = cst.Comma(whitespace_after=_break(outer if last else inner))
        elif last:
            arg = arg.with_changes(whitespace_after_arg=_break(outer))
            comma = cst.MaybeSentinel.DEFAULT
        else:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args.append(arg.with_changes(comma=comma))
    return call.with_changes(args=args, whitespace_before_args=_break(inner))


def _on_one_line(call: cst.Call) -> bool:
    spaces = [call.whitespace_before_args]
    for arg in call.args:
        spaces.append(arg.whitespace_after_arg)
        if isinstance(arg.comma, cst.Comma):
            spaces += [arg.comma.whitespace_before, arg.comma.whitespace_after]
    return all(isinstance(space, cst.SimpleWhitespace) for space in spaces)


def _open_head(expr: cst.BaseExpression, outer: str) -> cst.BaseExpression:
    """`expr` with the first call of its chain (`f(...)` of `f(...).g()`) opened."""
    if not isinstance(expr, cst.Call):
        return expr
    head = _head(expr) or expr
    if not isinstance(head, cst.Call):
        return expr
    opened = _open_call(head, outer, False)
    return opened if head is expr else expr.visit(_Replace(head, opened))


class _Replace(cst.CSTTransformer):
    def __init__(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
        self.old, self.new = old, new

    def on_leave(self, original_node, updated_node):
        return self.new if original_node is self.old else updated_node


def _trailing_comma(node) -> bool:
    """A call written one argument a line (its last argument has a comma), or one whose
    inner call is (`torch.tensor(\n    x,\n).to(d)`)."""
    while isinstance(node, cst.Call):
        if node.args and isinstance(node.args[-1].comma, cst.Comma):
            return True
        node = node.func.value if isinstance(node.func, cst.Attribute) else None
    return False


def _variants(call: cst.Call, extra: str, one_per_line: bool = False):
    """Ever more open layouts of `call`; `extra`: the indentation of its first line beyond
    the blocks' (a call on a continuation line of a bracket); `one_per_line`: the replaced
    call was written one argument a line, and so is its replacement."""
    head = _head(call)
    if one_per_line:
        if head is None:
            yield _open_call(call, extra, True)
        elif isinstance(head, cst.Call):
            yield call.visit(_Replace(head, _open_call(head, extra, True)))
        else:
            yield call.visit(_Replace(head, _open_ifexp(head, extra)))
            yield call.visit(_Replace(head, _open_ifexp(head, extra, deep=True)))
    opened_head = None
    if head is not None:
        opened_head = _open_ifexp(head, extra) if isinstance(head, cst.IfExp) else _open_call(head, extra, False)
        with_head = call.visit(_Replace(head, opened_head))
        yield with_head
        if isinstance(head, cst.IfExp):
            yield call.visit(_Replace(head, _open_ifexp(head, extra, deep=True)))
    else:
        with_head = call
    yield _open_call(with_head, extra, False)
    if head is not None and isinstance(head, cst.Call):
        yield call.visit(_Replace(head, _open_call(head, extra, True)))
    yield _open_call(with_head, extra, True)
