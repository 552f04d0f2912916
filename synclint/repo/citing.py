"""The examples a fact cites (`--explain`: "given device tensors, e.g. worker.py:120"), kept
apart from the solution so that an edit that only moves lines re-cites them without
solving again (`moved_lines`).
"""

from __future__ import annotations

import os
from dataclasses import replace

from synclint.repo.callgraph import unused
from synclint.repo.facts import Facts, fingerprinted
from synclint.repo.keys import PLACES, RESULT_ITEM

_MARK = "\x00"


class _Citing:
    """`flows_of` for writing a reason once as a template: every flow the reason cites reads
    as a placeholder line and is recorded with its real line (`_written`), so that the reason
    can be written again after an edit moves the flow to another line or place (`_recited`)."""

    def __init__(self, lines) -> None:
        self.lines, self.cited = lines, []

    def get(self, path, default=()):
        return _CitedFile(self, path, self.lines.get(path, ()))


class _CitedFile:
    __slots__ = ("citing", "path", "flows")

    def __init__(self, citing: _Citing, path: str, flows) -> None:
        self.citing, self.path, self.flows = citing, path, flows

    def __len__(self) -> int:
        return len(self.flows)

    def __getitem__(self, index: int) -> tuple:
        cited = self.citing.cited
        cited.append((self.path, index, self.flows[index][3]))
        return (None, None, None, f"{_MARK}{len(cited) - 1}{_MARK}")


def _written(make, lines) -> tuple[str, tuple | None]:
    """(text, citation): what `make(flows_of)` writes with the lines of `lines`, and, where it
    cites flows, (template, ((path, index, line), ...)) to write it again (`_recited`)."""
    citing = _Citing(lines)
    template = make(citing)
    if not citing.cited:
        return template, None
    return _filled(template, citing.cited), (template, tuple(citing.cited))


def _filled(template: str, cited) -> str:
    for n, (_path, _index, line) in enumerate(cited):
        template = template.replace(f"{_MARK}{n}{_MARK}", str(line))
    return template


def _recited(citation: tuple, places: dict, flows_of) -> tuple[str, tuple]:
    """A citation written again after edits: `places` (path -> old place -> new place of the
    flows that moved; an unlisted place kept) and `flows_of` (path -> the new summary's flows)
    of the edited files."""
    template, cited = citation
    moved = []
    for path, index, line in cited:
        if path in places:
            index = places[path].get(index, index)
            flows = flows_of.get(path, ())
            line = flows[index][3] if index < len(flows) else line
        moved.append((path, index, line))
    return _filled(template, moved), (template, tuple(moved))


def _cite(example, flows_of) -> str:
    """`file.py:LINE` of a flow (path, index), "" when there is none."""
    if example is None:
        return ""
    path, index = example
    flows = flows_of.get(path, ())
    return f"{os.path.basename(path)}:{flows[index][3]}" if index < len(flows) else ""


def _where(example, flows_of) -> str:
    if example is not None:
        path, index = example
        flows = flows_of.get(path, ())
        if index < len(flows):
            return f"{os.path.basename(path)}:{flows[index][3]}"
    return "?"


def _device_reason(key: tuple, example, flows_of) -> str:
    return f"{_what(key)} is given only device tensors in the repository (e.g. {_where(example, flows_of)})"


def _shape(summary: tuple) -> tuple:
    """A summary without its line numbers and its words (`name_references`, which only take
    functions off `Facts.orphans`: `moved_lines`): what the solve's places depend on."""
    return (tuple(flow[:3] for flow in summary[0]), *summary[1:6])


def moved_lines(facts: Facts, changed: dict[str, tuple]) -> Facts:
    """The facts after edits that changed no summary but its line numbers and words
    (`changed`: path -> new summary): the same places; the citations into those files are
    written again."""
    # The functions the changed files now name are no longer unused (`unused`).
    orphans = unused(facts.orphans, [summary[6] for summary in changed.values()])
    flows_of = {path: summary[0] for path, summary in changed.items()}
    values, typed, examples = _recite_all(facts.values, facts.classes[0], facts.examples, {path: {} for path in changed}, flows_of)
    if values is facts.values and typed is facts.classes[0] and orphans == facts.orphans:
        return facts  # a comment or a string edited: nothing the facts say moved
    classes = (typed, *facts.classes[1:])
    moved = replace(facts, values=values, classes=classes, examples=examples, orphans=orphans)
    return fingerprinted(moved, facts.structure if orphans == facts.orphans else "")


def _recite_all(values: dict, typed: dict, citations: dict, places: dict, flows_of) -> tuple[dict, dict, dict]:
    """(values, typed fields, citations) with every reason that cites a flow of the edited
    files (`places`: path -> old place -> new place of its flows that moved) written again;
    the same objects where none does."""
    values_now, typed_now, citations_now = values, typed, citations
    for key, citation in citations.items():
        if not any(path in places for path, _, _ in citation[1]):
            continue
        text, citation_now = _recited(citation, places, flows_of)
        if citation_now == citation:
            continue
        if citations_now is citations:
            values_now, typed_now, citations_now = dict(values), dict(typed), dict(citations)
        citations_now[key] = citation_now
        if key[0] == "A":
            typed_now[(key[1], key[2])] = (typed_now[(key[1], key[2])][0], text)
        elif key in values_now:
            values_now[key] = (values_now[key][0], text)
    return values_now, typed_now, citations_now


def _mask_of(local: int, symbols: tuple, value: dict) -> int:
    mask = local
    for symbol in symbols:
        mask |= value.get(symbol, 0)
    return mask & PLACES


def _what(key: tuple) -> str:
    if key[0] == "a":
        return f"field `{key[1]}`"
    if key[0] == "p":
        return f"parameter `{key[2]}` of `{key[1]}()`"
    if key[0] == RESULT_ITEM:
        return f"element {key[2]} of the tuple `{key[1]}()` returns"
    return f"the result of `{key[1]}()`"
