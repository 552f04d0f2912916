"""Solving again after an edit: the state of the last full solve is kept, and only the targets
whose flows changed, and those that read them, are solved again, by the same code as the
full solve, with the same answer.
"""

from __future__ import annotations

import marshal
import os
import re
import zlib
from collections import Counter, defaultdict
from itertools import accumulate, chain, count as numbers, repeat
from operator import itemgetter

from synclint.repo.callgraph import _CallGraph, _vendored, unused
from synclint.repo.citing import _recite_all
from synclint.repo.declarations import _declared_fields
from synclint.repo.disk import _read, _write
from synclint.repo.edges import _file_edges
from synclint.repo.facts import Facts, Types, _FACTS_FIELDS, _Family, _facts_blob, _facts_of, fingerprinted
from synclint.repo.fixpoint import _mirrored, _votes
from synclint.repo.keys import MARK_CALLER, PASSES_THROUGH, RECEIVER_MARK, RESULT_ITEM, _NO_SUMMARY
from synclint.repo.solver import (
    _MethodParams, _QualifiedCalls, _SolvedTargets, _Unresolved, _conclude, _expand_flow, _file_flows,
    _given_numbers,
)

# At most this many changed files are compared with their last summary before solving again.
_MAX_PATCHED = 16


# A full solve keeps its state (`_save_state`): every flow after resolution, interned, with the
# flows of each target and the flows that read each symbol, the plain fixpoint and the final
# solution of every target, and the repository's tables counted per file. After an edit that
# changes summaries, `_incremental` starts from that state: the targets whose flows changed
# (what they give, or their order) or whose declarations changed, and every target that reads
# them, transitively, are solved again by the same code (`_conclude`) over their flows alone,
# each symbol outside them read as the constant it was solved to; so are the targets whose flows
# only moved to other lines (their solution is the same, what their explanations cite is not).
# That is the full solve's answer, exactly:
# - what lies outside the re-solved targets reads nothing inside them whose solution changes
#   (they are closed under readers) and its flows did not change, so its solution did not change;
# - inside, a flow reads an outside symbol through its final value; the votes of `_dominant`
#   read values as they were in each of its rounds, and a round only lowers values (a pinned
#   target keeps its device bit and loses the rest), so a symbol whose plain fixpoint equals its
#   final value held it in every round; when one read from outside does not, the repository is
#   solved whole;
# - an edit that changes how other files' flows resolve (the signatures of a function some file
#   calls, a class, the fields of a class family, the relay of loop elements, a host mirror) or
#   that reaches more than `_MAX_INCREMENTAL_TARGETS` targets is solved whole too.
# The state is that of the last full solve; each later run starts from it with every file
# changed since (at most `_MAX_PATCHED`).

_STATE_VERSION = "state-5"
_MAX_INCREMENTAL_TARGETS = 4000
_CALL_TARGETS = ("P", "p", "LP", "Lp", "EP", "Ep", "SP", "Sp", "AP", "AK")
_RELAY_TARGETS = ("LP", "Lp", "EP", "Ep", "SP", "Sp", "QE", "Qe")


def _contributions(path: str, summary: tuple) -> tuple:
    """What one file adds to the repository's tables: (signatures, functions its calls target,
    tuple results, declared tensors, call edges, whether it relays loop elements, defined
    names, whether it is vendored), counted so that a file's share can be taken back."""

    flows, sigs, _mirrors, declared, edges, *_ = summary
    targeted: Counter = Counter()
    tupled: Counter = Counter()
    relays = False
    for target, *_ in flows:
        kind = target[0]
        if kind in _CALL_TARGETS:
            targeted[target[1]] += 1
            relays = relays or kind in _RELAY_TARGETS
        elif kind == "rt":
            tupled[("r", target[1])] += 1
    return (Counter(sigs), targeted, tupled, Counter(declared), Counter(_file_edges(path, edges)), relays, Counter(k for k, _ in sigs),
            _vendored(path))


