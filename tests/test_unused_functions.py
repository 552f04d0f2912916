"""Code that only functions nothing in the repository names can reach is cold (synclint/repo/
`unused`, `_CallGraphTiers._unused`): a quantisation packing helper whose only caller is a
public function kept for tests, in a repository large enough to wire its own code together.
A function named anywhere (a callback, a string a dispatch looks up, a formatted-string
prefix) or in a small project is left as it was."""

from __future__ import annotations

import os
import time
from pathlib import Path

from index_projects import _store, project  # noqa: F401 - _store is an autouse fixture

from synclint import repo, runner
from synclint.config import Settings
from synclint.violation import Confidence

# Modules that make the project as large as a serving engine's (`repo.MIN_MODULES_FOR_UNUSED`).
FILLER = {f"engine/util/part_{i}.py": f"def part_{i}(x):\n    return x + {i}\n\n\nVALUE_{i} = part_{i}(1)\n" for i in range(repo.MIN_MODULES_FOR_UNUSED)}

PACKING = """\
    import torch


    def pack_rows(q_w: torch.Tensor, num_bits: int):
        q_w = q_w.cuda()
        pack_factor = 32 // num_bits
        if (q_w >= 2**num_bits).any():
            raise ValueError("value out of range")
        return q_w.reshape(-1, pack_factor)


    def gptq_pack(q_w: torch.Tensor, num_bits: int):
        return pack_rows(q_w, num_bits)
    """


def tiers(root: Path, name: str) -> dict[int, tuple[str, str | None]]:
    settings = Settings(include_cold=True, min_confidence=Confidence.LOW)
    run = runner.lint_paths([root / name], settings, jobs=1, use_cache=False)
    return {v.location.row: (v.tier, v.tier_reason) for v in run.violations}


def test_a_helper_only_an_unnamed_function_reaches_is_cold(tmp_path):
    root = project(tmp_path / "proj", {**FILLER, "engine/quant/packing.py": PACKING})
    tier, reason = tiers(root, "engine/quant/packing.py")[7]
    assert tier == "cold"
    assert reason == "reached only from `gptq_pack()`, which nothing in the repository calls or names (code for tests or users, not serving)"
    # Not in the default report.
    default = runner.lint_paths([root / "engine/quant/packing.py"], Settings(), jobs=1, use_cache=False)
    assert [v.location.row for v in default.violations] == []


def test_a_small_project_keeps_its_entry_points(tmp_path):
    # Two modules of kernels: a function nothing calls is what its users call.
    root = project(tmp_path / "proj", {"engine/quant/packing.py": PACKING, "engine/other.py": "def noop():\n    return None\n"})
    assert tiers(root, "engine/quant/packing.py")[7][0] == "unknown"


def test_a_function_named_as_a_callback_a_string_or_a_format_prefix_is_used(tmp_path):
    callers = {
        # a callback handed to a registry
        "engine/register.py": "from engine.quant.packing import gptq_pack\n\nHANDLERS = {'gptq': gptq_pack}\n",
        # a lookup by a formatted string: `getattr(module, f"gptq_{kind}")`
        "engine/dispatch.py": "import importlib\n\n\ndef run(kind, w, bits):\n    return getattr(importlib.import_module('engine.quant.packing'), f\"gptq_{kind}\")(w, bits)\n",
        # the same below a docstring and comments (prose the words leave out)
        "engine/dispatch_doc.py": '"""Dispatch by kind.\n\nPacks weights.\n"""\nimport importlib  # the packers\n\n\n'
                                  "def run(kind, w, bits):\n    # pick the packer\n"
                                  "    return getattr(importlib.import_module('engine.quant.packing'), f\"gptq_{kind}\")(w, bits)\n",
    }
    for name, text in callers.items():
        root = project(tmp_path / name.replace("/", "_"), {**FILLER, "engine/quant/packing.py": PACKING, name: text})
        assert tiers(root, "engine/quant/packing.py")[7][0] == "unknown", name


