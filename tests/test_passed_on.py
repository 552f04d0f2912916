"""Two ways the repository index loses a device tensor in the joins of its solve, on
real-shaped projects (synclint/repo/):

- a wrapper passes its parameter on as it is to a helper that declares it a tensor
  (`gather_logprobs(logprobs, ids)` -> `gather_logprobs_raw(logprobs: torch.Tensor, ...)`):
  the wrapper's parameter is a tensor too, and votes as declared tensors do (`_passed_on`,
  `_dominant`), so one caller whose argument the screen cannot tell apart (a Python number
  joined in through an operand) does not make the helper's parameter "device or host";
- a method reads its own parameter through its class (`("p", "Head.forward", x)`) where
  calls reach it through its class, as the analysis asks it, not by the method's name: the
  `hidden_states` of every `forward` of the repository, joined, say nothing of one class's
  (`_MethodParams`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings

LOGPROB = """\
    from typing import List, Optional

    import torch


    def gather_logprobs_raw(logprobs: torch.Tensor, ids_list: List[Optional[List[int]]], keep_on_device: bool = False):
        vals = []
        for i, ids in enumerate(ids_list):
            if ids is None:
                vals.append([])
                continue
            ids_tensor = torch.tensor(ids, dtype=torch.long).to(logprobs.device, non_blocking=True)
            row = logprobs[i, ids_tensor]
            vals.append(row if keep_on_device else row.tolist())
        return vals


    def gather_logprobs(logprobs, ids_list, keep_on_device=False):
        return gather_logprobs_raw(logprobs, ids_list, keep_on_device=keep_on_device)


    def gather_logprobs_prefill(all_logprobs, ids_list, keep_on_device=False):
        return gather_logprobs_raw(all_logprobs, ids_list, keep_on_device=keep_on_device)
    """

SAMPLER = """\
    import torch
    from torch import nn

    from pkg.logprob import gather_logprobs, gather_logprobs_prefill


    class Sampler(nn.Module):
        def forward(self, logits: torch.Tensor, ids_list, is_prefill: bool):
            logprobs = torch.log_softmax(logits, dim=-1)
            if is_prefill:
                return gather_logprobs_prefill(logprobs, ids_list)
            return gather_logprobs(logprobs, ids_list)
    """

# A span scorer concatenates device slices: the index reads a list name as one value, so
# `torch.cat(parts)` is unknown to it (the lint's screen joins in a host tensor it cannot rule out).
SCORER = """    import torch

    from pkg.logprob import gather_logprobs_prefill


    class SpanScorer:
        def score(self, hidden_states: torch.Tensor, spans, ids_list):
            parts = [hidden_states[start:end].cuda() for start, end in spans]
            span_logprobs = torch.log_softmax(torch.cat(parts), dim=-1)
            return gather_logprobs_prefill(span_logprobs, ids_list, keep_on_device=True)
    """

# A speculative worker: its log-probabilities are device tensors, but the screen joins in
# the Python number given to `repeat_interleave` (a field holding an int): no operand of the
# division is surely on the device (a `.cuda()` one would make the quotient a device tensor).
WORKER = """\
    import torch

    from pkg.logprob import gather_logprobs


    class DraftWorker:
        def __init__(self, draft_layers: list):
            self.num_steps = len(draft_layers)

        def verify(self, next_token_logits: torch.Tensor, temperatures: torch.Tensor, ids_list):
            temps = torch.repeat_interleave(temperatures, self.num_steps + 1, dim=0)
            logprobs = torch.log_softmax(next_token_logits / temps, dim=-1)
            return gather_logprobs(logprobs, ids_list, keep_on_device=True)
    """


def _row(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line)


TOLIST = _row(LOGPROB, "row.tolist()")


def _findings(root: Path, name: str, **settings):
    run = runner.lint_paths([root / name], Settings(**settings), jobs=1, use_cache=False)
    return {v.location.row: v for v in run.violations}


def _files(**more) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/logprob.py": LOGPROB, "pkg/sampler.py": SAMPLER, "pkg/worker.py": WORKER,
            "pkg/scorer.py": SCORER, **more}


def test_a_parameter_passed_on_to_a_declared_tensor_votes_as_one(tmp_path):
    root = project(tmp_path, _files())
    found = _findings(root, "pkg/logprob.py")
    assert found[TOLIST].code == "SL202"
    assert found[TOLIST].confidence.label == "medium"
    # One call passes on what the sampler gives (the wrapper's vote: device), the other what
    # the sampler and a scorer give (device, and a concatenation the index cannot see into).
    assert any("read as the device tensor it mostly holds" in step for step in found[TOLIST].provenance)
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "gather_logprobs_raw", "logprobs")][0] == repo.DEVICE
    # The wrapper's own parameter is no fact (nothing declares it), only what it passes on.
    assert ("p", "gather_logprobs", "logprobs") not in facts.values


def test_a_wrapper_also_given_host_tensors_stays_low(tmp_path):
    # A host-side scorer passes host log-probabilities through both wrappers: the helper
    # may read either, and the default report leaves it out. (Through one wrapper only, the
    # other wrapper's device tensors outvote it: the span scorer's `torch.cat(parts)` is no
    # host tensor to the index.)
    scorer = """\
        import torch

        from pkg.logprob import gather_logprobs, gather_logprobs_prefill


        def score_offline(scores: list[list[float]], ids_list, prefill: bool):
            logprobs = torch.tensor(scores).log_softmax(dim=-1)
            if prefill:
                return gather_logprobs_prefill(logprobs, ids_list)
            return gather_logprobs(logprobs, ids_list)
        """
    root = project(tmp_path, _files(**{"pkg/offline.py": scorer}))
    assert TOLIST not in _findings(root, "pkg/logprob.py")
    assert repo.build(root, use_cache=False).values[("p", "gather_logprobs_raw", "logprobs")][0] != repo.DEVICE


def test_a_value_computed_from_the_parameter_or_a_number_is_not_passed_on(tmp_path):
    # `helper(x.cpu())` passes a host copy; a parameter declared a number is no tensor.
    logprob = LOGPROB + """

    def gather_logprobs_host(logprobs, ids_list):
        return gather_logprobs_raw(logprobs.cpu(), ids_list)


    def scale(n: int, ids_list):
        return gather_logprobs_raw(n, ids_list)
    """
    root = project(tmp_path, _files(**{"pkg/logprob.py": logprob}))
    facts = repo.build(root, use_cache=False)
    voters = repo.fixpoint._passed_on(repo.solver._assemble(_summaries(root))[0], {("p", "gather_logprobs_raw", "logprobs")}, {("n", "scale", "n")},
                             {"gather_logprobs_raw": 1, "gather_logprobs": 1, "gather_logprobs_prefill": 1, "gather_logprobs_host": 1, "scale": 1})
    assert voters == {("p", "gather_logprobs", "logprobs"), ("p", "gather_logprobs_prefill", "all_logprobs")}
    assert facts.values[("p", "gather_logprobs_raw", "logprobs")][0] != repo.DEVICE


def _summaries(root: Path) -> dict:
    return {str(p): repo.summarize(p.read_text()) for p in sorted(root.rglob("*.py"))}


# A logits head whose `forward` takes an unannotated `hidden_states`, called through the
# field that holds it; four unrelated modules of the repository also define a `forward` with a
# `hidden_states` parameter and are given host tensors by name.
HEAD = """\
    import torch
    from torch import nn


    def last_token_logprobs(hidden: torch.Tensor):
        best = hidden.amax(dim=-1)
        return best.sum().item()


    class LogitsHead(nn.Module):
        def forward(self, input_ids, hidden_states):
            return last_token_logprobs(hidden_states[:, -1])


    class CausalLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.logits_head = LogitsHead()

        def forward(self, input_ids: torch.Tensor, positions: torch.Tensor):
            hidden_states = self.embed(input_ids)
            return self.logits_head(input_ids, hidden_states)

        def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
            return torch.zeros(input_ids.shape[0], 64, device=input_ids.device)
    """

OTHERS = "\n\n".join(
    f"""\
