"""A method alias (`self.update = self.update_windowed` set in `__init__`, or `self.act =
helper`) makes `obj.update(...)` run the method it is bound to: the repository index gives
that method's parameters what the calls of the alias pass, and the call graph reaches it
from their callers (synclint/repo/classes.py `_method_aliases`, `_CallGraph._aliased`)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence

BATCH = """\
    from dataclasses import dataclass
    import torch


    @dataclass
    class StepBatch:
        req_slots: torch.Tensor
        seq_lens: torch.Tensor


    def build_batch(slots, lens, device):
        return StepBatch(
            req_slots=torch.tensor(slots, dtype=torch.int64).to(device, non_blocking=True),
            seq_lens=torch.tensor(lens, dtype=torch.int32).to(device, non_blocking=True),
        )
    """

# An indices updater whose `update` is chosen once, in `__init__`, by the kind of attention;
# the stub keeps the signature for type checkers. Its callers pass the batch's device tensors.
UPDATER = """\
    from typing import Optional

    import torch


    class PageTableUpdater:
        def __init__(self, window: int, windowed: bool, cross: bool):
            self.window = window
            self.page_offsets = torch.zeros(257, dtype=torch.int32, device="cuda")
            if windowed:
                self.update = self.update_windowed
            elif cross:
                self.update = self.update_encoder_decoder
            else:
                self.update = self.update_plain

        def update(self, req_slots: torch.Tensor, seq_lens: torch.Tensor, total_len: int,
                   encoder_lens: Optional[torch.Tensor]):
            raise NotImplementedError()

        def update_plain(self, req_slots: torch.Tensor, seq_lens: torch.Tensor, total_len: int,
                          encoder_lens: Optional[torch.Tensor]):
            self.plan(req_slots, seq_lens, total_len)

        def update_windowed(self, req_slots: torch.Tensor, seq_lens: torch.Tensor, total_len: int,
                                  encoder_lens: Optional[torch.Tensor]):
            for wrapper_id in range(2):
                if wrapper_id == 0:
                    lens = torch.minimum(seq_lens, torch.tensor(self.window + 1))
                    lens_sum = lens.sum().item()
                else:
                    lens = seq_lens
                    lens_sum = total_len
                self.plan(req_slots, lens, lens_sum)

        def update_encoder_decoder(self, req_slots: torch.Tensor, seq_lens: torch.Tensor, total_len: int,
                                   encoder_lens: Optional[torch.Tensor]):
            self.plan(req_slots, encoder_lens, encoder_lens.sum().item())

        def plan(self, req_slots: torch.Tensor, lens: torch.Tensor, lens_sum: int):
            self.page_offsets[1 : lens.shape[0] + 1] = torch.cumsum(lens, dim=0)


    class UnusedUpdater:
        def update_windowed(self, req_slots: torch.Tensor, seq_lens: torch.Tensor, total_len: int,
                                  encoder_lens: Optional[torch.Tensor]):
            return seq_lens.sum().item()
    """

BACKEND = """\
    import torch
    from torch import nn

    from pkg.batch import StepBatch
    from pkg.updater import PageTableUpdater


    class AttentionBackend:
        def __init__(self, window: int):
            self.page_table_updater = PageTableUpdater(window, windowed=window > 0, cross=False)

        def init_metadata(self, batch: StepBatch):
            self.page_table_updater.update(batch.req_slots, batch.seq_lens, 0, encoder_lens=None)


    class Model(nn.Module):
        def __init__(self, backend: AttentionBackend):
            super().__init__()
            self.backend = backend

        def forward(self, x: torch.Tensor, batch: StepBatch):
            self.backend.init_metadata(batch)
            return x
    """


def _violations(root: Path, name: str, **settings):
    return runner.lint_paths([root / name], Settings(**settings), jobs=1, use_cache=False).violations


def _files(updater: str = UPDATER, backend: str = BACKEND) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/updater.py": updater, "pkg/backend.py": backend}


def _row(text: str, needle: str, nth: int = 0) -> int:
    rows = [i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line]
    return rows[nth]


SLIDING_SUM = _row(UPDATER, "lens_sum = lens.sum().item()")
UNUSED_SUM = _row(UPDATER, "return seq_lens.sum().item()")


def test_a_method_bound_to_a_field_in_init_is_given_what_the_calls_of_the_field_pass(tmp_path):
    root = project(tmp_path, _files())
    found = {v.location.row: v for v in _violations(root, "pkg/updater.py")}
    # `lens.sum().item()` in update_windowed: seq_lens is the batch's device tensor.
    assert found[SLIDING_SUM].code == "SL201"
    assert found[SLIDING_SUM].confidence is Confidence.MEDIUM
    assert any("`PageTableUpdater.update_windowed()` is given only device tensors" in step for step in found[SLIDING_SUM].provenance)
    facts = repo.build(root, use_cache=False)
    for method in ("update_windowed", "update_plain", "update_encoder_decoder"):
        assert facts.values[("p", f"PageTableUpdater.{method}", "seq_lens")][0] == repo.DEVICE
    # What the method passes on from its parameters reaches the helper it calls.
    assert facts.values[("p", "PageTableUpdater.plan", "lens")][0] == repo.DEVICE
    # A namesake method of another class is not reached through the alias (it is still given,
    # by its name, what the calls of that name pass, as for any call by name).
    assert ("p", "UnusedUpdater.update_windowed", "seq_lens") not in facts.values


def test_the_call_graph_reaches_the_bound_method_from_the_callers_of_the_field(tmp_path):
    root = project(tmp_path, _files())
    facts = repo.build(root, use_cache=False)
    for target in ("PageTableUpdater.update_windowed", "PageTableUpdater.update_plain", "PageTableUpdater.update_encoder_decoder"):
        assert facts.callers[target] == ("AttentionBackend.init_metadata",)
    assert "UnusedUpdater.update_windowed" not in facts.callers
    found = {v.location.row: v for v in _violations(root, "pkg/updater.py")}
    assert found[SLIDING_SUM].tier == "hot"
    assert found[SLIDING_SUM].tier_reason == (
        "runs every step (called from Model.forward: Model.forward -> AttentionBackend.init_metadata -> PageTableUpdater.update_windowed)"
    )
    assert found[UNUSED_SUM].tier == "unknown"


def test_an_alias_without_a_stub_and_called_on_self(tmp_path):
    updater = """\
        import torch


        class Sampler:
            def __init__(self, greedy: bool):
                self.pick = self.pick_greedy if greedy else self.pick_top_p

            def pick_greedy(self, probs: torch.Tensor):
                return int(probs.argmax().item())

            def pick_top_p(self, probs: torch.Tensor):
                return int(torch.multinomial(probs, 1).item())

            def sample(self, logits: torch.Tensor):
                return self.pick(torch.softmax(logits, dim=-1))
        """
    backend = """\
        import torch

        from pkg.updater import Sampler


        class Runner:
            def __init__(self):
                self.sampler = Sampler(greedy=True)
                self.logits = torch.zeros(8, 32000, device="cuda")

            def run(self):
                return self.sampler.sample(self.logits)
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/updater.py": updater, "pkg/backend.py": backend})
    facts = repo.build(root, use_cache=False)
    assert facts.callers["Sampler.pick_greedy"] == ("Sampler.sample",)
    assert facts.values[("p", "Sampler.pick_top_p", "probs")][0] == repo.DEVICE
    # A conditional expression binds either method.
    rows = {v.location.row for v in _violations(root, "pkg/updater.py")}
    assert {9, 12} <= rows