def _live_relay(target: tuple, number_functions: set) -> bool:
    """Whether a relay flow's target may reach a parameter declared a Python number: its
    function (`("EP", "step", 1)`), method (`("Sp", "_get_variance", "t")`) or the method a call
    through its class runs (`("QE", "Rotary.forward", 0)`), by its last name."""
    return str(target[1]).rpartition(".")[2] in number_functions


def _relay_flows(summary: tuple) -> list:
    """A file's flows into the relay of loop elements and own-method parameters
    (`_loop_numbers`), with their places in the summary and their lines: an edit that leaves
    them as they were leaves what the relay reads from this file, and what it cites, as it was."""
    return [(index, flow) for index, flow in enumerate(summary[0]) if flow[0][0] in _RELAY_TARGETS]


def _save_state(folder: str, tag: str, state: dict, digests: dict, facts: Facts) -> None:
    from array import array

    summaries = state["summaries"]
    flows, _tensors, _tupled, loop_flows, own_flows, types, _signatures, _callers, fields_of, expanded, _family = state["asm"]
    paths = list(summaries)
    if any(p not in digests for p in paths):
        return
    pos = {p: i for i, p in enumerate(paths)}
    # Interned: every target and symbol gets the next number the first time it is seen.
    ids: dict = defaultdict(numbers().__next__)
    ftgt = array("i", map(ids.__getitem__, map(itemgetter(0), flows)))
    floc = array("q", map(itemgetter(1), flows))
    lengths = array("i", map(len, map(itemgetter(2), flows)))
    fsym = array("i", map(ids.__getitem__, chain.from_iterable(map(itemgetter(2), flows))))
    fsoff = array("i", accumulate(lengths, initial=0))
    wheres = list(map(itemgetter(3), flows))
    fpath = array("i", map(pos.__getitem__, map(itemgetter(0), wheres)))
    findex = array("i", map(itemgetter(1), wheres))
    keys = list(ids)
    n = len(keys)
    per_file = Counter(fpath)
    file_off = array("i", accumulate((per_file.get(i, 0) for i in range(len(paths))), initial=0))
    by_target = _csr(n, ftgt, range(len(ftgt)))
    readers = _csr(n, fsym, array("i", chain.from_iterable(map(repeat, range(len(ftgt)), lengths))))
    value0, value = state["value0"], state["value"]
    values = array("q", map(value.get, keys, repeat(0)))
    plain = array("q", map(value0.get, keys, repeat(0)))
    signatures: dict[str, Counter] = {}
    targeted: Counter = Counter()
    tupled: Counter = Counter()
    tensors: Counter = Counter()
    edges: dict[str, Counter] = {}
    names: Counter = Counter()
    vendored_names: Counter = Counter()
    for path, summary in summaries.items():
        sigs, tg, tp, dec, edg, _relays, nm, vend = _contributions(path, summary)
        for (name, params), count in sigs.items():
            known = signatures.get(name)
            if known is None:
                known = signatures[name] = Counter()
            known[params] += count
        targeted.update(tg)
        tupled.update(tp)
        tensors.update(dec)
        for (caller, callee, arguments), count in edg.items():
            known = edges.get(callee)
            if known is None:
                known = edges[callee] = Counter()
            known[(caller, arguments)] += count
        (vendored_names if vend else names).update(nm)
    toff = by_target[0]
    typed = {(k[1], k[2]): toff[i + 1] - toff[i] for i, k in enumerate(keys) if k[0] == "A" and toff[i + 1] > toff[i]}
    # What the relay reads: only its flows into a parameter declared a Python number can give
    # a fact (`_loop_numbers`), so only theirs make an edit that reaches them a whole solve.
    live = [f for f in (*loop_flows, *own_flows) if tensors.get(("n", *f[0][1:]), 0) > 0]
    relayed = {t for t, *_ in live} | {s for _, _, symbols, *_ in live for s in symbols}
    blob = (
        _STATE_VERSION, tuple(paths), tuple(digests[p] for p in paths), tuple(keys),
        tuple(a.tobytes() for a in (ftgt, floc, fsym, fsoff, fpath, findex, file_off, *by_target, *readers, values, plain)),
        {name: dict(c) for name, c in signatures.items()}, dict(targeted), dict(tupled), dict(tensors), _sharded({callee: dict(c) for callee, c in edges.items()}), dict(names),
        dict(vendored_names), dict(typed), tuple(relayed), state["mirrored"], fields_of,
        (types.bases, types.field_types, types.returns), expanded,
        _base_blob(facts), *_graph_names(edges),
    )
    _write(os.path.join(folder, "state", tag), marshal.dumps(blob))