def test_a_hot_root_still_wins(tmp_path):
    model = """\
        import torch
        from torch import nn
        from engine.quant.packing import pack_rows


        class Linear(nn.Module):
            def forward(self, w: torch.Tensor):
                return pack_rows(w, 4)
        """
    root = project(tmp_path / "proj", {**FILLER, "engine/quant/packing.py": PACKING, "engine/model.py": model})
    assert tiers(root, "engine/quant/packing.py")[7][0] == "hot"


def test_name_references_leave_out_a_name_only_its_def_mentions():
    text = 'def used():\n    return 1\n\n\ndef lonely():\n    return used()\n\n\nclass Table:\n    pass\n\n\nKEY = f"decode_{1}"\n'
    words = repo.name_references(text)
    assert "used" in words and "lonely" not in words
    # A decorator hands its function to code that calls it by another name (a custom op
    # called as `torch.ops.ns.fused`, a route): named, even over several lines.
    decorated = '@torch.library.custom_op(\n    "ns::fused",\n    mutates_args=(),\n)\ndef _fused_impl(x):\n    return x\n'
    assert "_fused_impl" in repo.name_references(decorated)
    # One that wraps it under its own name registers nothing.
    wrapped = "class Rope:\n    @staticmethod\n    def get_rope_index(x):\n        return x\n\n\n@functools.lru_cache(maxsize=8)\ndef table(n):\n    return n\n"
    assert {"get_rope_index", "table"}.isdisjoint(repo.name_references(wrapped))
    assert "Table" not in words and "def" not in words and "return" not in words
    assert "decode_" + repo.NAME_PREFIX in words
    assert repo.unused({"lonely", "decode_frames", "main", "used"}, [words]) == frozenset({"lonely"})
    # A formatted string that is a whole name, with an end after its field, names only the
    # functions with that start and end (`get_{modality}_feature`: `get_image_feature`).
    lookup = 'def f(model, modality):\n    return getattr(model, f"get_{modality}_feature")\n'
    assert repo.unused({"get_image_feature", "get_token_ids_batch"}, [repo.name_references(lookup)]) == frozenset({"get_token_ids_batch"})
    # With the parsed module, only a string a lookup is given names anything: directly, or
    # through a name it is bound to; a task's name (`f"create_{response.id}"`) looks nothing up.
    import ast

    module = ('import backends\n\n\ndef pick(kind, response):\n    name = f"decode_{kind}"\n'
              '    task = f"create_{response.id}"\n    return getattr(backends, name), task\n')
    words = repo.name_references(module, ast.parse(module))
    assert repo.unused({"decode_frames", "create_pool"}, [words]) == frozenset({"create_pool"})
    # One that goes on past a name's characters says only how the name starts.
    dotted = 'KEY = f"get_{name}.weight"\n'
    assert repo.unused({"get_image_feature", "get_token_ids_batch"}, [repo.name_references(dotted)]) == frozenset()


def test_a_function_that_names_only_itself_is_unnamed():
    # A compile cache kept on the function (`f.cache[key]` in its body, `f.cache = {}` below
    # it) and a recursive call do not call it from anywhere else.
    text = (
        "def compute_sparsity(x, key):\n"
        "    if key not in compute_sparsity.cache:\n"
        "        compute_sparsity.cache[key] = build(key)\n"
        "    return compute_sparsity.cache[key](x)\n\n\n"
        "compute_sparsity.cache = {}\n\n\n"
        "def walk(node):\n"
        "    return [walk(c) for c in node.children]\n"
    )
    import ast

    words = repo.name_references(text, ast.parse(text))
    assert "compute_sparsity" not in words and "walk" not in words
    assert "build" in words
    # Without the parsed module only the `def` lines are known: the body's mentions count.
    assert "compute_sparsity" in repo.name_references(text)
    # A module-level use that is not an attribute assignment names it.
    used = text + "\nTABLE = {'sparsity': compute_sparsity}\n"
    assert "compute_sparsity" in repo.name_references(used, ast.parse(used))
    # So does a mention in another function of the module.
    called = text + "\ndef run(x):\n    return walk(x)\n"
    assert "walk" in repo.name_references(called, ast.parse(called))


