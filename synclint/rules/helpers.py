"""Small matchers the rule files share (argument lookup, method calls, fix building)."""

from __future__ import annotations

import libcst as cst

from synclint.violation import Confidence


def kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def method_name(call: cst.Call) -> str | None:
    """`x.item()` -> "item"; None for calls that are not method calls."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def split_helper_path(path: str) -> tuple[str, str]:
    """"pkg.mod.func" -> ("pkg.mod", "func")."""
    module, _, name = path.rpartition(".")
    return module, name


def weakest(*confidences: Confidence) -> Confidence:
    return min(confidences)


def device_confidence(value) -> Confidence:
    """How sure we are that `value` (a Placement) is on the device: its own confidence when
    proven, at most MEDIUM when it may also be on the host, LOW when unknown."""
    if value.on_device:
        return value.confidence
    if value.maybe_device:
        return min(value.confidence, Confidence.MEDIUM)
    return Confidence.LOW
