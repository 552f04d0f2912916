"""The index's vocabulary, shared by its modules: the place bits a summary's flows carry, the
kinds of symbol that stand for what another file decides, the marks of the call graph's
edges, and the notes a caller or a fact carries.
"""

from __future__ import annotations

from synclint.screen import places

DEVICE, HOST, NUMPY, LIST, CPU = places.DEVICE, places.HOST, places.NUMPY, places.LIST, places.CPU
SCALAR = 1 << 5  # a Python scalar or string: the index's own bit (the screen never needs it)
PLACES = DEVICE | HOST | NUMPY | LIST | SCALAR
_FIRST_SYMBOL = 1 << 6  # bits from here stand for what another file decides


ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")


# A caller that is no way in for the hot path: a call on a cold branch (a first use or a
# cache miss, an `except` handler, a debugging switch: synclint/analysis/coldcode.py), one of
# the call graph's cold roots.
COLD_CALLER = " [on a cold branch]"
GUARDED_CALLER = " [only when "
UNTAKEN_CALLER = " [on a branch no call outside cold code takes]"


# `Cls.f()`: the field types' key for what a method alias `self.f = self.g` makes `obj.f(...)` run.
ALIAS = "()"
# A field type `RETURNED_BY + m`: the field holds what method `m` of the object's own class
# returns (`self.vpm = self.init_vision_module(...)`, overridden by each subclass).
RETURNED_BY = "=>"
# The field types' key for a class's generic bases (`class B(Base[Meta])`: "Base").
GENERIC_BASES = "[bases]"
# The mark of a relay flow that passes an element of an indexed value (`f(counts[rank])`).
ELEMENT = "element"


_NO_SUMMARY = ((), (), (), (), (), ((), (), ()), ())


NAME_PREFIX = "*"  # `decode_*`: a word that starts a formatted string


# Library base classes whose methods are no method of the repository (`self.to()` of an
# `nn.Module` subclass does not call the repository's `to()`).
_LIBRARY_BASES = frozenset({"Module", "nn.Module", "object", "ABC", "Enum", "IntEnum", "Exception", "Generic", "Protocol", "NamedTuple", "dict", "list"})

# `A|B`: a field's class where it is built from a registry of classes (`_registries`).
_CLASS_UNION = "|"

# `Cls.sub!`: a call of the object field `sub` of a `Cls` holds (`self.sub(x)`), not of a method.
_FIELD_CALL = "!"

# Calls into these are not calls of the repository's functions.
_EXTERNAL = ("torch", "numpy", "math", "os", "re", "sys", "logging", "typing", "dataclasses", "functools",
             "itertools", "collections", "json", "time", "triton", "enum", "copy", "warnings", "threading", "asyncio")


# What a device tensor is not: host tensors, numpy arrays, Python lists and scalars.
_HOST_DATA = HOST | NUMPY | LIST | SCALAR
_HOST_TENSORS = HOST | NUMPY | LIST  # host data a tensor method may be called on
# A fact's flags: a device tensor by weak evidence only (the name also holds host data or
# Python values elsewhere): low; RESOLVABLE: the other values are Python values only (ints,
# lists), so a tensor method called on it (`x.max()`, `x.tolist()`) says it is the tensor.
AMBIGUOUS = 1 << 6
RESOLVABLE = 1 << 7
RESOLVABLE_NOTE = "low unless a tensor method is called on it"
RESOLVABLE_NOTE_TORCH_ONLY = "low unless a method numpy arrays lack is called on it"


# Element `i` of the tuples a function returns, a target and a symbol: (RESULT_ITEM, "f", i).
RESULT_ITEM = "ri"
# Symbols for the result of `obj.m()` with `obj` of class `Cls` (METHOD_RESULT, "Cls.m"), and
# for element `i` of it unpacked (METHOD_RESULT_ITEM, "Cls.m", i).
METHOD_RESULT = "Qr"
METHOD_RESULT_ITEM = "Qri"
# An argument of such a call (PASSED_ARGUMENT, "Cls.m", slot, local places, symbols): where
# it is, if a method the call runs returns that parameter as it is; `slot` is its position
# (after `self`) or its keyword. The functions whose result is made of their parameters
# alone are declared (PASSES_THROUGH, function, ((position or -1, parameter), ...)).
PASSED_ARGUMENT = "Qa"
PASSES_THROUGH = "pt"
# Places a resolved symbol adds to its flow's own (`_expand_flow`): (PLACES_OF, mask).
PLACES_OF = "L"
# The symbols `_expand` replaces by what they stand for in the repository (and a method's own
# parameter, `("p", "Cls.m", x)`).
_RESOLVED_SYMBOLS = frozenset({"A", RESULT_ITEM, METHOD_RESULT, METHOD_RESULT_ITEM, PASSED_ARGUMENT})


