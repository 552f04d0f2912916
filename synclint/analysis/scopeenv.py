"""The environment a flow walk carries through a scope, and the views of it it records.

The walk (synclint/analysis/flow.py) records the environment before every statement, so that
a rule can ask where a name's value lives at its statement. Recording a copy of the
environment each time costs (names bound) x (statements): a module of 4,600 top-level
functions recorded 4,600 copies of an environment of up to 4,600 names. Here a record is
O(1) and the total memory is linear in the writes:

- `FlowEnv` is what the walk writes: it keeps, per name, every value written with the stamp
  of the write (a counter), over a `base` it never changes (the environment it started from);
- `Snapshot(env, stamp)` is the environment as it was at `stamp`: a name's value is its last
  write at or before the stamp (a bisection over that name's writes), else the base's.

A branch (`if`, `try`, a loop body) walks a `fork()`, a new `FlowEnv` over a snapshot of its
parent; `written()` is the set of names the fork wrote (or deleted), which is all a join of
branches needs to look at. Lookups cost the depth of forks (the nesting of the code), not the
size of the environment.
"""

from __future__ import annotations

from bisect import bisect_right

_MISSING = object()
_GONE = object()  # a name deleted (`del x`, re-imported): absent from here on


class _Reads:
    """`get`, `in` and `[]` over a class's `_lookup` (a value, `_MISSING` or `_GONE`)."""

    __slots__ = ()

    def get(self, name: str, default=None):
        value = self._lookup(name)
        return default if value is _MISSING or value is _GONE else value

    def __contains__(self, name: str) -> bool:
        value = self._lookup(name)
        return value is not _MISSING and value is not _GONE

    def __getitem__(self, name: str):
        value = self._lookup(name)
        if value is _MISSING or value is _GONE:
            raise KeyError(name)
        return value


class Snapshot(_Reads):
    """A read-only view of a `FlowEnv` as it was at one stamp (`in`, `[]`, `get`)."""

    __slots__ = ("_env", "_at")

    def __init__(self, env: FlowEnv, at: int) -> None:
        self._env = env
        self._at = at

    def _lookup(self, name: str):
        env = self._env
        history = env._history.get(name)
        if history is not None:
            stamps, values = history
            if stamps[-1] <= self._at:
                value = values[-1]
            else:
                i = bisect_right(stamps, self._at)
                value = values[i - 1] if i else _MISSING
            if value is not _MISSING:
                return value
        base = env._base
        return base.get(name, _MISSING) if base is not None else _MISSING

    def snapshot(self) -> Snapshot:
        return self

    def fork(self) -> FlowEnv:
        return FlowEnv(self)

    def as_dict(self, names) -> dict:
        """The values of `names` present here (for tests and debugging)."""
        return {n: self[n] for n in names if n in self}


class FlowEnv(_Reads):
    """The environment being walked: writes go here, reads fall through to `base` (a
    `Snapshot`, a dict that is never changed afterwards, or None)."""

    __slots__ = ("_base", "_now", "_history", "_clock", "_seen")

    def __init__(self, base=None) -> None:
        self._base = base
        self._now: dict = {}  # name -> its latest value here (or _GONE)
        self._history: dict = {}  # name -> ([stamps], [values]) of every write here
        self._clock = 0
        self._seen = 0  # the stamp of the last snapshot

    # --- reading -------------------------------------------------------------------------
    def _lookup(self, name: str):
        value = self._now.get(name, _MISSING)
        if value is _MISSING:
            base = self._base
            return base.get(name, _MISSING) if base is not None else _MISSING
        return value

    # --- writing -------------------------------------------------------------------------
    def _write(self, name: str, value) -> None:
        self._clock += 1
        self._now[name] = value
        history = self._history.get(name)
        if history is None:
            self._history[name] = ([self._clock], [value])
        elif history[0][-1] > self._seen:
            # No snapshot was taken since this name's last write: nothing can see that
            # value any more, overwrite it.
            history[0][-1] = self._clock
            history[1][-1] = value
        else:
            history[0].append(self._clock)
            history[1].append(value)

    def __setitem__(self, name: str, value) -> None:
        self._write(name, value)

    def update(self, values) -> None:
        for name, value in values.items():
            self._write(name, value)

    def pop(self, name: str, default=None):
        value = self.get(name, _MISSING)
        if value is _MISSING:
            return default
        self._write(name, _GONE)
        return value

    # --- views ---------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The environment as it is now; later writes do not show in it. O(1)."""
        self._clock += 1  # a later write gets a later stamp than this snapshot
        self._seen = self._clock
        return Snapshot(self, self._clock)

    def fork(self) -> FlowEnv:
        """A branch: a new environment that starts as this one is now."""
        return FlowEnv(self.snapshot())

    copy = snapshot

    def written(self):
        """The names this environment wrote or deleted since it was made."""
        return self._now.keys()

    def as_dict(self, names) -> dict:
        return {n: self[n] for n in names if n in self}


def overlay(env, extra: dict | None):
    """`env` with the names of `extra` bound over it (a comprehension's targets)."""
    if not extra:
        return env
    out = FlowEnv(env if not isinstance(env, FlowEnv) else env.snapshot())
    out.update(extra)
    return out
