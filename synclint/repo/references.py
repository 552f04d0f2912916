"""The names a module's text mentions outside comments and strings, and the names its string
look-ups may reach (`getattr(obj, f"decode_{backend}")`, `globals()[name]`, registering
decorators): what keeps a function that no call names from being read as unused.
"""

from __future__ import annotations

import ast
import keyword
import re
from bisect import bisect_right
from collections import Counter

from synclint.analysis import astwalk
from synclint.lines import line_starts
from synclint.repo.keys import NAME_PREFIX

# Words of a module's text: what may name a function (a call, a callback, a string a dispatch
# looks up). `f"decode_{backend}"` also names every function whose name starts `decode_`.
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF_NAME = re.compile(r"\bdef\s+([A-Za-z_][A-Za-z0-9_]*)")
# A decorator that registers the next definition (`@custom_op("ns::op")`, `@router.post(...)`,
# `@register(...)`: a call) hands it to code that calls it by another name or none. Not one that
# wraps it under its own name (`@staticmethod`, `@lru_cache(...)`, `@torch.compile(...)`).
_DECORATOR = re.compile(r"^[ \t]*@([A-Za-z_][\w.]*)[ \t]*\(", re.M)
_WRAPPERS = frozenset({"lru_cache", "cache", "wraps", "compile", "no_grad", "inference_mode", "enable_grad", "autocast",
                       "jit", "autotune", "heuristics", "contextmanager", "deprecated", "deprecate_kwarg", "override",
                       "dataclass", "total_ordering", "singledispatch", "retry", "timeit", "nvtx_range"})
# A call signature (`guards.argument_signature`) that passes what may be None: `?`, a field's
# value (`~f`) or a parameter passed on (`@q#...`).
_MAY_BE_NONE = re.compile(r"[?~@]")
_FORMAT_PREFIX = re.compile(r"""\b[fF][rR]?["']([A-Za-z_][A-Za-z0-9_]*)\{""")
# `f"get_{modality}_feature"`: the name's start and, where the string ends in a name's
# characters right after a replacement field, its end (`get_*_feature`).
_FORMAT_NAME = re.compile(r"""\b[fF][rR]?(["'])([A-Za-z_][A-Za-z0-9_]*)((?:\{[^{}"'\n]*\}[A-Za-z0-9_]*)+)\1""")


_MIN_PREFIX = 4
_KEYWORDS = frozenset(keyword.kwlist) | {"self", "cls"}


def _registered(text: str) -> set[str]:
    """The functions a registering decorator (`_DECORATOR`, not a wrapper) hands on: the
    definition that follows each such decorator line."""
    out = set()
    for decorator in _DECORATOR.finditer(text):
        if decorator.group(1).rpartition(".")[2] in _WRAPPERS:
            continue
        found = _DEF_NAME.search(text, decorator.end())
        if found:
            out.add(found.group(1))
    return out


# A comment, or a string literal with its prefix (`f"..."`, `r"""..."""`) and its body. One
# character at a time, each by one alternative, and a string left open ends at its line's end
# (at the text's for a triple-quoted one): a file that does not parse costs a linear scan.
_PROSE = re.compile(
    r"""#[^\n]*|(?P<prefix>[rRbBuUfF]{0,2})(?:"{3}(?P<long>(?:[^\\"]|\\.|"(?!""))*)(?:"{3}|\Z)"""
    r"""|'{3}(?P<long2>(?:[^\\']|\\.|'(?!''))*)(?:'{3}|\Z)"""
    r"""|"(?P<short>(?:[^\\"\n]|\\.)*)(?:"|(?=\n)|\Z)|'(?P<short2>(?:[^\\'\n]|\\.)*)(?:'|(?=\n)|\Z))""",
    re.S,
)
# A string that may name a function (`getattr(obj, "prefill")`, `"pkg.mod:main"`, `__all__`).
_NAME_STRING = re.compile(r"[A-Za-z_][\w.:]*")


