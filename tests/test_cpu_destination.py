"""A destination device that every caller gives the CPU: the move stays on the host.

A helper that takes the device a tensor goes to (`.to(device)`, `torch.tensor(x,
device=device)`) looks like a host-to-device copy in its own file. Where every call of it
from code not known to be cold passes the CPU (`"cpu"`, `torch.device("cpu")`, a local bound
only to one; or leaves a `None` default out: `.to(None)` moves nothing), the repository's
call graph says so (synclint/analysis/guards.py kind `c`, synclint/repo/
`_CallGraphTiers.passed_by`), and the analysis reads the parameter as the CPU at low
confidence (synclint/analysis/flow.py `_given_only_the_cpu`): SL101, SL102 and SL103 are
hidden by default, and `--explain` names the callers. One call passing anything else (a
tensor's `.device`, `"cuda"`, `**kwargs`, a parameter of its own whose callers the index does
not know) keeps the finding."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import runner
from synclint.analysis import guards
from synclint.config import Settings
from synclint.violation import Confidence

PADDING = """\
    import numpy as np
    import torch


    def make_padded(rows, pad, *, max_len=None, device: str | torch.device | None = None, pin_memory: bool = False):
        if max_len is None:
            max_len = max(map(len, rows), default=0)
        array = np.full((len(rows), max_len), pad, dtype=np.int64)
        for i, row in enumerate(rows):
            array[i, : len(row)] = row
        tensor = torch.from_numpy(array).to(device)
        if pin_memory:
            tensor = tensor.pin_memory()
        return tensor


    def ids_tensor(ids, device):
        return torch.tensor(ids, dtype=torch.int64, device=device)


    def stage_rows(array, device):
        return torch.from_numpy(array).to(device, non_blocking=True)


    def lengths_or_default(rows, device=None):
        return torch.from_numpy(np.asarray([len(r) for r in rows])).to(device)


    def lengths_left_none(rows, device=None):
        return torch.from_numpy(np.asarray([len(r) for r in rows])).to(device)


    def positions_on(rows, device):
        return torch.from_numpy(np.asarray(rows)).to(device)


    def counts_on(rows, device):
        return torch.tensor([len(r) for r in rows], device=device)


    def offsets_on(rows, device):
        return torch.tensor([0] + [len(r) for r in rows], device=device)


    def slots_on(rows, device):
        return torch.tensor(rows, device=device)


    def relay(rows, device):
        return offsets_on(rows, device)


    def marks_on(rows, device):
        marks = []
        for row in rows:
            marks.append(torch.tensor([0, 1], device=device) + len(row))
        return marks
    """

PENALTIES = """\
    import torch
    from torch import nn

    from pkg.padding import (
        counts_on,
        marks_on,
        ids_tensor,
        lengths_left_none,
        lengths_or_default,
        make_padded,
        positions_on,
        relay,
        slots_on,
        stage_rows,
    )


    def to_tensors(rows, vocab_size: int, device: torch.device) -> torch.Tensor:
        tokens = make_padded(rows, pad=vocab_size, device="cpu", pin_memory=True)
        return tokens.to(device, non_blocking=True)


    class Penalizer(nn.Module):
        def __init__(self, rows):
            super().__init__()
            # Built once: a cold caller passes an accelerator, which does not count.
            self.register_buffer("warm", make_padded(rows, pad=0, device="cuda"))

        def forward(self, logits, rows, ids, array, **options):
            tokens = to_tensors(rows, logits.shape[-1], logits.device)
            host = torch.device("cpu")
            more = ids_tensor(ids, host)
            staged = stage_rows(array, device=torch.device("cpu"))
            lens = lengths_or_default(rows, device="cpu") + lengths_or_default(rows)
            left = lengths_left_none(rows)
            pos = positions_on(rows, logits.device)
            counts = counts_on(rows, "cuda")
            offsets = relay(rows, options["device"])
            slots = slots_on(rows, **options)
            marks = marks_on(rows, device="cpu")
            return logits - tokens.sum() - more.sum() - staged.sum() - lens.sum() - left.sum() - pos.sum() - counts.sum() - offsets.sum() - slots.sum()
    """


def _row(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line)


def _findings(root: Path, name: str, **settings):
    run = runner.lint_paths([root / name], Settings(**settings), jobs=1, use_cache=False)
    return {(v.location.row, v.code): v for v in run.violations}


def _project(tmp_path: Path) -> Path:
    return project(tmp_path, {"pkg/__init__.py": "", "pkg/padding.py": PADDING, "pkg/penalties.py": PENALTIES})


def _at(found: dict, needle: str, code: str):
    return found.get((_row(PADDING, needle), code))


def test_a_device_every_caller_gives_the_cpu_hides_the_move(tmp_path):
    root = _project(tmp_path)
    shown = _findings(root, "pkg/padding.py")
    everything = _findings(root, "pkg/padding.py", min_confidence=Confidence.LOW)
    # `device="cpu"` from the hot caller (the constructor's "cuda" is cold); `torch.device("cpu")`
    # through a local; `device=torch.device("cpu")`; "cpu" or the None default left out.
    for needle, code in (("torch.from_numpy(array).to(device)", "SL103"), ("dtype=torch.int64, device=device", "SL101"),
                         ("non_blocking=True", "SL102"), ("def lengths_or_default", None),
                         ("torch.tensor([0, 1], device=device)", "SL106")):
        if code is None:
            row = _row(PADDING, needle) + 1
            code = "SL103"
        else:
            row = _row(PADDING, needle)
        assert (row, code) not in shown, (needle, code)
        hidden = everything[(row, code)]
        assert hidden.confidence == Confidence.LOW
        assert any("is given only the CPU by its callers outside cold code" in step for step in hidden.provenance), hidden.provenance
    reason = next(s for s in everything[(_row(PADDING, "torch.from_numpy(array).to(device)"), "SL103")].provenance if "only the CPU" in s)
    assert "parameter `device` of `make_padded()`" in reason and "`to_tensors()`" in reason
    default_left = everything[(_row(PADDING, "def lengths_or_default") + 1, "SL103")]
    assert any("or leave it None" in step for step in default_left.provenance)


def test_a_caller_passing_anything_but_the_cpu_keeps_the_finding(tmp_path):
    root = _project(tmp_path)
    shown = _findings(root, "pkg/padding.py")
    # Only ever left None: nothing says where it points (as before); `logits.device`; "cuda";
    # a parameter passed on from a caller that gives a dict's item; `**options`.
    for needle, code in (("def lengths_left_none", "SL103"), ("def positions_on", "SL103"), ("def counts_on", "SL101"),
                         ("def offsets_on", "SL101"), ("def slots_on", "SL101")):
        finding = shown.get((_row(PADDING, needle) + 1, code))
        assert finding is not None, needle
        assert finding.confidence >= Confidence.MEDIUM
        assert not any("only the CPU" in step for step in finding.provenance)


def test_the_kinds_a_call_passes_for_a_device():
    caller = ast.parse(textwrap.dedent("""\
        def step(self, rows, device):
            host = torch.device("cpu")
            other = torch.device("cpu")
            other = device
            f(rows, "cpu", "cpu:1", torch.device("cpu"), torch.device(type="cpu"), host, other, "cuda", "cpu:x", torch.device(device))
        """)).body[0]
    call = next(n for n in ast.walk(caller) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "f")
    kinds = guards.argument_signature(call, guards.parameters(caller), guards.none_assigned(caller)).partition(";")[0].split(",")
    # A local rebound to something else is no CPU device; "cuda" and "cpu:x" are true strings.
    assert kinds == ["@rows#0#-", "c", "c", "c", "c", "c", "g", "T", "T", "g"]
    # The CPU is a true value that is never None, for the branches parameters decide.
    assert guards.can_take(guards.TRUTHY, ["c"]) and guards.can_take(guards.NOT_NONE, ["c"])
    assert not guards.can_take(guards.IS_NONE, ["c"]) and not guards.can_take(guards.FALSY, ["c"])


def test_a_destination_device_is_a_parameter_whose_callers_are_recorded():
    func = ast.parse(textwrap.dedent("""\
        def build(rows, device, target, dtype, other):
            a = torch.tensor(rows, device=device)
            b = torch.from_numpy(rows).to(target, non_blocking=True)
            c = a.to(dtype)
            return a, b, c.cuda(other)
        """)).body[0]
    own = guards.parameters(func)
    # `.to(dtype)` is read as a destination too: the kinds its callers pass only decide
    # anything where the analysis reads the parameter as a device.
    assert guards.destination_parameters(func, own) == {"device", "target", "dtype", "other"}
    assert set(guards.decisive_parameters(func, own, ())) >= {"device", "target", "other"}
