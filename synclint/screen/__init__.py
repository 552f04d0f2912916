"""Parse with libcst only the functions that can hold a finding: a screen with Python's `ast`.

A libcst parse costs about ten times an `ast.parse`, and in model code nearly every file
holds some rule's trigger words, so the file-level prefilter (`synclint.prefilter`) lets most
files through. This screen works one level down. It parses the file with `ast`, splits it
into units (each module-level statement, each member of a module-level class, and each
element of a long module-level table such as `op_db = [OpInfo(...), ...]`: `_table_parts`),
and asks of each unit whether an enabled rule could flag anything in it:

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
`self.`), and every other unit's lines are blanked. A name a statement binds only as a
comprehension's target is no definition (Python, and the analysis, bind it in the
comprehension). Units kept for another reason (their imports, `compile`, a shared line)
keep what they read too, except that a split table they read keeps its statement only: they
hold no finding and no kept unit reads what they bind. Lines keep their numbers and columns, so
positions, suppression comments and fixes read the same as on the whole file, and libcst
parses a fraction of the text. tests/test_screen.py checks on the fixtures and on real code
that the findings are identical with and without the screen.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from synclint.analysis.host_fields import device_fields, host_fields
from synclint.analysis import platform_branches
from synclint.lines import ending as _ending
from synclint.lines import split_lines
from synclint.screen import places
from synclint.screen.facts import FUNCTIONS, FactReader, Unit, collect_defines, first_line, parsed
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
        tree = parsed(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # libcst gives the error (or parses what this Python cannot)
    lines = split_lines(text, keepends=True)
    # A rule may widen its words from the file itself (SL501: the names of functions whose
    # body only synchronizes, whose calls are syncs too).
    words_of = {r: r.screen_words(tree) for r in rules}
    reader = FactReader(lines, places, frozenset(w for r in rules for w in (words_of[r] or ())))
    units, classes = _units(tree, reader, lines)
    if not units:
        return None
    if reader.aliases:  # `from torch import tensor as T`: a unit calling `T(...)` calls `tensor`
        for unit in units:
            for name in unit.called & reader.aliases.keys():
                unit.called.add(reader.aliases[name])
                if name in unit.calls:
                    unit.calls.setdefault(reader.aliases[name], []).extend(unit.calls[name])
    by_name = _definitions(units)
    context = _definitions(units, context=True)
    model = None
    if min_confidence >= Confidence.MEDIUM and any(r.device_only for r in rules):
        model = places.PlaceModel(by_name, _class_definitions(classes), {n: tuple(sorted(p)) for n, p in reader.imports.items()}, h2d_helpers)
        model.device_fields = device_fields(text)
        model.host_fields = host_fields(text)
    try:
        candidates = [u for u in units if _may_hold(u, rules, model, context, words_of)]
    except places.TooCostly:
        return None  # parsed whole: what a whole-file parse finds
    if not candidates:
        return NOTHING
    kept = _with_context(candidates, units, context)
    emptied = _emptied(classes, kept)
    if _default_indent(units, kept, emptied) != _default_indent(units):
        # libcst takes the module's default indent from the first indented line: keep the
        # unit that holds the file's first one.
        first = min((u for u in units if u.first_indent is not None), key=lambda u: u.first_indent)
        kept = _with_context([*candidates, first], units, context)
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


def _units(tree: ast.Module, reader: FactReader, lines: list[str] | None = None) -> tuple[list[Unit], list[ClassUnits]]:
    """The file's units. With `lines` (the screen), a long module-level table is split into
    its elements (`_table_parts`)."""
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
                    collect_defines(member, unit.defines, unit.comprehension_only)
                reader.read(member, unit)
                cls.members.append(unit)
            classes.append(cls)
            units += [header, *cls.members]
            continue
        parts = _table_parts(stmt, lines, reader) if lines is not None else None
        if parts is not None:
            units += parts
            continue
        unit = Unit(stmt, first_line(stmt), stmt.end_lineno)
        unit.import_line = isinstance(stmt, (ast.Import, ast.ImportFrom))
        unit.docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        reader.read(stmt, unit)
        collect_defines(stmt, unit.defines, unit.comprehension_only)
        units.append(unit)
    return units, classes


# A module-level statement of at least this many lines that binds a name to a list or tuple
# literal (a generated table: `op_db = [OpInfo(...), ...]`) is split into its elements.
SPLIT_LINES = 200


def _table_parts(stmt: ast.stmt, lines: list[str], reader: FactReader) -> list[Unit] | None:
    """A long module-level table (`name = [e1, e2, ...]`, SPLIT_LINES lines or more) as its
    statement (the target, the annotation, the brackets and any element that shares a line
    with another) and one unit per element that has lines of its own; None for any other
    statement.

    The analysis reads a module-level expression in the module's scope before its statement,
    so an element's findings do not depend on the other elements. An element is kept with
    its statement and what it reads; a unit that reads the table's name keeps every element
    (`_definitions`); the place model joins the bindings of the parts where it joined those
    of the statement (a name bound at module level is looked up in every unit that binds
    it, the table's own binding is the statement's)."""
    first, last = first_line(stmt), stmt.end_lineno
    if last - first + 1 < SPLIT_LINES:
        return None
    if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
        target = stmt.targets[0]
    elif type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value is not None:
        target = stmt.target
    else:
        return None
    value = stmt.value
    if type(value) not in (ast.List, ast.Tuple) or len(value.elts) < 2:
        return None
    spans = _separable(value, lines)
    if len(spans) < 2:
        return None
    separable = frozenset(id(element) for element, _, _ in spans)
    shell = Unit(stmt, first, last, holes=tuple((a, b) for _, a, b in spans))
    reader.read(stmt, shell, skip=separable)  # its binding of the name is the whole table
    collect_defines(stmt, shell.defines, shell.comprehension_only, skip=separable)
    shell.table = target.id
    parts = [shell]
    for element, a, b in spans:
        part = Unit(element, a, b, container=shell)
        reader.read(element, part)
        collect_defines(element, part.defines, part.comprehension_only)
        parts.append(part)
    return parts


def _separable(value: ast.List | ast.Tuple, lines: list[str]) -> list[tuple[ast.expr, int, int]]:
    """The elements of a bracketed literal that have lines of their own, each with the rows
    to blank: from its first line (nothing before it there) to the line of its comma (only a
    comment after it there), the next element or the closing bracket on a later line."""
    def column(row: int, offset: int) -> int:  # ast's UTF-8 byte offset -> a character column
        line = lines[row - 1]
        return offset if line.isascii() else len(line.encode("utf-8")[:offset].decode("utf-8", "replace"))

    def text(start: tuple[int, int], end: tuple[int, int]) -> str:
        (r1, c1), (r2, c2) = start, end
        if r1 == r2:
            return lines[r1 - 1][c1:c2]
        return lines[r1 - 1][c1:] + "".join(lines[r1:r2 - 1]) + lines[r2 - 1][:c2]

    if value.end_lineno is None or value.end_lineno > len(lines):
        return []
    open_at = (value.lineno, column(value.lineno, value.col_offset))
    close_at = (value.end_lineno, column(value.end_lineno, value.end_col_offset) - 1)
    if lines[open_at[0] - 1][open_at[1]: open_at[1] + 1] not in ("[", "(") or lines[close_at[0] - 1][close_at[1]: close_at[1] + 1] not in ("]", ")"):
        return []  # a tuple without brackets
    bounds = []
    for element in value.elts:
        if element.end_lineno is None:
            return []
        bounds.append(((element.lineno, column(element.lineno, element.col_offset)), (element.end_lineno, column(element.end_lineno, element.end_col_offset))))
    starts = [(open_at[0], open_at[1] + 1), *(end for _, end in bounds)]  # where each gap begins
    ends = [*(start for start, _ in bounds), close_at]  # and ends
    gaps = [text(a, b) for a, b in zip(starts, ends)]
    out = []
    for index, element in enumerate(value.elts):
        (first, column_at), (last, _) = bounds[index]
        before, after = gaps[index], gaps[index + 1]
        if index > 0 and not _gap(before, comma=True):
            continue
        if index == 0 and not _gap(before, comma=False):
            continue
        if not _gap(after, comma=index + 1 < len(value.elts)):
            continue
        if lines[first - 1][:column_at].strip(" \t\f"):
            continue  # something else begins the line (the bracket, the previous element)
        # The row of the comma after it (or of the element's end): only a comment follows there.
        comma = after.find(",")
        tail = after if comma < 0 else after[comma + 1:]
        row = last + (after[: comma + 1].count("\n") if comma >= 0 else 0)
        if "\n" not in tail:
            continue  # the next element or the bracket on the same row
        out.append((element, first, row))
    return out


def _gap(text: str, comma: bool) -> bool:
    """Only spaces, line breaks and comments, around exactly one comma (`comma`), or at most
    one (after the last element)."""
    head, sep, tail = _strip_comments(text).partition(",")
    if sep and "," in tail:
        return False
    if comma and not sep:
        return False
    return not head.strip() and not tail.strip()


def _strip_comments(text: str) -> str:
    out = []
    for line in text.split("\n"):
        hash_at = line.find("#")
        out.append(line if hash_at < 0 else line[:hash_at])
    return "\n".join(out)


def _header_end(cls: ast.ClassDef) -> int:
    """The last line of `class X(...):` (bases may span lines)."""
    return max([cls.lineno, *(b.end_lineno for b in cls.bases), *(k.value.end_lineno for k in cls.keywords)])


def _definitions(units: list[Unit], context: bool = False) -> dict[str, list[Unit]]:
    """Module-level name -> the module-level units that bind it (and, under a key no name
    can have, the units that import names inside functions). `context`: what the screen
    keeps with a unit that reads the name: without the names bound only as comprehension
    targets (the place model joins those too, where it evaluates a unit of its own), with
    every element of a split table under the table's name."""
    by_name: dict[str, list[Unit]] = {}
    for unit in units:
        if unit.owner is None or unit is unit.owner.header:
            for name in unit.defines:
                if context and name in unit.comprehension_only:
                    continue
                by_name.setdefault(name, []).append(unit)
            if context and unit.container is not None:
                by_name.setdefault(unit.container.table, []).append(unit)  # a reader of the table reads every element
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