def _csr(n: int, keys, items) -> tuple:
    """(offsets, found): the items of key k (`keys[j]` is the key of `items[j]`), in the order
    given, at found[offsets[k]:offsets[k + 1]]."""
    from array import array

    counts = Counter(keys)
    offsets = array("i", accumulate((counts.get(k, 0) for k in range(n)), initial=0))
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return offsets, array("i", map(items.__getitem__, order))


class _Lines(dict):
    """path -> the flows of its summary (the lines citations name), read from the store on first use."""

    def __init__(self, folder: str, digests: dict, fresh: dict) -> None:
        super().__init__(fresh)
        self.folder, self.digests = folder, digests

    def get(self, path, default=()):
        if not dict.__contains__(self, path):
            digest = self.digests.get(path)
            summary = _read(os.path.join(self.folder, digest[:2], digest[2:])) if digest else None
            self[path] = summary[0] if isinstance(summary, tuple) and summary else ()
        return dict.get(self, path, default)


class _Signatures:
    """function -> its signatures now, for the functions one file's flows name."""

    def __init__(self, base: dict, delta: dict) -> None:
        self.base, self.delta = base, delta

    def get(self, name: str, default=()):
        counts = dict(self.base.get(name, {}))
        for params, n in self.delta.get(name, {}).items():
            counts[params] = counts.get(params, 0) + n
        found = {params for params, n in counts.items() if n > 0}
        return found or default

    def __contains__(self, name: str) -> bool:
        return bool(self.get(name))