# A number parameter's element relay kept for the module whose own call gives it
# (`_loop_numbers`): (FILE_RELAY, module, function, parameter).
FILE_RELAY = "pf"


# The marks the call graph reads beside the calls (`_CallGraph.graph`): `("~", HOST_MARK, f)`,
# function `f` is defined in a host-side pre-processing file; `("~", FIELD_MARK + f, kind)`, a
# value of that kind (synclint/analysis/given_fields.py `field_values`) is assigned to field `f`.
MARK_CALLER = "~"
HOST_MARK = "~host"
# `("~", WORKER_MARK, f)`: the module hands its function `f` to an executor
# (`pool.submit(f, ...)`, `loop.run_in_executor(pool, f)`, `asyncio.to_thread(f)`): `f` runs
# off the serving thread, and what only it reaches too. `("~", THREAD_MARK, f)`: it runs `f`
# as a thread's target (`Thread(target=self._loop)`), off the serving thread unless `f`
# reaches the model itself (`_CallGraphTiers._serving_loop`).
WORKER_MARK = "~worker"
THREAD_MARK = "~thread"
# `("~", SCRIPT_MARK, f)`: the module's `if __name__ == "__main__":` block calls its function
# `f` (`main()`): a script's entry, run by hand; where nothing else calls `f`, what only it
# reaches is cold.
SCRIPT_MARK = "~script"
# `("~", HANDLER_MARK, m)`: the module registers method `m` in a table keyed by message
# types (coldcode.dispatch_handlers): it runs once per message of its kind, not every step.
HANDLER_MARK = "~handler"
# `("~", HELD_MARK + F, ref)`: the module stores function `ref` in a field `F` named for
# functions (`postprocess_text_funcs = field(default_factory=lambda: (llama_postprocess,))`,
# `Config(preprocess_fn=resize)`); a function's read of `.F` is the edge `HELD_CALL + F`,
# which reaches every function stored there (coldcode.callable_field).
HELD_MARK = "~held:"
HELD_CALL = "@"
# `("~", WORKER_PARAM_MARK, "f:1:run")`: function `f` hands its parameter `run` (the second
# after `self`) to a thread or executor; `("~", PASSED_FUNCTION_MARK, "f:1::Cls.m")`: a call
# of `f` passes method `m` of class `Cls` there (coldcode.handed_on_workers).
WORKER_PARAM_MARK = "~wparam"
PASSED_FUNCTION_MARK = "~passed"
FIELD_MARK = "~f:"
# `("~", BUILT_MARK + Cls, guard)`: the module calls `Cls(...)` on a branch that runs on the
# platforms of `guard` (`%xpu`; "" everywhere), or uses the name another way (`class_uses.ANY_USE`).
BUILT_MARK = "~new:"
# `(f, BUILDER_MARK + Cls, "")`: function `f` builds `Cls` (`Cls(...)`): a class only code
# nothing runs builds is never built (`_CallGraphTiers._unbuilt`).
BUILDER_MARK = "~by:"
# `("~", KEPT_FIELD_MARK, f)`: the module declares multimodal field `f` kept on the host
# (`keep_on_cpu=True`); `DEVICE_FIELD_MARK`, one the framework moves to the device;
# `("~", BASE_MODULE_MARK, "1:qwen2_vl")`: a base of one of its classes is imported from that
# module (synclint/analysis/host_fields.py). `_file_edges` adds the file's path to the mark.
KEPT_FIELD_MARK = "~kept:"
DEVICE_FIELD_MARK = "~moved:"
BASE_MODULE_MARK = "~base:"
_MODULE_MARKS = (KEPT_FIELD_MARK, DEVICE_FIELD_MARK, BASE_MODULE_MARK)
# `("~", SHAPE_MARK + Cls.m, shape)`: the parameters method `m` takes (guards.shape), for the
# calls by name that can bind to them (`_CallGraphTiers._ways_in`).
SHAPE_MARK = "~s:"
# `("~", RECEIVER_MARK + m, "head:caller")`: `caller` calls `m` by name on an object whose
# name ends in `head` ("" for anything else); `UNREACHED_MARK + Cls.m` -> the callers whose
# calls by name of `m` cannot be of a `Cls` (synclint/analysis/receivers.py).
RECEIVER_MARK = "~r:"
UNREACHED_MARK = "~u:"


# `Base::m`: a call `super().m()` in a subclass of `Base` (`_CallGraph._resolve`).
_SUPER_CALL = "::"
