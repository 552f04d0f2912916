"""`ctx.hot_path`: which code runs every step, asked the way rules ask it (through `reveal`),
and carried onto real findings (JSON `hot_path`)."""

from __future__ import annotations

import json
import textwrap

import pytest

from synclint.analysis.reveal import reveal_placements
from synclint.config import Settings
from synclint.engine import lint_source
from synclint.report import render

CASES = [
    ("forward", """
        class Model:
            def forward(self, x):
                reveal(x)""", "in forward()"),
    ("dunder-call", """
        class Sampler:
            def __call__(self, logits):
                reveal(logits)""", "in __call__()"),
    ("execute-model", """
        class GPUModelRunner:
            def execute_model(self, scheduler_output):
                reveal(scheduler_output)""", "in execute_model()"),
    ("compute-logits", """
        def compute_logits(self, hidden_states):
            reveal(hidden_states)""", "in compute_logits()"),
    ("sample-prefix", """
        def sample_tokens(logits):
            reveal(logits)""", "in sample_tokens()"),
    ("prepare-inputs", """
        def _prepare_inputs(self, scheduler_output):
            reveal(scheduler_output)""", "in _prepare_inputs()"),
    ("prepare-metadata-pattern", """
        def prepare_decode_metadata(self, batch):
            reveal(batch)""", "in prepare_decode_metadata()"),
    ("cold-helper", """
        def load_weights(self, weights):
            reveal(weights)""", None),
    ("cold-init", """
        class Model:
            def __init__(self, config):
                reveal(config)""", None),
    ("nested-def-in-hot", """
        def forward(self, x):
            def helper(y):
                reveal(y)
            return helper(x)""", "in forward()"),
    ("loop-body-in-cold-function", """
        def load(weights):
            for name, w in weights:
                reveal(w)""", "in a loop"),
    ("while-body", """
        def drain(q):
            while q:
                reveal(q)""", "in a loop"),
    ("loop-iterable-is-not-hot", """
        def load(weights):
            for w in reveal(weights):
                pass""", None),
    ("loop-else-is-not-hot", """
        def load(weights):
            for w in weights:
                pass
            else:
                reveal(weights)""", None),
    ("def-inside-loop-body-is-not-hot", """
        def build(names):
            for n in names:
                def hook(t):
                    reveal(t)""", None),
    ("comprehension-element", """
        def build(cu):
            lens = [reveal(cu[i + 1] - cu[i]) for i in range(4)]""", "in a comprehension loop"),
    ("comprehension-first-iterable-is-not-hot", """
        def build(cu):
            lens = [i for i in reveal(cu)]""", None),
    ("module-level-loop", """
        for step in range(10):
            reveal(step)""", "in a loop"),
    ("torch-compile-decorator", """
        import torch
        @torch.compile
        def fused_add(x, y):
            reveal(x)""", "under @torch.compile"),
    ("torch-compile-decorator-call", """
        import torch
        @torch.compile(dynamic=True)
        def apply_rotary(q, cos):
            reveal(q)""", "under @torch.compile"),
    ("compile-alias", """
        from torch import compile as tc
        @tc(fullgraph=True)
        def fused(x):
            reveal(x)""", "under @torch.compile"),
    ("jit-script", """
        import torch
        @torch.jit.script
        def gelu(x):
            reveal(x)""", "under @torch.jit.script"),
    ("support-torch-compile-project-decorator", """
        from vllm.compilation.decorators import support_torch_compile
        @support_torch_compile
        def run(x):
            reveal(x)""", "under @vllm.compilation.decorators.support_torch_compile"),
    ("torch-compile-call-module-level", """
        import torch
        def _philox_uniform(seed, n):
            reveal(seed)
        _compiled_philox_uniform = torch.compile(_philox_uniform, fullgraph=True, dynamic=True)""", "compiled by torch.compile()"),
    ("torch-compile-call-on-method", """
        import torch
        class Model:
            def __init__(self):
                if True:
                    self._run = torch.compile(self._forward_impl, dynamic=True)
            def _forward_impl(self, x):
                reveal(x)""", "compiled by torch.compile()"),
    ("torch-compile-call-returned", """
        import torch as th
        def get_kernel():
            return th.compile(flex_attention, dynamic=False)
        def flex_attention(q):
            reveal(q)""", "compiled by torch.compile()"),
    ("compile-of-other-library-is-not-hot", """
        import re
        def matcher(s):
            reveal(s)
        pattern = re.compile(matcher)""", None),
    ("unrelated-decorator", """
        import functools
        @functools.lru_cache
        def table(n):
            reveal(n)""", None),
    ("cuda-graph-capture", """
        import torch
        def capture(g, x):
            with torch.cuda.graph(g):
                reveal(x)""", "under CUDA graph capture"),
    ("hot-name-wins-over-loop", """
        def forward(self, xs):
            for x in xs:
                reveal(x)""", "in forward()"),
]


def _hot(source: str, settings: Settings | None = None) -> str | None:
    revealed = reveal_placements(textwrap.dedent(source).strip("\n") + "\n", settings)
    assert len(revealed) == 1
    return revealed[0].hot_path


@pytest.mark.parametrize("case_id,source,expected", CASES, ids=[c[0] for c in CASES])
def test_hot_path(case_id, source, expected):
    assert _hot(source) == expected


def test_configured_patterns_replace_the_defaults():
    source = """
        class Engine:
            def step_once(self, batch):
                reveal(batch)
            def forward(self, x):
                reveal(x)
    """
    settings = Settings(hot_functions=("step_*",))
    revealed = reveal_placements(textwrap.dedent(source), settings)
    assert [r.hot_path for r in revealed] == ["in step_once()", None]


def test_class_qualified_pattern():
    source = """
        class Scheduler:
            def schedule(self, reqs):
                reveal(reqs)
        class Other:
            def schedule(self, reqs):
                reveal(reqs)
    """
    settings = Settings(hot_functions=("Scheduler.schedule",))
    revealed = reveal_placements(textwrap.dedent(source), settings)
    assert [r.hot_path for r in revealed] == ["in schedule()", None]


def test_findings_carry_the_hot_path_into_json(tmp_path):
    path = tmp_path / "runner.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch

            def forward(self, x):
                g = torch.zeros(4, device="cuda")
                return g.sum().item()

            def report(stats):
                g = torch.zeros(4, device="cuda")
                return g.sum().item()
            """
        )
    )
    result = lint_source(path.read_bytes(), str(path), Settings())
    items = [d for d in json.loads(render("json", result.violations)) if d["code"] == "SL201"]
    assert [(d["location"]["row"], d["hot_path"]) for d in items] == [(6, "in forward()"), (10, None)]
