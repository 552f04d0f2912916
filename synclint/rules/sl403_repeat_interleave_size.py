from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.sl1xx_h2d import helper_names
from synclint.rules.helpers import (
    append_keyword,
    code,
    device_confidence,
    is_int_literal,
    kwarg,
    method_name,
    positional,
    single_unmutated_binding,
    split_helper_path,
)
from synclint.violation import Applicability


# Methods between the host list and `repeats` that keep every value (so the sum is kept).
_VALUE_KEEPING_METHODS = frozenset({"to", "cuda", "pin_memory", "long", "int", "contiguous"})


class RepeatInterleaveSize(Rule):
    """Flags `repeat_interleave` with tensor `repeats` and no `output_size=`.

    ## What it does
    Reports `torch.repeat_interleave(x, repeats)`, `x.repeat_interleave(repeats)` and the
    one-argument `torch.repeat_interleave(repeats)` when `repeats` may be a device tensor
    and `output_size=` is not given.

    ## Why it stalls
    The output's length is `repeats.sum()`, which only the GPU knows: PyTorch reads it back
    to the host to allocate the output, so the host waits for every queued kernel.
    Measured on an H200: `repeat_interleave(x, gpu_repeats)` without `output_size` waited
    for the whole GPU queue (stall ratio ~1.0); with `output_size=n` it did not.

    ## Example
    ```python
    import torch

    def _prepare_inputs(self, req_ids, num_scheduled: list[int], device):
        counts = torch.tensor(num_scheduled, dtype=torch.int32, device=device)
        return torch.repeat_interleave(req_ids, counts)
    ```

    ## Use instead
    ```python
    import torch

    def _prepare_inputs(self, req_ids, num_scheduled: list[int], device):
        counts = torch.tensor(num_scheduled, dtype=torch.int32, device=device)
        return torch.repeat_interleave(req_ids, counts, output_size=sum(num_scheduled))
    ```

    ## Fix safety
    Offered only when `repeats` was built in the same function from a Python list (or
    other host sequence) named `lst` (`torch.tensor(lst, device=...)`, the H2D helper) and
    neither name is rebound or changed in place, so `sum(lst)` is the value `repeats.sum()`
    would read back; the fix adds `output_size=sum(lst)`. Unsafe: a one-element `repeats`
    broadcasts over the whole dimension, and then the true length is `lst[0] * x.size(dim)`,
    not `sum(lst)`; a wrong `output_size` is not checked on the device and gives wrong
    results. Apply it where `repeats` has one entry per element of `x` (the usual case).

    ## Known false positives
    `repeats` on the host with the input on the host. Unknown placements are `low`
    confidence (hidden by default); a Python integer `repeats` is never reported.
    """

    code = "SL403"
    name = "repeat-interleave-size"
    summary = "`repeat_interleave` without `output_size` reads the total length back"
    fix_availability = FixAvailability.SOMETIMES
    triggers = ("repeat_interleave",)
    shape_words = ("repeat_interleave",)
    device_only = True
    device_sites = ("data",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func) or ""
        is_function = qual == "torch.repeat_interleave"
        if not is_function and method_name(node) != "repeat_interleave":
            return
        if kwarg(node, "output_size") is not None:
            return
        args = positional(node)
        repeats_arg = kwarg(node, "repeats")
        if repeats_arg is not None:
            repeats = repeats_arg.value
        elif is_function:
            if not args:
                return
            repeats = args[1].value if len(args) >= 2 else args[0].value
        else:
            if not args:
                return
            repeats = args[0].value
        if is_int_literal(repeats):
            return
        value = ctx.placement(repeats)
        if value.is_(Place.SCALAR) or (value.known and not value.maybe_device):
            return  # a Python int, or host data: the length is known without a wait
        ctx.report(
            self,
            node,
            "`repeat_interleave` without `output_size=` reads the output length back from the device",
            confidence=device_confidence(value),
            placement=value,
            fix=self._fix(node, repeats, ctx),
        )

    def _fix(self, node: cst.Call, repeats, ctx) -> FixSpec | None:
        source = self._host_source(repeats, ctx)
        if source is None:
            return None
        total = cst.Call(func=cst.Name("sum"), args=(cst.Arg(cst.Name(source)),))
        return FixSpec(
            f"Pass `output_size=sum({source})`, known on the host",
            replacements=((node, append_keyword(node, "output_size", total)),),
            applicability=Applicability.UNSAFE,
        )

    def _host_source(self, repeats, ctx) -> str | None:
        """The name of the host list `repeats` was copied from, when that is certain."""
        if isinstance(repeats, cst.Name):
            built = single_unmutated_binding(repeats.value, ctx)
            if built is None:
                return None
            repeats = built
        while isinstance(repeats, cst.Call) and method_name(repeats) in _VALUE_KEEPING_METHODS:
            repeats = repeats.func.value  # `.to(device)`, `.cuda()`, `.long()`: same values
        if not isinstance(repeats, cst.Call):
            return None
        qual = ctx.qualname(repeats.func) or ""
        helper = split_helper_path(self.settings.h2d_helper)[1]
        is_copy = (
            qual in ("torch.tensor", "torch.as_tensor")
            or qual in helper_names(self.settings)  # synclint's or vLLM's async_tensor_h2d
            or (isinstance(repeats.func, cst.Name) and repeats.func.value == helper)
        )
        data = positional(repeats)
        if not is_copy or not data or not isinstance(data[0].value, cst.Name):
            return None
        name = data[0].value.value
        if not ctx.placement(data[0].value).is_(Place.SEQUENCE) and not _unchanged_parameter(name, ctx):
            return None
        if single_unmutated_binding(name, ctx) is None and not _unchanged_parameter(name, ctx):
            return None
        return name


def _unchanged_parameter(name: str, ctx) -> bool:
    """`name` is a parameter of the enclosing function annotated as a list of numbers and
    never rebound or changed in place there."""
    from synclint.rules.helpers import _assignment_index

    function = ctx.function
    if function is None:
        return False
    params = [*function.params.params, *function.params.kwonly_params, *function.params.posonly_params]
    param = next((p for p in params if p.name.value == name), None)
    if param is None or param.annotation is None:
        return False
    annotation = code(param.annotation.annotation)
    if not annotation.startswith(("list[int]", "List[int]", "tuple[int", "Tuple[int", "Sequence[int]")):
        return False
    index = _assignment_index(ctx)
    return not index.bindings.get(name) and not index.mutations.get(name)
