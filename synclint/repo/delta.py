"""What an edit changed in the facts: the names a cached file's questions must share to be
asked again.

A file's cached findings hold under a new index while its questions get the same answers
(synclint/cache.py). Asking every cached file's questions again after each edit costs about
a second on a repository of 2,500 files, though a typical edit (a line inserted, a statement
changed) moves a few fields' and parameters' places or citations and nothing else.

Where an edit changed only the places of fields, parameters and results (`Facts.values` and
the typed fields), and neither the call graph nor the classes, what each question reads is
known (`repo.Verifier.answer`):

- a question about a fact (a field's name, a parameter, a result) reads that fact alone;
- a field's question (`("F", cls, name)`) reads the typed fields of that name in the class's
  family and the facts of the name alone;
- a method's result (`("M", cls, name)`) reads the results of the methods the call may run,
  which an alias can name otherwise (`self.update = self.update_windowed`): every such
  question is asked again where any result changed;
- the classes' questions and the call graph's read neither.

So the new facts carry, for the fingerprint they were derived from, what changed
(`Facts.delta`: the facts' keys, the fields' names, whether a result did), and a cached entry
made under that fingerprint is asked again only where one of its questions reads one of them
(`Affected`). Where the call graph or the classes changed too, there is no delta and every
question is asked (as before). The deltas of the last few edits are kept, each joined with
the later ones, so that entries made a few edits ago (a pre-commit run checks only the
changed files) are kept as cheaply.
"""

from __future__ import annotations

from synclint.repo.keys import RESULT_ITEM

# Kept deltas: the fingerprints of the last few indexes, each with what changed since.
_KEPT = 8
_METHOD_QUESTIONS = frozenset({"M", "Mi"})
_FIELD_QUESTION = "F"
# The other questions read the classes and the call graph only (bases, field classes,
# returned classes, crowded methods; tier verdicts, what callers pass, fields never None: the
# call graph's, `facts.GRAPH_QUESTIONS`): their answers are the same wherever a delta exists.


def changed(old, new) -> tuple | None:
    """What `new` places otherwise than `old` (added and removed facts included): (the keys of
    `Facts.values` whose value changed, the names of the fields whose facts changed, whether a
    function's result changed); None where the classes or the call graph changed (every
    question may read them)."""
    if not old.structure or old.structure != new.structure:
        return None
    keys: set = set()
    fields: set[str] = set()
    results = False
    before, after = old.values, new.values
    if before is not after:
        for key in before.keys() | after.keys():
            if before.get(key) != after.get(key):
                keys.add(key)
                if key[0] == "a":
                    fields.add(key[1])
                results = results or key[0] in ("r", RESULT_ITEM)
    before, after = old.classes[0], new.classes[0]
    if before is not after:
        fields.update(key[1] for key in before.keys() | after.keys() if before.get(key) != after.get(key))
    return frozenset(keys), frozenset(fields), results


def derive(old, new) -> None:
    """Give `new` (solved from `old` after an edit) its delta: what changed since `old` and
    since each fingerprint `old` kept; none where the edit changed the classes or the call
    graph."""
    now = changed(old, new)
    if now is None:
        new.delta = {}
        return
    delta = {old.fingerprint: now}
    for base, since in list(old.delta.items())[: _KEPT - 1]:  # the newest first
        if base != new.fingerprint and base not in delta:
            delta[base] = (since[0] | now[0], since[1] | now[1], since[2] or now[2])
    new.delta = delta


class Affected:
    """Whether a file's questions may get other answers under facts derived with `changes` (a
    delta: keys, fields' names, whether a result changed)."""

    def __init__(self, changes: tuple) -> None:
        self.keys, self.fields, self.results = changes

    def any(self, questions) -> bool:
        """Whether any of `questions` (a cached file's) may be answered otherwise."""
        if not self.keys.isdisjoint(questions):
            return True  # a question about a changed fact (no question of another kind is a fact's key)
        fields, results = self.fields, self.results
        if not fields and not results:
            return False
        for key in questions:
            kind = key[0]
            if (kind == _FIELD_QUESTION and key[2] in fields) or (results and kind in _METHOD_QUESTIONS):
                return True
        return False
