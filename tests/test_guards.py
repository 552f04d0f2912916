"""The kinds of argument the index records for each call (synclint/analysis/guards.py), and
which calls can be calls of a function of a given shape."""

from __future__ import annotations

import ast

import libcst as cst

from synclint.analysis import given_fields, guarded_branches, guards


def _call_kinds(caller: str, call_text: str) -> str:
    func = ast.parse(caller).body[0]
    own = guards.parameters(func)
    bindings = guards.none_assigned(func)
    call = next(n for n in ast.walk(func) if isinstance(n, ast.Call) and ast.unparse(n) == call_text)
    return guards.argument_signature(call, own, bindings)


CALLER = """
def step(self, batch, hint=None, flag=False):
    lens = [1, 2]
    maybe = batch.lens_cpu
    if hint is None:
        hint = list(lens)
    is_cpu = current_platform.is_cpu()
    f(lens, None, True, 0, maybe, batch.x, hint, flag, is_cpu, *rest)
    g(a=lens, b=d.get("k"), c=flag, **extra)
"""


def test_each_argument_gets_its_kind():
    positional, _, keywords = _call_kinds(CALLER, "f(lens, None, True, 0, maybe, batch.x, hint, flag, is_cpu, *rest)").partition(";")
    # a local list, None, True, 0, a name bound to a field and the field itself (`~f`: what
    # the repository assigns that field decides), a parameter filled where None, a parameter
    # passed on, a platform predicate, then `*rest`: the rest unknown
    assert positional.split(",") == ["l", "N", "T", "F", "~lens_cpu", "~x", "g", "@flag#2#F", "Pcpu", "*"]
    assert keywords == ""
    assert _call_kinds(CALLER, "g(a=lens, b=d.get('k'), c=flag, **extra)") == ";a=l,b=?,c=@flag#2#F,*"


FORWARDER = """
def run(self, q, plan=None, **kwargs):
    if plan is None:
        return _run(q, **kwargs)
    return _run(q, plan, **extra)


def relay(q, **kwargs):
    kwargs = dict(kwargs)
    return _run(q, **kwargs)


def trimmed(q, **kwargs):
    kwargs.pop("out", None)
    return _run(q, **kwargs)
"""


def test_forwarded_kwargs_name_the_callers_parameters_that_never_reach_them():
    # `run` forwards its `**kwargs`; its named parameters `q` and `plan` are never in them.
    assert _call_kinds(FORWARDER, "_run(q, **kwargs)") == "@q#0#-;*@q.plan"
    # A keyword the call leaves to them is what `run`'s callers pass for it; a named
    # parameter of `run` is never in them: the callee's default.
    assert guards.passed_kind("g;*@q.plan", "check", -1, "F") == "@check#-1#F"
    assert guards.passed_kind("g;*@q.plan", "plan", -1, "N") == "N"
    assert guards.passed_kind("g;check=T,*@q.plan", "check", -1, "F") == "T"
    # `**` of anything else, or of kwargs it changes or rebinds, is unknown.
    assert _call_kinds(FORWARDER, "_run(q, plan, **extra)") == "@q#0#-,@plan#1#N;*"
    assert guards.passed_kind("g;*", "check", -1, "F") == "?"
    for changed in ast.parse(FORWARDER).body[1:]:
        call = changed.body[-1].value
        assert guards.argument_signature(call, guards.parameters(changed), guards.none_assigned(changed)) == "@q#0#-;*"


LISTS = """
def encode(self, grid_thw, sizes_t):
    if isinstance(grid_thw, list):
        grid_list = grid_thw
    else:
        grid_list = grid_thw.tolist()
    sizes = sizes_t.tolist()
    pairs, rest = [1], [2]
    grown = [1]
    grown += [2]
    f(grid_list, sizes, [n for n in sizes], sorted(sizes), pairs, grown, grid_thw)
"""


def test_python_lists_are_their_own_kind():
    # a name bound under `isinstance(b, list)` to `b`, or else to `.tolist()`; a `.tolist()`;
    # a comprehension; `sorted()`; a tuple unpacking (not read); a list grown with `+=`;
    # the parameter itself, passed on
    assert _call_kinds(LISTS, "f(grid_list, sizes, [n for n in sizes], sorted(sizes), pairs, grown, grid_thw)") == (
        "l,l,l,l,g,l,@grid_thw#0#-;")


