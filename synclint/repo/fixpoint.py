"""The fixpoint of the flows and the rules that read it: a declared tensor that mostly holds
device tensors (`_dominant`), a parameter given both (`_ambiguous`), a number parameter
given an element of a device tensor (`_loop_numbers`), and the mirrors a class holds
(`x` beside `x_cpu`).
"""

from __future__ import annotations

from synclint.repo import facts as index_facts
from synclint.repo.citing import _mask_of, _what, _where
from synclint.repo.conventions import MIRROR_SUFFIXES, convention
from synclint.repo.edges import module_name
from synclint.repo.keys import (
    AMBIGUOUS, DEVICE, FILE_RELAY, HOST, NUMPY, PLACES, RESOLVABLE, RESOLVABLE_NOTE,
    RESOLVABLE_NOTE_TORCH_ONLY, SCALAR, _HOST_DATA, _HOST_TENSORS,
)


def _fixpoint(flows: list[tuple], pinned: dict | None = None) -> dict[tuple, int]:
    """The least solution of `target >= local | symbols` over every flow: a worklist, so a
    flow is evaluated again only when a symbol it reads has grown (each grows at most once
    per place bit). `pinned` targets hold a device tensor whatever flows into them.

    Flows that read nothing are joined per target first, and flows that say the same (the
    same target, places and symbols: one per call site of a popular function) are evaluated
    once; the least solution does not depend on either. The system is kept for the next call
    with the same flows (`_dominant` solves them again with more targets pinned)."""
    const, constraints, readers = _system(flows)
    value: dict[tuple, int] = {t: m for t, m in const.items() if m}
    if pinned:
        for target in pinned:
            value[target] = DEVICE
    queued = [True] * len(constraints)
    pending = list(range(len(constraints) - 1, -1, -1))  # popped from the end: file order first
    get = value.get
    while pending:
        index = pending.pop()
        queued[index] = False
        target, mask, symbols = constraints[index]
        if pinned and target in pinned:
            continue
        for symbol in symbols:
            mask |= get(symbol, 0)
        mask &= PLACES
        old = get(target, 0)
        if mask | old != old:
            value[target] = mask | old
            for reader in readers.get(target, ()):
                if not queued[reader]:
                    queued[reader] = True
                    pending.append(reader)
    return value


_SYSTEM: list = [None, None]  # [flows, (constant places per target, distinct flows that read symbols, their readers)]


def _system(flows: list[tuple]) -> tuple:
    if _SYSTEM[0] is flows:
        return _SYSTEM[1]
    const: dict[tuple, int] = {}
    seen: dict[tuple, int] = {}
    constraints: list[tuple] = []
    for target, local, symbols, _ in flows:
        if symbols:
            key = (target, local & PLACES, symbols)
            if key not in seen:
                seen[key] = len(constraints)
                constraints.append(key)
        elif target in const:
            const[target] |= local & PLACES
        else:
            const[target] = local & PLACES
    readers: dict[tuple, list[int]] = {}
    for index, (_, _, symbols) in enumerate(constraints):
        for symbol in symbols:
            found = readers.get(symbol)
            if found is None:
                readers[symbol] = [index]
            else:
                found.append(index)
    _SYSTEM[0], _SYSTEM[1] = flows, (const, constraints, readers)
    return _SYSTEM[1]


# A declared tensor given device tensors by at least this many flows, and by at least this
# many times as many as give it anything else (or by one flow where no flow gives it anything
# else alone), holds the device tensor (`_dominant`).
_DOMINANT_MIN = 2
_DOMINANT_RATIO = 3
# ... when its function's name is shared by at most this many functions of the repository.
_DOMINANT_MAX_NAMESAKES = 3


