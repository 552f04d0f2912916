from __future__ import annotations

import libcst as cst

from synclint.apis.torch_api import CHECKED_LINALG_FUNCTIONS, CHECKED_LINALG_METHODS, CHECKED_ON_REQUEST
from synclint.rules.base import FixAvailability, FixSpec, Rule
from synclint.rules.helpers import device_confidence, is_true, kwarg, method_name, positional, receiver
from synclint.violation import Applicability


class LinalgErrorCheck(Rule):
    """Flags `torch.linalg.solve`, `inv`, `cholesky`, `eigh` and the other linear-algebra
    functions that check their result on the host, on device tensors.

    ## What it does
    Reports a call of a `torch.linalg` function that PyTorch documents as synchronizing on
    CUDA inputs (`solve`, `inv`, `cholesky`, `lu_factor`, `ldl_factor`, `eig`, `eigvals`,
    `eigh`, `eigvalsh`, `svdvals`, `matrix_rank`, `pinv`; `torch.inverse`, `A.inverse()`,
    `A.cholesky()`; an `_ex` variant with `check_errors=True`) when its input may live on the
    device. The table is `CHECKED_LINALG_FUNCTIONS` in `synclint/apis/torch_api.py`.

    ## Why it stalls
    After the kernel, PyTorch copies LAPACK's `info` (or the number of converged values) to
    the host to raise on a singular or non-definite matrix, so the host waits for every
    queued kernel. Traced on an H100: diffusers' UniPC scheduler solves a small system with
    `torch.linalg.solve` on the device in every step of higher order, one sync each.

    ## Example
    ```python
    import torch

    def step(self, rks, h_phi, sample):
        R = torch.stack([rks ** i for i in range(3)]).to(sample.device)
        b = h_phi.to(sample.device)
        return torch.linalg.solve(R, b)
    ```

    ## Use instead
    The `_ex` variant, which checks nothing unless asked (`check_errors=False` is its
    default), or a closed form for a tiny system:
    ```python
    import torch

    def step(self, rks, h_phi, sample):
        R = torch.stack([rks ** i for i in range(3)]).to(sample.device)
        b = h_phi.to(sample.device)
        return torch.linalg.solve_ex(R, b).result
    ```

    ## Fix safety
    `torch.linalg.solve(A, B)` becomes `torch.linalg.solve_ex(A, B).result` (likewise `inv`
    and `torch.inverse` -> `inv_ex(...).inverse`, `cholesky` -> `cholesky_ex(...).L`):
    unsafe, because a singular or non-definite input then gives garbage or NaN values
    instead of raising. The other functions have no variant that skips the check: no fix.

    ## Known false positives
    Inputs whose placement is unknown are `low` confidence (hidden by default); numpy and
    host tensors are not reported.
    """

    code = "SL209"
    name = "linalg-error-check"
    summary = "a linear-algebra function reads its error status back to the host"
    fix_availability = FixAvailability.SOMETIMES
    triggers = ("solve", "inv", "inverse", "cholesky", "lu_factor", "ldl_factor", "eig", "eigvals", "eigh",
                "eigvalsh", "svdvals", "matrix_rank", "pinv", "solve_ex", "inv_ex", "cholesky_ex", "lu_factor_ex",
                "ldl_factor_ex")
    shape_words = triggers
    device_only = True
    device_sites = ("data",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qual = ctx.qualname(node.func) or ""
        name = qual[6:] if qual.startswith("torch.") else None
        if name in CHECKED_LINALG_FUNCTIONS or (name in CHECKED_ON_REQUEST and _checks_errors(node)):
            args = positional(node)
            data = args[0].value if args else getattr(kwarg(node, "A") or kwarg(node, "input"), "value", None)
        elif not qual and method_name(node) in CHECKED_LINALG_METHODS and not node.args:
            name, data = method_name(node), receiver(node)
        else:
            return
        if data is None:
            return
        value = ctx.placement(data)
        if value.known and not value.maybe_device:
            return  # host data: LAPACK runs on the host, nothing waits
        shown = name.rpartition(".")[2]
        ctx.report(
            self,
            node,
            f"`{shown}()` of a device tensor copies its error status to the host and raises from there",
            confidence=device_confidence(value),
            placement=value,
            fix=_unchecked(node, name) if qual else None,
        )


def _checks_errors(node: cst.Call) -> bool:
    flag = kwarg(node, "check_errors")
    return flag is not None and is_true(flag.value)


def _unchecked(node: cst.Call, name: str) -> FixSpec | None:
    """`torch.linalg.solve(A, B)` -> `torch.linalg.solve_ex(A, B).result`, where the call is
    spelled through the `torch` module (`torch.linalg.solve`, `torch.inverse`)."""
    variant = CHECKED_LINALG_FUNCTIONS.get(name)
    func = node.func
    if variant is None or not isinstance(func, cst.Attribute):
        return None
    unchecked, field = variant
    if name.startswith("linalg."):
        if not (isinstance(func.value, cst.Attribute) and func.value.attr.value == "linalg"):
            return None
        new_func = func.with_changes(attr=cst.Name(unchecked.rpartition(".")[2]))
    else:  # `torch.inverse(A)`: the head module, then `linalg.inv_ex`
        new_func = cst.Attribute(value=cst.Attribute(value=func.value, attr=cst.Name("linalg")),
                                 attr=cst.Name(unchecked.rpartition(".")[2]))
    replacement = cst.Attribute(value=node.with_changes(func=new_func), attr=cst.Name(field))
    return FixSpec(
        message=f"Call `torch.{unchecked}(...).{field}`, which checks nothing on the host",
        replacements=((node, replacement),),
        applicability=Applicability.UNSAFE,
    )
