"""A fix that rewrites a multi-line expression keeps the layout of its continuation lines,
whatever the rule: the engine renders replacements inside the enclosing blocks' indents."""

from __future__ import annotations

import textwrap

from synclint.config import Settings
from synclint.fix import fix_source

NESTED_MULTILINE = textwrap.dedent(
    '''\
    import torch


    class GPUModelRunner:
        def _prepare_inputs(self, req_indices_gpu, num_scheduled_tokens: list[int], device):
            counts = torch.tensor(num_scheduled_tokens, dtype=torch.int32, pin_memory=True).to(device, non_blocking=True)
            if req_indices_gpu is not None:
                req_indices = torch.repeat_interleave(
                    req_indices_gpu,
                    counts,  # one count per request
                )
            return req_indices
    '''
)


def test_unsafe_multiline_fix_keeps_comments_and_one_argument_per_line():
    result = fix_source(NESTED_MULTILINE, "runner.py", Settings(select=("SL403",)), unsafe=True)
    assert result.applied == 1
    assert (
        "            req_indices = torch.repeat_interleave(\n"
        "                req_indices_gpu,\n"
        "                counts,  # one count per request\n"
        "                output_size=sum(num_scheduled_tokens),\n"
        "            )\n"
    ) in result.fixed
    compile(result.fixed, "runner.py", "exec")


MULTILINE_FACTORY = textwrap.dedent(
    '''\
    import torch


    class Sampler:
        def forward(self, logits, device):
            for _ in range(2):
                bias = torch.tensor(
                    [0.0, 1.0],
                    device=device,
                )
            return logits + bias
    '''
)


def test_safe_multiline_helper_fix_keeps_every_line_in_place():
    result = fix_source(MULTILINE_FACTORY, "sampler.py", Settings(select=("SL101",)), unsafe=False)
    assert result.applied == 1
    assert (
        "            bias = torch.tensor(\n"
        "                [0.0, 1.0],\n"
        "                pin_memory=torch.cuda.is_available(),\n"
        "            ).to(device, non_blocking=torch.cuda.is_available())\n"
    ) in result.fixed