def _indexed_project(tmp_path: Path) -> tuple[Path, repo.Facts]:
    """The large project with a helper file `engine/tools.py` to edit, indexed with a store."""
    root = project(tmp_path / "proj", {**FILLER, "engine/quant/packing.py": PACKING, "engine/tools.py": "def nothing():\n    return 0\n"})
    written = time.time() - 60  # files written a minute ago: their stat is trusted (repo.RACY_WINDOW_NS)
    for path in root.rglob("*.py"):
        os.utime(path, (written, written))
    return root, repo.build(root, use_cache=True)


def test_an_edit_that_names_the_function_is_seen_without_a_whole_solve(tmp_path, monkeypatch):
    root, facts = _indexed_project(tmp_path)
    assert "gptq_pack" in facts.orphans
    (root / "engine/tools.py").write_text("from engine.quant.packing import gptq_pack\n\n\ndef nothing():\n    return 0\n\n\nEXPORTED = [gptq_pack]\n")

    def whole(*args, **kwargs):
        raise AssertionError("solved whole")

    monkeypatch.setattr(repo.store, "solve", whole)
    after = repo.build(root, use_cache=True)
    assert "gptq_pack" not in after.orphans
    assert after.orphans < facts.orphans


def test_a_string_that_names_the_function_is_read_without_solving_again(tmp_path, monkeypatch):
    root, facts = _indexed_project(tmp_path)
    assert "gptq_pack" in facts.orphans
    # The summary's flows are the same: only its words changed (a name a lookup may use).
    (root / "engine/tools.py").write_text('def nothing():\n    return 0\n\n\nKEPT = ("gptq_pack",)\n')

    def solved(*args, **kwargs):
        raise AssertionError("solved again")

    monkeypatch.setattr(repo.store, "solve", solved)
    monkeypatch.setattr(repo.store, "_incremental", solved)
    after = repo.build(root, use_cache=True)
    assert "gptq_pack" not in after.orphans
    assert after.fingerprint != facts.fingerprint


def test_a_comment_or_a_docstring_names_nothing(tmp_path, monkeypatch):
    root, facts = _indexed_project(tmp_path)
    (root / "engine/tools.py").write_text(
        'def nothing():\n    """Unlike gptq_pack(), returns zero."""\n    return 0\n# gptq_pack: kept for the packing tests\n'
        'MESSAGE = "call gptq_pack first"\n')
    after = repo.build(root, use_cache=True)
    assert "gptq_pack" in after.orphans


def test_a_comment_that_names_nothing_new_keeps_the_facts_as_they_were(tmp_path, monkeypatch):
    root, facts = _indexed_project(tmp_path)
    (root / "engine/tools.py").write_text("def nothing():\n    return 0\n# returns zero\n")

    def hashed(*args, **kwargs):
        raise AssertionError("the facts were hashed again")

    for module in (repo.solver, repo.citing, repo.incremental):  # every module that hashes facts
        monkeypatch.setattr(module, "fingerprinted", hashed)
    after = repo.build(root, use_cache=True)
    assert after.fingerprint == facts.fingerprint and after.orphans == facts.orphans