class Encoder{n}:
    def forward(self, hidden_states):
        return hidden_states


def run_encoder{n}(encoder, rows):
    return encoder.forward(torch.tensor(rows))
"""
    for n in range(4)
)


def test_a_method_reads_its_parameter_through_its_class(tmp_path):
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/head.py": HEAD, "pkg/encoders.py": "import torch\n\n\n" + OTHERS})
    facts = repo.build(root, use_cache=False)
    assert "forward" in facts.crowded
    # What the head's forward passes on is what CausalLM gives it, not what every `forward`
    # of the repository is given.
    assert facts.values[("p", "last_token_logprobs", "hidden")][0] == repo.DEVICE
    rows = {row for row, v in _findings(root, "pkg/head.py").items() if v.code == "SL201"}
    assert _row(HEAD, "best.sum().item()") in rows


def test_a_method_no_call_reaches_through_its_class_reads_what_the_calls_of_its_name_pass(tmp_path):
    # Nothing calls the head through its class: its parameter is what the calls of `forward`
    # pass by its name, as before (here the encoders' host tensors).
    head = HEAD.replace("return self.logits_head(input_ids, hidden_states)", "return hidden_states")
    by_keyword = OTHERS.replace("encoder.forward(torch.tensor(rows))", "encoder.forward(hidden_states=torch.tensor(rows))")
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/head.py": head, "pkg/encoders.py": "import torch\n\n\n" + by_keyword})
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "last_token_logprobs", "hidden")][0] == repo.HOST


def test_a_call_by_name_passes_nothing_by_a_position_the_functions_of_the_name_disagree_on(tmp_path):
    # `encoder.forward(torch.tensor(rows))` of an object no code places: its first argument
    # fills `hidden_states` of the encoders but `input_ids` of the head and the model. Which
    # one the call reaches, the name does not say: none of them is given the host tensor.
    head = HEAD.replace("return self.logits_head(input_ids, hidden_states)", "return hidden_states")
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/head.py": head, "pkg/encoders.py": "import torch\n\n\n" + OTHERS})
    facts = repo.build(root, use_cache=False)
    assert ("p", "last_token_logprobs", "hidden") not in facts.values
    assert ("p", "forward", "hidden_states") not in facts.values
    # Where the functions of the name agree on the position (one encoder class only, with
    # the head and the model gone), the argument reaches it, as before.
    only = OTHERS.split("\n\n\nclass Encoder1")[0]
    root = project(tmp_path / "one", {"pkg/__init__.py": "", "pkg/encoders.py": "import torch\n\n\n" + only})
    assert repo.build(root, use_cache=False).values[("p", "forward", "hidden_states")][0] == repo.HOST


SCALER = """\
    import torch


    def top_score(scores: torch.Tensor):
        return scores.max().item()


    class Scaler:
        def rescale(self, scores):
            return top_score(scores * 2)


    class HostScaler:
        def rescale(self, scores):
            return scores


    def offline(rows):
        return HostScaler().rescale(torch.tensor(rows))
    """

RUNNER = """\
    import torch

    from pkg.scaler import Scaler


    class Runner:
        def __init__(self):
            self.scaler = Scaler()

        def step(self, logits: torch.Tensor):
            return self.scaler.rescale(logits.cuda())
    """


def test_edits_around_a_method_read_through_its_class_equal_a_full_solve(tmp_path, monkeypatch):
    from test_incremental_solve import _check

    files = {"pkg/__init__.py": "", "pkg/scaler.py": SCALER, "pkg/runner.py": RUNNER}
    root = project(tmp_path / "a", files)
    facts = repo.build(root, use_cache=False)
    assert facts.values[("p", "top_score", "scores")][0] == repo.DEVICE  # what `Scaler.rescale` is given through its class
    # The only call through the class taken away: nothing reaches `Scaler.rescale` (the call
    # through `HostScaler` gives only that class's method), which only a full solve knows.
    runner = textwrap.dedent(RUNNER).replace("return self.scaler.rescale(logits.cuda())", "return logits")
    assert _check(root, monkeypatch, {"pkg/runner.py": runner}) == "full"
    assert ("p", "top_score", "scores") not in repo.build(root, use_cache=False).values
    # A second call through the class beside the first: the same reads.
    root = project(tmp_path / "b", files)
    runner = textwrap.dedent(RUNNER) + "\n    def again(self, logits: torch.Tensor):\n        return self.scaler.rescale(logits.cuda())\n"
    assert _check(root, monkeypatch, {"pkg/runner.py": runner}) in ("incremental", "full")
