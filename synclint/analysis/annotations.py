"""What a type annotation says about where a value lives.

Only annotations that decide a place count: `list[int]`, `int`, `np.ndarray` are host data;
`torch.Tensor` is a tensor whose place is unknown (host or device, low confidence). Anything
else (`str`, a project class, `Any`) says nothing and gives None.
"""

from __future__ import annotations

import libcst as cst

from synclint.analysis.imports import ImportTable, dotted_name
from synclint.analysis.values import Evidence, Place, Placement, placed
from synclint.violation import Confidence

_SCALARS = frozenset({"int", "float", "bool", "complex"})
_SEQUENCES = frozenset({"list", "tuple", "List", "Tuple", "Sequence", "MutableSequence", "Iterable"})
_NUMPY = frozenset({"numpy.ndarray", "numpy.typing.NDArray", "numpy.typing.ArrayLike"})
_TENSOR = frozenset({"torch.Tensor", "torch.LongTensor", "torch.FloatTensor", "torch.BoolTensor", "torch.IntTensor"})
# Wrappers that keep the meaning of their argument (`Optional[torch.Tensor]`).
_WRAPPERS = frozenset({"Optional", "Final", "Annotated"})


def annotation_placement(
    annotation: cst.Annotation | None, imports: ImportTable, where: cst.CSTNode | None = None
) -> Placement | None:
    """What `annotation` says; `where` is the node the evidence points at (the parameter)."""
    if annotation is None:
        return None
    return _placement(annotation.annotation, imports, where or annotation.annotation)


def _placement(expr: cst.BaseExpression, imports: ImportTable, where: cst.CSTNode) -> Placement | None:
    if isinstance(expr, cst.SimpleString):  # "torch.Tensor" as a forward reference
        try:
            text = expr.evaluated_value
            expr = cst.parse_expression(text) if isinstance(text, str) else expr
        except Exception:  # noqa: BLE001 - not an expression: says nothing
            return None
        if isinstance(expr, cst.SimpleString):
            return None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        # `torch.Tensor | None`: None adds no place; two types with different places say nothing.
        sides = [s for s in (expr.left, expr.right) if not (isinstance(s, cst.Name) and s.value == "None")]
        if len(sides) == 1:
            return _placement(sides[0], imports, where)
        return None
    head = expr.value if isinstance(expr, cst.Subscript) else expr
    name = dotted_name(head)
    if name is None:
        return None
    qual = imports.qualname(head) or name
    last = name.split(".")[-1]
    if isinstance(expr, cst.Subscript) and last in _WRAPPERS:
        first = expr.slice[0].slice if expr.slice else None
        return _placement(first.value, imports, where) if isinstance(first, cst.Index) else None
    if qual in _TENSOR or name in ("Tensor", "torch.Tensor"):
        return Placement(
            frozenset({Place.HOST, Place.DEVICE}),
            Confidence.LOW,
            (Evidence(where, "annotated as a tensor; where it lives is not said", "host or device tensor"),),
        )
    if qual in _NUMPY or name in ("np.ndarray", "npt.NDArray", "NDArray"):
        return placed(Place.NUMPY, Confidence.HIGH, where, "annotated as a numpy array")
    if name in _SCALARS:
        return placed(Place.SCALAR, Confidence.HIGH, where, f"annotated as `{name}`")
    if last in _SEQUENCES:
        return placed(Place.SEQUENCE, Confidence.HIGH, where, f"annotated as `{name}`")
    return None
