"""What the rules see of a file, without libcst: the rules its words enable, the units the
screen keeps (synclint/screen/), the facts of the whole text the rules read beside them, and
the digest of all of that.

The engine (synclint/engine.py) computes this before it parses a file. The same screened
input gives the same findings, so a file whose digest is the one its last findings were
made from keeps them (`reusing`, below). A run whose changed file is such a one (a comment,
a function no rule can flag: the usual edit of a file with findings elsewhere) asks
`reuse` first, with the rules described by the cache's catalog (synclint/rule_catalog.py),
and never imports libcst and the analysis when the answer is yes."""

from __future__ import annotations

import ast
import hashlib
from contextlib import contextmanager
from dataclasses import dataclass

from synclint import moved_lines, prefilter, screen, suppressions
from synclint.analysis.coldcode import worker_functions
from synclint.analysis.host_fields import declares_fields, device_fields, host_fields
from synclint.analysis.path_tiers import file_tier
from synclint.apis.torch_api import h2d_helpers
from synclint.lines import line_length, split_lines


@dataclass
class Screened:
    rules: tuple  # the rules that may match (their trigger words are in the text); () for none
    reduced: str | None = None  # the screened text (None: the screen is off); screen.NOTHING: no unit can hold a finding
    workers: frozenset = frozenset()
    hosts: frozenset = frozenset()
    devices: frozenset = frozenset()
    function_tiers: object = None

    def digest(self, filename: str, text: str) -> tuple[str, moved_lines.Shape | None]:
        facts = (sorted(self.workers), sorted(self.hosts), sorted(self.devices), line_length(text))
        return screened_digest(filename, text, self.rules, text if self.reduced is None else self.reduced, facts)


def screened_input(text: str, filename: str, settings, rules, function_tiers=None) -> Screened:
    """The screened input of `text` for `rules` (rule classes, instances or catalog entries)."""
    # Only the rules whose trigger words appear in the file run (each rule's triggers are
    # necessary for it to match), and a file no rule can match is not parsed with libcst.
    rules = prefilter.rules_for(text, rules)
    if rules and not settings.include_cold and file_tier(filename) is not None:
        # A test, benchmark or loading file: every finding would be cold, and the default
        # report leaves cold findings out. Not parsing it saves the most where it costs the
        # most (a generated test table of thousands of lines is one statement libcst must
        # parse whole).
        rules = ()
    if not rules:
        return Screened(())
    # Only the functions that can hold a finding (and what their analysis reads) are parsed
    # with libcst; the rest of the lines are blank, so positions are those of the file.
    reduced = screen.reduce(text, rules, settings.min_confidence, h2d_helpers(settings.h2d_helper)) if settings.screen else None
    if reduced == screen.NOTHING:
        return Screened(rules, reduced)
    workers, hosts, devices = worker_functions(text), host_fields(text), device_fields(text)
    if declares_fields(text):
        if function_tiers is None:  # the repository's, as the rules' context takes it
            from synclint import repo

            function_tiers = repo.tiers_hook(settings)
        inherited = getattr(function_tiers, "inherited_host_fields", None)
        if inherited is not None:
            hosts = hosts | (inherited(filename) - devices)  # declared by the modules of its classes' bases
    return Screened(rules, reduced, workers, hosts, devices, function_tiers)


def _without_trailing_comments(screened: str, text: str) -> str:
    """The screened text less its lines after the module's last statement (only comments and
    blank lines stand there): they change no finding (suppressions are keyed apart)."""
    lines = screened.rstrip().split("\n")
    kept = len(lines)
    while kept and (not lines[kept - 1].strip() or lines[kept - 1].lstrip().startswith("#")):
        kept -= 1
    if any(line.strip() for line in lines[kept:]):
        # Lines that look like comments may still be inside the last statement (a string).
        body = ast.parse(text).body
        kept = max(kept, body[-1].end_lineno or 0) if body else kept
    return "\n".join(lines[:kept])


def screened_digest(filename: str, text: str, rules, screened: str, facts: tuple) -> tuple[str, moved_lines.Shape | None]:
    """The digest of what the rules see of a file, and its shape (synclint/moved_lines.py)."""
    h = hashlib.sha256()
    seen = _without_trailing_comments(screened, text)
    given = "\0".join((filename, ",".join(r.code for r in rules), repr(facts)))
    for part in (given, seen):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    directives = []
    if suppressions.may_have_directives(text):
        for row, line in enumerate(split_lines(text), 1):
            if suppressions.may_have_directives(line):
                directives.append((row, line))
                h.update(f"{row}:{line}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest(), moved_lines.shape_of(split_lines(seen), given, directives)


def reuse(source: bytes, filename: str, settings, catalog, lookup) -> tuple | None:
    """The last findings of a file whose screened input, with the rules `catalog` describes
    (synclint/rule_catalog.py), is the one they were made from: what `lookup` (the runner's
    `_LastFindings`) returns for its digest: (findings, the findings the tiers hid by tier).
    None where the engine must lint the file: the screened input changed, or anything the
    engine handles itself (a file too large or undecodable, one that skips itself, per-file
    ignores, nothing for the rules to read)."""
    from synclint.rule_catalog import select

    if len(source) > settings.max_file_size or settings.per_file_ignores:
        return None
    from synclint.decoding import DecodeError, decode

    try:
        text, _ = decode(source)
    except DecodeError:
        return None
    if suppressions.skips_file(text):
        return None
    chosen = select((info.code for info in catalog), settings.select, settings.extend_select, settings.ignore)
    front = screened_input(text, filename, settings, tuple(info for info in catalog if info.code in chosen))
    if not front.rules or front.reduced == screen.NOTHING:
        return None
    return lookup(*front.digest(filename, text))


# --- the same screened input gives the same findings ---------------------------------------
#
# What the rules see of a file is the screened text (the units that can hold a finding, the
# rest blanked; synclint/screen/) with a few facts of the whole text: the rules its words
# enable, its suppression comments, its line length (a fix's layout), the functions it runs on
# worker threads and its host and device fields. An edit outside the screened units (a
# comment, a function no rule can flag) leaves all of that the same, and so the findings: the
# runner's cache offers the file's last findings through `reusing`, and they are used when the
# digest of this screened input equals the one they were made from (and what they read of
# the repository index still holds: the runner checks).
_REUSE = None


@contextmanager
def reusing(lookup):
    """Within the block, each screened file's digest is passed to `lookup(digest, shape)`,
    which returns the findings to use (already filtered, as the file's last run reported
    them) and the findings the tiers shown hid, by tier (engine.FileResult.hidden), or None
    to lint."""
    global _REUSE
    saved, _REUSE = _REUSE, lookup
    try:
        yield
    finally:
        _REUSE = saved


def lookup():
    """The hook `reusing` installed, or None."""
    return _REUSE
