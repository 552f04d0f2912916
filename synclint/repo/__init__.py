"""The repository index: what the rest of the repository says about a value one file cannot place.

A tensor often arrives in the function that syncs on it through a parameter, a field of a
metadata object or a helper defined in another file. This package reads every Python file of
the project once (with `ast`, cached by content hash), summarises each, and solves over the
whole repository:

- a field (`obj.x`, `self.x`) every assignment of which that can be placed (`self.x = ...` in
  any method, `obj.x = ...`, `Cls(x=...)`) puts a device tensor there is a device field
  (fields are keyed by name: one that is also given host data, a list or a Python value
  anywhere is not placed); one only ever assigned host data is a host field;
- a parameter every call site of which that can be placed passes a device tensor is a device
  parameter (calls resolve by name: `f(...)`, `obj.f(...)`, `Cls(...)` for `Cls.__init__`;
  and through the class of the object where the code says it, a method alias such as
  `self.update = self.update_windowed` included); a method reads its own parameters through
  its class (`_MethodParams`);
- a function whose every placeable `return` gives a device (host) tensor returns one.

Each summary is computed by the screen's `ast` evaluator (synclint/screen/places.py), the
same one that decides which functions libcst parses: while a file is summarised, what the
evaluator would ask of the rest of the repository (a field, a parameter, a function's
result) is returned as a symbolic bit, so the summary is a set of flows `target <- local
places | symbols`, independent of every other file, and cacheable by content. The flows are
then solved to a fixpoint.

One odd assignment must not undo the rest: a declared tensor (`x: torch.Tensor` as a field
of a class family, a parameter or the result of a function whose name at most three functions
share) that at least two flows give a device tensor, and at least three times as many as give
it anything else, is read as the device tensor it mostly holds (`_dominant`; `--explain` says so).

Structural conventions, which hold in any codebase, are evidence too (medium confidence, and
`--explain` says so): a name ending in `_gpu`, `_cuda` or `_dev` is a device tensor (not a
device word such as `device`, nor a flag or a count: `is_cuda`, `use_gpu`, `num_gpu`,
`flops_per_gpu`; a `_device` suffix names a device object as often as a tensor, so it says
nothing); `_cpu`, `_host`, `_pinned`, `_cpu_tensor` a host tensor (so is a name that starts
with `host_` or `cpu_`: `host_indices`), `_np`/`_numpy` a numpy
array, `_list` a Python list; and a class or a parameter list holding both `x` and its host
mirror `x_cpu` (`x_host`, `x_np`) holds `x` on the device, unless `x` is given host data or
Python values anywhere in the repository (`self.num_tokens = 0` in another class).

What the solve found is installed for the lint (`install`): the screen reads it through
`places.REPO`, the libcst analysis through `attr_fact` / `param_fact` / `ret_fact`.

The index reads the repository in this order, one module a step:

- `store`: find the project root and its Python files; reuse the stored summaries of files
  whose content is unchanged (`disk`), summarise the others (`summary`, with `classes`,
  `declarations`, `recorder`, `references`, `edges`, `conventions`);
- `solver`: join the summaries into classes and a call graph (`callgraph`), expand each flow
  through what its symbols stand for, solve to a fixpoint (`fixpoint`) and keep the examples
  `--explain` cites (`citing`); after an edit, `incremental` solves again only what changed;
- `facts`: the solution the lint reads (`install`, `attr_fact`, `param_fact`, `ret_fact`),
  with what an edit changed since the last few solves (`delta`, for the results cache);
  `tiers`: hot and cold through the call graph.

`keys` holds the vocabulary they share: place bits, symbol kinds and call marks.
"""

from __future__ import annotations

# The modules, each imported after those it depends on.
from synclint.repo import (
    keys, delta, disk, conventions, references, classes, declarations, recorder, edges, summary, callgraph, facts, citing, fixpoint, solver, tiers, incremental, store,
)
from synclint.repo.callgraph import MIN_MODULES_FOR_UNUSED, unused
from synclint.repo.conventions import convention
from synclint.repo.disk import store_folder
from synclint.repo.facts import (
    EMPTY, Facts, GRAPH_QUESTIONS, attr_fact, class_of_annotation, crowded_method, dependency_digest,
    elements_of_annotation, field_fact, graph_digest, graph_fingerprint, install, method_ret_fact,
    param_fact, passes_fact, recording, ret_fact, ret_item_fact,
)
from synclint.repo.fixpoint import file_relay_fact
from synclint.repo.keys import (
    AMBIGUOUS, DEVICE, HOST, LIST, MARK_CALLER, NAME_PREFIX, NUMPY, PLACES, RESOLVABLE, RESOLVABLE_NOTE,
    RESOLVABLE_NOTE_TORCH_ONLY, RESULT_ITEM, SCALAR,
)
from synclint.repo.references import name_references
from synclint.repo.solver import solve
from synclint.repo.store import INDEX_VERSION, RACY_WINDOW_NS, SUMMARY_MODULES, build, build_aside, find_root, python_files
from synclint.repo.summary import summarize
from synclint.repo.tiers import Verifier, tiers_hook, verifier

__all__ = [
    "AMBIGUOUS", "DEVICE", "EMPTY", "Facts", "GRAPH_QUESTIONS", "HOST", "INDEX_VERSION", "LIST",
    "MARK_CALLER", "MIN_MODULES_FOR_UNUSED", "NAME_PREFIX", "NUMPY", "PLACES", "RACY_WINDOW_NS",
    "RESOLVABLE", "RESOLVABLE_NOTE", "RESOLVABLE_NOTE_TORCH_ONLY", "RESULT_ITEM", "SCALAR",
    "SUMMARY_MODULES", "Verifier", "attr_fact", "build", "build_aside", "class_of_annotation", "convention",
    "crowded_method", "dependency_digest", "elements_of_annotation", "field_fact",
    "file_relay_fact", "find_root", "graph_digest", "graph_fingerprint", "install",
    "method_ret_fact", "name_references", "param_fact", "passes_fact", "python_files", "recording",
    "ret_fact", "ret_item_fact", "solve", "store_folder", "summarize", "tiers_hook", "unused",
    "verifier", "keys", "delta", "disk", "conventions", "references", "classes", "declarations",
    "recorder", "edges", "summary", "callgraph", "facts", "citing", "fixpoint", "solver", "tiers",
    "incremental", "store",
]

