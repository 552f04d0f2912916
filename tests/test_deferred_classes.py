"""An object whose class another file decides: what a method of another module's class
returns (`out = self.target_worker.forward_step(batch)`), the class a property declares
(`@property def target_worker(self) -> ModelWorker` in a base of another module), and a
method that returns another function's result (`return run_verify(...)`). The index keeps
such a class as a path while it summarises one file and resolves it once every file's
classes are known, so `out.next_token_ids` reads that class's field, not every field of the
name (which another class fills with host tensors)."""

from __future__ import annotations

from pathlib import Path

from tests.index_projects import findings, project

RESULT = """\
    from dataclasses import dataclass
    from typing import Optional

    import torch


    @dataclass
    class StepResult:
        next_token_ids: Optional[torch.Tensor] = None


    class Request:
        def __init__(self, prompt_ids):
            self.next_token_ids: torch.Tensor = torch.tensor(prompt_ids[-1:])
    """

WORKER = """\
    import torch

    from eng.result import StepResult


    class ModelWorker:
        def forward_step(self, batch) -> StepResult:
            ids = torch.zeros(len(batch), dtype=torch.int64, device="cuda")
            return StepResult(next_token_ids=ids)


    def run_verify(batch, worker: ModelWorker) -> StepResult:
        return worker.forward_step(batch)
    """

BASE = """\
    from eng.worker import ModelWorker


    class SpecWorkerBase:
        @property
        def target_worker(self) -> ModelWorker:
            return self._target_worker
    """

SPEC = """\
    from eng.base import SpecWorkerBase
    from eng.worker import run_verify


    class SpecWorker(SpecWorkerBase):
        def __init__(self, target_worker, helper):
            self._target_worker = target_worker
            self.helper = helper

        def verify(self, batch):
            return run_verify(batch, self.target_worker)

        def forward(self, batch, is_prefill: bool):
            if is_prefill:
                out = self.target_worker.forward_step(batch)
            else:
                out = self.verify(batch)
            return out.next_token_ids.tolist()

        def forward_unknown(self, batch):
            res = self.helper.step(batch)
            return res.next_token_ids.tolist()
    """


def _files() -> dict[str, str]:
    return {"eng/__init__.py": "", "eng/result.py": RESULT, "eng/worker.py": WORKER, "eng/base.py": BASE, "eng/spec.py": SPEC}


def test_a_result_of_another_module_s_method_reads_its_class_s_field(tmp_path: Path):
    root = project(tmp_path / "proj", _files())
    shown = {(row, code) for _, row, code in findings(root, "eng/spec.py")}
    # `out` is a `StepResult` on both branches (through the base's property and the method
    # that returns `run_verify(...)`): its device field is read back.
    assert (18, "SL202") in shown, shown
    # Look-alike: the helper's class is known nowhere; the name's fields hold device tensors
    # and host tensors: not a default finding.
    assert (22, "SL202") not in shown, shown
    low = {(row, code) for _, row, code in findings(root, "eng/spec.py", min_confidence="low")}
    assert (22, "SL202") in low, low


def test_a_branch_whose_class_is_unknown_leaves_the_object_unknown(tmp_path: Path):
    # Look-alike: on one branch `out` comes from a method of no known class: which class it
    # is, nothing says, so its field is read by name (low).
    files = _files()
    files["eng/spec.py"] = SPEC.replace("out = self.verify(batch)", "out = self.helper.step(batch)")
    root = project(tmp_path / "proj", files)
    shown = {(row, code) for _, row, code in findings(root, "eng/spec.py")}
    assert (18, "SL202") not in shown, shown
