"""Jupyter notebooks (`.ipynb`): the code cells are linted as one module (a name imported in
one cell is known in the next), and each finding is reported at its cell and at a row and
column relative to that cell, as ruff does (JSON `cell` is the 1-based index of the cell
among all the notebook's cells).

IPython syntax is masked before linting: a line magic or shell line (`%time f()`, `!pip
install x`, `x = !ls`, `?obj`, `obj?`) becomes a comment (`pass` inside a block), and a cell whose first
line is a cell magic (`%%bash`) is left out, except `%%time`/`%%timeit`/`%%capture`, whose
body is Python. `--fix` writes the fixed cells back with the masked lines restored, and the
rest of the notebook's JSON as it was: the notebook is written with the JSON layout that
reproduces its original bytes (indent, key order, escaping, final newline)."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field

from synclint.violation import Edit, Fix, Location, Violation

SUFFIX = ".ipynb"
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")
# `%magic`, `!shell`, `?obj`, `x = !cmd`, `x = %magic`, and help lines such as `obj?` / `obj??`.
_MAGIC_LINE = re.compile(r"^(\s*)(?:[%!?]|[\w.,\s]+=\s*[%!]|[\w.]+\?{1,2}\s*$)")


class NotebookError(ValueError):
    pass


def is_notebook(filename: str) -> bool:
    return filename.endswith(SUFFIX)


@dataclass
class _Cell:
    index: int  # position among all cells (0-based)
    lines: list[str]  # the cell's source lines, with their line endings
    masked: dict[int, str] = field(default_factory=dict)  # line number in cell (0-based) -> original
    first_row: int = 0  # the cell's first row in the virtual module (1-based)


@dataclass
class Notebook:
    data: dict
    raw: str
    cells: list[_Cell]
    layout: dict | None  # json.dumps keyword arguments that reproduce `raw`, if any
    final_newline: bool

    @property
    def source(self) -> str:
        """The code cells as one module, magics masked."""
        return "".join(_virtual_line(c, i, line) for c in self.cells for i, line in enumerate(c.lines))

    def locate(self, row: int) -> tuple[_Cell, int] | None:
        """The cell holding a virtual row, and the row within it (1-based)."""
        for cell in reversed(self.cells):
            if cell.first_row <= row:
                return cell, row - cell.first_row + 1
        return None


# What a masked line becomes: a comment at the left margin (so that imports after a magic
# still lead the module), `pass` inside a block (which must not be left empty).
_PLACEHOLDER = "#~ipython~"


def _virtual_line(cell: _Cell, number: int, line: str) -> str:
    if number in cell.masked:
        indent = re.match(r"[ \t]*", line).group(0)
        return f"{indent}pass  {_PLACEHOLDER}\n" if indent else f"{_PLACEHOLDER}\n"
    return line


def _source_lines(cell: dict) -> list[str]:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def _layout(data: dict, raw: str) -> tuple[dict | None, bool]:
    final_newline = raw.endswith("\n")
    body = raw[:-1] if final_newline else raw
    for indent in (1, 2, 4, None):
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                kwargs = {"indent": indent, "sort_keys": sort_keys, "ensure_ascii": ensure_ascii}
                if indent is None:
                    kwargs["separators"] = (",", ":")
                if json.dumps(data, **kwargs) == body:
                    return kwargs, final_newline
    return None, final_newline


def read(raw: str) -> Notebook:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a valid notebook (JSON error at line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a valid notebook (no `cells` list)")
    language = (data.get("metadata") or {}).get("language_info", {}).get("name", "python")
    cells: list[_Cell] = []
    row = 1
    if language == "python":
        for index, cell in enumerate(data["cells"]):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            lines = _source_lines(cell)
            if not lines:
                continue
            masked = {}
            if lines[0].lstrip().startswith("%%"):
                if not lines[0].lstrip().startswith(_PYTHON_CELL_MAGICS):
                    continue  # %%bash, %%html, ...: not Python
                masked[0] = lines[0]
            for number, line in enumerate(lines):
                if number not in masked and _MAGIC_LINE.match(line):
                    masked[number] = line
            cells.append(_Cell(index, lines, masked, row))
            row += len(lines)
    layout, final_newline = _layout(data, raw)
    return Notebook(data, raw, cells, layout, final_newline)


def _to_cell(nb: Notebook, loc: Location) -> tuple[int | None, Location]:
    found = nb.locate(loc.row)
    if found is None:
        return None, loc
    cell, row = found
    return cell.index + 1, Location(row, loc.column)


def map_violation(nb: Notebook, v: Violation) -> Violation:
    """A finding in the virtual module -> the same finding in its cell."""
    cell, start = _to_cell(nb, v.location)
    if cell is None:  # an input problem about the whole file
        return v
    _, end = _to_cell(nb, v.end_location)
    noqa = _to_cell(nb, Location(v.noqa_row, 1))[1].row if v.noqa_row else None
    fix = v.fix
    if fix is not None:
        edits = tuple(Edit(e.content, _to_cell(nb, e.location)[1], _to_cell(nb, e.end_location)[1]) for e in fix.edits)
        fix = Fix(fix.applicability, fix.message, edits)
    provenance = tuple(_map_provenance(nb, p) for p in v.provenance)
    return dataclasses.replace(v, location=start, end_location=end, noqa_row=noqa, fix=fix, cell=cell, provenance=provenance)


def _map_provenance(nb: Notebook, text: str) -> str:
    match = re.match(r"line (\d+): ", text)
    if not match:
        return text
    found = nb.locate(int(match.group(1)))
    if found is None:
        return text
    cell, row = found
    return f"cell {cell.index + 1}, line {row}: {text[match.end():]}"


def write(nb: Notebook, fixed_source: str) -> str:
    """The notebook's text with the code cells replaced by those of `fixed_source` (the
    virtual module after fixes). The fixed lines are matched to the old ones (difflib): an
    unchanged or rewritten line stays in its cell, an added line (an import) joins the cell
    of the line before it. Raises NotebookError when a change spans two cells."""
    import difflib

    old: list[str] = []
    owner: list[int] = []  # position in nb.cells of each old virtual line
    for position, cell in enumerate(nb.cells):
        for i, line in enumerate(cell.lines):
            old.append(_virtual_line(cell, i, line))
            owner.append(position)
    new = fixed_source.splitlines(keepends=True)
    per_cell: list[list[str]] = [[] for _ in nb.cells]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                per_cell[owner[i1 + k]].append(new[j1 + k])
        elif tag == "insert":
            target = owner[i1 - 1] if i1 > 0 else 0
            per_cell[target].extend(new[j1:j2])
        elif tag == "delete":
            continue
        else:  # replace
            cells = {owner[k] for k in range(i1, i2)}
            if len(cells) == 1:
                per_cell[cells.pop()].extend(new[j1:j2])
            elif i2 - i1 == j2 - j1:
                for k in range(i2 - i1):
                    per_cell[owner[i1 + k]].append(new[j1 + k])
            else:
                raise NotebookError("a fix changed lines of two cells at once; the notebook is left as it was")
    data = json.loads(nb.raw)
    changed = False
    for position, cell in enumerate(nb.cells):
        old_virtual = [_virtual_line(cell, i, line) for i, line in enumerate(cell.lines)]
        if per_cell[position] == old_virtual:
            continue
        _set_source(data["cells"][cell.index], _restore_magics(cell, old_virtual, per_cell[position]))
        changed = True
    if not changed:
        return nb.raw
    if nb.layout is not None:
        text = json.dumps(data, **nb.layout)
    else:
        text = json.dumps(data, indent=1, ensure_ascii=False)
    return text + ("\n" if nb.final_newline else "")


def _restore_magics(cell: _Cell, old_virtual: list[str], new_lines: list[str]) -> list[str]:
    """Put the masked magic lines back where their `pass` placeholders are."""
    if not cell.masked:
        return new_lines
    out = list(new_lines)
    placeholders = [i for i in sorted(cell.masked)]
    # Lines added by a fix sit before the placeholders they follow; match placeholders in order.
    search = 0
    for number in placeholders:
        placeholder = old_virtual[number]
        for i in range(search, len(out)):
            if out[i] == placeholder:
                out[i] = cell.masked[number]
                search = i + 1
                break
    return out


def _set_source(cell: dict, lines: list[str]) -> None:
    original = cell.get("source", "")
    original_text = "".join(original) if isinstance(original, list) else str(original)
    text = "".join(lines)
    if not original_text.endswith("\n") and text.endswith("\n"):
        text = text[:-1]  # Jupyter stores a cell without its final newline
    if isinstance(original, list):
        cell["source"] = text.splitlines(keepends=True)
    else:
        cell["source"] = text


def cell_texts(raw: str) -> dict[int, str]:
    """Each code cell's text by its 1-based index, as linted (for the source lines the `full`
    format shows)."""
    try:
        nb = read(raw)
    except NotebookError:
        return {}
    return {c.index + 1: "".join(c.lines) for c in nb.cells}


def process(filename: str, source: bytes, settings, fix: bool, unsafe: bool):
    """One notebook, start to finish, as `runner.process_file` does for a Python file."""
    from synclint.api import fix_source, lint_source
    from synclint.engine import io_error_violation
    from synclint.runner import FileOutcome

    if len(source) > settings.max_file_size:
        message = f"file is {len(source):,} bytes, over max-file-size ({settings.max_file_size:,}); skipped"
        return FileOutcome(filename, [io_error_violation(filename, message)])
    try:
        raw = source.decode("utf-8")
        nb = read(raw)
    except UnicodeDecodeError as exc:
        return FileOutcome(filename, [io_error_violation(filename, f"cannot decode: {exc}")])
    except NotebookError as exc:
        return FileOutcome(filename, [io_error_violation(filename, str(exc))])
    virtual = nb.source
    if not fix:
        found = lint_source(virtual, filename, settings)
        return FileOutcome(filename, [map_violation(nb, v) for v in found], hidden=found.hidden)
    fixed = fix_source(virtual, filename, settings, unsafe=unsafe)
    violations = [map_violation(nb, v) for v in fixed.violations]
    outcome = FileOutcome(filename, violations, raw, raw, "utf-8", 0, fixed.error, hidden=fixed.hidden)
    if fixed.changed:
        try:
            outcome.fixed = write(nb, fixed.fixed)
            outcome.applied = fixed.applied
        except NotebookError as exc:
            outcome.error = str(exc)
            found = lint_source(virtual, filename, settings)
            outcome.violations, outcome.hidden = [map_violation(nb, v) for v in found], found.hidden
    return outcome