def test_a_field_bound_to_a_module_function(tmp_path):
    layer = """\
        import torch


        def reference_topk(scores: torch.Tensor, k: int):
            return torch.topk(scores, k, dim=-1)[1].tolist()


        def unused_topk(scores: torch.Tensor, k: int):
            return torch.topk(scores, k, dim=-1)[1].tolist()


        class Router:
            def __init__(self, fast: bool):
                if not fast:
                    self.select = reference_topk

            def route(self, scores: torch.Tensor):
                return self.select(scores, 2)
        """
    backend = """\
        import torch

        from pkg.layer import Router


        class Layer:
            def __init__(self):
                self.router = Router(fast=False)
                self.gate = torch.zeros(16, 8, device="cuda")

            def step(self):
                return self.router.route(self.gate)
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/layer.py": layer, "pkg/backend.py": backend})
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "reference_topk", "scores")][0] == repo.DEVICE
    assert ("p", "unused_topk", "scores") not in facts.values
    rows = {v.location.row for v in _violations(root, "pkg/layer.py")}
    assert 5 in rows and 9 not in rows


def test_callers_that_pass_host_data_keep_the_bound_method_silent(tmp_path):
    backend = BACKEND.replace(
        "self.page_table_updater.update(batch.req_slots, batch.seq_lens, 0, encoder_lens=None)",
        "self.page_table_updater.update(torch.tensor(slots), torch.tensor(lens), 0, encoder_lens=None)",
    ).replace("def init_metadata(self, batch: StepBatch):", "def init_metadata(self, slots: list[int], lens: list[int]):")
    root = project(tmp_path, _files(backend=backend))
    assert _violations(root, "pkg/updater.py", include_cold=True) == []
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "PageTableUpdater.update_windowed", "seq_lens")][0] == repo.HOST


def _aliases(source: str) -> dict:
    tree = ast.parse(source)
    imports = {"torch": ("torch",), "F": ("torch.nn.functional",), "fused_add": ("pkg.ops.fused_add",)}
    values = repo.classes._module_values(tree)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    return repo.classes._method_aliases(cls, imports, values)


def test_what_is_an_alias_and_what_is_a_value():
    source = """