# A subsystem the package exports and never wires in: a factory only its `__init__` imports
# and re-exports builds the coordinator; nothing else builds it or calls its hooks, and its
# algorithm's steps are reached only from them.
UNWIRED = {
    "engine/sparsity/__init__.py": """\
        from engine.sparsity.factory import create_sparse_coordinator

        __all__ = ["create_sparse_coordinator"]
        """,
    "engine/sparsity/factory.py": """\
        from engine.sparsity.coordinator import SparseCoordinator


        def create_sparse_coordinator(config):
            return SparseCoordinator(config)
        """,
    "engine/sparsity/coordinator.py": """\
        from engine.sparsity.algorithm import Algorithm


        class SparseCoordinator:
            HOOKS = ("attention_begin", "attention_end")  # around each layer
            def __init__(self, config):
                self.algorithm = Algorithm(config)

            def attention_end(self, seq_lens):
                return self.algorithm.update_representations(seq_lens)
        """,
    "engine/sparsity/algorithm.py": """\
        import torch


        class Algorithm:
            def __init__(self, config):
                self.states = torch.zeros(8, device="cuda")

            def update_representations(self, seq_lens):
                valid_mask = self.states > 0
                return seq_lens[valid_mask]
        """,
}


def test_a_subsystem_only_an_exported_factory_builds_is_cold(tmp_path):
    root = project(tmp_path / "proj", {**FILLER, **UNWIRED})
    tier, reason = tiers(root, "engine/sparsity/algorithm.py")[10]
    assert tier == "cold", reason
    assert "SparseCoordinator" in reason and "create_sparse_coordinator" in reason
    # Wired in: the runner builds the coordinator through the factory and calls its hook.
    wired = {**UNWIRED, "engine/runner.py": """\
        from engine.sparsity import create_sparse_coordinator


        class Runner:
            def __init__(self, config):
                self.coordinator = create_sparse_coordinator(config)

            def forward(self, seq_lens):
                return self.coordinator.attention_end(seq_lens)
        """}
    root = project(tmp_path / "wired", {**FILLER, **wired})
    assert tiers(root, "engine/sparsity/algorithm.py")[10][0] == "hot"


# A compaction method of an allocator (a class of the repository, with no base from
# elsewhere) and a debugging oracle of an `nn.Module`: nothing in the repository calls them;
# their docstrings and comments name them, which calls nothing.
ALLOCATOR = """\
    import torch
    from torch import nn


    class PagedAllocator:
        \"\"\"Pages move only on demand, via `compact_holes`.\"\"\"

        def __init__(self, device):
            self.free_pages = torch.arange(64, device=device)

        def alloc(self, n):
            return self.free_pages[:n]

        def compact_holes(self):
            pages = self.free_pages.tolist()
            return sorted(pages)


    class Indexer(nn.Module):
        def forward(self, x):
            return x * 2

        def naive_topk(self, x):
            # naive_topk: a reference for the unit tests
            return x.nonzero()
    """


def test_a_method_nothing_names_is_cold_where_no_base_from_elsewhere_may_call_it(tmp_path):
    root = project(tmp_path / "proj", {**FILLER, "engine/alloc.py": ALLOCATOR,
                                       "engine/use.py": "def grab(a):\n    return a.alloc(4)\n\n\nVALUE = grab\n"})
    found = tiers(root, "engine/alloc.py")
    assert found[15] == ("cold", "reached only from `PagedAllocator.compact_holes()`, which nothing in the repository calls "
                                 "or names (code for tests or users, not serving)")
    assert found[25][0] == "cold" and "Indexer.naive_topk" in found[25][1]
    # A wrapper that hands the call on to the allocator's method of its name, which nothing
    # calls either, names it no more than a recursive call does.
    wrapper = "class Pool:\n    def __init__(self, inner):\n        self.inner = inner\n\n" \
              "    def compact_holes(self):\n        return self.inner.compact_holes()\n"
    root = project(tmp_path / "wrapped", {**FILLER, "engine/alloc.py": ALLOCATOR, "engine/pool.py": wrapper})
    assert tiers(root, "engine/alloc.py")[15][0] == "cold"
    # Two such wrappers hand the call on to each other's namesakes too (by name): the ways in
    # only go round, and nothing outside them calls in.
    other = wrapper.replace("class Pool:", "class HybridPool:")
    root = project(tmp_path / "wrapped2", {**FILLER, "engine/alloc.py": ALLOCATOR, "engine/pool.py": wrapper, "engine/hybrid.py": other})
    assert tiers(root, "engine/alloc.py")[15][0] == "cold"
    # One outside call of the name keeps it: `a.compact_holes()` in a function the repository uses.
    caller = "def tidy(a):\n    return a.compact_holes()\n\n\nVALUE = tidy\n"
    root = project(tmp_path / "wrapped3", {**FILLER, "engine/alloc.py": ALLOCATOR, "engine/pool.py": wrapper, "engine/hybrid.py": other,
                                            "engine/use.py": caller})
    assert tiers(root, "engine/alloc.py")[15][0] == "unknown"