def test_what_a_call_passes_for_a_parameter():
    # by position, by keyword, left out (the default's kind), and unknown after `*args`
    assert guards.passed_kind("g,N;", "hint", 1, "N") == "N"
    assert guards.passed_kind("g;hint=T", "hint", 1, "N") == "T"
    assert guards.passed_kind("g;", "hint", 1, "F") == "F"
    assert guards.passed_kind("*;", "hint", 1, "F") == "?"
    # a `*args` never fills a keyword-only parameter (position -1): left out, it is its default
    assert guards.passed_kind("*;", "wait", -1, "F") == "F"
    assert guards.passed_kind("*;wait=T", "wait", -1, "F") == "T"
    # ... but a wrapper's `f(*args, **kwargs)` is not followed up its callers
    assert guards.passed_kind("*;*@out", "wait", -1, "F") == "?"
    assert guards.passed_kind("g;", "x", 1, "-") == "?"  # a required parameter left out: not this function's call


def test_a_call_fits_a_function_only_with_the_arguments_it_takes():
    func = cst.parse_module("def filter_batch(self, new_indices, new_indices_cpu=None): pass").body[0]
    shape = guarded_branches.shape_of(func)
    assert guards.fits("g;new_indices_cpu=g", shape)
    assert not guards.fits(";reqs_to_exclude=g", shape)  # a keyword it lacks
    assert not guards.fits(";", shape)  # its required parameter not given
    assert not guards.fits("g,g,g;", shape)  # more positional arguments than it takes
    assert guards.fits(";*", shape)  # `**kwargs`: anything may be passed


def test_conditions_on_a_parameter_and_what_can_take_them():
    assert guards.can_take(guards.IS_NONE, ["g", "N"])
    assert not guards.can_take(guards.IS_NONE, ["g", "T"])
    assert not guards.can_take(guards.TRUTHY, ["F", "N"])
    assert guards.can_take(guards.TRUTHY, ["?"])
    # a list is never a tensor, and a tensor branch is taken by anything else given
    assert not guards.can_take(guards.NOT_LIST, ["l"])
    assert guards.can_take(guards.IS_LIST, ["l"])
    assert not guards.can_take(guards.IS_TENSOR, ["l", "N", "c"])
    assert guards.can_take(guards.IS_TENSOR, ["g"])
    assert guards.can_take(guards.NOT_TENSOR, ["l"])
    assert guards.on_targets("Pcpu", frozenset({"cuda"})) == "F"
    assert guards.on_targets("Pcpu", frozenset({"cpu"})) == "T"
    assert guards.on_targets("Pcpu", frozenset({"cpu", "cuda"})) == "?"


FIELDS = '''
from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Packed:
    bounds_host: tuple[int, ...]
    lens_cpu: Optional[list] = None
    width: int = field(default=None)

    @classmethod
    def build(cls, cu):
        return cls(bounds_host=tuple(cu.tolist()))


class Sampling:
    max_top_k: Optional[int] = None


class Draft:
    max_top_k: int = 1

    def __init__(self, scale: float, hint=None):
        self.scale = scale
        self.hint = hint
        self.copy = other.bounds_host
        self.register_buffer("_k_scale", torch.tensor(1.0))


def drop(layer):
    del layer._gone
'''


def test_the_values_a_module_assigns_its_fields():
    found = given_fields.field_values(ast.parse(FIELDS))
    # A `None` default is None unless every construction fills the field (`DEFAULT_NONE`);
    # the constructions are kept beside the fields, with the keywords they pass.
    assert ("Packed.bounds_host", "g") in found and ("Packed.lens_cpu", "d") in found and ("Packed.width", "d") in found
    assert ("Packed.<init>", "cbounds_host") in found
    assert ("Sampling.max_top_k", "d") in found and ("Draft.max_top_k", "g") in found
    assert ("Draft.scale", "g") in found and ("Draft.hint", "N") in found and ("Draft.copy", "~bounds_host") in found
    assert ("Draft._k_scale", "g") in found and ("_gone", "N") in found
    kinds: dict = {}
    for key, kind in found:
        kinds.setdefault(key, set()).add(kind)
    given = given_fields.GivenFields(kinds)
    # By the class the code says; a bare field name counts every class's values.
    assert "Draft.max_top_k" in given and "max_top_k" not in given and "Sampling.max_top_k" not in given
    assert "Packed.bounds_host" in given and "Draft.copy" in given and "Packed.lens_cpu" not in given
    assert "_gone" not in given and "never_assigned" not in given


