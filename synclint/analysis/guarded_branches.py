"""The branches a finding sits under that a parameter of its function decides, read with
libcst for the tiers (synclint/analysis/tier.py): the libcst half of
synclint/analysis/guards.py, whose vocabulary (conditions, argument kinds) it uses."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from synclint.analysis.guards import FALSE, FALSY, GIVEN, IS_NONE, NONE, NOT_NONE, TRUE, TRUTHY
from synclint.analysis.nodes import visit


def _requirements(test: cst.BaseExpression, positive: bool) -> list[tuple[str, str]]:
    """(name, condition) that hold when `test` is `positive`."""
    if isinstance(test, cst.Name):
        return [(test.value, TRUTHY if positive else FALSY)]
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _requirements(test.expression, not positive)
    if isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.And) and positive:
            return _requirements(test.left, True) + _requirements(test.right, True)
        if isinstance(test.operator, cst.Or) and not positive:
            return _requirements(test.left, False) + _requirements(test.right, False)
        return []
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.left, cst.Name)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        operator = test.comparisons[0].operator
        if isinstance(operator, cst.Is):
            return [(test.left.value, IS_NONE if positive else NOT_NONE)]
        if isinstance(operator, cst.IsNot):
            return [(test.left.value, NOT_NONE if positive else IS_NONE)]
    return []


def _assigned_outside(func: cst.FunctionDef, name: str, branch: cst.CSTNode) -> bool:
    """Whether `func` rebinds `name` anywhere but inside `branch`."""

    class Finder(cst.CSTVisitor):
        found = False

        def visit_If(self, node: cst.If) -> bool:
            return node is not branch

        def visit_IfExp(self, node: cst.IfExp) -> bool:
            return node is not branch

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self.found = self.found or any(isinstance(n, cst.Name) and n.value == name for n in _targets(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.found = self.found or (isinstance(node.target, cst.Name) and node.target.value == name)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self.found = self.found or (isinstance(node.target, cst.Name) and node.target.value == name and node.value is not None)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self.found = self.found or (isinstance(node.target, cst.Name) and node.target.value == name)

        def visit_For(self, node: cst.For) -> None:
            self.found = self.found or any(isinstance(n, cst.Name) and n.value == name for n in _targets(node.target))

    finder = Finder()
    visit(func.body, finder)  # synclint/analysis/nodes.py: libcst's order, no rebuilt nodes
    return finder.found


def _targets(node: cst.CSTNode):
    if isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            yield from _targets(element.value)
    else:
        yield node


def function_parameters(func: cst.FunctionDef) -> dict[str, tuple[int, str]]:
    """As `parameters`, from libcst."""
    params = func.params
    out: dict[str, tuple[int, str]] = {}
    position = 0
    for param in [*params.posonly_params, *params.params]:
        name = param.name.value
        if name in ("self", "cls") and position == 0 and not out:
            continue
        out[name] = (position, _cst_default_kind(param.default))
        position += 1
    for param in params.kwonly_params:
        out[param.name.value] = (-1, _cst_default_kind(param.default))
    return out


def _cst_default_kind(default) -> str:
    if default is None:
        return "-"
    if isinstance(default, cst.Name) and default.value in ("None", "True", "False"):
        return {"None": NONE, "True": TRUE, "False": FALSE}[default.value]
    if isinstance(default, (cst.Integer, cst.Float)):
        return TRUE if default.evaluated_value else FALSE
    if isinstance(default, cst.SimpleString):
        return TRUE if default.evaluated_value else FALSE
    return GIVEN


def branch_conditions(stack: Sequence[cst.CSTNode]) -> tuple[cst.FunctionDef | None, list[tuple[str, str]]]:
    """The innermost function around the end of `stack`, and the (parameter, condition)
    pairs its branches put the finding under: the body of `if p is None:` needs `p` None,
    the `else` of `x if p is not None else y` too, the body of `if wait:` a true `wait`.
    Only parameters the function does not rebind outside the branch."""
    start = None
    for i in range(len(stack) - 1, -1, -1):
        if isinstance(stack[i], cst.FunctionDef):
            start = i
            break
        if isinstance(stack[i], cst.Lambda):
            return None, []
    if start is None:
        return None, []
    func = stack[start]
    own = function_parameters(func)
    found: list[tuple[str, str]] = []
    for i in range(start + 1, len(stack) - 1):
        node, child = stack[i], stack[i + 1]
        if isinstance(node, (cst.If, cst.IfExp)):
            if child is node.body:
                pairs = _requirements(node.test, True)
            elif child is node.orelse:
                pairs = _requirements(node.test, False)
            else:
                continue
            found.extend((name, condition) for name, condition in pairs if name in own and not _assigned_outside(func, name, node))
    return func, found


def shape_of(func: cst.FunctionDef) -> str:
    """`2|x,hint,wait|x|ak`: how many positional parameters a function takes (without
    `self`), every name it accepts (positional ones first, in order), those without a
    default, and whether it takes `*args` (a) and `**kwargs` (k)."""
    own = function_parameters(func)
    count = sum(1 for position, _ in own.values() if position >= 0)
    params = func.params
    stars = ("a" if isinstance(params.star_arg, cst.Param) else "") + ("k" if params.star_kwarg is not None else "")
    required = ",".join(name for name, (_, default) in own.items() if default == "-")
    return f"{count}|{','.join(own)}|{required}|{stars}"