def test_a_method_named_in_code_or_maybe_called_by_a_base_from_elsewhere_is_not(tmp_path):
    named = {  # a call, and a lookup by a string that is the name
        "engine/use.py": "def tidy(a):\n    return a.compact_holes()\n\n\nVALUE = tidy\n",
        "engine/lookup.py": "def tidy(a):\n    return getattr(a, 'compact_holes')()\n\n\nVALUE = tidy\n",
    }
    for name, text in named.items():
        root = project(tmp_path / name.replace("/", "_"), {**FILLER, "engine/alloc.py": ALLOCATOR, name: text})
        assert tiers(root, "engine/alloc.py")[15][0] == "unknown", name
    # A base from a library may call any method by a protocol of its own (a thread's `run`,
    # a framework's hooks); PyTorch's `nn.Module` calls its own names (`get_extra_state`).
    threaded = ALLOCATOR.replace("class PagedAllocator:", "class PagedAllocator(threading.Thread):").replace(
        "import torch\n", "import threading\n    import torch\n", 1).replace("def naive_topk", "def get_extra_state")
    root = project(tmp_path / "threaded", {**FILLER, "engine/alloc.py": threaded})
    found = tiers(root, "engine/alloc.py")
    assert found[16][0] == "unknown" and found[26][0] == "unknown"


def test_prose_is_blanked_and_the_lines_are_kept():
    text = (
        'def a():\n'
        '    """Calls b_fn and c_fn,\n    over two lines."""\n'
        '    x = "c_fn"  # calls d_fn\n'
        '    y = f"{e_fn()} and text"\n'
        "    z = 'a message naming g_fn'\n"
        "    return 'pkg.mod:i_fn' + \"#not_a_comment j_fn\" + 'it\\'s k_fn'\n"
    )
    kept = repo.references._without_prose(text)
    assert kept.count("\n") == text.count("\n")
    words = set(repo.name_references(text))
    assert {"c_fn", "e_fn", "i_fn"} <= words
    assert {"b_fn", "d_fn", "g_fn", "j_fn", "k_fn"}.isdisjoint(words)
    # A line continued inside a string is still one string.
    continued = 'x = f"a = {a_fn()} \\\n    and more"\ny = "b_fn \\\n  and more"\n'
    assert repo.references._without_prose(continued) == 'x = f"a = {a_fn()} \\\n    and more"\ny = \n\n'


def test_a_string_left_open_costs_a_linear_scan():
    # A file that does not parse (an unclosed docstring, an unclosed quote) is read for its
    # words too: the scan ends the string at its line's end, or at the text's for a
    # triple-quoted one, instead of trying every way to split it (which never ended).
    import subprocess
    import sys

    script = (
        "from synclint import repo\n"
        "open_long = 'x = \"\"\"' + 'abc def ghi\\n' * 50000\n"
        "assert repo.references._without_prose(open_long) == 'x = ' + '\\n' * 50000\n"
        "open_short = 'x = \"' + 'abc def ' * 20000 + '\\ny = b_fn()\\n'\n"
        "assert repo.references._without_prose(open_short) == 'x = \\ny = b_fn()\\n'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=Path(repo.__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
