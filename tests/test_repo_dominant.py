"""A declared tensor that nearly every flow gives a device tensor is read as one
(synclint/repo/fixpoint.py `_dominant`): one odd assignment elsewhere in the repository (`batch.x =
max_len` in a rarely used backend) no longer makes the field, and every parameter it is
passed to, "device or host". Real-shaped multi-file projects, with the look-alikes that keep
their doubt."""

from __future__ import annotations

from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings


def findings(root: Path, *names: str):
    result = runner.lint_paths([root / n for n in names], Settings(), jobs=1, use_cache=False).violations
    return [(Path(v.filename).name, v.location.row, v.code) for v in result]


def violations(root: Path, *names: str):
    return runner.lint_paths([root / n for n in names], Settings(), jobs=1, use_cache=False).violations


BATCH = """\
    from __future__ import annotations

    from dataclasses import dataclass

    import torch


    @dataclass
    class StepBatch:
        seq_lens: torch.Tensor
        out_cache_loc: torch.Tensor

        @classmethod
        def from_schedule(cls, lens, locs, device):
            return cls(
                seq_lens=torch.tensor(lens, dtype=torch.int32, device=device),
                out_cache_loc=torch.tensor(locs, dtype=torch.int64, device=device),
            )
    """

RUNNERS = """\
    import torch

    from pkg.batch import StepBatch


    class GraphRunner:
        def __init__(self, max_bs: int, device):
            self.seq_lens = torch.zeros(max_bs, dtype=torch.int32, device=device)
            self.locs = torch.zeros(max_bs, dtype=torch.int64, device=device)

        def replay(self, bs: int) -> StepBatch:
            return StepBatch(seq_lens=self.seq_lens[:bs], out_cache_loc=self.locs[:bs])


    class DraftRunner:
        def __init__(self, max_bs: int, device):
            self.buf = torch.zeros(max_bs, dtype=torch.int32, device=device)

        def prepare(self, batch: StepBatch, bs: int) -> None:
            batch.seq_lens = self.buf[:bs]
    """

# A debugging dump that moves the field to the host: the one dissenting flow.
ODD_BACKEND = """\
    import pickle

    from pkg.batch import StepBatch


    def dump_batch(batch: StepBatch, path: str) -> None:
        batch.seq_lens = batch.seq_lens.cpu()
        with open(path, "wb") as f:
            pickle.dump(batch, f)
    """

BACKEND = """\
    import torch

    from pkg.batch import StepBatch


    class AttentionBackend:
        def init_forward_metadata(self, batch: StepBatch) -> None:
            self._plan(batch.seq_lens)

        def _plan(self, seq_lens: torch.Tensor) -> None:
            self.max_len = seq_lens.max().item()
    """


def test_a_field_nearly_always_given_device_tensors_places_its_readers(tmp_path):
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runners.py": RUNNERS,
                              "pkg/wave.py": ODD_BACKEND, "pkg/backend.py": BACKEND})
    found = violations(root, "pkg/backend.py")
    assert [(Path(v.filename).name, v.location.row, v.code) for v in found] == [("backend.py", 11, "SL201")]
    assert found[0].confidence.name == "MEDIUM"


def test_the_field_and_the_parameter_it_is_passed_to_are_device_in_the_index(tmp_path):
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runners.py": RUNNERS,
                              "pkg/wave.py": ODD_BACKEND, "pkg/backend.py": BACKEND})
    facts = repo.build(root, use_cache=False)
    assert facts.typed[("StepBatch", "seq_lens")][0] == repo.DEVICE
    # `self._plan(batch.seq_lens)`: the class's own method is given it (not every `_plan`)
    assert facts.values[("p", "AttentionBackend._plan", "seq_lens")][0] == repo.DEVICE
    assert ("p", "_plan", "seq_lens") not in facts.values
    # out_cache_loc has no dissent: plainly device, as before.
    assert facts.typed[("StepBatch", "out_cache_loc")][0] == repo.DEVICE