def _dominant(flows: list[tuple], value: dict, tensors: set) -> tuple[dict, dict]:
    """Targets declared tensors (`seq_lens: torch.Tensor` as a field, a parameter, a return)
    that nearly every flow gives a device tensor, read as device tensors, and the solve
    again with them pinned.

    The solve joins every value a target is given, so one odd assignment anywhere (`batch.x =
    max_len` in a rarely used backend, a flow the screen could not tell apart) makes a field
    and, through it, every parameter it is passed to, "device or host" for good. Here each
    flow votes with what it alone gives: a device tensor and no host data (a Python value
    beside it is no host tensor), or no device tensor at all; flows that give both abstain.
    A declared tensor with `_DOMINANT_MIN` or more device votes and at most a
    `_DOMINANT_RATIO`-th as many others (or device votes and no other) is pinned to the
    device, and what it flows into is solved again (a few rounds: each pins more). Returns the new solution and
    target -> (device votes, other votes, an example of each)."""
    pinned: dict[tuple, tuple] = {}
    for _ in range(4):
        tally: dict[tuple, list] = {}
        for target, local, symbols, where in flows:
            if target in pinned or target not in tensors:
                continue
            # A flow that reads its own target back (`cu = self.cu if ready else self.cu.to("cpu",
            # non_blocking=True)`, then `Tensors(cu=cu)`) votes with what it adds: the
            # target's own value is no evidence of where it lives.
            own = tuple(s for s in symbols if s != target) if symbols else symbols
            mask = _mask_of(local, own, value) if own else local & PLACES
            if not mask:
                continue
            votes = tally.get(target)
            if votes is None:
                votes = tally[target] = [0, 0, None, None]
            # A device tensor or a Python value (`req_to_token` of a pool some subclass sets to
            # a number) is no host tensor: a device vote. Host data beside a device tensor abstains.
            if mask & DEVICE and not mask & _HOST_TENSORS:
                votes[0] += 1
                votes[2] = votes[2] or where
            elif not mask & DEVICE:
                votes[1] += 1
                votes[3] = votes[3] or where
        found = {
            target: tuple(votes)
            for target, votes in tally.items()
            if value.get(target, 0) & _HOST_DATA and value[target] & DEVICE
            and (votes[0] >= _DOMINANT_MIN and votes[0] >= _DOMINANT_RATIO * votes[1] or votes[0] and not votes[1])
        }
        if not found:
            break
        pinned.update(found)
        value = _fixpoint(flows, pinned)
    return value, pinned


def _passed_on(flows: list, voters: set, tensors, definitions) -> set:
    """Parameters a function passes on as they are to a parameter declared a tensor
    (`def gather_logprobs(logprobs, ids): return gather_logprobs_raw(logprobs, ids)` with
    `gather_logprobs_raw(logprobs: torch.Tensor, ...)`): the code says they hold a tensor too,
    so they vote as declared tensors do (`_dominant`), through chains of such wrappers. Not
    a parameter declared a number, nor one of a name many functions share."""
    relays = [(target, symbols[0]) for target, local, symbols, _ in flows
              if not local and len(symbols) == 1 and target[0] == "p" and symbols[0][0] == "p"]
    found: set = set()
    known = set(voters)
    changed = True
    while changed:
        changed = False
        for target, symbol in relays:
            if target in known and symbol not in known and ("n", *symbol[1:]) not in tensors and _votes(definitions.get(symbol[1], 0)):
                known.add(symbol)
                found.add(symbol)
                changed = True
    return found


def _votes(namesakes: int) -> bool:
    """Whether the parameters and result of a function whose name `namesakes` functions
    of the repository have are put to the vote of `_dominant`."""
    return namesakes <= _DOMINANT_MAX_NAMESAKES


def _dominant_reason(key: tuple, votes: tuple, flows_of) -> str:
    device, other, device_example, other_example = votes
    others = f", other values in {other} (e.g. {_where(other_example, flows_of)})" if other else ""
    return (f"{_what(key)} is declared a tensor and given device tensors in {device} places (e.g. "
            f"{_where(device_example, flows_of)}){others}, and values that may be either elsewhere: read as the device tensor it mostly holds")


def _agreed_parameter(signatures, slot: int) -> str | None:
    """The parameter a positional argument at `slot` fills when calls resolve by name only:
    the name nearly every signature of that name gives the position (4 in 5 of those long
    enough), else None (`add_request(request, ...)` and `add_request(req_idx: int, ...)` in
    two classes do not say which one a call reaches)."""
    names = [params[slot] for params in signatures if slot < len(params)]
    if not names:
        return None
    best = max(set(names), key=names.count)
    return best if names.count(best) * 5 >= len(names) * 4 else None


