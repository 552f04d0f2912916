from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.analysis.sources import SEQUENCE_DISPLAYS
from synclint.apis.tensor_members import TENSOR_MEMBERS
from synclint.apis.torch_api import (
    CLAMP_FUNCTIONS,
    NUMBER_ARGUMENT_FUNCTIONS,
    NUMBER_ARGUMENT_METHODS,
    TENSOR_METHOD_KEYWORDS,
    TENSOR_METHOD_PARAMETERS,
)
from synclint.rules.base import Rule
from synclint.rules.helpers import (
    DEVICE_ORIGIN_TRIGGERS,
    device_confidence,
    dtype_kind,
    method_name,
    named_like_a_vector,
    positional,
    tensor_ndim,
)
from synclint.violation import Confidence


class TensorAsPythonNumber(Rule):
    """Flags a device tensor passed where PyTorch reads a Python number: sizes, fill values,
    `clamp` bounds, and a 0-dim device tensor used as an index.

    ## What it does
    Reports a value that may be a device tensor in an argument that PyTorch reads as a
    Python number:
    - sizes and counts: `torch.empty(t)`, `torch.zeros((n, t))`, `torch.full((t,), v)`,
      `torch.arange(t)`, `torch.randint(0, t, ...)`, `F.interpolate(x, size=(h, w))`,
      `F.pad(x, (0, t))`, `x.reshape(t, -1)`, `x.view(t)`, `x.repeat(t, 1)`,
      `x.expand(t, d)`, `x.new_zeros(t)`, `x.narrow(0, s, t)`, `x.topk(t)`;
    - fill values: `torch.full(shape, t)`, `x.new_full(shape, t)`;
    - `clamp`/`clip` bounds when the other bound is a Python number (`torch.clamp(x, 0, t)`);
    - the count of a repeated list: `[chunk] * t.sum()` (Python asks the tensor for an
      integer);
    - indices: `weight[t]` where `t` is a 0-dim device tensor (an element `lens[i]` of a 1-D
      tensor, a whole reduction `scores.argmax()`, the element of a loop over a 1-D tensor,
      `row[0]` of a row of `nonzero()`), read or written, whether the indexed tensor is on
      the device or the host.
    Any of these may be a parameter annotated `int`/`float` to which a caller in the
    repository passes the element of a loop over a device tensor, an element `counts[rank]`
    of one or a whole reduction of one (`self.rotary_pos_emb(pids.max() + 1)`, reaching
    `forward(self, seqlen: int)` of the submodule's class, whose `torch.arange(seqlen)` is
    reported).
    Which arguments are read as numbers is a table (`synclint/apis/torch_api.py`).
    `range(t)` and `int(t)` are SL203's, slice bounds `x[:t]` SL304's.

    ## Why it stalls
    PyTorch turns the tensor into a number with `aten._local_scalar_dense`, the op behind
    `.item()` (checked for every table entry with a dispatch trace in the tests): for a
    device tensor that is a copy to the host that waits for every queued kernel. Measured on
    an H200: `torch.clamp(x, 0, t0)` bounds, `torch.full(shape, t0)`, `torch.empty(t0)`,
    `torch.arange(t0)`, `F.interpolate(size=(h0, w0))` (61 ms) and indexing a tensor with a
    0-dim device tensor (`weight[expert_idx]`) each waited for the whole GPU queue. A host
    table indexed by the device timestep of a denoising loop (a DDIM scheduler's
    `self.alphas_cumprod[timestep]`, `step(..., timestep: int, ...)` called from
    `for t in scheduler.timesteps:`) synced at each step in a trace on an H200. A
    tensor bound of `clamp` with no Python-number bound (`torch.clamp(x, min=t)`) runs the
    Tensor overload on the device and is not flagged, nor is a 1-D index tensor (`x[idx]`,
    a gather).

    ## Example
    ```python
    import torch

    def forward(self, hidden_states, router_logits):
        expert_ids = router_logits.cuda().argmax(dim=-1).unique()
        out = torch.zeros_like(hidden_states)
        for expert_id in expert_ids:
            out += hidden_states @ self.expert_weights[expert_id]
        return out
    ```

    ## Use instead
    Read the values once, as a list, then index with Python integers:
    ```python
    import torch

    def forward(self, hidden_states, router_logits):
        expert_ids = router_logits.cuda().argmax(dim=-1).unique()
        out = torch.zeros_like(hidden_states)
        for expert_id in expert_ids.tolist():
            out += hidden_states @ self.expert_weights[expert_id]
        return out
    ```
    Better, keep sizes on the host where they were computed (the scheduler's lengths), use
    tensor bounds on both sides of `clamp`, or index with the tensor as a 1-D gather.

    ## Fix safety
    No fix: where a host copy of the number comes from is a design decision.

    ## Known false positives
    A tensor that is on the host at run time (the read is then free). An element of a value
    whose placement is not known but whose name says per-request vector
    (`torch.empty(kv_indptr[-1])`) is reported at `low` confidence (hidden by default). An index whose number of dimensions is
    not visible is not reported (a 1-D index gathers on the device). A method named like a
    Tensor method on an object not known to be a tensor is left out where the call does not
    fit the Tensor method's signature (`moe.topk(hidden_states, router_logits, **kw)`, a
    kernel launcher's `.topk(input, values, indices, begin, end)`), or where the function
    reads members no tensor has on the same object (`fusion.router(h)`, then
    `fusion.topk(h, logits)`): it is another API.
    """

    code = "SL208"
    name = "tensor-as-python-number"
    summary = "a device tensor where PyTorch reads a Python number (size, fill, bound, index)"
    triggers = (*NUMBER_ARGUMENT_FUNCTIONS, *NUMBER_ARGUMENT_METHODS, *CLAMP_FUNCTIONS, "interpolate", "pad", *DEVICE_ORIGIN_TRIGGERS)
    device_only = True
    device_sites = ("numbers", "mask")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func) or ""
        if qual.startswith("torch."):
            name = qual[6:]
            spec = NUMBER_ARGUMENT_FUNCTIONS.get(name)
            shown = f"torch.{name}()"
            if name in CLAMP_FUNCTIONS:
                self._clamp(node, positional(node)[1:], shown, ctx)
                return
        else:
            name = method_name(node)
            if name is None or qual.startswith(("numpy.", "math.")):
                return
            owner = node.func.value
            if isinstance(owner, cst.Name) and owner.value in ("self", "cls"):
                # `self.topk(hidden_states, router_logits)`: a method or submodule of the
                # object itself, not `Tensor.topk` (a module is not a tensor).
                return
            spec = NUMBER_ARGUMENT_METHODS.get(name)
            if spec is not None and not _fits_tensor_method(node, name, ctx):
                return
            shown = f".{name}()"
            if name in CLAMP_FUNCTIONS:
                self._clamp(node, positional(node), shown, ctx)
                return
        if spec is None:
            return
        positions, keywords = spec
        args = positional(node)
        values = [a.value for i, a in enumerate(args) if positions == "*" or i in positions]
        values += [a.value for a in node.args if a.keyword is not None and a.keyword.value in keywords]
        self._report_first(node, _numbers(values), f"`{shown}` reads this argument as a Python number", ctx)

    def _clamp(self, node: cst.Call, bounds: list[cst.Arg], shown: str, ctx) -> None:
        values = [a.value for a in bounds]
        values += [a.value for a in node.args if a.keyword is not None and a.keyword.value in ("min", "max")]
        values = [v for v in values if not (isinstance(v, cst.Name) and v.value == "None")]
        numbers = [v for v in values if ctx.placement(v).is_(Place.SCALAR)]
        if numbers and len(values) > len(numbers):
            # `min=torch.tensor(-30.0, device=d)` is SL104's (a tensor built only to be a bound).
            rest = [v for v in values if v not in numbers and not _scalar_tensor_call(v, ctx)]
            self._report_first(node, rest, f"`{shown}` with a Python-number bound reads the tensor bound as a number", ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if not isinstance(node.operator, cst.Multiply):
            return
        if isinstance(node.left, SEQUENCE_DISPLAYS):
            count = node.right
        elif isinstance(node.right, SEQUENCE_DISPLAYS):
            count = node.left
        else:
            return
        value = ctx.placement(count)
        if not value.maybe_device:
            return
        ctx.report(
            self,
            node,
            "repeating a list reads the count as a Python number: a device tensor there is copied to the host, waiting for all queued GPU work",
            confidence=device_confidence(value),
            placement=value,
        )

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                continue
            index = element.slice.value
            if isinstance(index, (cst.Integer, cst.SimpleString, cst.Name)) and getattr(index, "value", None) in ("None", "Ellipsis"):
                continue
            value = ctx.placement(index)
            if not value.maybe_device or tensor_ndim(index, ctx) != 0 or dtype_kind(index, ctx) == "bool":
                continue
            ctx.report(
                self,
                node,
                "a 0-dim device tensor used as an index is read back as a Python integer (like `.item()`)",
                confidence=device_confidence(value),
                placement=value,
            )
            return

    def _report_first(self, node: cst.Call, values, what: str, ctx) -> None:
        for expr in values:
            value = ctx.placement(expr)
            if value.maybe_device:
                confidence = device_confidence(value)
            elif not value.known and isinstance(expr, cst.Subscript) and named_like_a_vector(expr.value):
                confidence = Confidence.LOW  # `torch.empty(kv_indptr[-1])`: an element of an unplaced vector
            else:
                continue
            ctx.report(
                self,
                node,
                f"{what}: a device tensor there is copied to the host, waiting for all queued GPU work",
                confidence=confidence,
                placement=value,
            )
            return


def _scalar_tensor_call(expr, ctx) -> bool:
    return isinstance(expr, cst.Call) and (ctx.qualname(expr.func) or "") in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor")


def _numbers(values):
    """The number expressions among `values`: the elements of a size tuple or list too."""
    out = []
    for value in values:
        if isinstance(value, (cst.Tuple, cst.List)):
            out.extend(e.value for e in value.elements if not isinstance(e, cst.StarredElement))
        elif not isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
            out.append(value)
    return out


def _fits_tensor_method(node: cst.Call, name: str, ctx) -> bool:
    """Whether `owner.<name>(...)` can be the Tensor method: a call with more positional
    arguments than its signature takes, a keyword it lacks, or (on an object not known to be a
    device tensor) a device tensor in a parameter that takes a dimension, a flag or a size, or
    a `**kwargs` spread (`dispatch(rows).topk(input, values, out_idx, begin, end)`,
    `moe.topk(hidden_states, router_logits, **topk_kwargs)`) is another object's method."""
    parameters = TENSOR_METHOD_PARAMETERS.get(name)
    if parameters is None:
        return True
    args = positional(node)
    if len(args) > len(parameters):
        return False
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value not in parameters and arg.keyword.value not in TENSOR_METHOD_KEYWORDS:
            return False
    if ctx.placement(node.func.value).maybe_device:
        return True
    owner = node.func.value
    if isinstance(owner, cst.Name) and _other_members_used(owner.value, ctx):
        return False  # `moe.router(h)`, then `moe.topk(h, logits)`: an object with members no tensor has
    if any(arg.star == "**" for arg in node.args):
        return False  # `moe.topk(hidden_states, logits, **topk_kwargs)`: options of another API
    positions = NUMBER_ARGUMENT_METHODS[name][0]
    others = [a.value for i, a in enumerate(args) if positions != "*" and i not in positions]
    return not any(ctx.placement(value).maybe_device for value in others)


class _Members(cst.CSTVisitor):
    """The attributes read on a name in one scope (`moe.router`, `moe.experts`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.found: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == self.name:
            self.found.add(node.attr.value)


def _other_members_used(name: str, ctx) -> bool:
    """Whether the scope reads, on the object a name holds, a member no tensor has (neither a
    `torch.Tensor` attribute nor a dunder): the object is something else, and its method of a
    tensor method's name is its own."""
    scope = ctx.function
    if scope is None:
        return False
    members = _Members(name)
    scope.visit(members)
    return any(m not in TENSOR_MEMBERS and not m.startswith("__") for m in members.found)

