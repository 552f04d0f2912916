"""Table-driven placement tests: real-shaped snippets (spelled the way vLLM, SGLang and
transformers spell them) each with one `reveal(expr)` and the placement the analysis must give
it, asked through the same `ctx.placement` the rules use.

Each case: (id, snippet, expected places, expected confidence). Places are written
"device", "host", "pinned", "numpy", "scalar", "sequence", "accel" (an accelerator device
value), "cpu" (the CPU device), "other", "unknown", joined with "|" when the value may be
either. Snippets get `import torch` and `import numpy as np` unless they import themselves.
"""

from __future__ import annotations

import textwrap

import pytest

from synclint.analysis.placement import Place
from synclint.analysis.reveal import reveal_placements

PLACE_NAMES = {
    "device": Place.DEVICE,
    "host": Place.HOST,
    "pinned": Place.PINNED,
    "numpy": Place.NUMPY,
    "scalar": Place.SCALAR,
    "sequence": Place.SEQUENCE,
    "accel": Place.ACCEL_DEVICE,
    "cpu": Place.CPU_DEVICE,
    "other": Place.OTHER,
    "unknown": Place.UNKNOWN,
}

CASES = [
    # --- the legacy constructors: `torch.Tensor(data)` and `torch.LongTensor(ids)` build on
    # the host, `torch.cuda.LongTensor(ids)` on the GPU; `torch.Tensor` named, not called, is a type
    ("legacy-tensor-constructor-host", """
        chunk_start_idx = torch.Tensor([0, 18, 36]).long()
        reveal(chunk_start_idx)""", "host", "high"),
    ("legacy-long-tensor-host", """
        def pack(tokens):
            ids = torch.LongTensor(tokens)
            reveal(ids)""", "host", "high"),
    ("legacy-cuda-long-tensor-device", """
        def pack(tokens):
            ids = torch.cuda.LongTensor(tokens)
            reveal(ids)""", "device", "high"),
    ("legacy-tensor-type-not-called", """
        def f(x):
            kind = torch.Tensor
            reveal(kind)""", "unknown", "low"),
    # --- factories with and without device= ---------------------------------------------
    ("factory-cuda-string", """
        x = torch.zeros(4, device="cuda")
        reveal(x)""", "device", "high"),
    ("factory-cuda-index-string", """
        x = torch.empty((8, 16), dtype=torch.float16, device="cuda:0")
        reveal(x)""", "device", "high"),
    ("factory-torch-device-cuda-i", """
        def f(rank):
            x = torch.ones(3, device=torch.device("cuda", rank))
            reveal(x)""", "device", "high"),
    ("factory-torch-device-fstring", """
        def f(local_rank):
            device = torch.device(f"cuda:{local_rank}")
            reveal(torch.arange(10, device=device))""", "device", "high"),
    ("factory-cpu-string", """
        x = torch.zeros(4, dtype=torch.int32, device="cpu")
        reveal(x)""", "host", "high"),
    ("factory-torch-device-cpu", """
        x = torch.zeros(4, device=torch.device("cpu"))
        reveal(x)""", "host", "high"),
    ("factory-no-device", """
        x = torch.arange(0, 64, 2, dtype=torch.int64)
        reveal(x)""", "host", "high"),
    ("factory-device-parameter", """
        def build(n, device):
            return reveal(torch.zeros(n, device=device))""", "device", "medium"),
    ("factory-device-parameter-default-cpu", """
        def build(n, device="cpu"):
            return reveal(torch.zeros(n, device=device))""", "device|host", "medium"),
    ("factory-device-of-other-tensor", """
        def f(input_ids):
            ids = input_ids.cuda()
            pos = torch.arange(ids.shape[-1], device=ids.device)
            reveal(pos)""", "device", "high"),
    ("factory-device-of-host-tensor", """
        cpu_t = torch.zeros(3)
        y = torch.ones(3, device=cpu_t.device)
        reveal(y)""", "host", "high"),
    ("factory-device-of-unknown-tensor", """
        def forward(self, inputs_embeds):
            position_ids = torch.arange(0, 16, device=inputs_embeds.device)
            reveal(position_ids)""", "device", "medium"),
    ("factory-self-device", """
        class Runner:
            def __init__(self, device):
                self.device = device
            def _prepare_inputs(self, n):
                reveal(torch.zeros(n, dtype=torch.int32, device=self.device))""", "device", "medium"),
    ("factory-self-device-unassigned", """
        class Runner:
            def _prepare_inputs(self, n):
                reveal(torch.zeros(n, device=self.device))""", "device", "medium"),
    ("factory-self-device-torch-device", """
        class Runner:
            def __init__(self):
                self.device = torch.device("cuda")
            def step(self):
                reveal(torch.empty(4, device=self.device))""", "device", "high"),
    ("factory-integer-device", """
        x = torch.zeros(4, device=0)
        reveal(x)""", "device", "medium"),
    ("factory-unknown-device-variable", """
        def f(where):
            reveal(torch.zeros(4, device=where))""", "unknown", "low"),
    ("factory-pin-memory-true", """
        buf = torch.zeros(1024, dtype=torch.int32, pin_memory=True)
        reveal(buf)""", "pinned", "high"),
    ("factory-cpu-pinned", """
        buf = torch.empty(1024, dtype=torch.int64, device="cpu", pin_memory=True)
        reveal(buf)""", "pinned", "high"),
    ("factory-pin-memory-flag", """
        class InputBatch:
            def __init__(self, pin_memory):
                self.pin_memory = pin_memory
                self.token_ids_cpu_tensor = torch.zeros((8, 4096), device="cpu", dtype=torch.int32, pin_memory=pin_memory)
            def f(self):
                reveal(self.token_ids_cpu_tensor)""", "pinned|host", "high"),
    ("factory-full-like", """
        x = torch.zeros(4, device="cuda")
        reveal(torch.full_like(x, -1))""", "device", "high"),
    ("factory-zeros-like-host", """
        x = torch.zeros(4)
        reveal(torch.zeros_like(x))""", "host", "high"),
    ("factory-like-with-device", """
        x = torch.zeros(4)
        reveal(torch.empty_like(x, device="cuda"))""", "device", "high"),
    ("tensor-of-list-no-device", """
        reveal(torch.tensor([1, 2, 3], dtype=torch.long))""", "host", "high"),
    ("tensor-of-list-device", """
        def f(token_ids, device):
            reveal(torch.tensor(token_ids, dtype=torch.long, device=device))""", "device", "medium"),
    ("tensor-of-cpu-tensor", """
        cpu_t = torch.arange(4)
        reveal(torch.tensor(cpu_t))""", "host", "high"),
    ("tensor-of-device-tensor", """
        g = torch.arange(4, device="cuda")
        reveal(torch.tensor(g))""", "device", "high"),
    ("tensor-of-tolist", """
        g = torch.arange(4, device="cuda")
        lst = g.tolist()
        reveal(torch.tensor(lst))""", "host", "high"),
    ("tensor-of-tolist-inline", """
        def f(sampled):
            reveal(torch.tensor(sampled.tolist(), dtype=torch.int64))""", "host", "high"),
    ("tensor-of-unknown", """
        def f(values):
            reveal(torch.tensor(values))""", "host", "medium"),
    ("as-tensor-unknown", """
        def f(x):
            reveal(torch.as_tensor(x))""", "unknown", "low"),
    ("as-tensor-numpy", """
        arr = np.zeros(4)
        reveal(torch.as_tensor(arr))""", "host", "high"),
    ("new-zeros-keeps-device", """
        x = torch.zeros(4, device="cuda")
        reveal(x.new_zeros(1))""", "device", "high"),
    ("new-tensor-device-kwarg", """
        x = torch.zeros(4)
        reveal(x.new_tensor([0], device="cuda"))""", "device", "high"),
    # --- .cuda(), .to(), .cpu(), .pin_memory() ---------------------------------------------
    ("cuda-method", """
        def f(x):
            reveal(x.cuda())""", "device", "high"),
    ("cuda-non-blocking", """
        buf = torch.zeros(4, pin_memory=True)
        reveal(buf.cuda(non_blocking=True))""", "device", "high"),
    ("rebinding-cuda", """
        def f(x):
            x = x.cuda()
            reveal(x)""", "device", "high"),
    ("conditional-cuda", """
        def f(use_gpu):
            x = torch.zeros(4)
            if use_gpu:
                x = x.cuda()
            reveal(x)""", "device|host", "high"),
    ("conditional-cuda-both-branches", """
        def f(use_gpu):
            if use_gpu:
                x = torch.zeros(4).cuda()
            else:
                x = torch.zeros(4, device="cuda:1")
            reveal(x)""", "device", "high"),
    ("to-cuda-string", """
        x = torch.zeros(4)
        reveal(x.to("cuda"))""", "device", "high"),
    ("to-device-parameter", """
        def f(x, device):
            reveal(x.to(device))""", "device", "medium"),
    ("to-device-may-be-cpu", """
        def f(x, device="cpu"):
            reveal(x.to(device))""", "device|host", "medium"),
    ("to-device-chosen-at-run-time", """
        device = "cuda" if torch.cuda.is_available() else "cpu"
        def f(x):
            reveal(x.to(device))""", "device", "medium"),
    ("torch-device-of-ifexp", """
        def f(x, use_cuda):
            dev = torch.device("cuda" if use_cuda else "cpu")
            reveal(torch.zeros(2, device=dev))""", "device|host", "low"),
    ("to-other-tensor-device", """
        g = torch.zeros(4, device="cuda")
        h = torch.ones(4)
        reveal(h.to(g))""", "device", "high"),
    ("to-other-tensor-host", """
        g = torch.zeros(4, device="cuda")
        h = torch.ones(4)
        reveal(g.to(h))""", "host", "high"),
    ("to-other-tensor-unknown", """
        def f(a, b):
            reveal(a.to(b))""", "unknown", "low"),
    ("to-dtype-keeps", """
        g = torch.zeros(4, device="cuda")
        reveal(g.to(torch.float32))""", "device", "high"),
    ("to-dtype-kw-keeps", """
        h = torch.zeros(4)
        reveal(h.to(dtype=torch.bfloat16))""", "host", "high"),
    ("to-other-dtype-keeps", """
        g = torch.zeros(4, device="cuda")
        h = torch.zeros(4)
        reveal(h.to(g.dtype))""", "host", "high"),
    ("to-device-and-dtype", """
        h = torch.zeros(4)
        reveal(h.to("cuda", torch.float16))""", "device", "high"),
    ("to-device-kwarg", """
        h = torch.zeros(4)
        reveal(h.to(device="cuda:0", non_blocking=True))""", "device", "high"),
    ("to-cpu-non-blocking-pinned", """
        g = torch.zeros(4, device="cuda")
        reveal(g.to("cpu", non_blocking=True))""", "pinned", "high"),
    ("to-cpu-non-blocking-unknown-source", """
        def f(has_fault):
            reveal(has_fault.to("cpu", non_blocking=True))""", "pinned", "medium"),
    ("to-cpu-blocking", """
        g = torch.zeros(4, device="cuda")
        reveal(g.to("cpu"))""", "host", "high"),
    ("to-cpu-of-host-keeps", """
        h = torch.zeros(4, pin_memory=True)
        reveal(h.to("cpu", non_blocking=True))""", "pinned", "high"),
    ("cpu-method", """
        def f(logits):
            reveal(logits.cpu())""", "host", "high"),
    ("pin-memory-method", """
        arr = np.zeros(16)
        reveal(torch.from_numpy(arr).pin_memory())""", "pinned", "high"),
    ("pinned-slice-is-pageable-view", """
        buf = torch.zeros(1024, pin_memory=True)
        reveal(buf[:, ::2])""", "host", "high"),
    ("pinned-then-to-device", """
        buf = torch.zeros(1024, pin_memory=True)
        reveal(buf[:16].to("cuda", non_blocking=True))""", "device", "high"),
    ("staged-copy-sglang", """
        def f(seq_lens, device):
            t = torch.tensor(seq_lens, dtype=torch.int64).to(device, non_blocking=True)
            reveal(t)""", "device", "medium"),
    # --- numpy -------------------------------------------------------------------------------
    ("numpy-array", """
        a = np.array([1, 2, 3], dtype=np.int32)
        reveal(a)""", "numpy", "high"),
    ("numpy-from-numpy", """
        a = np.zeros((4, 4), dtype=np.int64)
        reveal(torch.from_numpy(a))""", "host", "high"),
    ("numpy-from-numpy-to-device", """
        def f(a, device):
            t = torch.from_numpy(a).to(device, non_blocking=True)
            reveal(t)""", "device", "medium"),
    ("numpy-method", """
        g = torch.zeros(4, device="cuda")
        reveal(g.cpu().numpy())""", "numpy", "high"),
    ("numpy-slice", """
        a = np.arange(10)
        reveal(a[:5])""", "numpy", "high"),
    ("numpy-arith", """
        a = np.arange(10)
        reveal(a * 2 + 1)""", "numpy", "high"),
    ("numpy-cumsum-vllm", """
        def f(num_scheduled_tokens):
            cu = np.cumsum(num_scheduled_tokens, dtype=np.int32)
            reveal(cu)""", "numpy", "high"),
    ("numpy-alias", """
        import numpy
        import torch
        a = numpy.asarray([1.0])
        reveal(a)""", "numpy", "high"),
    ("numpy-tensor-view-of-buffer", """
        class InputBatch:
            def __init__(self):
                self.token_ids_cpu_tensor = torch.zeros((8, 4096), device="cpu", dtype=torch.int32)
                self.token_ids_cpu = self.token_ids_cpu_tensor.numpy()
            def f(self):
                reveal(self.token_ids_cpu)""", "numpy", "high"),
    ("numpy-other-function", """
        a = np.arange(4)
        reveal(np.maximum(a, 1))""", "numpy", "medium"),
    # --- literals, comprehensions, readbacks ------------------------------------------------
    ("int-literal", """
        reveal(3)""", "scalar", "high"),
    ("float-literal", """
        eps = 1e-6
        reveal(eps)""", "scalar", "high"),
    ("list-literal", """
        reveal([0, 1, 2])""", "sequence", "high"),
    ("list-comprehension", """
        def f(reqs):
            reveal([r.num_tokens for r in reqs])""", "sequence", "high"),
    ("tuple-literal", """
        shape = (4, 8)
        reveal(shape)""", "sequence", "high"),
    ("tolist", """
        g = torch.zeros(4, device="cuda")
        reveal(g.tolist())""", "sequence", "high"),
    ("item", """
        g = torch.zeros(4, device="cuda")
        reveal(g.sum().item())""", "scalar", "high"),
    ("int-of-tensor", """
        g = torch.zeros(4, device="cuda")
        reveal(int(g.max()))""", "scalar", "high"),
    ("len-of-list", """
        def f(reqs):
            reveal(len(reqs))""", "scalar", "high"),
    ("shape-index", """
        def f(hidden_states):
            reveal(hidden_states.shape[0])""", "scalar", "high"),
    ("size-dim", """
        def f(x):
            reveal(x.size(-1))""", "scalar", "high"),
    ("shape-unpack", """
        def forward(self, hidden_states):
            bsz, q_len, _ = hidden_states.size()
            reveal(q_len)""", "scalar", "high"),
    ("numel", """
        g = torch.zeros(4, device="cuda")
        reveal(g.numel())""", "scalar", "high"),
    ("range-loop-index", """
        def f(n):
            for i in range(n):
                reveal(i)""", "scalar", "high"),
    ("string-is-other", """
        reveal("hello")""", "other", "high"),
    ("none-is-other", """
        reveal(None)""", "other", "high"),
    ("dtype-is-other", """
        reveal(torch.float16)""", "other", "high"),
    # --- propagation ------------------------------------------------------------------------
    ("arith-device-scalar", """
        g = torch.zeros(4, device="cuda")
        reveal(g * 2 + 1)""", "device", "high"),
    ("arith-device-host", """
        g = torch.zeros(4, device="cuda")
        h = torch.zeros(4)
        reveal(h + g)""", "device", "high"),
    ("comparison-device", """
        g = torch.zeros(4, device="cuda")
        reveal(g > 0)""", "device", "high"),
    ("matmul-device", """
        def forward(self, x):
            x = x.cuda()
            w = torch.randn(4, 4, device="cuda")
            reveal(x @ w)""", "device", "high"),
    ("unary-neg", """
        g = torch.zeros(4, device="cuda")
        reveal(-g)""", "device", "high"),
    ("index-device", """
        g = torch.zeros(4, 4, device="cuda")
        reveal(g[:, 0])""", "device", "high"),
    ("torch-cat-list", """
        a = torch.zeros(4, device="cuda")
        b = torch.ones(4, device="cuda")
        reveal(torch.cat([a, b], dim=0))""", "device", "high"),
    ("torch-stack-host", """
        a = torch.zeros(4)
        reveal(torch.stack((a, a)))""", "host", "high"),
    ("torch-where-three-arg", """
        g = torch.zeros(4, device="cuda")
        reveal(torch.where(g > 0, g, 0.0))""", "device", "high"),
    ("functional-softmax-alias", """
        import torch
        import torch.nn.functional as F
        g = torch.zeros(4, device="cuda")
        reveal(F.softmax(g, dim=-1))""", "device", "high"),
    ("torch-equal-is-a-python-bool", """
        a = torch.zeros(4, device="cuda")
        reveal(torch.equal(a, a))""", "scalar", "high"),
    ("tensor-method-chain", """
        g = torch.zeros(4, device="cuda")
        reveal(g.float().view(-1).contiguous())""", "device", "high"),
    ("argmax-method", """
        def compute_logits(self, hidden):
            logits = torch.randn(4, 32000, device="cuda")
            reveal(logits.argmax(dim=-1))""", "device", "high"),
    ("split-unpack", """
        qkv = torch.zeros(4, 96, device="cuda")
        q, k, v = qkv.split([32, 32, 32], dim=-1)
        reveal(k)""", "device", "high"),
    ("tuple-unpack-literal", """
        a, b = torch.zeros(2, device="cuda"), [1, 2]
        reveal(b)""", "sequence", "high"),
    ("augmented-assignment", """
        def f():
            acc = torch.zeros(4)
            acc += torch.ones(4, device="cuda")
            reveal(acc)""", "device", "high"),
    ("augmented-scalar", """
        def f(reqs):
            total = 0
            for r in reqs:
                total += 1
            reveal(total)""", "scalar", "high"),
    ("max-builtin-of-tensors", """
        a = torch.zeros(1, device="cuda")
        b = torch.ones(1, device="cuda")
        reveal(max(a, b))""", "device", "high"),
    ("ifexp-join", """
        def f(flag):
            g = torch.zeros(4, device="cuda")
            h = torch.zeros(4)
            reveal(g if flag else h)""", "device|host", "high"),
    ("transformers-rope-inv-freq", """
        def _compute_default_rope_parameters(config, device):
            base = config.rope_theta
            dim = 64
            inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float) / dim))
            reveal(inv_freq)""", "device", "medium"),
    ("list-arithmetic", """
        def f(batch_size):
            lens = [0] * batch_size
            reveal(lens)""", "sequence", "high"),
    ("tensor-pin-memory-flag-sglang", """
        def f(global_num_tokens, pin):
            t = torch.tensor(global_num_tokens, dtype=torch.int64, pin_memory=pin)
            reveal(t)""", "pinned|host", "high"),
    ("self-device-annotated-param-chain-vllm", """
        class GPUModelRunner:
            def __init__(self, vllm_config, device: torch.device):
                self.device = device
                self.pin_memory = True
                self.num_tokens = torch.zeros(64, dtype=torch.int32, device=self.device)
            def execute_model(self, scheduler_output):
                reveal(self.num_tokens[:8])""", "device", "medium"),
    ("self-attr-read-in-same-method", """
        class Runner:
            def __init__(self):
                self.device = torch.device("cuda:0")
                buf = torch.empty(8, device=self.device)
                reveal(buf)""", "device", "high"),
    # --- flow: branches, loops, with, shadowing, aliases -------------------------------------
    ("loop-fixpoint", """
        def f(n):
            x = torch.zeros(4)
            for _ in range(n):
                reveal(x)
                x = x.cuda()""", "device|host", "high"),
    ("loop-fixpoint-chain", """
        def f(n):
            a = torch.zeros(4)
            b = torch.zeros(4)
            c = torch.zeros(4)
            while n:
                c = b
                b = a
                a = a.cuda()
            reveal(c)""", "device|host", "high"),
    ("loop-over-tensor-rows", """
        g = torch.zeros(4, 4, device="cuda")
        for row in g:
            reveal(row)""", "device", "high"),
    ("match-case-join", """
        def f(mode, x):
            match mode:
                case "gpu":
                    y = x.cuda()
                case _:
                    y = x.cpu()
            reveal(y)""", "device|host", "high"),
    ("match-case-body", """
        def f(mode, device):
            match mode:
                case "decode":
                    reveal(torch.zeros(1, device=device))""", "device", "medium"),
    ("with-block-keeps", """
        def forward(self, x):
            with torch.no_grad():
                y = torch.zeros(4, device="cuda")
            reveal(y)""", "device", "high"),
    ("with-as-unknown", """
        def f():
            with open("x") as fh:
                reveal(fh)""", "unknown", "low"),
    ("try-except-join", """
        def f():
            try:
                x = torch.zeros(4, device="cuda")
            except RuntimeError:
                x = torch.zeros(4)
            reveal(x)""", "device|host", "high"),
    ("shadowed-name-rebound", """
        def f(x):
            x = torch.zeros(4, device="cuda")
            x = x.cpu()
            reveal(x)""", "host", "high"),
    ("shadowed-device-local", """
        def f(n):
            device = "cpu"
            reveal(torch.zeros(n, device=device))""", "host", "high"),
    ("shadowed-torch-parameter", """
        def f(torch):
            reveal(torch.tensor([1]))""", "unknown", "low"),
    ("shadowed-import-local-function", """
        from torch import tensor
        def f():
            tensor = lambda data: data
            reveal(tensor([1, 2]))""", "unknown", "low"),
    ("alias-import-torch-as-th", """
        import torch as th
        x = th.zeros(4, device="cuda")
        reveal(x)""", "device", "high"),
    ("alias-from-torch-import-tensor", """
        from torch import tensor
        reveal(tensor([1, 2, 3]))""", "host", "high"),
    ("alias-from-import-as", """
        from torch import zeros as z
        reveal(z(4, device="cuda"))""", "device", "high"),
    ("import-in-function", """
        def f():
            import torch as T
            reveal(T.ones(2, device="cuda"))""", "device", "high"),
    ("lazy-import-in-function", """
        def f(ids):
            import torch
            reveal(torch.tensor(ids, device="cuda"))""", "device", "high"),
    ("parameter-unknown", """
        def forward(self, hidden_states):
            reveal(hidden_states)""", "unknown", "low"),
    ("parameter-annotated-tensor", """
        def forward(self, hidden_states: torch.Tensor):
            reveal(hidden_states)""", "device|host", "low"),
    ("parameter-annotated-optional-tensor", """
        from typing import Optional
        import torch
        def forward(self, mask: Optional[torch.Tensor] = None):
            reveal(mask)""", "device|host", "low"),
    ("module-forward-tensor-input-mixtral", """
        import torch
        from torch import nn
        class MixtralExperts(nn.Module):
            def forward(self, hidden_states: torch.Tensor, top_k_index: torch.Tensor):
                expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=9)
                reveal(expert_mask.sum(dim=(-1, -2)))""", "device", "medium"),
    ("module-forward-optional-tensor-input", """
        from typing import Optional
        import torch
        from torch import nn
        class VisionAttention(nn.Module):
            def forward(self, hidden_states, cu_seqlens: Optional[torch.Tensor] = None):
                lengths = cu_seqlens[1:] - cu_seqlens[:-1]
                reveal(lengths)""", "device", "medium"),
    ("plain-class-forward-tensor-input-stays-low", """
        class Helper:
            def forward(self, x: torch.Tensor):
                reveal(x)""", "device|host", "low"),
    ("module-forward-unannotated-input-unknown", """
        from torch import nn
        class Block(nn.Module):
            def forward(self, hidden_states):
                reveal(hidden_states)""", "unknown", "low"),
    ("parameter-annotated-list", """
        def f(token_ids: list[int]):
            reveal(token_ids)""", "sequence", "high"),
    ("parameter-annotated-ndarray", """
        def f(block_table: np.ndarray):
            reveal(block_table)""", "numpy", "high"),
    ("parameter-annotated-int", """
        def f(num_tokens: int):
            reveal(num_tokens)""", "scalar", "high"),
    ("local-annotation-without-value", """
        def f():
            ids: list[int]
            reveal(ids)""", "sequence", "high"),
    ("parameter-device-named", """
        def f(dev):
            reveal(dev)""", "accel", "medium"),
    ("parameter-string-annotation", """
        def f(x: "torch.Tensor"):
            reveal(x)""", "device|host", "low"),
    # --- across the module -------------------------------------------------------------------
    ("local-function-return", """
        def make(n):
            return torch.zeros(n, device="cuda")
        def use():
            reveal(make(4))""", "device", "high"),
    ("local-function-return-host", """
        def make_positions(n):
            return torch.arange(n)
        def use():
            p = make_positions(4)
            reveal(p)""", "host", "high"),
    ("method-return-via-self", """
        class Sampler:
            def _probs(self, logits):
                return torch.softmax(logits.cuda(), dim=-1)
            def sample(self, logits):
                reveal(self._probs(logits))""", "device", "high"),
    ("nested-function-return", """
        def outer():
            def inner():
                return torch.ones(2, device="cuda")
            reveal(inner())""", "device", "high"),
    ("self-attr-assigned-in-init", """
        class ModelRunner:
            def __init__(self, max_num_tokens):
                self.input_ids = torch.zeros(max_num_tokens, dtype=torch.int32, device="cuda")
            def execute_model(self):
                reveal(self.input_ids[:16])""", "device", "high"),
    ("self-attr-host-buffer", """
        class ModelRunner:
            def __init__(self, max_num_tokens):
                self.positions_cpu = torch.zeros(max_num_tokens, dtype=torch.int64, device="cpu", pin_memory=True)
            def execute_model(self):
                reveal(self.positions_cpu)""", "pinned", "high"),
    ("self-attr-assigned-two-places", """
        class Cache:
            def __init__(self):
                self.k = torch.zeros(4)
            def move(self):
                self.k = self.k.cuda()
            def read(self):
                reveal(self.k)""", "device|host", "high"),
    ("module-register-buffer", """
        class Rotary(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
                self.register_buffer("inv_freq", inv_freq, persistent=False)
            def forward(self, x):
                reveal(self.inv_freq)""", "device", "medium"),
    ("module-weight-parameter", """
        from torch import nn
        class RMSNorm(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(hidden_size))
            def forward(self, hidden_states):
                reveal(self.weight)""", "device", "medium"),
    ("module-submodule-weight", """
        from torch import nn
        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.gate_proj = nn.Linear(8, 8, bias=False)
            def forward(self, x):
                reveal(self.gate_proj.weight)""", "device", "medium"),
    ("module-weight-times-input", """
        from torch import nn
        class RMSNorm(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(hidden_size))
            def forward(self, hidden_states):
                reveal(self.weight * hidden_states)""", "device", "medium"),
    ("module-submodule-is-not-a-tensor", """
        from torch import nn
        class Block(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.norm = nn.LayerNorm(hidden_size)
            def forward(self, x):
                reveal(self.norm)""", "other", "medium"),
    ("nn-init-helper-is-not-a-parameter", """
        from torch import nn
        class Linear(nn.Module):
            def reset_parameters(self):
                fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(self.weight)
                reveal(fan_in)""", "unknown", "low"),
    ("backends-query-is-not-a-tensor", """
        def pick_kernel(params):
            reveal(torch.backends.cuda.can_use_flash_attention(params))""", "unknown", "low"),
    ("to-default-dtype-is-a-dtype-change", """
        def init_weights(module):
            default_dtype = torch.get_default_dtype()
            reveal(torch.arange(module.n_heads, dtype=torch.int64).to(default_dtype))""", "host", "high"),
    ("to-int-named-like-a-rank-is-a-device", """
        def load(weights, local_rank: int):
            reveal(weights.cpu().to(local_rank))""", "device", "medium"),
    ("to-plain-int-is-not-assumed-a-device", """
        def scale(x, n_heads: int):
            reveal(x.cpu().to(n_heads))""", "unknown", "low"),
    ("plain-class-weight-unknown", """
        class Holder:
            def read(self):
                reveal(self.weight)""", "unknown", "low"),
    ("module-level-constant-in-function", """
        DEVICE = torch.device("cuda")
        def f():
            reveal(torch.zeros(2, device=DEVICE))""", "device", "high"),
    ("comprehension-element", """
        g = torch.zeros(4, 4, device="cuda")
        rows = [reveal(r) for r in g]""", "device", "high"),
    ("comprehension-over-list", """
        def f(reqs):
            ids = [reveal(r) for r in reqs]""", "unknown", "low"),
    ("unknown-call", """
        def f(model, x):
            reveal(model(x))""", "unknown", "low"),
]


def _snippet(source: str) -> str:
    source = textwrap.dedent(source).strip("\n") + "\n"
    if not source.startswith(("import", "from")):
        source = "import torch\nimport numpy as np\n" + source
    return source


def _expected(text: str) -> frozenset[Place]:
    return frozenset(PLACE_NAMES[name] for name in text.split("|"))


def test_table_has_at_least_a_hundred_cases():
    assert len(CASES) >= 100
    assert len({case[0] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case_id,source,places,confidence", CASES, ids=[c[0] for c in CASES])
def test_placement(case_id, source, places, confidence):
    revealed = reveal_placements(_snippet(source))
    assert revealed, "the snippet has no reveal(...)"
    answer = revealed[-1]  # the outermost reveal of the last line is reported last
    assert answer.placement.places == _expected(places), answer.provenance
    assert answer.placement.confidence.label == confidence, answer.provenance
