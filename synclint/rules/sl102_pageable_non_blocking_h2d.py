from __future__ import annotations

import libcst as cst

from synclint.analysis.placement import Place
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.copy_size import bounded_size
from synclint.rules.helpers import bound_value, is_true, kwarg, method_name, positional, receiver
from synclint.rules.sl1xx_h2d import (
    PAGEABLE,
    STRIDED_PINNED,
    device_expr,
    explained,
    from_numpy_array,
    goes_to_device,
    helper_call,
    host_memory,
    move_target,
    plain_factory_data,
    read_move,
)
from synclint.violation import Applicability, Confidence, Severity

class PageableNonBlockingH2D(Rule):
    """Flags `non_blocking=True` host-to-device copies whose source is pageable memory.

    ## What it does
    Reports `.to(device, non_blocking=True)` / `.cuda(non_blocking=True)` of a pageable host
    tensor (`torch.from_numpy(a)`, `torch.tensor(list)`), `dst.copy_(src, non_blocking=True)`
    of a pageable `src` into a device tensor, and `non_blocking` copies of a strided view
    (`pinned[:, :n]`, `pinned.t()`) of a pinned buffer.

    ## Why it stalls
    `non_blocking=True` is only asynchronous from pinned memory. From pageable memory the
    driver stages the data through its own buffers; measured on an H200, a single copy of
    >= ~4 MiB waited for the whole GPU queue (stall ratio ~1.0; 1 MiB did not stall; many
    smaller copies stall once ~4 MiB is outstanding). A strided view of a pinned buffer is
    no better: PyTorch first makes a pageable contiguous temporary. `torch.cuda.
    set_sync_debug_mode("error")` does not catch either, so these stalls stay invisible.
    Copies smaller than that do not block, so the rule reports a copy only where its size
    is unknown: a list literal, a per-request list (`[r.top_k for r in reqs]`), a `cumsum`,
    a reduction to one value (`torch.count_nonzero(mask)`, `x.sum()`, also in arithmetic
    with Python numbers: `bs - num_padding`),
    or an array named like lengths, indices, ids, positions, offsets or counts (`seq_lens_np`,
    `query_start_loc_cpu[:n]`, `req_indices`, `pos_ids`; not when the name also says it
    holds data: `pos_embeds`, `req_hidden_states`) holds one value per request, kilobytes;
    so do integer positions from `arange` / `meshgrid` (also broadcast, stacked or joined
    with `torch.cat`), and data whose shape the code bounds by small counts: layers,
    requests, speculative draft tokens, literals (`torch.ones(num_layers)`,
    `[... for i in range(num_layers)]`, a list one loop over the requests appends one
    number to per pass (`widths.append(num_rows)` in `for req in batch.reqs:`),
    `mask.reshape(bs, draft_token_num, draft_token_num)[i]`, `torch.zeros(0)`, a
    `self.x` every assignment of which is such
    a shape, the destination of `dst.copy_(src)`), at most 1 MiB with generous maxima
    (1024 layers, 4096 requests, 64 draft tokens). Such a copy is reported at low
    confidence only (hidden by default), and says why. The default severity is `note` for the same reason.

    ## Example
    ```python
    import torch

    def embed_inputs(self, embeds_np, device):
        return torch.from_numpy(embeds_np).to(device, non_blocking=True)
    ```

    ## Use instead
    Best, a buffer pinned once and refilled in place; the fix writes the per-call form, a
    pinned copy with torch alone (or the `h2d-helper` the project has, see SL101):
    ```python
    import torch

    def embed_inputs(self, embeds_np, device):
        return torch.tensor(embeds_np, pin_memory=torch.cuda.is_available()).to(
            device, non_blocking=torch.cuda.is_available()
        )
    ```

    ## Fix safety
    `torch.from_numpy(a).to(d, non_blocking=True)` and `torch.tensor(data).to(d,
    non_blocking=True)` become a pinned copy (inline, or the `h2d-helper`), which copies the data into
    pinned memory at the call (so later writes to `a` cannot leak into the copy, as with
    the driver's staging) and queues the copy: safe, for `from_numpy(a)` only where `d` is
    proven an accelerator (where `d` is the CPU at run time `.to(d)` returns a tensor sharing
    `a`'s memory, which the helper's copy does not: unsafe). When the `.to()` also changes the
    dtype the conversion moves from the device to the host, which can round differently for
    out-of-range values: unsafe. `dst.copy_(torch.from_numpy(a), non_blocking=True)` into a
    proven device tensor becomes `dst.copy_(torch.from_numpy(a).pin_memory(), ...)`: same
    values, safe. Other pageable sources and strided pinned views are reported only: the
    remedy is to allocate the source pinned (or contiguous) once, which is a design change.

    ## Known false positives
    The size is read from names, sources and shapes, not measured: a large array named
    like metadata is missed, and a small one with another name is reported (it does not
    stall below ~4 MiB). A field assigned from outside its class is not seen. A
    tensor that the analysis believes pageable but that was pinned elsewhere (e.g. returned
    by a helper that pins) is flagged when the analysis saw only the pageable allocation.
    A helper's `device` parameter that every call outside cold code gives the CPU (the
    repository's call graph says so) makes the copy host to host: `low` confidence, and
    `--explain` names the callers.
    """

    code = "SL102"
    name = "pageable-non-blocking-h2d"
    summary = "`non_blocking` host-to-device copy from pageable memory"
    fix_availability = FixAvailability.SOMETIMES
    severity = Severity.NOTE
    triggers = ("non_blocking",)
    shape_words = ("non_blocking", "copy_")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if method_name(node) == "copy_":
            self._check_copy(node, ctx)
            return
        move = read_move(node, ctx)
        if move is None or not move.is_non_blocking:
            return
        target = move_target(move, ctx)
        if not goes_to_device(target):
            return
        kind, source = host_memory(move.source, ctx)
        small = small_source(move.source, ctx)
        if kind == STRIDED_PINNED:
            ctx.report(
                self,
                node,
                "a `non_blocking` copy of a strided view of a pinned buffer goes through a pageable "
                "temporary and blocks for copies >= ~4 MiB" + _size_note(small) + "; copy a contiguous pinned buffer",
                confidence=_small_is_low(_device_side(source.confidence, target), small),
                placement=explained(_with_size(source, move.source, small), target),
            )
            return
        if kind != PAGEABLE:
            return
        ctx.report(
            self,
            node,
            "`non_blocking=True` from pageable memory blocks the host for copies >= ~4 MiB"
            + _size_note(small)
            + "; stage the data in pinned memory",
            confidence=_small_is_low(_device_side(source.confidence, target), small),
            placement=explained(_with_size(source, move.source, small), target),
            fix=self._move_fix(move, ctx),
        )

    def _move_fix(self, move, ctx) -> FixSpec | None:
        if not move.simple:
            return None
        array = from_numpy_array(move.source, ctx)
        if array is not None:
            data, dtype = array, None
        else:
            factory = plain_factory_data(move.source, ctx) if isinstance(move.source, cst.Call) else None
            if factory is None:
                return None
            data, dtype = factory
        if dtype is not None and move.dtype is not None:
            return None
        converts = move.dtype is not None
        # `from_numpy(a).to(d)` shares `a`'s memory when d is the CPU at run time; a pinned
        # copy does not: safe only where d is proven an accelerator.
        target = move_target(move, ctx)
        aliases = array is not None and not (target is not None and target.on_device and target.confidence >= Confidence.HIGH)
        new = helper_call(ctx, self.settings, data, dtype=dtype or move.dtype, device=device_expr(move))
        if new is None:
            return None
        return FixSpec(
            message=new.message,
            replacements=((move.call, new.node),),
            applicability=Applicability.UNSAFE if converts or aliases else Applicability.SAFE,
            imports=new.imports,
        )

    def _check_copy(self, node: cst.Call, ctx) -> None:
        if not is_true(getattr(kwarg(node, "non_blocking"), "value", None)):
            return
        args = positional(node)
        if len(args) != 1:
            return
        destination = ctx.placement(receiver(node))
        if not destination.maybe_device:
            return
        kind, source = host_memory(args[0].value, ctx)
        if kind not in (PAGEABLE, STRIDED_PINNED):
            return
        small = small_source(args[0].value, ctx)
        if small is None:
            # `dst.copy_(src)` moves `dst.numel()` elements (`src` broadcasts to `dst`)
            bounded = bounded_size(receiver(node), ctx)
            small = None if bounded is None else f"the destination: {bounded}"
        confidence = min(source.confidence, destination.confidence)
        if not destination.on_device:
            confidence = min(confidence, Confidence.MEDIUM)
        confidence = _small_is_low(confidence, small)
        source = _with_size(source, args[0].value, small)
        fix = None
        if destination.on_device and from_numpy_array(args[0].value, ctx) is not None:
            pinned = cst.Call(func=cst.Attribute(value=args[0].value, attr=cst.Name("pin_memory")))
            fix = FixSpec(
                message="Pin the source: `.pin_memory()`",
                replacements=((args[0].value, pinned),),
                applicability=Applicability.SAFE,
            )
        what = "a strided view of a pinned buffer (copied through a pageable temporary)" if kind == STRIDED_PINNED else "pageable memory"
        ctx.report(
            self,
            node,
            f"`copy_(..., non_blocking=True)` from {what} into a device tensor blocks the host for "
            f"copies >= ~4 MiB{_size_note(small)}; copy from a contiguous pinned buffer",
            confidence=confidence,
            placement=source,
            fix=fix,
        )