def _incremental(folder: str, tag: str, files: list[str], digests: dict, fresh: dict, last: Facts | None = None) -> Facts | None:
    """The facts after an edit that changed summaries, from the last full solve's state (see
    above); None when the repository must be solved whole. `digests`: path -> content digest
    now; `fresh`: path -> summary, of the files summarised in this run; `last`: the facts of
    the last run (whose call graph is the full solve's where their structure is)."""
    from array import array

    blob = _read(os.path.join(folder, "state", tag))
    if not (isinstance(blob, tuple) and len(blob) == 21 and blob[0] == _STATE_VERSION):
        return None
    (_, paths, base_digests, keys, arrays, signatures, targeted, tupled_count, tensor_count, edge_shards, names,
     vendored_names, typed_count, relayed, mirrored, fields_of, (bases, field_types, returns), expanded, base, defined, words) = blob
    if list(paths) != files:
        return None
    changed = [i for i, p in enumerate(paths) if digests.get(p) != base_digests[i]]
    if not (isinstance(base, tuple) and len(base) == _FACTS_FIELDS and isinstance(base[2], bytes)):
        return None
    values_of, fingerprint, callers_blob, examples, vendored, classes, arguments, crowded, orphans, methods, _delta, structure = base
    # The full solve's call graph: the last run's, where it has the same structure (read already).
    callers = last.callers if last is not None and last.structure == structure else marshal.loads(callers_blob)
    if not changed:
        return _facts_of((*base[:2], callers, *base[3:]))
    edge_count = _ShardedCounts(*edge_shards)
    if len(changed) > _MAX_PATCHED:
        return None
    ftgt, floc, fsym, fsoff, fpath, findex, file_off, toff, titems, roff, ritems, values, plain = (
        array("q" if i in (1, 11, 12) else "i", b) for i, b in enumerate(arrays))
    base_counts = [Counter(c) for c in (targeted, tupled_count, tensor_count, names, vendored_names)]
    definitions_before = base_counts[3] + base_counts[4]
    targeted, tupled_count, tensor_count, names, vendored_names = (Counter(c) for c in base_counts)
    edge_changes: dict[str, Counter] = {}  # callee -> what the edit adds to its callers' counts (negative: takes away)
    delta: dict[str, Counter] = {}  # function -> the counts of its signatures added (negative: taken away)
    olds, news = {}, {}
    places: dict[str, dict] = {}  # path -> old place -> new place in its summary of the flows that moved
    touched_keys: set = set()  # declared tensors and tuple results of the changed files
    number_functions = None  # the last names of the functions with a number parameter, once needed
    for i in changed:
        path = paths[i]
        old = _read(os.path.join(folder, base_digests[i][:2], base_digests[i][2:]))
        new = fresh.get(path)
        if new is None:
            new = _read(os.path.join(folder, digests[path][:2], digests[path][2:]))
        if not (isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new) == len(_NO_SUMMARY)):
            return None
        if old[5] != new[5] or _mirrored({path: old}) != _mirrored({path: new}):
            return None  # a class, a field's class, a host mirror: every file's flows read them
        before, after = _contributions(path, old), _contributions(path, new)
        if before[5] or after[5]:
            # Only relay flows into a function with a parameter declared a Python number can
            # give a fact (`_loop_numbers`); the others (`x.view(t.sum())`, `f(counts[i])` of a
            # helper without number parameters) are inert, whatever the edit does to them.
            # (An edit that changes which parameters are declared numbers is solved whole below.)
            if number_functions is None:
                number_functions = {k[1].rpartition(".")[2] for k, n in base_counts[2].items() if k[0] == "n" and n > 0}
            was = [(index, flow) for index, flow in _relay_flows(old) if _live_relay(flow[0], number_functions)]
            now = [(index, flow) for index, flow in _relay_flows(new) if _live_relay(flow[0], number_functions)]
            if [flow[:3] for _, flow in was] != [flow[:3] for _, flow in now]:
                return None  # the relay of loop elements and own-method parameters changed: solved whole
            if was != now:  # the same relay flows, moved: what the relay's facts cite moves with them
                places.setdefault(path, {}).update((old_index, new_index) for (old_index, _), (new_index, _) in zip(was, now))
        for sign, part in ((-1, before), (1, after)):
            for (name, params), n in part[0].items():
                delta.setdefault(name, Counter())[params] += sign * n
            for count, c in zip((targeted, tupled_count, tensor_count), part[1:4]):
                for k, n in c.items():
                    count[k] += sign * n
            for (caller, callee, passed), n in part[4].items():
                net = edge_changes.get(callee)
                if net is None:
                    net = edge_changes[callee] = Counter()
                net[(caller, passed)] += sign * n
            for k, n in part[6].items():
                (vendored_names if part[7] else names)[k] += sign * n
            touched_keys.update(part[2])
            touched_keys.update(part[3])
        olds[i], news[i] = old, new
    # callee -> its callers' counts now, for the callees whose counts the edit changed (a file's
    # calls are all taken back and given again: most come back the same, and their counts,
    # stored apart, are not read)
    edges_now: dict[str, Counter] = {}
    for callee, net in edge_changes.items():
        if any(net.values()):
            counts = edges_now[callee] = Counter(edge_count.get(callee, {}))
            for key, n in net.items():
                counts[key] += n
    sigs_now = _Signatures(signatures, delta)
    sigs_before = _Signatures(signatures, {})
    resigned = {name for name in delta if sigs_now.get(name, set()) != sigs_before.get(name, set())}
    if any(targeted[name] > 0 for name in resigned):
        return None  # calls of a function whose signatures changed resolve differently
    method_names = {name.rpartition(".")[2] for name in signatures if "." in name}
    if any("." in name or name in method_names for name in resigned):
        return None  # a method's signature: the calls resolved through classes (`_QualifiedCalls`) change
    qualified = _QualifiedCalls(Types(bases, field_types, returns), [name for name in signatures if sigs_now.get(name)], paths)
    if resigned & qualified.aliased_functions():
        return None  # a function a method alias binds: the calls of the alias resolve differently
    # The changed files' flows, resolved now (their old ones are in the state).
    family = []
    ids = {k: i for i, k in enumerate(keys)}
    # A method's parameter is read through its class where calls through the class give it
    # something (`_MethodParams`): which ones do is as the last full solve found, checked below.
    reads = _MethodParams(_SolvedTargets(ids, toff))

    def resolve(symbol: tuple) -> tuple:
        if symbol[0] == "p":
            return reads.keys(symbol)
        if symbol[0] != "A":
            raise _Unresolved  # what it stands for may have changed with the edit: solved whole
        if not family:
            family.append(_Family(Types(bases, field_types, returns), {k for k, n in typed_count.items() if n > 0}))
        return family[0].keys(symbol[1], symbol[2]) or (("a", symbol[2]),)

    new_flows: dict[int, list] = {}
    # The parameters declared numbers (an edit that changes which ones are is solved whole).
    numbers = frozenset((k[1], k[2]) for k, n in base_counts[2].items() if k[0] == "n" and n > 0)
    typed_now = Counter(typed_count)
    method_params: Counter = Counter()  # flows into `("p", "Cls.m", x)` added (taken away: negative)
    for i in changed:
        if _given_numbers(paths[i], olds[i][0], sigs_now, fields_of, qualified, numbers) != _given_numbers(
                paths[i], news[i][0], sigs_now, fields_of, qualified, numbers):
            return None  # what calls give a parameter declared a number changed: read by the relay, solved whole
        out: list = []
        relay: list = []
        _file_flows(paths[i], news[i][0], sigs_now, fields_of, out, set(), relay, relay, qualified, numbers)
        resolved = []
        for target, local, symbols, where in out:
            try:
                resolved.append((target, *_expand_flow(local, symbols, expanded, resolve), where))
            except _Unresolved:
                return None
            if target[0] == "A":
                typed_now[(target[1], target[2])] += 1
            elif target[0] == "p" and "." in target[1]:
                method_params[target] += 1
        new_flows[i] = resolved
        for f in range(file_off[i], file_off[i + 1]):
            t = keys[ftgt[f]]
            if t[0] == "A":
                typed_now[(t[1], t[2])] -= 1
            elif t[0] == "p" and "." in t[1]:
                method_params[t] -= 1
    if {k for k, n in typed_now.items() if n > 0} != {k for k, n in typed_count.items() if n > 0}:
        return None  # the fields of a class family changed: reads through classes resolve differently
    if any((t in reads.targets) != (n + _SolvedTargets.count(ids, toff, t) > 0) for t, n in method_params.items() if n):
        return None  # a method's parameter given something through its class now, or nothing: its reads resolve differently
    # An unpacked element reads the element where some flow gives it a value, else the whole
    # result (`_Resolver`): an edit that adds the first such flow, or takes the last away,
    # changes what it reads.
    given = Counter()
    for i in changed:
        for f in range(file_off[i], file_off[i + 1]):
            t = keys[ftgt[f]]
            if t[0] == RESULT_ITEM:
                given[t] -= 1
        for t, *_ in new_flows[i]:
            if t[0] == RESULT_ITEM:
                given[t] += 1
    if any((_SolvedTargets.count(ids, toff, t) > 0) != (_SolvedTargets.count(ids, toff, t) + n > 0) for t, n in given.items() if n):
        return None
    # Seeds: the targets whose flows in a changed file differ (what they give, their order, the
    # line they cite), and the names declared tensors (tuple results) in one and not the other.
    seeds: set = set()
    for i in changed:
        old_lines, new_lines = olds[i][0], news[i][0]
        was: dict = {}
        for f in range(file_off[i], file_off[i + 1]):
            index = findex[f]
            symbols = tuple(keys[s] for s in fsym[fsoff[f]:fsoff[f + 1]])
            was.setdefault(keys[ftgt[f]], []).append((floc[f], symbols, index, old_lines[index][3]))
        now: dict = {}
        for target, local, symbols, (_, index) in new_flows[i]:
            now.setdefault(target, []).append((local, symbols, index, new_lines[index][3]))
        for t in was.keys() | now.keys():
            before, after = was.get(t), now.get(t)
            if before == after:
                continue
            if before is not None and after is not None and [f[:2] for f in before] == [f[:2] for f in after]:
                # The same flows, on other lines: only what its explanation cites moves.
                places.setdefault(paths[i], {}).update((b[2], a[2]) for b, a in zip(before, after))
            else:
                seeds.add(t)
    tensor_base, tupled_base = base_counts[2], base_counts[1]
    for k in touched_keys:
        if (tensor_count[k] > 0) != (tensor_base.get(k, 0) > 0) or (tupled_count[k] > 0) != (tupled_base.get(k, 0) > 0):
            if k[0] == "n" or k[0] in ("r", PASSES_THROUGH) and "." in k[1]:
                # a number parameter (read by the relay of loop elements), a method's result
                # (a call through its class reads it only where it is declared a tensor), a
                # method that returns its parameters (the calls through its class read their
                # arguments; a function's own, only the lint reads, below)
                return None
            seeds.add(k)
    # Everything that reads a seed, transitively (through the state's readers and the changed
    # files' new flows).
    stale = {f for i in changed for f in range(file_off[i], file_off[i + 1])}
    new_readers: dict = {}
    for i in changed:
        for flow in new_flows[i]:
            for s in flow[2]:
                new_readers.setdefault(s, []).append(flow[0])
    region = set(seeds)
    pending = list(seeds)
    while pending:
        key = pending.pop()
        k = ids.get(key)
        found = [keys[ftgt[f]] for f in ritems[roff[k]:roff[k + 1]] if f not in stale] if k is not None else []
        for target in (*found, *new_readers.get(key, ())):
            if target not in region:
                region.add(target)
                pending.append(target)
        if len(region) > _MAX_INCREMENTAL_TARGETS:
            return None
    if region & set(relayed):
        return None  # read by the relay of loop elements: solved whole
    # The flows of those targets, in file order; what they read from outside, folded in as the
    # constant it was solved to.
    order: list = []
    for key in region:
        k = ids.get(key)
        if k is not None:
            for f in titems[toff[k]:toff[k + 1]]:
                if f not in stale:
                    order.append(((fpath[f], f), f))
    for i in changed:
        for n, flow in enumerate(new_flows[i]):
            if flow[0] in region:
                order.append(((i, file_off[i] + n), flow))
    order.sort(key=lambda item: item[0])
    flows: list = []
    for _, item in order:
        if type(item) is int:
            target = keys[ftgt[item]]
            local = floc[item]
            symbols = tuple(keys[s] for s in fsym[fsoff[item]:fsoff[item + 1]])
            where = (paths[fpath[item]], findex[item])
        else:
            target, local, symbols, where = item
        inside = []
        for s in symbols:
            if s in region:
                inside.append(s)
                continue
            k = ids.get(s)
            if k is not None:
                if plain[k] != values[k]:
                    return None  # a value `_dominant` changed between rounds: solved whole
                local |= values[k]
        flows.append((target, local, tuple(inside), where))
    tensors = {k for k, n in tensor_count.items() if n > 0}
    tupled = {k for k, n in tupled_count.items() if n > 0}
    lines = _Lines(folder, digests, {paths[i]: news[i][0] for i in changed})
    definitions = names + vendored_names
    if any(_votes(definitions_before.get(name, 0)) != _votes(definitions.get(name, 0)) for name in delta):
        return None  # a name now shared by more (or fewer) functions: the vote reads it differently
    facts, typed, citations, _value0, _value = _conclude(flows, tensors, tupled, [], [], lines, mirrored, definitions)
    # Merged with what lies outside, as it was: a target whose flows only moved (a function
    # inserted above them) keeps its solution, and the reasons that cite a moved flow, its
    # own or the relay's, are written again with its new place and line.
    values_outside = {k: v for k, v in values_of.items() if k not in region}
    typed_outside = {k: v for k, v in classes[0].items() if ("A", *k) not in region}
    citations_outside = {k: v for k, v in examples.items() if k not in region}
    for i in changed:
        places.setdefault(paths[i], {})
    values_now, typed_all, examples_now = _recite_all(values_outside, typed_outside, citations_outside, places,
                                                      {paths[i]: news[i][0] for i in changed})
    values_now.update((k, v) for k, v in facts.items() if k in region)
    # The functions that pass their arguments through, as the declarations now say (`_conclude`
    # writes them all, whatever the region).
    for k in [k for k in values_now if k[0] == PASSES_THROUGH]:
        del values_now[k]
    values_now.update((k, v) for k, v in facts.items() if k[0] == PASSES_THROUGH)
    typed_all.update(typed)
    examples_now.update((k, v) for k, v in citations.items() if k in region)
    # The call graph and the vendored functions, from the counts: the graph resolved again
    # whole where the edit changed a call or a definition (a definition changes how calls by
    # name and through classes resolve).
    if edges_now and not _graph_unchanged(edges_now, edge_count, defined, words):
        counts_now = {callee: counts for callee, counts in edge_count.items() if callee not in edges_now}
        counts_now.update(edges_now)
        call_graph = _CallGraph(Types(bases, field_types, returns))
        graph = call_graph.graph(counts_now, paths)
        arguments, crowded = call_graph.arguments, call_graph.crowded()
    else:
        graph = callers
    vendored_now = frozenset(k for k, n in vendored_names.items() if n > 0 and names.get(k, 0) <= 0)
    declared = _declared_fields(tensors)
    classes_now = (typed_all, sorted(declared), *classes[2:])
    # Functions nothing names: those the changed files now name are named; a function an edit
    # leaves unnamed, or defines anew, waits for the next whole solve (one is never unused too early).
    orphans_now = unused(orphans, [news[i][6] for i in changed])
    # The methods are those of the last full solve: an edit that adds, removes or re-signs one is solved whole (above).
    facts = Facts(values_now, "", graph, examples=examples_now, vendored=vendored_now, classes=classes_now, arguments=arguments,
                  crowded=crowded, orphans=orphans_now, methods=methods)
    # The structure's digest is kept where the edit changed places alone (the same call graph,
    # classes and functions): only the places are written out again.
    same = (graph is callers and vendored_now == vendored and orphans_now == orphans and classes_now[1:] == tuple(classes[1:]))
    return fingerprinted(facts, structure if same else "")