def _reads(unit: Unit, by_name: dict[str, list[Unit]], exact: bool = True) -> list[Unit]:
    """The units whose definitions `unit`'s analysis reads. A name imported only inside a
    function is read from there too: the engine adds a function's imports to the file's one
    import table as it walks, so a later function resolves them as well. Not `exact` (a unit
    kept for its imports, not for what it binds): a split table it reads is kept as its
    statement alone, the name bound to fewer elements (`_with_context`)."""
    if exact:
        out = [d for name in unit.loads for d in by_name.get(name, ()) if d is not unit]
    else:
        out = [
            d
            for name in unit.loads
            for d in by_name.get(name, ())
            if d is not unit and (d.container is None or d.container.table != name)
        ]
    if unit.container is not None:
        out.append(unit.container)  # an element is kept in its statement
    imported = by_name.get(_FUNCTION_IMPORTS)
    if imported:
        out += [d for d in imported if d is not unit and not unit.loads.isdisjoint(d.imported)]
    cls = unit.owner
    if cls is not None and unit is not cls.header:
        out += [cls.header, *_class_level(cls)]
        for member in cls.members:
            if member.method and (member.name in unit.self_calls or member.name in unit.self_reads
                                  or not unit.self_reads.isdisjoint(member.self_writes)
                                  or member.name == "__init__" and (platform_branches.init_platforms(member.node) is not None
                                                                    or _uses_platform_imports(member.node, by_name))):
                # a method called, a property read (`self.table`), a writer; a constructor
                # that raises on other platforms, or uses a name imported only for one
                # (analysis/platforms.py `constructor_platforms`, `_constructor_uses`)
                out.append(member)
    return out


