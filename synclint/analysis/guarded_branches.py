"""The branches a finding sits under that a parameter of its function decides, read with
libcst for the tiers (synclint/analysis/tier.py): the libcst half of
synclint/analysis/guards.py, whose vocabulary (conditions, argument kinds) it uses."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from synclint.analysis.guards import FALSE, FALSY, FIELD, GIVEN, IS_NONE, NONE, NOT_NONE, TRUE, TRUTHY
from synclint.analysis.guards import constant_kind, instance_test
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
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance":
        # `isinstance(sizes, list)`, `isinstance(x, torch.Tensor)`
        args = test.args
        if len(args) == 2 and all(a.keyword is None and not a.star for a in args) and isinstance(args[0].value, cst.Name):
            condition = instance_test(_instance_class(args[1].value), positive)
            if condition is not None:
                return [(args[0].value.value, condition)]
        return []
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.left, (cst.Name, cst.Attribute))
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        # `meta.lens is None`: a field, `~lens` (given where the repository never makes it None)
        name = test.left.value if isinstance(test.left, cst.Name) else FIELD + test.left.attr.value
        operator = test.comparisons[0].operator
        if isinstance(operator, cst.Is):
            return [(name, IS_NONE if positive else NOT_NONE)]
        if isinstance(operator, cst.IsNot):
            return [(name, NOT_NONE if positive else IS_NONE)]
    return []


def _instance_class(types: cst.BaseExpression) -> str | None:
    """As guards._instance_class: `list` for `list` or `(list, tuple)`, `tensor` for
    `torch.Tensor` / `Tensor`."""
    if isinstance(types, cst.Tuple):
        names = {_instance_class(e.value) or (e.value.value if isinstance(e.value, cst.Name) else "?") for e in types.elements}
        return "list" if names == {"list", "tuple"} else None
    if isinstance(types, cst.Name):
        return "list" if types.value == "list" else "tensor" if types.value == "Tensor" else None
    if isinstance(types, cst.Attribute) and types.attr.value == "Tensor" and isinstance(types.value, cst.Name) and types.value.value == "torch":
        return "tensor"
    return None


def _assigned_outside(func: cst.FunctionDef, name: str, branch: cst.CSTNode, in_loop: bool = True) -> bool:
    """Whether `func` rebinds `name` where the rebinding can reach `branch`: anywhere but
    inside it where the branch is in a loop, before it otherwise (`if k is None: k = f()`
    `else: k = int(k)` and a clamp after it leave the test's meaning as the caller passed it)."""

    class Finder(cst.CSTVisitor):
        found = False
        reached = False

        def on_visit(self, node: cst.CSTNode) -> bool:
            if self.reached and not in_loop:
                return False  # after the branch: a rebinding there cannot change its test
            return super().on_visit(node)

        def visit_If(self, node: cst.If) -> bool:
            if node is branch:
                self.reached = True
                return False
            return True

        def visit_IfExp(self, node: cst.IfExp) -> bool:
            if node is branch:
                self.reached = True
                return False
            return True

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
        value = default.evaluated_value
        return constant_kind(value) if isinstance(value, str) else TRUE if value else FALSE
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
    locals_of_fields: dict[str, str] | None = None
    in_loop = False
    for i in range(start + 1, len(stack) - 1):
        node, child = stack[i], stack[i + 1]
        if isinstance(node, (cst.For, cst.While)) and child is node.body:
            in_loop = True
        if isinstance(node, (cst.If, cst.IfExp)):
            if child is node.body:
                pairs = _requirements(node.test, True)
            elif child is node.orelse:
                pairs = _requirements(node.test, False)
            else:
                continue
            for name, condition in pairs:
                if name in own:
                    if not _assigned_outside(func, name, node, in_loop):
                        found.append((name, condition))
                elif name[:1] == FIELD:
                    found.append((name, condition))
                else:  # a local bound once to a field (`lens = meta.lens`, then `if lens is None:`)
                    if locals_of_fields is None:
                        locals_of_fields = _field_locals(func)
                    if name in locals_of_fields:
                        found.append((FIELD + locals_of_fields[name], condition))
    return func, found


def _field_locals(func: cst.FunctionDef) -> dict[str, str]:
    """The names `func` binds once, to a field (`lens = meta.lens`), and nothing else."""

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.count: dict[str, int] = {}
            self.field: dict[str, str] = {}

        def _bind(self, target, value=None) -> None:
            for n in _targets(target):
                if isinstance(n, cst.Name):
                    self.count[n.value] = self.count.get(n.value, 0) + (1 if value is not None else 2)
                    if isinstance(value, cst.Attribute) and n is target:
                        self.field[n.value] = value.attr.value

        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                self._bind(t.target, node.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._bind(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._bind(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self._bind(node.target)

        def visit_For(self, node: cst.For) -> None:
            self._bind(node.target)

        def visit_Param(self, node: cst.Param) -> None:
            self._bind(node.name)

    finder = Finder()
    visit(func.body, finder)
    return {name: attr for name, attr in finder.field.items() if finder.count.get(name) == 1}


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
