"""Structural evidence that a value is a device tensor, read from how the code itself treats it.

A tensor whose place nothing states (a parameter annotated `torch.Tensor`, an unannotated
parameter, a local bound to a tensor of unsaid place such as a field the repository gives
device and host tensors) is often shown to be on the device by what the function does with
it. Three shapes hold in any codebase and are used here, each at `medium` confidence with its
reason shown by `--explain`:

- **a host mirror**: a parameter `x` beside a parameter `x_cpu` (`x_host`, `x_np`,
  `x_cpu_tensor`, `x_numpy`) is the device copy of data the caller also keeps on the host;
- **a readback into a host-named target**: `x_cpu = x.tolist()`, `x_host = x.cpu()`,
  `cpu_data = x[:, :2].cpu()`: the code names the copy as the host one, so `x` is the device
  copy (from that statement on);
- **a device-only use**: the parameter (or a value computed from it) is an operand of
  arithmetic or a comparison with a known device tensor, of `torch.cat`/`stack`/`where`/
  `minimum`/`maximum` beside one (PyTorch raises on a CPU and a device tensor there), or is
  passed to a Triton kernel launch (`kernel[grid](x, ...)`) or a custom op (`torch.ops.ns.op(x)`),
  which take device pointers, or to a function of the same file (`self.plan(x)`) whose
  parameter is a device tensor by this same evidence, or, in a method of an nn.Module, to one
  of its submodules (`self.sam_model(patches)`: inputs live where the module runs), or is
  written through a tensor index
  with a gather or slice of a device tensor (`ids[mask] = table[-ids[mask]]`: PyTorch's
  indexed write raises for a host target unless the value has one element). A parameter
  with no annotation counts only for the launches, and only where the function also indexes
  it (a Python number is passed to kernels too);
- **a round trip through the host**: a parameter annotated a tensor is copied to the host
  (`x.to("cpu")`, `x.cpu()`) in a function that moves a value back to its device
  (`out.to(x.device)`, or `.to(device)` after `device = x.device`): an op run on the host for
  a tensor that lives on the device.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from synclint.analysis.imports import dotted_name
from synclint.analysis.nodes import OWN_SCOPES, children
from synclint.analysis.sources import is_module_class
from synclint.analysis.values import Env, Place, Placement, placed
from synclint.apis import torch_api as api
from synclint.violation import Confidence

if TYPE_CHECKING:
    from synclint.analysis.placement import PlacementAnalysis, ScopeFacts

MEDIUM = Confidence.MEDIUM


# --- host mirrors ------------------------------------------------------------------------------


def mirror_of(name: str, names) -> str | None:
    """The host mirror of `name` among `names` (`x_cpu` for `x`), or None."""
    for suffix in api.HOST_MIRROR_SUFFIXES:
        if name + suffix in names:
            return name + suffix
    return None


# --- a readback into a host-named target ---------------------------------------------------------


def _readback_source(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` of `x.cpu()`, `x.tolist()`, `x.item()`, `x.to("cpu")`, also under a chain of
    host-side methods (`x.cpu().numpy()`, `x.cpu().tolist()`)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        method = value.func.attr.value
        inner = value.func.value
        if method in api.READBACK_EVIDENCE_METHODS and not value.args:
            return inner
        if method == "to" and value.args and _names_cpu(value.args[0].value):
            return inner
        if method in ("numpy", "tolist") and not value.args:
            value = inner  # `.cpu().numpy()`: the copy is the `.cpu()` below
            continue
        return None
    return None


def _names_cpu(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.SimpleString) and expr.value.strip("\"'") == "cpu"


def root_name(expr: cst.BaseExpression) -> str | None:
    """`x` of `x`, `x[:, :2]`, `x[:bs].max()`, `x.view(-1)`: the name a view or a reduction
    of which `expr` is."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value in ("cpu", "to", "cuda", "tolist", "item", "numpy"):
                return None
            expr = expr.func.value
        else:
            return None


def host_named_readback(small: cst.BaseSmallStatement, env: Env, stmt: cst.CSTNode) -> tuple[str, Placement] | None:
    """For `x_cpu = x.tolist()` (a readback bound to a host-named target) where `x`'s place is
    not known: (`x`, device tensor, medium)."""
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target = small.targets[0].target
    if not isinstance(target, cst.Name) or not api.host_copy_name(target.value):
        return None
    source = _readback_source(small.value)
    if source is None:
        return None
    name = root_name(source)
    if name is None or name == target.value or name == "self" or api.host_copy_name(name):
        return None  # `host_idx = host_indices[i].item()`: the source's own name says host
    current = env.get(name)
    if current is None or not _unplaced(current):
        return None
    reason = f"read back into the host-named `{target.value}`: the code treats `{name}` as the device copy (inferred)"
    return name, placed(Place.DEVICE, MEDIUM, stmt, reason)