def _uses_platform_imports(init: ast.FunctionDef, by_name: dict[str, list[Unit]]) -> bool:
    """Whether a constructor's top-level simple statements read a name that the module binds
    only in `if <platform test>:` blocks (`if _is_npu: import mindspore as ms`): the libcst
    analysis then reads the class as one of that platform (`platforms._constructor_uses`)."""
    for stmt in init.body:
        if type(stmt) in _COMPOUND:
            continue
        for node in ast.walk(stmt):
            if type(node) is ast.Name and type(node.ctx) is ast.Load:
                defined = by_name.get(node.id)
                if defined and all(
                    type(d.node) is ast.If and not d.node.orelse and platform_branches.platform_test(d.node.test) for d in defined
                ):
                    return True
    return False


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef, ast.Match)


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
    that write a `self.<attr>` they read (the analysis joins every write), those they call
    via `self.` and those they read as a property (`self.table`),
    and any unit that mentions `compile` (`torch.compile(fn)` makes `fn` hot). Also the
    module's leading docstring and imports and the statement after them (where a fix adds its
    import), and whatever shares a line with a kept unit (`a = 1; b = 2`)."""
    kept: set[int] = set()
    # First the candidates and what they read: what they read must be bound as in the file.
    pending = list(candidates)
    while pending:
        unit = pending.pop()
        if id(unit) in kept:
            continue
        kept.add(id(unit))
        pending += _reads(unit, by_name)
    # Then the units kept for their imports, for `compile`, for the place of an added import,
    # or for a line they share, and what they read: no candidate reads what these bind (or
    # it would be kept above), and they hold no finding, so a split table they read may be
    # bound to fewer elements (it is bound still: nothing in them changes meaning).
    pending = [u for u in units if u.owner is None and u.has_import]
    pending += [u for u in units if "compile" in u.identifiers]
    pending += _leading(units)
    while True:
        while pending:
            unit = pending.pop()
            if id(unit) in kept:
                continue
            kept.add(id(unit))
            pending += _reads(unit, by_name, exact=False)
        kept_lines = {row for u in units if id(u) in kept for row in _rows(u)}
        pending = [u for u in units if id(u) not in kept and (u.first in kept_lines or u.last in kept_lines)]
        if not pending:
            return kept


def _rows(unit: Unit):
    """The rows of `unit`, without those of its split elements."""
    if not unit.holes:
        return range(unit.first, unit.last + 1)
    rows = set(range(unit.first, unit.last + 1))
    for first, last in unit.holes:
        rows.difference_update(range(first, last + 1))
    return rows


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