def test_a_preprocessor_class_and_a_processors_folder_are_host_side():
    from synclint.analysis.platform_words import host_class, host_file

    assert host_class("EncoderPreprocessor", []) and not host_class("LogitsProcessor", [])
    assert host_file("srt/multimodal/processors/omni.py") and host_file("models/image_processing_x.py")
    assert not host_file("srt/layers/rope_index.py")


def test_the_index_reads_a_function_shape_as_the_tiers_do():
    for text in ("def m(self, x, hint=None, *args, wait=False, **kw): pass", "def f(a, b=1): pass",
                 "def g(cls, *, key): pass", "def h(self, **kwargs): pass"):
        assert guards.shape(ast.parse(text).body[0]) == guarded_branches.shape_of(cst.parse_module(text).body[0])


KEYWORD_DICTS = """
def attend(self, q, cu_seqlens, cu_seqlens_host=None):
    core = dict(cu_seqlens=cu_seqlens, cu_seqlens_host=cu_seqlens_host, window=None)
    plain = {"cu_seqlens": cu_seqlens, "causal": True}
    grown = dict(cu_seqlens=cu_seqlens)
    grown["extra"] = q
    copied = dict(self.options)
    _core(q, **core)
    _core(q, **plain)
    _core(q, **grown)
    _core(q, **copied)
"""


def test_a_local_dict_of_keywords_passes_its_keywords():
    # `f(**core)` of `core = dict(a=x, ...)` or `{"a": x}`: each keyword with its kind
    assert _call_kinds(KEYWORD_DICTS, "_core(q, **core)") == (
        "@q#0#-;cu_seqlens=@cu_seqlens#1#-,cu_seqlens_host=@cu_seqlens_host#2#N,window=N")
    assert _call_kinds(KEYWORD_DICTS, "_core(q, **plain)") == "@q#0#-;cu_seqlens=@cu_seqlens#1#-,causal=T"
    # a dict changed after it is built, or copied from elsewhere: unknown keywords
    assert _call_kinds(KEYWORD_DICTS, "_core(q, **grown)") == "@q#0#-;*"
    assert _call_kinds(KEYWORD_DICTS, "_core(q, **copied)") == "@q#0#-;*"


NARROWING = """
def step(self, meta, x, y=None):
    if meta.lens_cpu is not None:
        f(meta.lens_cpu)
    else:
        f(meta.lens_cpu)
    if x is None:
        return
    f(x)
    bounds = y if y is not None else f(y)
    y is not None and f(y, 1)
    if y:
        y = None
        f(y, 2)
"""


def test_an_argument_tested_not_none_around_the_call_is_a_value():
    func = ast.parse(NARROWING).body[0]
    own, bindings = guards.parameters(func), guards.none_assigned(func)
    narrowed = guards.narrowed_calls(func)
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call)]

    def kinds(text: str, nth: int = 0) -> str:
        call = [c for c in calls if ast.unparse(c) == text][nth]
        return guards.argument_signature(call, own, bindings, None, narrowed.get(id(call), frozenset()))

    by_line = sorted(calls, key=lambda c: c.lineno)
    assert [ast.unparse(c) for c in by_line][:2] == ["f(meta.lens_cpu)", "f(meta.lens_cpu)"]
    # the body of `is not None`: a value; its `else`: the field's value, as before
    assert [guards.argument_signature(c, own, bindings, None, narrowed.get(id(c), frozenset())) for c in by_line[:2]] == ["g;", "~lens_cpu;"]
    # after `if x is None: return`: what the callers pass for `x`, None aside
    assert kinds("f(x)") == "@x#1#-#n;"
    # the `else` of a conditional expression that tests it: not narrowed; the `and`'s right side is
    assert kinds("f(y)") == "?;"
    assert kinds("f(y, 1)") == "g,T;"
    # rebound inside the branch before the call: what may be None again
    assert kinds("f(y, 2)") == "?,T;"