DEFAULT_SCALE = 1.0

class Block:
    cap = 4

    def __init__(self, inner: int, fn, compiled: bool):
        self.inner_dim = inner
        self.hidden_size = self.inner_dim          # a field the class writes: a value
        self.limit = self.cap                      # a class attribute: a value
        self.callback = fn                         # a parameter: unknown
        local = lambda x: x
        self.local_fn = local                      # a local: unknown
        self.act = F.silu                          # a library function
        self.kind = Block                          # a class
        self.scale = DEFAULT_SCALE                 # a module-level value
        self.add = fused_add                       # a function imported from the repository
        self._forward = torch.compile(self._forward_impl) if compiled else self._forward_impl
        self.run = self._run_eager
        if compiled:
            self.run = torch.compile(self._run_graph)

    def _forward_impl(self, x):
        return x

    def _run_eager(self, x):
        return x

    def _run_graph(self, x):
        return x
"""
    assert _aliases(source) == {
        "add": ["pkg>fused_add"],
        "_forward": ["self._forward_impl"],
        "run": ["self._run_eager", "self._run_graph"],
    }


OPS = """\
    import torch


    def reference_topk(scores: torch.Tensor, k: int):
        return torch.topk(scores, k, dim=-1)[1].tolist()
    """

ROUTER = """\
    import torch

    from pkg.ops import reference_topk


    class Router:
        def __init__(self):
            self.select = reference_topk
            self.gate = torch.zeros(16, 8, device="cuda")

        def route(self):
            return self.select(self.gate, 2)
    """


def test_an_edit_of_an_alias_or_of_what_it_binds_equals_a_full_solve(tmp_path, monkeypatch):
    from test_incremental_solve import _check

    root = project(tmp_path / "a", _files())
    edited = textwrap.dedent(UPDATER).replace("self.update = self.update_windowed", "self.update = self.update_plain")
    assert _check(root, monkeypatch, {"pkg/updater.py": edited}) == "full"
    root = project(tmp_path / "b", {"pkg/__init__.py": "", "pkg/ops.py": OPS, "pkg/router.py": ROUTER})
    # The function the alias binds takes its arguments in another order now.
    swapped = textwrap.dedent(OPS).replace("(scores: torch.Tensor, k: int)", "(k: int, scores: torch.Tensor)")
    assert _check(root, monkeypatch, {"pkg/ops.py": swapped}) == "full"
    assert ("p", "reference_topk", "scores") not in repo.build(root, use_cache=False).values
