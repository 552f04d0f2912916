"""The screen's place model gives up on a file past a fixed amount of work
(synclint/screen/places.py `WORK_LIMIT`): the file is then parsed whole, so the findings are
those of a whole-file parse, and the repository index keeps no summary of it. Module-level
statements that read each other's names (a generated table of test cases) made the model
evaluate the same bindings again on every question."""

from __future__ import annotations

import dataclasses
import textwrap

from synclint import repo, screen
from synclint.config import Settings
from synclint.engine import enabled_rules, lint_source
from synclint.screen import places
from synclint.violation import Confidence

# Module-level statements whose names read each other (a cycle through `table`), and a
# function the screen would keep on its own.
MODULE = textwrap.dedent(
    """\
    import torch

    base = torch.zeros(4, device="cuda")
    alias = base
    for entry in [alias, base]:
        alias = entry


    class Model(torch.nn.Module):
        def forward(self, x):
            scale = torch.ones(4, device="cuda")
            total = x * scale
            if total.sum() > 0:
                return x
            return x + total.max().item()


    def table():
        return [alias, base]
    """
)


def _report(text: str, settings: Settings) -> list[tuple]:
    return [(dataclasses.astuple(v), v.provenance) for v in lint_source(text, "pkg/ops.py", settings).violations]


def _reduce(text: str):
    settings = Settings()
    return screen.reduce(text, enabled_rules(settings), Confidence.MEDIUM)


def test_within_the_limit_the_screen_works_as_before():
    assert _reduce(MODULE) is not None


def test_past_the_limit_the_file_is_parsed_whole(monkeypatch):
    monkeypatch.setattr(places, "WORK_LIMIT", 3)
    assert _reduce(MODULE) is None
    findings = _report(MODULE, Settings())
    assert findings == _report(MODULE, Settings(screen=False))
    assert findings  # the comparison says something


def test_past_the_limit_the_index_has_only_the_words_of_the_file(monkeypatch):
    assert repo.summarize(MODULE)[:6] != repo.keys._NO_SUMMARY[:6]
    monkeypatch.setattr(places, "WORK_LIMIT", 3)
    summary = repo.summarize(MODULE)
    assert summary[:6] == repo.keys._NO_SUMMARY[:6]
    # What the file names still counts: a function it calls is not unused.
    assert summary[6] == repo.name_references(MODULE) != ()


def test_the_limit_counts_work_not_time(monkeypatch):
    # The same file gives the same answer however busy the machine is: the model counts the
    # bindings it evaluates.
    monkeypatch.setattr(places, "WORK_LIMIT", 3)
    assert [_reduce(MODULE) for _ in range(3)] == [None, None, None]
