"""Branches a type test closes: the body of `if not isinstance(x, torch.Tensor):` (or of
`if isinstance(x, list):`, or the `else` of `if isinstance(x, torch.Tensor):`) where the
placement analysis already knows `x` is a tensor before the test never runs.

A function that accepts "a tensor or a list" converts the list in such a branch
(`x = torch.tensor(x, device=d)`, a blocking copy); where every value the code gives `x` is a
tensor, the conversion is dead code, not a sync (read by synclint/context.py for the tiers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from synclint.analysis.values import Confidence, Placement

_TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.Parameter"})
# Classes no tensor is an instance of: a test that one of them holds fails for a tensor.
_NOT_TENSOR_CLASSES = frozenset({"list", "tuple", "int", "float", "bool", "str", "dict", "numpy.ndarray", "np.ndarray"})


def _subject(test: cst.BaseExpression) -> str | None:
    if isinstance(test, cst.Call) and test.args and isinstance(test.args[0].value, cst.Name) and not test.args[0].star:
        return test.args[0].value.value
    return None


def _class_names(types: cst.BaseExpression, qualname) -> list[str] | None:
    """The dotted names of `isinstance`'s second argument (one class or a tuple of them)."""
    elements = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    names = []
    for element in elements:
        if isinstance(element, cst.Name) and element.value in _NOT_TENSOR_CLASSES:
            names.append(element.value)  # a builtin: its own name
            continue
        name = qualname(element)
        if name is None:
            return None
        names.append(name)
    return names


def _fails_for_a_tensor(test: cst.BaseExpression, qualname) -> list[str]:
    """The names `x` such that `test` is false whenever `x` is a tensor: `not isinstance(x,
    torch.Tensor)`, `not torch.is_tensor(x)`, `isinstance(x, (list, tuple))`, and those of
    each part of an `and`."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _fails_for_a_tensor(test.left, qualname) + _fails_for_a_tensor(test.right, qualname)
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    kind = _type_test(test.expression if negated else test, qualname)
    # `not isinstance(x, Tensor)` fails for a tensor; `isinstance(x, list)` does too.
    return [kind[0]] if kind is not None and kind[1] == negated else []


def _holds_for_a_tensor(test: cst.BaseExpression, qualname) -> list[str]:
    """The names `x` such that `test` holds whenever `x` is a tensor (`isinstance(x,
    torch.Tensor)`, `torch.is_tensor(x)`, `not isinstance(x, list)`): its `else` never runs
    for one."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    kind = _type_test(test.expression if negated else test, qualname)
    return [kind[0]] if kind is not None and kind[1] != negated else []


def _type_test(test: cst.BaseExpression, qualname) -> tuple[str, bool] | None:
    """(x, whether the test holds for a tensor) for `isinstance(x, classes)` where the classes
    are all tensor classes or all classes no tensor is, and for `torch.is_tensor(x)`."""
    name = _subject(test)
    if name is None or not isinstance(test, cst.Call):
        return None
    if len(test.args) == 1 and qualname(test.func) == "torch.is_tensor":
        return name, True
    if isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2 and not test.args[1].star:
        classes = _class_names(test.args[1].value, qualname)
        if not classes:
            return None
        if all(c in _TENSOR_CLASSES for c in classes):
            return name, True
        if all(c in _NOT_TENSOR_CLASSES for c in classes):
            return name, False
    return None


def dead_type_branch(stack: Sequence[cst.CSTNode], qualname, env_at: Callable[[cst.CSTNode], dict]) -> str | None:
    """Why the code at the end of `stack` never runs, where a type test around it (inside
    the innermost function) fails for a name the analysis knows is a tensor before the test;
    else None. `env_at(statement)`: the placements before that statement."""
    start = 0
    for i in range(len(stack) - 1, -1, -1):
        if isinstance(stack[i], (cst.FunctionDef, cst.Lambda)):
            start = i
            break
    for i in range(start, len(stack) - 1):
        node, child = stack[i], stack[i + 1]
        if not isinstance(node, cst.If):
            continue
        if child is node.body:
            names = _fails_for_a_tensor(node.test, qualname)
        elif node.orelse is not None and child is node.orelse:
            names = _holds_for_a_tensor(node.test, qualname)
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