_EDGE_SHARDS = 64


def _shard_of(callee: str) -> int:
    return zlib.crc32(callee.encode("utf-8", "surrogatepass")) % _EDGE_SHARDS


def _sharded(edges: dict) -> tuple:
    """The call graph's counts as stored: their callees in order, and the counts in shards by
    callee, each marshalled apart (`_ShardedCounts`)."""
    shards: list[dict] = [{} for _ in range(_EDGE_SHARDS)]
    for callee, counts in edges.items():
        shards[_shard_of(callee)][callee] = counts
    return tuple(edges), tuple(marshal.dumps(shard) for shard in shards)


class _ShardedCounts:
    """callee -> its callers' counts, of the last full solve, read a shard at a time: an edit
    that adds no call reaching the repository's functions looks up the callees of its own
    calls, not every count (20 MB on a repository of 140,000 call edges); the whole graph
    resolved again reads them all, in the full solve's order."""

    def __init__(self, order: tuple, shards: tuple) -> None:
        self.order, self.shards = order, shards
        self.loaded: dict[int, dict] = {}

    def _shard(self, index: int) -> dict:
        found = self.loaded.get(index)
        if found is None:
            found = self.loaded[index] = marshal.loads(self.shards[index])
        return found

    def get(self, callee: str, default=None):
        return self._shard(_shard_of(callee)).get(callee, default)

    def items(self):
        for callee in self.order:
            yield callee, self._shard(_shard_of(callee))[callee]