# Words in a name that say it holds per-request or per-token metadata: lengths, indices,
# offsets, counts, cumulative sums. Such arrays have one value per request (or per token of
# one step): kilobytes, far below the ~4 MiB from which a pageable copy blocks.
_METADATA_WORDS = frozenset(
    {
        "len", "lens", "length", "lengths", "seqlen", "seqlens", "idx", "idxs", "index", "indices",
        "offset", "offsets", "loc", "locs", "cu", "cumsum", "count", "counts", "num", "start",
        "starts", "end", "ends", "req", "reqs", "request", "requests", "ids", "positions",
    }
)  # fmt: skip
# Words that say a name holds the data itself (activations, pixels, weights), whatever
# metadata word it also has (`req_hidden_states`, `pos_embeds`, `image_features`).
_DATA_WORDS = frozenset(
    {
        "emb", "embs", "embed", "embeds", "embedding", "embeddings", "hidden", "states", "pixel", "pixels",
        "feat", "feats", "feature", "features", "logits", "weight", "weights", "probs", "activations",
    }
)  # fmt: skip
# Integer positions or indices computed from sizes: one integer per position of a grid.
_POSITION_BUILDERS = frozenset({"torch.arange", "numpy.arange", "torch.meshgrid", "numpy.meshgrid", "numpy.indices"})
# Joins of several arrays: as small as all their parts are, per position.
_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "numpy.stack", "numpy.concatenate", "numpy.hstack", "numpy.vstack"})
# Functions whose result has one element per element of their first argument's grid.
_ELEMENTWISE_OF_FIRST = frozenset({"numpy.broadcast_to", "torch.broadcast_to", "numpy.transpose", "numpy.reshape", "numpy.ravel"})
# Reductions that, without `dim=`, give one value (`torch.count_nonzero(mask)`, `x.sum()`).
_ONE_VALUE_REDUCTIONS = frozenset({"count_nonzero", "sum", "max", "min", "amax", "amin", "mean", "prod", "numel", "any", "all"})
_DATA_BUILDERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray", "torch.from_numpy", "numpy.array", "numpy.asarray"})