def _prose_blanked(match: re.Match) -> str:
    whole = match.group(0)
    if whole[0] == "#":
        return ""
    if "f" in match.group("prefix").lower():
        return whole
    body = match.group("long") or match.group("long2") or match.group("short") or match.group("short2") or ""
    return whole if _NAME_STRING.fullmatch(body) else "\n" * body.count("\n")


def _without_prose(text: str) -> str:
    """The text with what cannot call a function blanked (its lines kept): comments, and
    strings that are not a name or a dotted path (docstrings, messages). A formatted
    string keeps its words (`f"{self.stats()}"` calls), and so does a name's string."""
    return _PROSE.sub(_prose_blanked, text)


def name_references(text: str, tree: ast.Module | None = None) -> tuple[str, ...]:
    """The words of a module that may name a function of the repository, sorted: every word
    of its code and of the strings that are a name (`_without_prose`: not its comments,
    docstrings or messages, which call nothing),
    less a function's name where its `def` lines are its only mentions in the module and it
    has no decorator (with the parsed `tree`: nor where the others are in its own body, a
    recursive call or `f.cache`, or set an attribute of it at module level, `f.cache = {}`),
    and the words that start a formatted string (`decode_*`). Capitalised words (classes) and
    keywords are left out. With the `tree`, a name the module only imports and re-exports
    (`from .factory import create_pool` and `__all__`) is left out too: a package's public
    name, which users call and the repository need not."""
    source = text
    text = _without_prose(text)
    words = _WORD.findall(text)
    seen = set(words)
    defined = _DEF_NAME.findall(text)
    counts = Counter(words) if defined or tree is not None else None
    if tree is not None:
        seen.difference_update(_reexported_only(text, tree, counts))
    if defined:
        decorated = _registered(text)
        own = _own_mentions(text, tree) if tree is not None else {}
        for name, n in Counter(defined).items():
            if counts[name] <= max(n, own.get(name, 0)) and name not in decorated:  # named only by itself
                seen.discard(name)
    seen.difference_update(_KEYWORDS)
    found = {w for w in seen if not w[:1].isupper()}
    # A prefix shorter than a word (`f"_{i}"`, `f"g{n}"`) looks nothing up by name; with the
    # tree, neither does a string no lookup by name is given (`f"create_{response.id}"`, a
    # task's name).
    looking = _lookup_lines(tree) if tree is not None else None
    starts = line_starts(source) if looking is not None else None
    for match in _FORMAT_PREFIX.finditer(source):
        start = match.group(1)
        if len(start) < _MIN_PREFIX:
            continue
        if looking is not None and bisect_right(starts, match.start()) not in looking:
            continue
        whole = _FORMAT_NAME.match(source, match.start())  # the whole string is a name's parts
        end = whole.group(3).rpartition("}")[2] if whole is not None else ""  # what follows its last field
        found.add(start + NAME_PREFIX + end)
    return tuple(sorted(found))


# Calls that look a name up (`getattr(module, f"decode_{backend}")`), and the tables a
# subscript looks one up in (`globals()[f"_{kind}_kernel"]`).
_LOOKUP_CALLS = frozenset({"getattr", "hasattr", "attrgetter", "methodcaller", "import_module", "__import__", "import_string",
                           "locate", "get_attr"})
_LOOKUP_TABLES = frozenset({"globals", "vars", "locals"})


