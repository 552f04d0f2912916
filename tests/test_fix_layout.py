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


# --- the line structure of the code a fix writes (synclint/fix/layout.py) -----------------

from synclint.fix.layout import SLACK, line_length  # noqa: E402


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


# vLLM's shape: a call written one argument a line, with a trailing comma
ONE_PER_LINE = textwrap.dedent(
    """\
    import torch


    class EplbState:
        def step(self, physical_to_logical_map_list: list[int]):
            physical_to_logical_map = torch.tensor(
                physical_to_logical_map_list,
                device=self.device,
            )
            return physical_to_logical_map
    """
)


def test_a_call_written_one_argument_a_line_stays_so():
    result = fix_source(ONE_PER_LINE, "eplb.py", Settings())
    assert result.applied == 1
    assert (
        "        physical_to_logical_map = torch.tensor(\n"
        "            physical_to_logical_map_list,\n"
        "            pin_memory=torch.cuda.is_available(),\n"
        "        ).to(self.device, non_blocking=torch.cuda.is_available())\n"
    ) in result.fixed
    assert fix_source(result.fixed, "eplb.py", Settings()).fixed == result.fixed


# Qwen's shape: numpy data (pinned as a tensor), a multi-line call with a conditional dtype
MULTI_LINE_NUMPY = textwrap.dedent(
    """\
    import numpy as np
    import torch


    def window_index(cu_window_seqlens: np.ndarray, grid_thw, x):
        cu_window_seqlens = torch.tensor(
            cu_window_seqlens,
            device=x.device,
            dtype=grid_thw.dtype if torch.jit.is_tracing() else torch.int32,
        )
        return cu_window_seqlens
    """
)


def test_a_multi_line_call_rewritten_to_the_pinned_form_stays_open_and_within_the_line_length():
    result = fix_source(MULTI_LINE_NUMPY, "qwen.py", Settings())
    assert result.applied == 1
    body = result.fixed.split("def window_index", 1)[1]
    assert body.count("\n") > 4  # not collapsed into one line
    assert "    cu_window_seqlens = (\n        torch.as_tensor(" in body
    assert _widest(result.fixed) <= line_length(MULTI_LINE_NUMPY) + SLACK
    compile(result.fixed, "qwen.py", "exec")
    assert fix_source(result.fixed, "qwen.py", Settings()).fixed == result.fixed


def test_a_line_pushed_far_past_the_line_length_is_broken_inside_the_replacement():
    source = "import torch\n\n\ndef positions(frames, positions: list[int]):\n    return frames[torch.tensor(positions, dtype=torch.long, device=frames.device)]\n"
    result = fix_source(source, "video.py", Settings())
    assert result.applied == 1
    assert result.fixed.endswith(
        "    return frames[torch.tensor(\n"
        "        positions, dtype=torch.long, pin_memory=torch.cuda.is_available()\n"
        "    ).to(frames.device, non_blocking=torch.cuda.is_available())]\n"
    )
    assert _widest(result.fixed) <= 88


def test_a_line_a_fix_lengthens_a_little_stays_whole():
    source = "import torch\n\n\ndef mask(logits):\n    return logits[:, torch.tensor([1, 3], dtype=torch.long, device=logits.device)]\n"
    settings = Settings(h2d_helper="vllm.utils.torch_utils.async_tensor_h2d")
    result = fix_source(source, "m.py", settings)
    assert result.applied == 1
    assert "    return logits[:, async_tensor_h2d([1, 3], dtype=torch.long, device=logits.device)]\n" in result.fixed


def test_the_line_length_is_the_files_own():
    wide = "x = 1  # " + "-" * 130 + "\n"
    assert line_length("a = 1\n") == 88
    assert line_length(wide * 50) == len(wide) - 1
    assert line_length("a = 1\n" * 990 + wide * 10) == 88  # 1% of lines longer do not count
    source = wide * 3 + "import torch\n\n\ndef f(ids: list[int], device):\n    return torch.tensor(ids, dtype=torch.int32, device=device)\n"
    fixed = fix_source(source, "m.py", Settings()).fixed
    assert "    return torch.tensor(ids, dtype=torch.int32, pin_memory=" in fixed  # fits in 139


def test_layout_in_a_crlf_file_inside_a_continuation_keeps_crlf_and_compiles():
    source = (
        "import numpy as np\r\nimport torch\r\n\r\n\r\ndef f(a: np.ndarray, device):\r\n"
        "    return dict(\r\n        values=torch.tensor(a, device=device),\r\n    )\r\n"
    )
    result = fix_source(source, "m.py", Settings())
    assert result.applied == 1
    assert "\n" not in result.fixed.replace("\r\n", "")
    assert "        values=(\r\n            torch.as_tensor(a).pin_memory()\r\n" in result.fixed
    compile(result.fixed, "m.py", "exec")
    assert fix_source(result.fixed, "m.py", Settings()).fixed == result.fixed