def test_one_device_flow_against_one_host_flow_stays_in_doubt(tmp_path):
    # Only the constructor gives a device tensor and a scheduler gives a host tensor: no
    # majority, the finding stays `low` and is hidden by default.
    runners = """\
        import torch

        from pkg.batch import StepBatch


        class Scheduler:
            def snapshot(self, lens) -> StepBatch:
                return StepBatch(seq_lens=torch.tensor(lens), out_cache_loc=torch.tensor(lens))
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runners.py": runners,
                              "pkg/backend.py": BACKEND})
    assert findings(root, "pkg/backend.py") == []


def test_an_undeclared_name_gets_no_majority(tmp_path):
    # The same flows into a field nothing declares a tensor: the vote does not apply.
    batch = BATCH.replace("seq_lens: torch.Tensor", "seq_lens: object")
    backend = BACKEND.replace("seq_lens: torch.Tensor", "seq_lens")
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/batch.py": batch, "pkg/runners.py": RUNNERS,
                              "pkg/wave.py": ODD_BACKEND, "pkg/backend.py": backend})
    assert findings(root, "pkg/backend.py") == []


def test_without_the_odd_flow_the_field_is_plainly_device(tmp_path):
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runners.py": RUNNERS,
                              "pkg/backend.py": BACKEND})
    assert findings(root, "pkg/backend.py") == [("backend.py", 11, "SL201")]


def test_a_like_factory_builds_where_its_argument_lives_in_the_index(tmp_path):
    # `torch.full_like(logits, -1e5)` is on the device of `logits`: the helper returns what
    # it is given, not "maybe a host tensor", and the readback downstream is placed.
    sampler = """\
        import torch

        from pkg.logprob import top_logprobs


        class Sampler:
            def _preprocess(self, logits: torch.Tensor) -> torch.Tensor:
                if torch.any(torch.isnan(logits)):
                    logits = torch.where(torch.isnan(logits), torch.full_like(logits, -1e5), logits)
                return logits

            def forward(self, hidden: torch.Tensor, weight: torch.Tensor):
                logits = self._preprocess(torch.matmul(hidden, weight))
                logprobs = torch.log_softmax(logits, dim=-1)
                return top_logprobs(logprobs, 5)

            def warmup(self, device):
                hidden = torch.zeros(4, 16, device=device)
                weight = torch.zeros(16, 32, device=device)
                return self.forward(hidden, weight)
        """
    logprob = """\
        import torch


        def top_logprobs(logprobs: torch.Tensor, k: int):
            values, indices = logprobs.topk(k, dim=-1)
            return values.tolist(), indices.tolist()
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/sampler.py": sampler, "pkg/logprob.py": logprob})
    assert findings(root, "pkg/logprob.py") == [("logprob.py", 6, "SL202"), ("logprob.py", 6, "SL202")]


def test_a_parameter_of_a_name_many_functions_share_is_not_put_to_the_vote(tmp_path):
    # Four `reduce(x)` in four classes: calls reach them by name only, so what "most callers"
    # pass says nothing of one of them; its readback stays in doubt (hidden by default).
    reducers = "import torch\n\n\n" + "\n\n".join(
        f"class Reducer{i}:\n    def reduce(self, x: torch.Tensor):\n        return x * {i}\n"
        for i in range(3)
    )
    caller = """\
        import torch


        class Runner:
            def step(self, reducer, device, lens):
                h = reducer.reduce(torch.zeros(4, device=device))
                h = reducer.reduce(torch.ones(4, device=device))
                h = reducer.reduce(torch.full((4,), 2.0, device=device))
                reducer.reduce(torch.tensor(lens))
                return h
        """
    probe = """\
        import torch


        class Probe:
            def reduce(self, x: torch.Tensor):
                return x.sum().item()
        """
    files = {"pkg/__init__.py": "", "pkg/reducers.py": reducers, "pkg/runner.py": caller, "pkg/probe.py": probe}
    root = project(tmp_path, files)
    assert findings(root, "pkg/probe.py") == []
    assert repo.build(root, use_cache=False).values[("p", "reduce", "x")][0] != repo.DEVICE
    # One function of that name: the callers vote, and the readback is placed.
    files["pkg/reducers.py"] = "import torch\n"
    alone = project(tmp_path / "alone", files)
    assert findings(alone, "pkg/probe.py") == [("probe.py", 6, "SL201")]


def test_a_parameter_used_as_only_a_tensor_can_be_is_the_tensor_in_that_function(tmp_path):
    # `gather(..., mask)` is given a device mask by the worker and a Python list elsewhere: in
    # doubt (low); but `mask.to(torch.bool)` here says this function is given the tensor.
    worker = """\
        import torch

        from pkg.gather import gather, gather_plain


        class Worker:
            def step(self, table: torch.Tensor, lens, device):
                pos = torch.arange(8, device=device)
                mask = pos[None, :] < torch.tensor(lens, device=device)[:, None]
                return gather(table, pos, mask), gather_plain(table, pos, mask)

            def debug(self, table: torch.Tensor):
                return gather(table, [0, 1], [True, False]), gather_plain(table, [0, 1], [True, False])
        """
    gather = """\
        import torch


        def gather(table: torch.Tensor, pos, mask: torch.Tensor):
            if mask.dtype != torch.bool:
                mask = mask.to(torch.bool)
            return table[pos][mask]


        def gather_plain(table: torch.Tensor, pos, mask: torch.Tensor):
            return table[pos][mask]
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/worker.py": worker, "pkg/gather.py": gather})
    assert [f for f in findings(root, "pkg/gather.py") if f[2] == "SL401"] == [("gather.py", 7, "SL401")]


def test_a_field_declared_a_python_value_or_a_tensor_is_not_a_device_field(tmp_path):
    # `causal: bool | torch.Tensor`: one builder puts a device tensor there, the others a bool;
    # the declaration says a Python value is expected, so the field is not placed.
    meta = """\
        from dataclasses import dataclass
        from typing import Union

        import torch


        @dataclass
        class Metadata:
            causal: bool | torch.Tensor = True
            window: Union[int, torch.Tensor] = 0


        def build(device) -> Metadata:
            return Metadata(causal=torch.ones(4, dtype=torch.bool, device=device),
                            window=torch.zeros(4, device=device))


        def build_again(device) -> Metadata:
            return Metadata(causal=torch.ones(4, dtype=torch.bool, device=device),
                            window=torch.zeros(4, device=device))
        """
    backend = """\
        from pkg.meta import Metadata


        def plan(meta: Metadata):
            if meta.causal:
                return meta.window + 1
            return 0
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/meta.py": meta, "pkg/backend.py": backend})
    assert findings(root, "pkg/backend.py") == []
    typed = repo.build(root, use_cache=False).typed
    assert typed[("Metadata", "causal")][0] != repo.DEVICE