def _lookup_lines(tree: ast.Module) -> set[int]:
    """The lines of the formatted strings a module may look a name up with: given to a
    lookup (in its arguments, or a table's subscript), or bound to a name the module gives
    to one (`name = f"decode_{backend}"`, then `getattr(module, name)`)."""
    given: list[ast.AST] = []
    names: set[str] = set()
    assigned: list[tuple[str, ast.AST]] = []
    for node in astwalk.walk(tree):
        kind = type(node)
        if kind is ast.Call:
            func = node.func
            called = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
            if called in _LOOKUP_CALLS:
                for arg in (*node.args, *(k.value for k in node.keywords)):
                    given.append(arg)
                    names.update(n.id for n in astwalk.walk(arg) if type(n) is ast.Name)
        elif kind is ast.Subscript:
            table = node.value
            if (type(table) is ast.Call and type(table.func) is ast.Name and table.func.id in _LOOKUP_TABLES) or \
                    (type(table) is ast.Attribute and table.attr == "__dict__"):
                given.append(node.slice)
                names.update(n.id for n in astwalk.walk(node.slice) if type(n) is ast.Name)
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            assigned.append((node.targets[0].id, node.value))
    given.extend(value for name, value in assigned if name in names)
    return {line for part in given for n in astwalk.walk(part) if type(n) is ast.JoinedStr
            for line in range(n.lineno, (n.end_lineno or n.lineno) + 1)}


def _reexported_only(text: str, tree: ast.Module, counts: Counter) -> set[str]:
    """The names a module imports (`from x import name`, at module level) and mentions
    nowhere else than in its imports and its `__all__`."""
    imported: set[str] = set()
    spans: list[tuple[int, int]] = []
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.ImportFrom:
            imported.update(a.name for a in node.names if a.asname in (None, a.name) and a.name != "*")
            spans.append((node.lineno, node.end_lineno or node.lineno))
        elif kind in (ast.Assign, ast.AugAssign, ast.AnnAssign):
            targets = node.targets if kind is ast.Assign else [node.target]
            if any(type(t) is ast.Name and t.id == "__all__" for t in targets):
                spans.append((node.lineno, node.end_lineno or node.lineno))
        elif kind in (ast.If, ast.Try) or kind.__name__ == "TryStar":
            pending.extend(node.body)
            pending.extend(getattr(node, "orelse", ()))
            for handler in getattr(node, "handlers", ()):
                pending.extend(handler.body)
    imported = {name for name in imported if not name[:1].isupper()}
    if not imported:
        return set()
    lines = text.splitlines()
    there: Counter = Counter()
    for start, end in spans:
        for line in lines[start - 1:end]:
            there.update(word for word in _WORD.findall(line) if word in imported)
    return {name for name in imported if counts[name] <= there[name]}


def _own_mentions(text: str, tree: ast.Module) -> dict[str, int]:
    """For each function without decorators (module-level, defined once; or methods of the
    module's classes, every definition of the name), how many times the module's words name
    it from its own definitions (`def` lines and bodies: a recursive call, a method that
    hands the call on to another object's method of its name) and from module-level
    statements that only set a module-level function's attributes (`f.cache = {}`): the
    mentions that never call it from elsewhere."""
    lines = text.splitlines()
    functions = {}
    methods: dict[str, list] = {}
    for node in tree.body:
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and not node.decorator_list:
            functions[node.name] = None if node.name in functions else node
        elif type(node) is ast.ClassDef:
            for member in node.body:
                if type(member) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    methods.setdefault(member.name, []).append(None if member.decorator_list else member)
    found: dict[str, int] = {}

    def mentions(name: str, start: int, end: int) -> int:
        return sum(1 for line in lines[start - 1:end] for word in _WORD.findall(line) if word == name)

    for name, node in functions.items():
        if node is not None and name not in methods:
            found[name] = mentions(name, node.lineno, node.end_lineno or node.lineno)
    for name, nodes in methods.items():
        if name not in functions and None not in nodes:
            found[name] = sum(mentions(name, node.lineno, node.end_lineno or node.lineno) for node in nodes)
    for node in tree.body:
        if type(node) is not ast.Assign or not all(type(t) is ast.Attribute and type(t.value) is ast.Name for t in node.targets):
            continue
        for target in node.targets:
            name = target.value.id
            if found.get(name) and functions.get(name) is not None:
                found[name] += mentions(name, node.lineno, node.end_lineno or node.lineno)
    return found
