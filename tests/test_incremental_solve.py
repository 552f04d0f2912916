"""The index solved again after an edit from the last full solve's state (repo.incremental._incremental)
gives exactly what a full solve of the edited repository gives: the same facts, citations,
call graph, vendored functions, classes and fingerprint. Real-shaped edits first, then random
projects with random edits."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pytest

from index_projects import BATCH_INFO, _store  # noqa: F401 - _store is an autouse fixture
from index_projects import project

from synclint import repo

FILES = {
    "batch_info.py": BATCH_INFO,
    "backend.py": """\
        import torch


        class Backend:
            def __init__(self, size):
                self.table = torch.zeros(size, device="cuda")
                self.offsets: torch.Tensor = torch.arange(size).cuda()

            def plan(self, batch):
                longest = batch.lengths.max().item()
                return scale(self.table, longest)


        def scale(values: torch.Tensor, factor):
            return values * factor
        """,
    "runner.py": """\
        import torch
        from backend import Backend, scale


        class Runner:
            def step(self, batch, positions: torch.Tensor):
                out = scale(positions, 2)
                return helper(out, batch)


        def helper(x: torch.Tensor, batch):
            return x + batch.slots
        """,
    "util.py": """\
        def clamp(value, low, high):
            return max(low, min(value, high))
        """,
    # The relay of loop elements: a loop over a device tensor passes its element to a
    # parameter annotated a number, which a method passes on to a method of its own.
    "sched.py": """\
        import torch


        class Scheduler:
            def __init__(self, device):
                self.timesteps = torch.arange(50, device=device)
                self.table = torch.linspace(0.0, 1.0, 1000)

            def step(self, out: torch.Tensor, timestep: int):
                return out * self._alpha(timestep)

            def _alpha(self, t: int):
                return self.table[t]


        def denoise(sched: Scheduler, x: torch.Tensor):
            for t in sched.timesteps:
                x = sched.step(x, t)
            return x
        """,
}


def _snapshot(facts: repo.Facts) -> tuple:
    return (facts.values, facts.fingerprint, facts.callers, facts.examples, facts.vendored, facts.classes)


def _check(root: Path, monkeypatch, edits: dict[str, str]) -> str:
    """Build, edit, build again; the second build must equal a full solve of the edited tree.
    Returns how the second build got its facts: "incremental", "full" or "kept"."""
    repo.build(root.resolve(), use_cache=True)
    for name, text in edits.items():
        (root / name).write_text(text)
    calls = {"solve": 0, "incremental": 0}
    real_solve, real_incremental = repo.solve, repo.incremental._incremental

    def counting_solve(summaries, state=None):
        calls["solve"] += 1
        return real_solve(summaries, state)

    def counting_incremental(*args):
        found = real_incremental(*args)
        calls["incremental"] += found is not None
        return found

    monkeypatch.setattr(repo.store, "solve", counting_solve)
    monkeypatch.setattr(repo.store, "_incremental", counting_incremental)
    again = repo.build(root.resolve(), use_cache=True)
    monkeypatch.setattr(repo.store, "solve", real_solve)
    monkeypatch.setattr(repo.store, "_incremental", real_incremental)
    full = repo.build(root.resolve(), use_cache=False)
    assert _snapshot(again) == _snapshot(full)
    return "full" if calls["solve"] else "incremental" if calls["incremental"] else "kept"


def _text(name: str) -> str:
    return textwrap.dedent(FILES[name])


@pytest.mark.parametrize(
    "name, edit, how",
    [
        # A function appended that nothing calls: nothing else is solved again.
        ("util.py", lambda t: t + "\n\ndef added(x):\n    return x\n", "incremental"),
        # A function appended that passes a device tensor on: the parameter it reaches.
        ("util.py", lambda t: t + "\n\ndef added(size):\n    table = torch.ones(size, device='cuda')\n    return clamp(table, 0, 1)\n", "incremental"),
        # ... to a parameter the vote pinned (`helper`'s `x`, given a device tensor or a Python
        # value): what reads it may change between the vote's rounds, solved whole.
        ("util.py", lambda t: t + "\n\ndef added(size):\n    table = torch.ones(size, device='cuda')\n    return helper(table, None)\n", "full"),
        # A field given host data now: the field and what reads it.
        ("batch_info.py", lambda t: t.replace(".to(device, non_blocking=True)", ""), "incremental"),
        # A host field given the device again, in another way.
        ("backend.py", lambda t: t.replace('torch.zeros(size, device="cuda")', "torch.zeros(size)"), "incremental"),
        # A function inserted above others: the flows below cite other lines now.
        ("backend.py", lambda t: t.replace("class Backend:", "def first(v):\n    return v.cuda()\n\n\nclass Backend:"), "incremental"),
        # A tensor annotation added: the name is declared a tensor now.
        ("runner.py", lambda t: t.replace("def step(self, batch, positions", "def step(self, batch: torch.Tensor, positions"), "incremental"),
        # A tensor annotation taken away: the parameter is placed, but no longer declared a tensor.
        ("runner.py", lambda t: t.replace("def helper(x: torch.Tensor, batch):", "def helper(x, batch):"), "incremental"),
        # A function without flows inserted above others: the same flows, on other lines.
        ("runner.py", lambda t: t.replace("class Runner:", "def nothing():\n    pass\n\n\nclass Runner:"), "incremental"),
        # A call edge added.
        ("util.py", lambda t: t + "\n\ndef relay(v):\n    return clamp(v, 0, 1)\n", "incremental"),
        # A function appended below the relay's loop and calls: the relay reads what it read.
        ("sched.py", lambda t: t + "\n\ndef added(v):\n    return v.cuda()\n", "incremental"),
        # A field given the device now, above the relay's flows, which stay where they were.
        ("sched.py", lambda t: t.replace("torch.linspace(0.0, 1.0, 1000)", "torch.linspace(0.0, 1.0, 1000).cuda()"), "incremental"),
        # A relay flow added (another loop element passed on): solved whole.
        ("sched.py", lambda t: t.replace("    return x\n", "    for s in sched.timesteps:\n        x = sched.step(x, s)\n    return x\n"), "full"),
        # ... a whole reduction of a device tensor passed to a number parameter: solved whole too.
        ("sched.py", lambda t: t.replace("    return x\n", "    x = sched.step(x, sched.timesteps.max())\n    return x\n"), "full"),
        # An element and a reduction passed where no parameter is declared a number (`clamp`'s,
        # a tensor's `view`): inert for the relay, solved incrementally.
        ("util.py", lambda t: t + "\n\ndef added(v):\n    v = v.cuda()\n    w = v.view(v.max())\n    return clamp(v[0], 0, w.sum())\n", "incremental"),
        # A function inserted above the relay's flows: the same flows, on other lines and at
        # other places of the summary; what the relay's facts cite moves with them.
        ("sched.py", lambda t: t.replace("class Scheduler:", "def first(v):\n    return v.cuda()\n\n\nclass Scheduler:"), "incremental"),
        # Lines inserted above them, no flow added: the same facts, every citation below them
        # (a typed field's, the relay's) written again with its new line.
        ("sched.py", lambda t: t.replace("class Scheduler:", "# the scheduler\n\n\nclass Scheduler:"), "kept"),
        # A function inserted above a typed field's flows in a file the relay does not read.
        ("backend.py", lambda t: t.replace("class Backend:", "def first(v):\n    return v * 2\n\n\nclass Backend:"), "incremental"),
        # A new signature of a function other files call: their arguments resolve differently.
        ("backend.py", lambda t: t.replace("def scale(values: torch.Tensor, factor):", "def scale(factor, values: torch.Tensor):"), "full"),
        # A field made the device twin of a host field of its class (`self.table =
        # torch.zeros_like(self.offsets, device=...)`): declared a tensor now.
        ("backend.py", lambda t: t.replace("torch.arange(size).cuda()", "torch.arange(size)").replace(
            'torch.zeros(size, device="cuda")', 'torch.zeros_like(self.offsets, device="cuda")'), "incremental"),
        # A class changed: every read through a class resolves again.
        ("batch_info.py", lambda t: t.replace("    slots: torch.Tensor\n", "    slots: torch.Tensor\n    extra: int\n"), "full"),
    ],
)
def test_an_edit_solved_incrementally_equals_a_full_solve(tmp_path, monkeypatch, name, edit, how):
    root = project(tmp_path / "proj", FILES)
    assert _check(root, monkeypatch, {name: edit(_text(name))}) == how


def test_edits_accumulate_from_the_last_full_solve(tmp_path, monkeypatch):
    # Each run starts from the state of the last full solve, with every file changed since.
    root = project(tmp_path / "proj", FILES)
    util = _text("util.py") + "\n\ndef added(x):\n    return x\n"
    assert _check(root, monkeypatch, {"util.py": util}) == "incremental"
    backend = _text("backend.py").replace('torch.zeros(size, device="cuda")', "torch.zeros(size)")
    assert _check(root, monkeypatch, {"backend.py": backend}) == "incremental"
    # Undone: back to the state's own files.
    assert _check(root, monkeypatch, {"util.py": _text("util.py"), "backend.py": _text("backend.py")}) in ("incremental", "kept")


# --- reads that the whole repository resolves: a method's own parameters, the result of a
# method called through its class, the elements of a returned tuple ------------------------------

RESOLVED = {
    "pools.py": """\
        from typing import Optional, Tuple

        import torch


        class SlotPool:
            def __init__(self, size: int, device):
                self.free_slots = torch.arange(size, device=device)

            def alloc(self, need: int) -> Optional[torch.Tensor]:
                select = self.free_slots[:need]
                self.free_slots = self.free_slots[need:]
                return select

            def free(self, index: torch.Tensor):
                self.free_slots = torch.cat((self.free_slots, index))


        class HostPool:
            def free(self, index: torch.Tensor):
                return index.tolist()


        def local_range(counts_gpu: torch.Tensor, rank: int) -> Tuple[torch.Tensor, torch.Tensor]:
            return torch.cumsum(counts_gpu, dim=0)[rank], counts_gpu[rank]
        """,
    "manager.py": """\
        import torch

        from pools import SlotPool, local_range


        class Manager:
            def __init__(self, size: int, device):
                self.pool = SlotPool(size, device)
                self.rows: torch.Tensor = torch.zeros(size, device=device)

            def take(self, n: int):
                self.rows = self.pool.alloc(n)

            def give(self, index_cpu: torch.Tensor):
                pass

            def window(self, counts: torch.Tensor, rank: int):
                start, count = local_range(counts, rank)
                self.rows = start + count
        """,
}


def _resolved_text(name: str) -> str:
    return textwrap.dedent(RESOLVED[name])


@pytest.mark.parametrize(
    "name, edit",
    [
        # The first call through the class: `SlotPool.free`'s own parameter reads it now.
        ("manager.py", lambda t: t.replace("    def give(self, index_cpu: torch.Tensor):\n        pass",
                                            "    def give(self, index_cpu: torch.Tensor):\n        self.pool.free(index_cpu)")),
        # The method a typed call reads returns host data now.
        ("pools.py", lambda t: t.replace("torch.arange(size, device=device)", "torch.arange(size)")),
        # A tuple returned some other way: its elements are the joined result again.
        ("pools.py", lambda t: t.replace("    return torch.cumsum(counts_gpu, dim=0)[rank], counts_gpu[rank]",
                                         "    pair = torch.cumsum(counts_gpu, dim=0)[rank], counts_gpu[rank]\n    return pair")),
        # An element of the tuple made host data.
        ("pools.py", lambda t: t.replace("counts_gpu[rank]\n", "int(counts_gpu[rank])\n")),
        # The typed call taken away.
        ("manager.py", lambda t: t.replace("self.rows = self.pool.alloc(n)", "self.rows = torch.zeros(n)")),
    ],
)
def test_edits_of_what_the_repository_resolves_equal_a_full_solve(tmp_path, monkeypatch, name, edit):
    root = project(tmp_path / "proj", RESOLVED)
    facts = repo.build(root.resolve(), use_cache=False)
    assert facts.typed[("Manager", "rows")][0] == repo.DEVICE
    assert facts.values[(repo.RESULT_ITEM, "local_range", 0)][0] == repo.DEVICE
    _check(root, monkeypatch, {name: edit(_resolved_text(name))})


# --- random projects ---------------------------------------------------------------------------

_FUNCS = ["alpha", "beta", "gamma", "delta"]
_FIELDS = ["lengths", "slots", "table", "positions_gpu", "seq_lens", "offsets"]
_PARAMS = ["x", "y", "seq_lens", "batch"]
_VALUES = [
    "torch.zeros(4, device='cuda')",
    "torch.zeros(4)",
    "np.zeros(4)",
    "[1, 2]",
    "3",
    "{p}.cuda()",
    "{p}.cpu()",
    "{p}",
    "{f}({p})",
    "self.{a}",
    "obj.{a}",
]


def _value(rng: random.Random, params: list[str]) -> str:
    template = rng.choice(_VALUES)
    return template.format(p=rng.choice(params), f=rng.choice(_FUNCS), a=rng.choice(_FIELDS))


def _function(rng: random.Random, name: str, method: bool) -> list[str]:
    params = rng.sample(_PARAMS, rng.randint(1, 3))
    annotated = [f"{p}: torch.Tensor" if rng.random() < 0.3 else p for p in params]
    head = f"def {name}({', '.join((['self'] if method else []) + annotated)}):"
    body = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.35 and method:
            body.append(f"self.{rng.choice(_FIELDS)} = {_value(rng, params)}")
        elif kind < 0.6:
            args = ", ".join(_value(rng, params) for _ in range(rng.randint(1, 2)))
            body.append(f"{rng.choice(_FUNCS)}({args})")
        elif kind < 0.8:
            body.append(f"obj.{rng.choice(_FIELDS)} = {_value(rng, params)}")
        else:
            body.append(f"local = {_value(rng, params)}")
    body.append(f"return {_value(rng, params)}")
    return [head] + ["    " + line for line in body]


def _module(rng: random.Random) -> str:
    lines = ["import numpy as np", "import torch", ""]
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.5:
            lines += ["", f"class C{rng.randint(0, 2)}:"]
            for _ in range(rng.randint(1, 2)):
                lines += ["    " + line for line in _function(rng, rng.choice(_FUNCS + ["__init__"]), True)]
                lines.append("")
        else:
            lines += [""] + _function(rng, rng.choice(_FUNCS), False)
    return "\n".join(lines) + "\n"


def _edit(rng: random.Random, text: str) -> str:
    lines = text.splitlines()
    kind = rng.random()
    if kind < 0.3:  # a function appended
        return text + "\n\n" + "\n".join(_function(rng, rng.choice(_FUNCS + ["extra"]), False)) + "\n"
    if kind < 0.5:  # a function inserted at the top
        return "\n".join(lines[:3] + _function(rng, "extra", False) + [""] + lines[3:]) + "\n"
    if kind < 0.8:  # one value replaced
        spots = [i for i, line in enumerate(lines) if " = " in line or "return " in line]
        if spots:
            i = rng.choice(spots)
            head = lines[i].split(" = ")[0] + " = " if " = " in lines[i] else lines[i].split("return ")[0] + "return "
            lines[i] = head + _value(rng, _PARAMS)
            return "\n".join(lines) + "\n"
    return _module(rng)  # rewritten


@pytest.mark.parametrize("seed", range(60))
def test_random_edits_give_the_full_solve(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    files = {f"m{i}.py": _module(rng) for i in range(rng.randint(3, 6))}
    root = project(tmp_path / "proj", files)
    for _ in range(3):
        names = rng.sample(sorted(files), rng.randint(1, 2))
        edits = {name: _edit(rng, (root / name).read_text()) for name in names}
        _check(root, monkeypatch, edits)


def test_random_edits_take_the_incremental_path_often(tmp_path, monkeypatch):
    # The comparison above is worth something only if the incremental path runs.
    rng = random.Random(1234)
    how = []
    for case in range(30):
        files = {f"m{i}.py": _module(rng) for i in range(4)}
        root = project(tmp_path / f"proj{case}", files)
        name = rng.choice(sorted(files))
        how.append(_check(root, monkeypatch, {name: _edit(rng, (root / name).read_text())}))
    assert how.count("incremental") >= 8, how


# --- with the majority vote (`_dominant`) -----------------------------------------------------------


def _voted_project(tmp_path: Path) -> Path:
    from test_repo_dominant import BACKEND, BATCH, ODD_BACKEND, RUNNERS

    root = project(tmp_path / "proj", {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runners.py": RUNNERS,
                                       "pkg/wave.py": ODD_BACKEND, "pkg/backend.py": BACKEND})
    facts = repo.build(root.resolve(), use_cache=False)
    # Voted through its class family; the field keyed by its name alone is not put to the vote.
    assert facts.typed[("StepBatch", "seq_lens")][0] == repo.DEVICE
    assert facts.values[("a", "seq_lens")][0] != repo.DEVICE
    return root


@pytest.mark.parametrize(
    "name, edit, how",
    [
        # The dissenting flow removed: the field and what reads it, voted again inside.
        ("pkg/wave.py", lambda t: t.replace("    batch.seq_lens = batch.seq_lens.cpu()\n", ""), "incremental"),
        # Another device flow into the voted field.
        ("pkg/runners.py", lambda t: t + "\n\ndef refill(batch: StepBatch, device):\n    batch.seq_lens = torch.ones(4, device=device)\n", "incremental"),
        # A new reader of the voted field: what it reads changed between the vote's rounds, so
        # the repository is solved whole.
        ("pkg/backend.py", lambda t: t + "\n\ndef peek(batch: StepBatch):\n    return batch.seq_lens\n", "full"),
    ],
)
def test_edits_around_a_voted_field_equal_a_full_solve(tmp_path, monkeypatch, name, edit, how):
    root = _voted_project(tmp_path)
    assert _check(root, monkeypatch, {name: edit((root / name).read_text())}) == how


# --- the fixpoint itself ----------------------------------------------------------------------------


def _naive_fixpoint(flows, pinned=None):
    """Every flow evaluated again until nothing grows: the least solution, slowly."""
    value = dict.fromkeys(pinned or (), repo.DEVICE)
    changed = True
    while changed:
        changed = False
        for target, local, symbols, _ in flows:
            if pinned and target in pinned:
                continue
            mask = local
            for symbol in symbols:
                mask |= value.get(symbol, 0)
            mask &= repo.PLACES
            if mask | value.get(target, 0) != value.get(target, 0):
                value[target] = mask | value.get(target, 0)
                changed = True
    return value


@pytest.mark.parametrize("seed", range(40))
def test_the_fixpoint_is_the_least_solution(seed):
    # Duplicated flows, flows that read nothing, cycles and pinned targets; called twice with
    # the same flows (the kept system) and once with a copy.
    rng = random.Random(seed)
    names = [("a", f"x{i}") for i in range(12)]
    places = [repo.DEVICE, repo.HOST, repo.NUMPY, repo.LIST, repo.SCALAR, 0]
    flows = []
    for n in range(rng.randint(5, 60)):
        symbols = tuple(rng.sample(names, rng.randint(0, 3)))
        flow = (rng.choice(names), rng.choice(places), symbols, ("f.py", n))
        flows.extend([flow] * rng.randint(1, 2))
    pinned = dict.fromkeys(rng.sample(names, rng.randint(0, 2)))
    assert repo.fixpoint._fixpoint(flows) == _naive_fixpoint(flows)
    assert repo.fixpoint._fixpoint(flows, pinned) == _naive_fixpoint(flows, pinned)
    assert repo.fixpoint._fixpoint(list(flows), pinned) == _naive_fixpoint(flows, pinned)


def test_the_summaries_walk_the_tree_as_ast_does():
    # The summaries' own walks visit what `ast.walk` / `ast.iter_child_nodes` visit, in the
    # same order (the order of a file's flows is the order explanations cite them in), also
    # where a scope's walk is kept and handed out again while a summary is made.
    import ast

    from synclint.analysis import astwalk

    tree = ast.parse(Path(repo.summary.__file__).read_text())
    expected = [id(n) for n in ast.walk(tree)]
    assert [id(n) for n in astwalk.walk(tree)] == expected
    with astwalk.keeping():
        assert [id(n) for n in astwalk.walk(tree)] == expected
        assert astwalk.walk(tree) is astwalk.walk(tree)  # kept: walked once
        func = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
        assert [id(n) for n in astwalk.walk(func)] == [id(n) for n in ast.walk(func)]
        # a node's children are listed once and read again by the walks of smaller nodes
        # and by `children`, in ast's order
        for node in ast.walk(func):
            assert [id(n) for n in astwalk.walk(node)] == [id(n) for n in ast.walk(node)]
            assert [id(c) for c in astwalk.children(node)] == [id(c) for c in ast.iter_child_nodes(node)]
        # a node made during the summary (no kept list) is walked by its fields
        made = ast.Call(func=ast.Name(id="f", ctx=ast.Load()), args=[func.args], keywords=[])
        assert [id(n) for n in astwalk.walk(made)] == [id(n) for n in ast.walk(made)]
    assert astwalk.walk(tree) is not astwalk.walk(tree)  # nothing kept outside a summary
    for node in ast.walk(tree):
        assert [id(c) for c in astwalk.children(node)] == [id(c) for c in ast.iter_child_nodes(node)]


# --- a function that nothing calls and that calls nothing: no edge of the call graph ------------


def _graph_builds(root: Path, monkeypatch, edits: dict[str, str]) -> int:
    """As `_check` (the build after the edits equals a full solve); returns how it got its
    facts and how many times it resolved the call graph whole."""
    builds = []
    real_graph = repo.callgraph._CallGraph.graph

    def counting_graph(self, *args):
        builds.append(1)
        return real_graph(self, *args)

    repo.build(root.resolve(), use_cache=True)
    monkeypatch.setattr(repo.callgraph._CallGraph, "graph", counting_graph)
    how = _check_built(root, monkeypatch, edits)
    monkeypatch.setattr(repo.callgraph._CallGraph, "graph", real_graph)
    return how, len(builds) - 1  # the full solve `_check_built` compares with builds it once


def _check_built(root: Path, monkeypatch, edits: dict[str, str]) -> str:
    for name, text in edits.items():
        (root / name).write_text(text)
    calls = {"incremental": 0}
    real_incremental = repo.incremental._incremental

    def counting_incremental(*args):
        found = real_incremental(*args)
        calls["incremental"] += found is not None
        return found

    monkeypatch.setattr(repo.store, "_incremental", counting_incremental)
    again = repo.build(root.resolve(), use_cache=True)
    monkeypatch.setattr(repo.store, "_incremental", real_incremental)
    full = repo.build(root.resolve(), use_cache=False)
    assert _snapshot(again) == _snapshot(full)
    return "incremental" if calls["incremental"] else "whole"


@pytest.mark.parametrize(
    "edits, builds",
    [
        # Appended, called by nothing, calling nothing: the last solve's graph holds.
        ({"util.py": _text("util.py") + "\n\ndef added(x):\n    return x\n"}, 0),
        # ... inserted above others (its flows move the others' lines), with a decorator.
        ({"runner.py": _text("runner.py").replace("class Runner:", "def nothing():\n    pass\n\n\nclass Runner:")}, 0),
        # It calls something: a new edge.
        ({"util.py": _text("util.py") + "\n\ndef relay(v):\n    return clamp(v, 0, 1)\n"}, 1),
        # It calls a method by a name no function of the repository has (`v.cuda()`): no edge.
        ({"runner.py": _text("runner.py").replace("class Runner:", "def moved(v):\n    return v.cuda()\n\n\nclass Runner:")}, 0),
        # ... by the name of a method the repository defines (`b.plan()`, `Backend.plan`): a new edge.
        ({"runner.py": _text("runner.py").replace("class Runner:", "def planned(b):\n    return b.plan(None)\n\n\nclass Runner:")}, 1),
        # A name another file already calls (`scale`, imported and called by runner.py) defined
        # a second time: calls by that name may reach it.
        ({"util.py": _text("util.py") + "\n\ndef scale(values, factor):\n    return values\n"}, 1),
        # A name a file called before any definition of it (built so first): the call reaches it now.
        ({"util.py": _text("util.py") + "\n\ndef later(x):\n    return x\n"}, 1),
    ],
    ids=["appended", "inserted-above", "calls-something", "calls-a-method-nothing-defines", "calls-a-method-the-repository-defines",
         "name-defined-elsewhere", "called-before-defined"],
)
def test_a_function_no_call_reaches_keeps_the_call_graph(tmp_path, monkeypatch, edits, builds):
    files = dict(FILES)
    if "later" in edits.get("util.py", ""):
        files["runner.py"] = FILES["runner.py"].replace("return helper(out, batch)", "return later(helper(out, batch))")
    root = project(tmp_path / "proj", files)
    how, built = _graph_builds(root, monkeypatch, edits)
    if builds == 0:
        assert (how, built) == ("incremental", 0)
    else:  # the graph resolved again: by the incremental build, or a whole solve
        assert built >= 1
