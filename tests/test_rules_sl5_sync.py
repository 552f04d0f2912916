"""SL501: explicit synchronizations are reported on hot paths only, and intended ones
(allow-contexts, allow-functions) are not reported."""

from __future__ import annotations

import textwrap

import pytest

from synclint.config import Settings
from synclint.engine import lint_source
from synclint.violation import Confidence

ANY = Settings(select=("SL501",), min_confidence=Confidence.LOW)


def findings(source: str, settings: Settings = ANY) -> list[tuple[int, str]]:
    result = lint_source(textwrap.dedent(source), "case.py", settings)
    return [(v.location.row, v.confidence.label) for v in result.violations]


@pytest.mark.parametrize(
    "call",
    ["torch.cuda.synchronize()", "torch.accelerator.synchronize()", "torch.cuda.current_stream().synchronize()"],
)
def test_device_syncs_in_a_hot_function_are_high_confidence(call):
    source = f"""\
    import torch

    def forward(self, x):
        y = self.proj(x)
        {call}
        return y
    """
    assert findings(source) == [(5, "high")]


def test_the_same_call_outside_hot_code_is_not_reported():
    source = """\
    import torch

    def load_weights(model):
        model.cuda()
        torch.cuda.synchronize()
    """
    assert findings(source) == []


def test_loop_bodies_are_hot_but_the_loop_header_and_else_are_not():
    source = """\
    import torch

    def generate(model, steps):
        for _ in range(steps):
            model.step()
            torch.cuda.synchronize()
        else:
            torch.cuda.synchronize()
        torch.cuda.synchronize()
    """
    assert findings(source) == [(6, "medium")]


def test_event_and_stream_objects():
    source = """\
    import torch

    def execute_model(self, batch):
        done = torch.cuda.Event()
        done.record()
        done.synchronize()
        self.copy_stream.synchronize()
        self.copy_ready_event.synchronize()
        self.pool.synchronize()
        torch.cuda.current_stream().wait_event(done)
    """
    assert findings(source) == [(6, "high"), (7, "medium"), (8, "medium"), (9, "low")]


def test_allow_context_and_allow_function_suppress_intended_syncs():
    source = """\
    import torch
    from vllm.utils import gpu_sync_allowed

    def execute_model(self, batch):
        with gpu_sync_allowed():
            torch.cuda.synchronize()
        torch.cuda.synchronize()

    def profile_run(self):
        for _ in range(3):
            torch.cuda.synchronize()
    """
    assert findings(source, ANY.replace(allow_contexts=("gpu_sync_allowed",))) == [(7, "high")]
    assert findings(source) == [(6, "high"), (7, "high")]


def test_hot_functions_setting_decides_what_is_hot():
    source = """\
    import torch

    def my_step(self):
        torch.cuda.synchronize()
    """
    assert findings(source) == []
    assert findings(source, ANY.replace(hot_functions=("my_*",))) == [(4, "high")]
    assert findings(source, ANY.replace(hot_functions=("my_*",), allow_functions=("my_step",))) == []