def _metadata_name(name: str) -> bool:
    words = name.lower().split("_")
    return any(part in _METADATA_WORDS for part in words) and not any(part in _DATA_WORDS for part in words)


def _join_parts(expr: cst.BaseExpression, ctx, depth: int) -> str | None:
    """The parts of `torch.cat(parts)` / `np.stack(parts)`: small when every part is (a
    list literal of parts, a comprehension's element, or a list named like metadata)."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        reasons = [small_source(e.value, ctx, depth + 1) for e in expr.elements if not isinstance(e, cst.StarredElement)]
        return reasons[0] if reasons and len(reasons) == len(expr.elements) and all(reasons) else None
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        return small_source(expr.elt, ctx, depth + 1)
    if isinstance(expr, cst.Name):
        if _metadata_name(expr.value):
            return f"`{expr.value}` is named like lengths, indices, ids or offsets"
        bound = bound_value(expr.value, ctx)
        # `parts = []` filled later holds what the appends add, not the literal's parts
        if isinstance(bound, cst.ListComp) or (isinstance(bound, (cst.List, cst.Tuple)) and bound.elements):
            return _join_parts(bound, ctx, depth + 1)
    return None


def small_source(expr: cst.BaseExpression, ctx, _depth: int = 0) -> str | None:
    """Why the data of a host-to-device copy is small (kilobytes, not the ~4 MiB from which
    a pageable `non_blocking` copy blocks), or None when its size is unknown: a list
    literal, a `cumsum`, data named like lengths, indices, offsets, counts, or per-request
    values (`seq_lens`, `query_start_loc`, `req_indices`), followed through views,
    conversions, `torch.tensor(...)` / `torch.from_numpy(...)` and one local assignment."""
    if _depth > 6:
        return None
    if _depth == 0:
        bounded = bounded_size(expr, ctx)
        if bounded is not None:
            return bounded
    if isinstance(expr, (cst.List, cst.Tuple)):
        return "a list literal"
    if isinstance(expr, cst.IfExp):
        # `a if c else b`: small when both are
        body, orelse = small_source(expr.body, ctx, _depth + 1), small_source(expr.orelse, ctx, _depth + 1)
        return body if body and orelse else None
    if isinstance(expr, cst.ListComp):
        # `[r.temperature for r in reqs]`: one value per request.
        iterable = expr.for_in.iter
        if expr.for_in.inner_for_in is None and isinstance(iterable, (cst.Name, cst.Attribute)) and small_source(iterable, ctx, _depth + 1):
            return "a per-request list"
        return None
    if isinstance(expr, cst.Subscript):
        return small_source(expr.value, ctx, _depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        # `bs - num_padding`: as small as its tensor operands (a Python number adds nothing)
        reasons = [small_source(side, ctx, _depth + 1) for side in (expr.left, expr.right) if not ctx.placement(side).is_(Place.SCALAR)]
        return reasons[0] if reasons and all(reasons) else None
    if isinstance(expr, cst.Call):
        qual = ctx.qualname(expr.func) or ""
        name = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else getattr(expr.func, "value", "")
        if name == "cumsum" or qual.endswith(".cumsum"):
            return "a cumulative sum of lengths: one value per request"
        if name in _ONE_VALUE_REDUCTIONS and not any(a.keyword is not None and a.keyword.value == "dim" for a in expr.args) and len(positional(expr)) <= (1 if qual else 0):
            return "a reduction to one value"
        if qual in _POSITION_BUILDERS:
            return f"integer positions from `{qual.rpartition('.')[2]}()`: one per position"
        if qual in _JOINS and expr.args:
            return _join_parts(expr.args[0].value, ctx, _depth)
        if qual in _ELEMENTWISE_OF_FIRST and expr.args:
            return small_source(expr.args[0].value, ctx, _depth + 1)
        if qual in _DATA_BUILDERS and expr.args:
            return small_source(expr.args[0].value, ctx, _depth + 1)
        if isinstance(expr.func, cst.Attribute) and not qual:
            return small_source(expr.func.value, ctx, _depth + 1)  # `.long()`, `.view(...)`
        return None
    if isinstance(expr, cst.Attribute):
        return f"`{expr.attr.value}` is named like lengths, indices, ids or offsets" if _metadata_name(expr.attr.value) else None
    if isinstance(expr, cst.Name):
        if _metadata_name(expr.value):
            return f"`{expr.value}` is named like lengths, indices, ids or offsets"
        if _depth == 0 or _depth < 4:
            bound = bound_value(expr.value, ctx)
            if isinstance(bound, (cst.List, cst.Tuple)):
                return None  # `xs = []` filled later: its size is not the literal's
            if bound is not None and not (isinstance(bound, cst.Name) and bound.value == expr.value):
                return small_source(bound, ctx, _depth + 1)
    return None


def _size_note(small: str | None) -> str:
    if small is None:
        return " (the size here is unknown; smaller copies do not block)"
    return f" (this one is small, {small}: it does not block by itself)"


def _small_is_low(confidence: Confidence, small: str | None) -> Confidence:
    """A copy known to be small does not stall: reported at low confidence (hidden by
    default, shown with `--min-confidence low`)."""
    return Confidence.LOW if small is not None else confidence


def _with_size(source, node, small: str | None):
    return source if small is None else source.because(node, f"small data, {small}: below the ~4 MiB from which a copy blocks")


def _device_side(confidence: Confidence, target) -> Confidence:
    confidence = min(confidence, target.confidence)
    return confidence if target.on_device else min(confidence, Confidence.MEDIUM)