def test_a_field_of_a_configuration_object_is_a_python_value(tmp_path):
    # Some class holds `linear_num_value_heads` beside a `_cpu` mirror (the name alone would say
    # "the device copy"); read from `config`, it is the model's configuration: a Python value.
    state = """\
        import torch


        class LinearAttnState:
            def __init__(self, heads: torch.Tensor):
                self.linear_num_value_heads = heads.cuda()
                self.linear_num_value_heads_cpu = heads
        """
    model = """\
        import torch
        from torch import nn


        class GatedDeltaNet(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.num_v_heads = config.linear_num_value_heads

            def forward(self, x: torch.Tensor):
                return x.reshape(x.shape[0], self.num_v_heads, -1)


        class Counter(nn.Module):
            def __init__(self, state):
                super().__init__()
                self.num_v_heads = state.linear_num_value_heads

            def forward(self, x: torch.Tensor):
                return x.reshape(x.shape[0], self.num_v_heads, -1)
        """
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/state.py": state, "pkg/model.py": model})
    assert findings(root, "pkg/model.py") == [("model.py", 20, "SL208")]


ALLOCATOR = """\
    import torch


    class PagedAllocator:
        def __init__(self, size: int, page_size: int, device):
            self.page_size = page_size
            self.free_pages = torch.arange(size // page_size, device=device)

        def free(self, free_index: torch.Tensor):
            pages = torch.unique(free_index // self.page_size)
            self.free_pages = torch.cat((self.free_pages, pages))
    """

CACHES = """\
    import torch


    class ReqToTokenPool:
        def __init__(self, size: int, context_len: int, device):
            self.req_to_token = torch.zeros((size, context_len), dtype=torch.int32, device=device)

        def clear(self):
            self.req_to_token = 0


    class ChunkCache:
        def __init__(self, pool: ReqToTokenPool, allocator):
            self.pool = pool
            self.allocator = allocator

        def finish(self, req_idx: int, n: int):
            self.allocator.free(self.pool.req_to_token[req_idx, :n])

        def release(self, req_idx: int, start: int, end: int):
            self.allocator.free(self.pool.req_to_token[req_idx, start:end])

        def abort(self, req_idx: int):
            self.allocator.free(self.pool.req_to_token[req_idx])


    class TreeNode:
        def __init__(self, value):
            self.value = value


    def evict(allocator, node: TreeNode):
        allocator.free(node.value)


    def split(key_cpu: torch.Tensor):
        return TreeNode(key_cpu)
    """


def test_device_tensors_beside_python_values_outvote_a_mixed_field(tmp_path):
    # `req_to_token` is a device tensor reset to a number by one method (device or a Python
    # value: no host tensor), and `TreeNode.value` is given host keys somewhere: the device
    # votes of the three `free(req_to_token[...])` calls outweigh it.
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/allocator.py": ALLOCATOR, "pkg/caches.py": CACHES})
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "free", "free_index")][0] == repo.DEVICE
    assert ("allocator.py", 10, "SL402") in findings(root, "pkg/allocator.py")


def test_one_vote_of_device_or_python_values_is_not_a_majority(tmp_path):
    # The look-alike: a single such call against the host node's, no majority: `low`, hidden.
    caches = CACHES.replace(
        "        def release(self, req_idx: int, start: int, end: int):\n            self.allocator.free(self.pool.req_to_token[req_idx, start:end])\n", ""
    ).replace("        def abort(self, req_idx: int):\n            self.allocator.free(self.pool.req_to_token[req_idx])\n", "")
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/allocator.py": ALLOCATOR, "pkg/caches.py": caches})
    assert ("allocator.py", 10, "SL402") not in findings(root, "pkg/allocator.py")