def _loop_numbers(own_flows, loop_flows, value, tensors, lines, definitions) -> tuple[dict, dict]:
    """Parameters annotated a Python number that may hold a 0-dim device tensor: a caller
    passes the element of a loop over a tensor that may be on the device (`for t in
    sched.timesteps: sched.step(out, t, x)` with `step(..., timestep: int, ...)`; not a loop
    over a list), or a method passes such a parameter (or a value computed from it) on to a
    method of its own object (`self._get_variance(timestep, prev_timestep)`). Where the
    annotation and the callers disagree the value may be either: (DEVICE | SCALAR). An
    element relay into a name several definitions share (`VisionRotaryEmbedding.forward` of
    three models; `definitions`: how many there are of each name) is kept for the module
    whose call gives it, `(FILE_RELAY, module, function, parameter)`: the index knows a class
    by its name, and another model's own call may pass a Python number (`file_relay_fact`).
    Returns (facts, cites): cites is each fact's reason less its citation, and the flow
    (path, index) it cites, so that an edit that moves that flow can cite it again."""
    cites: dict[tuple, tuple[str, tuple]] = {}
    for target, local, symbols, where, *how in loop_flows:
        if how and definitions.get(target[1], 0) > 1:
            key = (FILE_RELAY, module_name(where[0]), *target[1:])
        else:
            key = target
        if key in cites or ("n", *target[1:]) not in tensors:
            continue
        mask = local
        for symbol in symbols:
            given = value.get(symbol, 0)
            if how and given & PLACES == PLACES:
                continue  # a parameter given everything (by a crowded name): it says nothing
            mask |= given
        if how:  # `f(counts[rank])`: what is indexed must be a device tensor, and nothing else
            if mask & PLACES == DEVICE:
                cites[key] = (f"{_what(target)} is annotated a number, but a caller passes it an "
                              f"element or a reduction of a device tensor", where)
        elif mask & DEVICE and not mask & SCALAR:
            # A name that also holds Python numbers (a field that is a list of ints in one
            # class and a device tensor in another, a parameter given everything by a
            # crowded call) says nothing of its elements. A list bit alone does: diffusers'
            # `timesteps: list[int] = None`, rebound to the scheduler's device timesteps.
            cites[target] = (f"{_what(target)} is annotated a number, but a caller passes it the "
                             f"element of a loop over a tensor that may be on the device", where)
    changed = bool(cites)
    while changed:
        changed = False
        for target, _local, symbols, where in own_flows:
            if target in cites or ("n", *target[1:]) not in tensors:
                continue
            source = next((s for s in symbols if s in cites), None)
            if source is not None:
                cites[target] = (f"{_what(target)} is annotated a number, but a caller passes on "
                                 f"{_what(source)}, which may be a device tensor", where)
                changed = True
    return {key: _relay_fact(prefix, where, lines) for key, (prefix, where) in cites.items()}, cites


def file_relay_fact(filename: str, function: str, name: str) -> tuple[int, str] | None:
    """What the calls in the module of `filename` give parameter `name` of `function`, a
    name several definitions share, where they pass it an element or a reduction of a device
    tensor (`_loop_numbers`)."""
    return index_facts.FACTS.get((FILE_RELAY, module_name(filename), function, name))


def _relay_fact(prefix: str, where: tuple, lines) -> tuple[int, str]:
    return DEVICE | SCALAR, f"{prefix} ({_where(where, lines)})"


def _other(mask: int) -> str:
    return "host data" if mask & (HOST | NUMPY) else "Python values"


def _ambiguous(mask: int, reason: str, mirrored: bool = False) -> tuple[int, str]:
    """A device fact of weak evidence. Where the name's other values are Python values only
    (or it is a field beside a host mirror), a tensor method called on it resolves it; where
    they include numpy arrays, only a method numpy does not have (`.cpu()`, `.device`): read
    as the device tensor the callers mostly give (host tensors among them, an allocator's
    `free(index)` called with a host index somewhere, do not veto it)."""
    if mask & NUMPY:
        return DEVICE | AMBIGUOUS | RESOLVABLE, f"{reason}: {RESOLVABLE_NOTE_TORCH_ONLY}"
    if mirrored or not mask & HOST:
        return DEVICE | AMBIGUOUS | RESOLVABLE, f"{reason}: {RESOLVABLE_NOTE}"
    return DEVICE | AMBIGUOUS, f"{reason}: low"


def _mirrored(summaries) -> dict[str, str]:
    """Names held beside their host mirror (`x` and `x_cpu` in one class or parameter list)."""
    out: dict[str, str] = {}
    for _, _, mirrors, *_ in summaries.values():
        for names in mirrors:
            present = set(names)
            for name in names:
                for suffix in MIRROR_SUFFIXES:
                    if name.endswith(suffix) and name[: -len(suffix)] in present:
                        stem = name[: -len(suffix)]
                        if not convention(stem):
                            out.setdefault(stem, name)
    return out