def unplaced_origin(value: Placement) -> cst.CSTNode | None:
    """The node a tensor of unsaid place comes from (a parameter, `batch.input_ids` of a field
    the repository gives device and host tensors): the first step of its provenance; None for
    a value something places."""
    if value.confidence != Confidence.LOW or not value.maybe_device or not value.is_(Place.HOST, Place.DEVICE):
        return None
    return value.evidence[0].node if value.evidence else None


def _unplaced(value: Placement) -> bool:
    """Nothing states where it lives: unknown, or a tensor of unsaid place."""
    if not value.known:
        return True
    return value.maybe_device and not value.on_device and value.confidence == Confidence.LOW and value.is_(Place.HOST, Place.DEVICE)


# --- device-only uses ------------------------------------------------------------------------------


_MEMBERSHIP_OR_IDENTITY = frozenset({cst.Is, cst.IsNot, cst.In, cst.NotIn})


class _Uses:
    """Walks one function's body (not the functions and classes nested in it) and finds the
    device-only uses of its candidate parameters."""

    def __init__(self, analysis: PlacementAnalysis, chain, facts: ScopeFacts, candidates: dict[str, cst.Param]) -> None:
        self.analysis = analysis
        self.chain = chain
        self.facts = facts
        self.candidates = candidates
        self.evaluator = analysis.evaluator
        self.found: dict[str, Placement] = {}
        self.indexed: set[str] = set()  # unannotated parameters the function indexes
        self.launched: dict[str, cst.CSTNode] = {}  # unannotated parameters passed to a kernel
        self.jit_names = _jit_functions(analysis.module)
        self.read_back: dict[str, cst.CSTNode] = {}  # candidates copied to the host (`x.to("cpu")`)
        self.devices_of: dict[str, str] = {}  # `device = x.device`: local -> the tensor named
        self.moved_back: set[str] = set()  # tensors whose device a value is moved to (`.to(x.device)`)

    def run(self, func: cst.FunctionDef) -> dict[str, Placement]:
        self._suite(func.body, None)
        for name, node in self.read_back.items():
            if name in self.moved_back and name not in self.found:
                self.found[name] = placed(
                    Place.DEVICE, MEDIUM, node,
                    f"`{name}` is copied to the host and a result moved back to its device: the code treats it as a device tensor (inferred)",
                )
        for name, node in self.launched.items():
            if name in self.indexed and name not in self.found:
                self.found[name] = placed(
                    Place.DEVICE, MEDIUM, node,
                    f"`{name}` is indexed and passed to a GPU kernel launch: a device tensor (inferred)",
                )
        return self.found

    # statements: keep the innermost one the walk recorded an environment for
    def _suite(self, suite, env: Env | None) -> None:
        if suite is None:
            return
        env = self.facts.env_before.get(id(suite), env)
        body = suite.body if isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite)) else suite
        for stmt in body:
            self._statement(stmt, env)

    def _statement(self, stmt, env: Env | None) -> None:
        env = self.facts.env_before.get(id(stmt), env)
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._expr(small, env)
            return
        for name in ("test", "iter", "subject"):
            part = getattr(stmt, name, None)
            if isinstance(part, cst.BaseExpression):
                self._expr(part, env)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self._expr(item.item, env)
        for name in ("body", "orelse", "finalbody"):
            part = getattr(stmt, name, None)
            if isinstance(part, cst.BaseSuite):
                self._suite(part, env)
            elif isinstance(part, (cst.If, cst.Else, cst.Finally)):
                self._statement(part, env)
        for handler in getattr(stmt, "handlers", ()) or ():
            self._suite(handler.body, env)
        for case in getattr(stmt, "cases", ()) or ():
            self._suite(case.body, env)

    def _expr(self, node: cst.CSTNode, env: Env | None) -> None:
        # `type()`, not `isinstance`: libcst's node classes have no subclasses, and this walk
        # meets every node of the function.
        pending = [node]
        while pending:
            current = pending.pop()
            kind = type(current)
            if kind in OWN_SCOPES:
                continue
            if kind is cst.Assign:
                if len(current.targets) == 1 and type(current.targets[0].target) is cst.Name:
                    value = current.value  # `device = x.device`
                    if type(value) is cst.Attribute and value.attr.value == "device" and type(value.value) is cst.Name:
                        self.devices_of[current.targets[0].target.value] = value.value.value
                if env is not None:
                    self._indexed_write(current, env)
            elif env is not None:
                if kind is cst.BinaryOperation:
                    self._together([current.left, current.right], current, env)
                elif kind is cst.Comparison:
                    if len(current.comparisons) == 1 and type(current.comparisons[0].operator) not in _MEMBERSHIP_OR_IDENTITY:
                        self._together([current.left, current.comparisons[0].comparator], current, env)
                elif kind is cst.Call:
                    self._call(current, env)
            if kind is cst.Subscript and type(current.value) is cst.Name:
                self.indexed.add(current.value.value)
            pending.extend(children(current))

    def _derived(self, expr: cst.BaseExpression, env: Env) -> str | None:
        """The candidate parameter `expr` is computed from (a tensor of unsaid place whose
        provenance starts at that parameter), or None."""
        if root_name(expr) is None and not isinstance(expr, (cst.BinaryOperation, cst.Call)):
            return None
        value = self.evaluator.eval(expr, env, self.chain)
        if not (value.is_(Place.HOST, Place.DEVICE) and value.maybe_device and value.confidence == Confidence.LOW):
            return None
        first = value.evidence[0].node if value.evidence else None
        for name, origin in self.candidates.items():
            # a parameter annotated a tensor, or a local bound to a tensor of unsaid place
            if first is origin and (not isinstance(origin, cst.Param) or origin.annotation is not None):
                return name
        return None

    def _together(self, operands, node: cst.CSTNode, env: Env) -> None:
        """Operands that PyTorch requires on one device: a candidate beside a device tensor."""
        derived = [self._derived(o, env) for o in operands]
        if not any(derived):
            return
        for operand, name in zip(operands, derived):
            if name is not None:
                continue
            other = self.evaluator.eval(operand, env, self.chain)
            if (other.on_device and other.confidence >= MEDIUM) or self._device_field(operand):
                for candidate in derived:
                    if candidate is not None and candidate not in self.found:
                        self.found[candidate] = placed(
                            Place.DEVICE, MEDIUM, node,
                            f"`{candidate}` is used with a device tensor in one operation: a device tensor too (inferred)",
                        )
                return

    def _indexed_write(self, node: cst.Assign, env: Env) -> None:
        """`x[mask] = src[idx]`: an advanced-index write (a tensor index) of a device tensor.
        PyTorch writes values through a tensor index only into a tensor on their device (it
        raises "Expected all tensors to be on the same device" for a host `x`, except for a
        value of one element), so `x` is a device tensor. The value must be a gather or a slice
        of a device tensor (`src[idx]`, `src[mask]`, `src[a:b]`): one element is then no more
        likely than any other size."""
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Subscript):
            return
        target = node.targets[0].target
        if not any(self._tensor_index(e, env) for e in target.slice):
            return  # basic indexing (`x[0] = v`, `x[a:b] = v`) copies across devices
        name = self._derived(target.value, env)
        if name is None or name in self.found:
            return
        value = node.value
        if not (isinstance(value, cst.Subscript) and any(
            isinstance(e.slice, cst.Slice) or self._tensor_index(e, env) for e in value.slice
        )):
            return
        placement = self.evaluator.eval(value, env, self.chain)
        if placement.on_device and placement.confidence >= MEDIUM:
            self.found[name] = placed(
                Place.DEVICE, MEDIUM, node,
                f"`{name}` is written through a tensor index with a device tensor, which PyTorch allows only "
                "into a tensor on the same device: a device tensor (inferred)",
            )

    def _tensor_index(self, element: cst.SubscriptElement, env: Env) -> bool:
        if not isinstance(element.slice, cst.Index):
            return False
        index = self.evaluator.eval(element.slice.value, env, self.chain)
        return index.is_tensor

    def _device_field(self, expr: cst.BaseExpression) -> bool:
        """`self.x` where the class assigns `x` a device tensor somewhere and nothing it
        assigns is known host data (a value built from the candidate itself, as in
        `self.x = torch.cat((new, self.x))`, is neither)."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return False
        chain = self.chain
        if len(chain) < 2 or not isinstance(chain[-2], cst.ClassDef):
            return False
        values = self.analysis._class_attr_values.get(id(chain[-2]), {}).get(expr.attr.value, ())
        if any(v.known and not v.maybe_device for v in values):
            return False
        return any(v.on_device and v.confidence >= MEDIUM for v in values)

    def _round_trip(self, call: cst.Call) -> None:
        """`img = x.to("cpu")` ... `out.to(x.device)` (or `.to(device)` after `device =
        x.device`): a round trip through the host, written for a tensor on the device."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return
        source = _readback_source(call)
        if source is not None:
            name = root_name(source)
            if name in self.candidates and isinstance(self.candidates[name], cst.Param) and self.candidates[name].annotation is not None:
                self.read_back.setdefault(name, call)
            return
        if func.attr.value == "to" and call.args:
            target = call.args[0].value if call.args[0].keyword is None else next(
                (a.value for a in call.args if a.keyword is not None and a.keyword.value == "device"), None)
            if isinstance(target, cst.Attribute) and target.attr.value == "device" and isinstance(target.value, cst.Name):
                self.moved_back.add(target.value.value)
            elif isinstance(target, cst.Name) and target.value in self.devices_of:
                self.moved_back.add(self.devices_of[target.value])

    def _call(self, call: cst.Call, env: Env) -> None:
        self._round_trip(call)
        func = call.func
        qual = self.evaluator.qualname(func, env) or ""
        args = [a.value for a in call.args if not a.star]
        if qual.startswith("torch.") and qual[6:] in api.SAME_DEVICE_FUNCTIONS:
            operands = []
            for arg in args:
                if isinstance(arg, (cst.List, cst.Tuple)):
                    operands.extend(e.value for e in arg.elements if not isinstance(e, cst.StarredElement))
                else:
                    operands.append(arg)
            if qual == "torch.where" and len(args) != 3:
                return
            self._together(operands, call, env)
            return
        launch = qual.startswith("torch.ops.") or self._kernel_launch(func)
        if not launch:
            self._submodule_input(call, env)
            self._passed_on(call, env)
            return
        what = "a custom op (`torch.ops`)" if qual.startswith("torch.ops.") else "a GPU kernel launch"
        for arg in args:
            name = self._derived(arg, env)
            if name is not None and name not in self.found:
                self.found[name] = placed(
                    Place.DEVICE, MEDIUM, call, f"`{name}` is passed to {what}, which takes device tensors (inferred)"
                )
            elif (isinstance(arg, cst.Name) and isinstance(self.candidates.get(arg.value), cst.Param)
                  and self.candidates[arg.value].annotation is None):
                self.launched.setdefault(arg.value, call)

    def _submodule_input(self, call: cst.Call, env: Env) -> None:
        """`self.sam_model(patches)` in a method of an nn.Module: a submodule the class builds
        (`self.sam_model = build_sam(...)`) is called on the argument, and a module's inputs live
        where its weights do: a device tensor. The forward() rule's reason, for any method
        that hands its tensor to a layer of its own."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return
        chain = self.chain
        if len(chain) < 2 or not isinstance(chain[-2], cst.ClassDef):
            return
        attr = func.attr.value
        if attr not in submodule_fields(chain[-2], self.analysis):
            return
        # The module's input: its first positional argument (`self.visual(pixel_values,
        # grid_thw=grid_thw)`: the sizes beside it may stay on the host, and often do).
        first = call.args[0] if call.args else None
        if first is None or first.star or first.keyword is not None:
            return
        name = self._derived(first.value, env)
        if name is not None and name not in self.found:
            self.found[name] = placed(
                Place.DEVICE, MEDIUM, call,
                f"`{name}` is passed to `self.{attr}`, a submodule of this nn.Module: inputs live where the module runs (inferred)",
            )

    def _passed_on(self, call: cst.Call, env: Env) -> None:
        """`self.plan(x)` / `plan(x)` of a function of this file whose parameter is a device
        tensor at its entry (by its own evidence): the argument computed from a candidate is."""
        callee = self._callee(call.func)
        if callee is None:
            return
        func, chain = callee
        params = func.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        if chain and isinstance(chain[-1], cst.ClassDef) and positional and positional[0] in ("self", "cls"):
            positional = positional[1:]
        pairs = []
        for index, arg in enumerate(call.args):
            if arg.star:
                break
            if arg.keyword is not None:
                pairs.append((arg.keyword.value, arg.value))
            elif index < len(positional):
                pairs.append((positional[index], arg.value))
        derived = [(param, self._derived(value, env)) for param, value in pairs]
        derived = [(param, name) for param, name in derived if name is not None and name not in self.found]
        if not derived:
            return
        entry = self.analysis._facts((*chain, func)).entry_env or {}
        for param, name in derived:
            value = entry.get(param)
            if value is not None and value.on_device and value.confidence >= MEDIUM and name not in self.found:
                self.found[name] = placed(
                    Place.DEVICE, MEDIUM, call,
                    f"`{name}` is passed to `{func.name.value}()`, whose parameter `{param}` is a device tensor (inferred)",
                )

    def _callee(self, func: cst.BaseExpression):
        """(FunctionDef, enclosing chain) of `self.method` in this class or a function of the module."""
        chain = self.chain
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            if len(chain) >= 2 and isinstance(chain[-2], cst.ClassDef):
                for stmt in getattr(chain[-2].body, "body", ()):
                    if isinstance(stmt, cst.FunctionDef) and stmt.name.value == func.attr.value and stmt is not chain[-1]:
                        return stmt, chain[:-1]
            return None
        if isinstance(func, cst.Name):
            for stmt in self.analysis.module.body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value == func.value and stmt is not chain[-1]:
                    return stmt, (self.analysis.module,)
        return None

    def _kernel_launch(self, func: cst.BaseExpression) -> bool:
        """`kernel[grid](...)`: a Triton launch (a `@triton.jit` function of this module, a
        callee named like a kernel, or a grid spelled as a tuple or named `grid`)."""
        if not isinstance(func, cst.Subscript):
            return False
        callee = func.value
        name = callee.value if isinstance(callee, cst.Name) else callee.attr.value if isinstance(callee, cst.Attribute) else None
        if name is None:
            return False
        if name in self.jit_names or "kernel" in name.lower() or "triton" in name.lower():
            return True
        if len(func.slice) != 1 or not isinstance(func.slice[0].slice, cst.Index):
            return False
        grid = func.slice[0].slice.value
        if isinstance(grid, cst.Tuple):
            return True
        grid_name = grid.value if isinstance(grid, cst.Name) else grid.attr.value if isinstance(grid, cst.Attribute) else ""
        return "grid" in grid_name.lower()


def submodule_fields(class_def: cst.ClassDef, analysis: PlacementAnalysis) -> frozenset[str]:
    """The fields of an nn.Module subclass that hold what a call built (`self.proj =
    nn.Linear(...)`, `self.encoder = build_encoder(cfg)`) and that the class defines no method
    of: its submodules. Empty for a class that is no nn.Module."""
    cache = analysis.submodule_fields
    found = cache.get(id(class_def))
    if found is None:
        found = frozenset()
        if is_module_class(class_def, analysis.imports):
            members = [s for s in getattr(class_def.body, "body", ()) if isinstance(s, cst.FunctionDef)]
            methods = {m.name.value for m in members}
            built: set[str] = set()
            for member in members:
                for node in _walk_assignments(member):
                    for target in node.targets:
                        t = target.target
                        if (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self"
                                and isinstance(node.value, cst.Call)):
                            built.add(t.attr.value)
            found = frozenset(built - methods)
        cache[id(class_def)] = found
    return found


def _walk_assignments(func: cst.FunctionDef):
    pending: list = [func.body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Assign:
            yield node
        elif kind in OWN_SCOPES and node is not func:
            continue
        pending.extend(children(node))


def _jit_functions(module: cst.Module) -> frozenset[str]:
    return frozenset(
        stmt.name.value
        for stmt in module.body
        if isinstance(stmt, cst.FunctionDef) and any(kernel_decorator(d) for d in stmt.decorators)
    )


# Decorators that compile a function into a device kernel (Triton, CuTe DSL, Numba, TileLang):
# `@triton.jit`, `@cute.jit`, `@cute.kernel`, `@triton.autotune(...)`, a bare `@jit`. Not
# `torch.jit.*`: a scripted function runs PyTorch ops from the host and syncs as Python does.
def kernel_decorator(decorator: cst.Decorator) -> bool:
    expr = decorator.decorator
    return api.kernel_decorator_name(dotted_name(expr.func if isinstance(expr, cst.Call) else expr) or "")


def device_uses(analysis: PlacementAnalysis, chain, facts: ScopeFacts, candidates: dict[str, cst.Param]) -> dict[str, Placement]:
    """Parameters of the function `chain[-1]` shown to be device tensors by their uses."""
    return _Uses(analysis, chain, facts, candidates).run(chain[-1])
