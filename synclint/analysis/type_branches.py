"""Branches a type test closes: the body of `if not isinstance(x, torch.Tensor):` (or of
`if isinstance(x, list):`, or the `else` of `if isinstance(x, torch.Tensor):`) where the
placement analysis already knows `x` is a tensor before the test never runs.

A function that accepts "a tensor or a list" converts the list in such a branch
(`x = torch.tensor(x, device=d)`, a blocking copy); where every value the code gives `x` is a
tensor, the conversion is dead code, not a sync (read by synclint/context.py for the tiers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from synclint.analysis.flow import tensor_test
from synclint.analysis.nodes import innermost_function
from synclint.analysis.values import Confidence, Placement

# Classes no tensor is an instance of: a test that one of them holds fails for a tensor.
_NOT_TENSOR_CLASSES = frozenset({"list", "tuple", "int", "float", "bool", "str", "dict", "numpy.ndarray"})


def _type_test(test: cst.BaseExpression, imports) -> tuple[str, bool] | None:
    """(x, whether the test holds for a tensor) for `isinstance(x, torch.Tensor)` and
    `torch.is_tensor(x)` (`flow.tensor_test`), and for `isinstance(x, classes)` where no
    tensor is an instance of any of the classes (`(list, tuple)`, `(int, float)`)."""
    name = tensor_test(test, imports)
    if name is not None:
        return name, True
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name) and not any(a.star for a in test.args)):
        return None
    types = test.args[1].value
    elements = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    if all(_class_name(e, imports) in _NOT_TENSOR_CLASSES for e in elements):
        return test.args[0].value.value, False
    return None


def _class_name(expr: cst.BaseExpression, imports) -> str | None:
    """A builtin class by its own name (`list`), any other by its dotted name (`numpy.ndarray`)."""
    if isinstance(expr, cst.Name) and expr.value in _NOT_TENSOR_CLASSES:
        return expr.value
    return imports.qualname(expr)


def _fails_for_a_tensor(test: cst.BaseExpression, imports) -> list[str]:
    """The names `x` such that `test` is false whenever `x` is a tensor: `not isinstance(x,
    torch.Tensor)`, `not torch.is_tensor(x)`, `isinstance(x, (list, tuple))`, and those of
    each part of an `and`."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _fails_for_a_tensor(test.left, imports) + _fails_for_a_tensor(test.right, imports)
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    kind = _type_test(test.expression if negated else test, imports)
    # `not isinstance(x, Tensor)` fails for a tensor; `isinstance(x, list)` does too.
    return [kind[0]] if kind is not None and kind[1] == negated else []


def _holds_for_a_tensor(test: cst.BaseExpression, imports) -> list[str]:
    """The names `x` such that `test` holds whenever `x` is a tensor (`isinstance(x,
    torch.Tensor)`, `torch.is_tensor(x)`, `not isinstance(x, list)`): its `else` never runs
    for one."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    kind = _type_test(test.expression if negated else test, imports)
    return [kind[0]] if kind is not None and kind[1] != negated else []


def dead_type_branch(stack: Sequence[cst.CSTNode], imports, env_at: Callable[[cst.CSTNode], dict]) -> str | None:
    """Why the code at the end of `stack` never runs, where a type test around it (inside
    the innermost function) fails for a name the analysis knows is a tensor before the test;
    else None. `env_at(statement)`: the placements before that statement."""
    start = innermost_function(stack)
    for i in range(start, len(stack) - 1):
        node, child = stack[i], stack[i + 1]
        if not isinstance(node, cst.If):
            continue
        if child is node.body:
            names = _fails_for_a_tensor(node.test, imports)
        elif node.orelse is not None and child is node.orelse:
            names = _holds_for_a_tensor(node.test, imports)
        else:
            continue
        for name in names:
            before: Placement | None = env_at(node).get(name)
            if before is not None and before.is_tensor and before.confidence >= Confidence.MEDIUM:
                return (
                    f"in the branch where `{name}` is not a tensor, but `{name}` holds a "
                    f"{before.describe()} before the test: never runs"
                )
    return None
