"""The flow walk's environment (synclint/analysis/scopeenv.py): snapshots and forks behave as
copies would, and recording the environment before every statement costs linear memory."""

from __future__ import annotations

import tracemalloc

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from synclint.analysis.imports import ImportTable
from synclint.analysis.placement import PlacementAnalysis
from synclint.analysis.scopeenv import FlowEnv, Snapshot, overlay

NAMES = ["a", "b", "c", "d"]

# One step on the environment being walked: write, delete, snapshot, fork (a nested branch)
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from(NAMES), st.integers(0, 9)),
        st.tuples(st.just("pop"), st.sampled_from(NAMES), st.just(0)),
        st.tuples(st.just("snap"), st.just(""), st.just(0)),
        st.tuples(st.just("fork"), st.just(""), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(_steps, st.dictionaries(st.sampled_from(NAMES), st.integers(10, 19)))
def test_views_behave_like_copies(steps, start):
    """Against a model that copies dicts: every snapshot keeps what it saw, a fork's writes
    stay in the fork, and the parent's later writes do not reach a fork made before them."""
    env, model = FlowEnv(dict(start)), dict(start)
    views: list[tuple[object, dict]] = []  # (view, what a copy would hold)
    for op, name, value in steps:
        if op == "set":
            env[name] = value
            model[name] = value
        elif op == "pop":
            assert env.pop(name, None) == model.pop(name, None)
        elif op == "snap":
            views.append((env.snapshot(), dict(model)))
        else:
            fork, fork_model = env.fork(), dict(model)
            fork["a"] = value + 100
            fork_model["a"] = value + 100
            fork.pop("b", None)
            fork_model.pop("b", None)
            views.append((fork, fork_model))
            views.append((fork.snapshot(), dict(fork_model)))
        for view, expected in [(env, model), *views]:
            for n in NAMES:
                assert (n in view) == (n in expected)
                assert view.get(n) == expected.get(n)


def test_snapshot_of_a_snapshot_and_overlay():
    env = FlowEnv({"x": 1})
    snap = env.snapshot()
    assert snap.snapshot() is snap
    env["x"] = 2
    over = overlay(snap, {"y": 3})
    assert (over["x"], over["y"], "y" in snap, env["x"]) == (1, 3, False, 2)
    assert overlay(snap, None) is snap
    assert isinstance(snap, Snapshot) and snap.fork().get("x") == 1


def _module(functions: int) -> cst.Module:
    body = "".join(f"def forward_{i}(toks, device='cuda'):\n    a = torch.tensor(toks, device='cuda')\n    return a\n\n" for i in range(functions))
    return cst.parse_module("import torch\n" + body)


def _walk_memory(functions: int) -> int:
    """Peak bytes allocated while walking a module of `functions` top-level definitions
    (the module scope records the environment before each of them)."""
    module = _module(functions)
    imports = ImportTable()
    imports.collect_top_level(module)
    tracemalloc.start()
    try:
        analysis = PlacementAnalysis(module, imports)
        analysis.env_at(module.body[-1], (module,))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_module_scope_memory_is_linear_in_definitions():
    """Copying the environment at each statement made this (definitions)^2: 4x the
    definitions was 16x the memory. Recorded as snapshots it is about 4x."""
    small, large = _walk_memory(300), _walk_memory(1200)
    assert large < 6 * small, (small, large)


def test_environment_before_each_statement_is_what_was_bound_then():
    module = _module(50)
    imports = ImportTable()
    imports.collect_top_level(module)
    analysis = PlacementAnalysis(module, imports)
    env_10 = analysis.env_at(module.body[11], (module,))  # before `def forward_10`
    assert "forward_9" in env_10 and "forward_10" not in env_10 and "forward_49" not in env_10
    env_last = analysis.env_at(module.body[-1], (module,))
    assert "forward_48" in env_last and "forward_49" not in env_last
