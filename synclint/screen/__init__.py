"""Parse with libcst only the functions that can hold a finding: a screen with Python's `ast`.

A libcst parse costs about ten times an `ast.parse`, and in model code nearly every file
holds some rule's trigger words, so the file-level prefilter (`synclint.prefilter`) lets most
files through. This screen works one level down. It parses the file with `ast`, splits it
into units (each module-level statement, and each member of a module-level class), and asks
of each unit whether an enabled rule could flag anything in it:

- a rule with `shape_words` flags only calls of functions or methods with those names (or
  calls passing keywords with those names), so a unit that makes no such call cannot hold
  its finding;
- a rule with `device_only` reports only values that the placement analysis puts on the
  device with medium confidence or more. Its `device_sites` name the places it looks (a
  truth test, a conversion, a subscript, ...), and `synclint.screen.places` answers, for
  each such place, whether the value there can be a device value at all. A rule with
  `device_only` and no sites asks only whether a device source is in reach of the unit.
  At `min-confidence = "low"` the analysis' guesses count too, so this test is not used.

The units that can hold a finding are kept, with everything their analysis reads (module
imports, the module-level definitions of the names they use, their class's header and
class-level statements, the methods that write `self.<attr>` or that they call through
`self.`), and every other unit's lines are blanked. Lines keep their numbers and columns, so
positions, suppression comments and fixes read the same as on the whole file, and libcst
parses a fraction of the text. tests/test_screen.py checks on the fixtures and on real code
that the findings are identical with and without the screen.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from synclint.lines import ending as _ending
from synclint.lines import split_lines
from synclint.screen import places
from synclint.screen.facts import FUNCTIONS, FactReader, Unit, collect_defines, first_line
from synclint.violation import Confidence

# What `reduce` returns when no unit can hold a finding: nothing to parse.
NOTHING = ""

_FUNCTION_IMPORTS = "<imports inside functions>"


@dataclass
class ClassUnits:
    header: Unit  # decorators, `class ...(bases):` and the lines before the first member
    members: list[Unit]


def reduce(text: str, rules, min_confidence: Confidence, h2d_helpers=None) -> str | None:
    """`text` with the units no rule can flag blanked; NOTHING when no unit can hold a
    finding; None when the whole text must be parsed (ast rejects it, unusual line breaks,
    a rule without a screen, or every unit is needed)."""
    if not rules or any(r.shape_words is None and not r.device_only for r in rules):
        return None
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None  # a lone CR: line numbering is the one thing we must not get wrong
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # libcst gives the error (or parses what this Python cannot)
    lines = split_lines(text, keepends=True)
    # A rule may widen its words from the file itself (SL501: the names of functions whose
    # body only synchronizes, whose calls are syncs too).
    words_of = {r: r.screen_words(tree) for r in rules}
    reader = FactReader(lines, places, frozenset(w for r in rules for w in (words_of[r] or ())))
    units, classes = _units(tree, reader)
    if not units:
        return None
    if reader.aliases:  # `from torch import tensor as T`: a unit calling `T(...)` calls `tensor`
        for unit in units:
            for name in unit.called & reader.aliases.keys():
                unit.called.add(reader.aliases[name])
                if name in unit.calls:
                    unit.calls.setdefault(reader.aliases[name], []).extend(unit.calls[name])
    by_name = _definitions(units)
    model = None
    if min_confidence >= Confidence.MEDIUM and any(r.device_only for r in rules):
        model = places.PlaceModel(by_name, _class_definitions(classes), {n: tuple(p) for n, p in reader.imports.items()}, h2d_helpers)
    try:
        candidates = [u for u in units if _may_hold(u, rules, model, by_name, words_of)]
    except places.TooCostly:
        return None  # parsed whole: what a whole-file parse finds
    if not candidates:
        return NOTHING
    kept = _with_context(candidates, units, by_name)
    emptied = _emptied(classes, kept)
    if _default_indent(units, kept, emptied) != _default_indent(units):
        # libcst takes the module's default indent from the first indented line: keep the
        # unit that holds the file's first one.
        first = min((u for u in units if u.first_indent is not None), key=lambda u: u.first_indent)
        kept = _with_context([*candidates, first], units, by_name)
        emptied = _emptied(classes, kept)
        if _default_indent(units, kept, emptied) != _default_indent(units):
            return None
    if len(kept) == len(units):
        return None
    return _blank(lines, units, emptied, kept)


def _emptied(classes: list[ClassUnits], kept: set[int]) -> list[ClassUnits]:
    """Classes kept for their name and bases only: every member is blanked."""
    return [cls for cls in classes if id(cls.header) in kept and not any(id(m) in kept for m in cls.members)]


# --- units ---------------------------------------------------------------------------------------


def _units(tree: ast.Module, reader: FactReader) -> tuple[list[Unit], list[ClassUnits]]:
    units: list[Unit] = []
    classes: list[ClassUnits] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.body and _header_end(stmt) < first_line(stmt.body[0]):
            header = Unit(stmt, first_line(stmt), first_line(stmt.body[0]) - 1)
            header.defines.add(stmt.name)
            for expr in (*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)):
                reader.read(expr, header)
            cls = ClassUnits(header, [])
            header.owner = cls
            for member in stmt.body:
                unit = Unit(member, first_line(member), member.end_lineno, owner=cls)
                if isinstance(member, FUNCTIONS):
                    unit.method, unit.name = True, member.name
                else:
                    collect_defines(member, unit.defines)
                reader.read(member, unit)
                cls.members.append(unit)
            classes.append(cls)
            units += [header, *cls.members]
            continue
        unit = Unit(stmt, first_line(stmt), stmt.end_lineno)
        unit.import_line = isinstance(stmt, (ast.Import, ast.ImportFrom))
        unit.docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        reader.read(stmt, unit)
        collect_defines(stmt, unit.defines)
        units.append(unit)
    return units, classes


def _header_end(cls: ast.ClassDef) -> int:
    """The last line of `class X(...):` (bases may span lines)."""
    return max([cls.lineno, *(b.end_lineno for b in cls.bases), *(k.value.end_lineno for k in cls.keywords)])


def _definitions(units: list[Unit]) -> dict[str, list[Unit]]:
    """Module-level name -> the module-level units that bind it (and, under a key no name
    can have, the units that import names inside functions)."""
    by_name: dict[str, list[Unit]] = {}
    for unit in units:
        if unit.owner is None or unit is unit.owner.header:
            for name in unit.defines:
                by_name.setdefault(name, []).append(unit)
        if unit.imported and (unit.method or isinstance(unit.node, FUNCTIONS)):
            by_name.setdefault(_FUNCTION_IMPORTS, []).append(unit)
    return by_name


def _class_definitions(classes: list[ClassUnits]) -> dict[tuple[int, str], list[Unit]]:
    """(class, name) -> the class-level statements binding it (methods see them in the analysis)."""
    out: dict[tuple[int, str], list[Unit]] = {}
    for cls in classes:
        for member in cls.members:
            if not member.method:
                for name in member.defines:
                    out.setdefault((id(cls), name), []).append(member)
    return out


# --- which units can hold a finding -----------------------------------------------------------


def _class_level(cls: ClassUnits) -> list[Unit]:
    return [m for m in cls.members if not m.method]


def _reads(unit: Unit, by_name: dict[str, list[Unit]]) -> list[Unit]:
    """The units whose definitions `unit`'s analysis reads. A name imported only inside a
    function is read from there too: the engine adds a function's imports to the file's one
    import table as it walks, so a later function resolves them as well."""
    out = [d for name in unit.loads for d in by_name.get(name, ()) if d is not unit]
    imported = by_name.get(_FUNCTION_IMPORTS)
    if imported:
        out += [d for d in imported if d is not unit and not unit.loads.isdisjoint(d.imported)]
    cls = unit.owner
    if cls is not None and unit is not cls.header:
        out += [cls.header, *_class_level(cls)]
        for member in cls.members:
            if member.method and (member.name in unit.self_calls or not unit.self_reads.isdisjoint(member.self_writes)):
                out.append(member)
    return out


def _may_hold(unit: Unit, rules, model, by_name, words_of) -> bool:
    if unit.owner is not None and unit is unit.owner.header:
        return False  # bases and decorators: nothing a rule flags
    for rule in rules:
        words = words_of[rule]
        if words is not None and unit.called.isdisjoint(words):
            continue
        if rule.device_only and model is not None:
            sites = rule.device_sites
            if sites is None:
                if not _reaches_device(unit, by_name):
                    continue
            elif not any(model.holds(unit, kind, words) for kind in sites):
                continue
        return True
    return False


def _reaches_device(unit: Unit, by_name) -> bool:
    """Whether a device source is in `unit` or in the units it reads, transitively."""
    seen: set[int] = set()
    pending = [unit]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.device_source:
            return True
        pending += _reads(current, by_name)
    return False


def _with_context(candidates: list[Unit], units: list[Unit], by_name) -> set[int]:
    """The candidates and everything their analysis reads, transitively: module imports,
    definitions of the names used, the class header and class-level statements, the methods
    that write a `self.<attr>` they read (the analysis joins every write) and those they call
    via `self.`,
    and any unit that mentions `compile` (`torch.compile(fn)` makes `fn` hot). Also the
    module's leading docstring and imports and the statement after them (where a fix adds its
    import), and whatever shares a line with a kept unit (`a = 1; b = 2`)."""
    kept: set[int] = set()
    pending = list(candidates)
    pending += [u for u in units if u.owner is None and u.has_import]
    pending += [u for u in units if "compile" in u.identifiers]
    pending += _leading(units)
    while True:
        while pending:
            unit = pending.pop()
            if id(unit) in kept:
                continue
            kept.add(id(unit))
            pending += _reads(unit, by_name)
        kept_lines = {row for u in units if id(u) in kept for row in range(u.first, u.last + 1)}
        pending = [u for u in units if id(u) not in kept and (u.first in kept_lines or u.last in kept_lines)]
        if not pending:
            return kept


def _leading(units: list[Unit]) -> list[Unit]:
    """The module's first statements up to the first that is neither its docstring nor an
    import line, that one included: the engine puts an added import after this block."""
    out = []
    for unit in units:
        if unit.owner is not None and unit is not unit.owner.header:
            continue
        out.append(unit)
        if not (unit.import_line or (len(out) == 1 and unit.docstring)):
            break
    return out


def _default_indent(units: list[Unit], kept: set[int] | None = None, emptied=()) -> str | None:
    """The indent libcst will take as the module's default: that of the first indented line
    (an emptied class gets `pass` where its first member began)."""
    found = [u.first_indent for u in units if u.first_indent is not None and (kept is None or id(u) in kept)]
    found += [cls.members[0].first_indent for cls in emptied if cls.members[0].first_indent is not None]
    return min(found)[1] if found else None


# --- the reduced text ---------------------------------------------------------------------------


def _blank(original: list[str], units: list[Unit], emptied: list[ClassUnits], kept: set[int]) -> str:
    lines = list(original)
    for unit in units:
        if id(unit) not in kept:
            for index in range(unit.first - 1, min(unit.last, len(lines))):
                lines[index] = _ending(lines[index])
    for cls in emptied:
        # A class kept for its name and bases, with every member blanked: `pass` on the
        # first member's line keeps it a class (and its first indent the same).
        index = cls.members[0].first - 1
        line = original[index]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        lines[index] = f"{indent}pass{_ending(line)}"
    if lines and not _ending(lines[-1]) and not lines[-1].strip():
        lines[-1] = " "  # the text still ends without a line break, as the original did
    return "".join(lines)
