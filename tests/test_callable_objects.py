"""A call of a local object (`check(...)` with `check = StopCheck(...)`) runs its class's
`__call__`: the repository index gives that method's parameters what the call passes
(synclint/repo/summary.py `_callees`, `_classes_of_object`). Where each branch builds another
class (`check = DeferredStopCheck(...)` / `check = StopCheck()`), every one of them is reached.
A decoding loop's stopping check, a logits processor or a criterion object kept in a local
are the usual shapes."""

from __future__ import annotations

import textwrap
from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence

# The stopping checks of a decoding loop: the plain one reads the flags back every step, the
# deferred one reads them through a pinned copy and an event.
CHECKS = """\
    import torch


    class StopCheck:
        def __init__(self, streamer=None):
            self.streamer = streamer

        def __call__(self, unfinished: torch.Tensor, tokens: torch.Tensor, length: int) -> bool:
            if self.streamer is not None:
                self.streamer.put(tokens.cpu())
            return bool(unfinished.max() == 0)


    class DeferredStopCheck(StopCheck):
        def __init__(self, max_length: int, streamer=None):
            super().__init__(streamer)
            self.max_length = max_length
            self.pending = None

        def __call__(self, unfinished: torch.Tensor, tokens: torch.Tensor, length: int) -> bool:
            done = self.pending is not None and self.pending.query()
            self.pending = torch.cuda.Event()
            self.pending.record()
            return done or length >= self.max_length


    class HostStopCheck:
        def __call__(self, unfinished: torch.Tensor, tokens: torch.Tensor, length: int) -> bool:
            return bool(unfinished.max() == 0)
    """

LOOP = """\
    import torch

    from pkg.checks import DeferredStopCheck, StopCheck


    def decode(model, input_ids: torch.Tensor, max_length: int, deferred: bool, streamer=None):
        unfinished = torch.ones(input_ids.shape[0], dtype=torch.long, device="cuda")
        if deferred:
            check = DeferredStopCheck(max_length, streamer)
        else:
            check = StopCheck(streamer)
        finished = False
        while not finished:
            logits = model(input_ids)
            next_tokens = logits[:, -1].argmax(dim=-1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            unfinished = unfinished & (next_tokens != 2)
            finished = check(unfinished, next_tokens, input_ids.shape[1])
        return input_ids
    """

# The same class called with host flags only: a look-alike that must stay unplaced.
HOST_LOOP = """\
    import torch

    from pkg.checks import HostStopCheck


    def replay(rows: list[list[int]]):
        check = HostStopCheck()
        unfinished = torch.ones(len(rows), dtype=torch.long)
        for row in rows:
            tokens = torch.tensor(row)
            if check(unfinished, tokens, len(row)):
                break
    """


def _files(**more: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/checks.py": CHECKS, "pkg/loop.py": LOOP, **more}


def _row(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line)


def _violations(root: Path, name: str):
    return runner.lint_paths([root / name], Settings(), jobs=1, use_cache=False).violations


PLAIN_CHECK = _row(CHECKS, "return bool(unfinished.max() == 0)")
HOST_CHECK = len(textwrap.dedent(CHECKS).splitlines())  # the last line: HostStopCheck's readback


def test_a_local_object_called_gives_its_class_call_method_what_the_call_passes(tmp_path):
    root = project(tmp_path, _files())
    facts = repo.build(root, use_cache=False)
    # Each branch's class is reached: the plain check and the deferred one.
    for cls in ("StopCheck", "DeferredStopCheck"):
        assert facts.values[("p", f"{cls}.__call__", "unfinished")][0] == repo.DEVICE
    found = {v.location.row: v for v in _violations(root, "pkg/checks.py")}
    assert found[PLAIN_CHECK].code == "SL203"
    assert found[PLAIN_CHECK].confidence is Confidence.MEDIUM
    assert any("`StopCheck.__call__()` is given only device tensors" in step for step in found[PLAIN_CHECK].provenance)


def test_a_class_no_call_gives_device_tensors_stays_unplaced(tmp_path):
    root = project(tmp_path, _files(**{"pkg/replay.py": HOST_LOOP}))
    facts = repo.build(root, use_cache=False)
    assert facts.values.get(("p", "HostStopCheck.__call__", "unfinished"), (0,))[0] != repo.DEVICE
    found = {v.location.row: v for v in _violations(root, "pkg/checks.py")}
    # Its readback is left at low confidence (hidden by default), the plain check's is shown.
    assert HOST_CHECK not in found
    assert found[PLAIN_CHECK].confidence is Confidence.MEDIUM


def test_a_name_bound_to_something_else_in_one_branch_reaches_no_call_method(tmp_path):
    loop = LOOP.replace("            check = StopCheck(streamer)", "            check = make_check(streamer)")
    loop = loop.replace("from pkg.checks import DeferredStopCheck, StopCheck",
                        "from pkg.checks import DeferredStopCheck, StopCheck\n    from pkg.factory import make_check")
    factory = "def make_check(streamer):\n    return None\n"
    root = project(tmp_path, _files(**{"pkg/loop.py": loop, "pkg/factory.py": factory}))
    facts = repo.build(root, use_cache=False)
    # One binding whose class the code does not say: the call is read by its name, as any
    # call of an unknown object, and neither class's `__call__` is given its arguments.
    for cls in ("StopCheck", "DeferredStopCheck"):
        assert facts.values.get(("p", f"{cls}.__call__", "unfinished"), (0,))[0] != repo.DEVICE