def _base_blob(facts: Facts) -> tuple:
    """The full solve's facts as the state keeps them: its call graph marshalled apart, read
    only where the last run's facts do not have it (`_incremental`)."""
    blob = _facts_blob(facts)
    return (*blob[:2], marshal.dumps(blob[2]), *blob[3:])


_WORD = re.compile(r"\w+")


def _graph_names(edges: dict) -> tuple[frozenset, frozenset]:
    """(the names the functions and methods of the call graph's counts are defined by, every
    word of its callees and of the names its marks hold): what `_graph_unchanged` reads of the
    last full solve's counts, worked out once when its state is written."""
    defined = frozenset(callee.rpartition(".")[2] for callee, counts in edges.items() if any(key[0] == "" and n > 0 for key, n in counts.items()))
    words = set()
    for callee, counts in edges.items():
        words.update(_WORD.findall(callee))
        if callee[:1] == MARK_CALLER:
            for key in counts:
                words.update(_WORD.findall(str(key[1])))
    return defined, frozenset(words)


def _graph_unchanged(edges_now: dict, edge_count: _ShardedCounts, defined_before: frozenset, words: frozenset) -> bool:
    """Whether the edit's changes to the call graph's counts (`edges_now`: callee -> its
    callers' counts now) only define functions by names that nothing defined before and that
    no call, field or mark of the repository names (`def added(x): return x` appended), and
    add calls by name of methods that no function of the repository has (`x.cuda()` in the
    function added, and the mark of the name `x` the call is made on): the graph resolved
    whole would be the one of the last solve, since a function no call reaches is no edge of
    it, and the graph keeps no call that reaches nothing. `defined_before`, `words`: the
    names of the last full solve's counts (`_graph_names`)."""
    defined = defined_before | {callee.rpartition(".")[2] for callee, counts in edges_now.items()
                                if any(key[0] == "" and n > 0 for key, n in counts.items())}
    new_names = set()
    for callee, counts in edges_now.items():
        before = edge_count.get(callee, {})
        changes = [(key, counts.get(key, 0) - before.get(key, 0)) for key in counts.keys() | before.keys()]
        if _reaches_nothing(callee, defined) and all(change >= 0 for _, change in changes):
            continue
        if any(change and (key[0] != "" or change < 0) for key, change in changes):
            return False  # a call added or taken away, or a definition taken away
        if not any(change for _, change in changes):
            continue
        if not callee.isidentifier() or any(key[0] == "" and n > 0 for key, n in before.items()):
            return False  # a method, or a name defined elsewhere already (calls by name resolve differently)
        new_names.add(callee)
    if not new_names:
        return True
    for name in new_names:
        if any(key[0] and n > 0 for key, n in edge_count.get(name, {}).items()):
            return False  # called by that name before it was defined
    if new_names.isdisjoint(words):
        return True  # no callee and no mark names them
    named = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(new_names))) + r")(?!\w)")
    for callee, counts in edge_count.items():
        if callee not in new_names and named.search(callee):
            return False  # `mod>added`, `.added`, `Cls.added`, a held or marked reference
        if callee[:1] == MARK_CALLER and any(named.search(str(key[1])) for key in counts):
            return False
    return True


def _reaches_nothing(callee: str, defined: set[str]) -> bool:
    """A call by name of a method (`.cuda`), or the mark of the names such calls are made on
    (`RECEIVER_MARK + cuda`), where no function or method of the repository has the name."""
    if callee.startswith(RECEIVER_MARK):
        name = callee[len(RECEIVER_MARK):]
    elif callee[:1] == ".":
        name = callee[1:]
    else:
        return False
    return name.isidentifier() and name not in defined
