"""The core: source bytes in, findings out. The CLI, the pre-commit hook, the language
server, the GPU proof harness and the runtime tracer all reach it through the public API,
`synclint.lint_source` / `synclint.fix_source` (synclint/api.py).

Flow for one file: decode -> skip-file? -> prefilter (which rules can match at all) ->
screen (which functions can hold a finding, with `ast`) -> parse those (libcst) -> one batched
visitor pass running every enabled rule (placement analysis is computed lazily, only for
scopes a rule asks about) -> positions (only when something was found) -> Violation records
-> suppressions and confidence filter.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst

from synclint import screen, screened, suppressions
from synclint.analysis.imports import ImportTable
from synclint.analysis.nodes import forget_file, inner_statements
from synclint.decoding import DecodeError, decode, source_encoding  # noqa: F401 - source_encoding: re-exported
from synclint.fix.layout import Layout
from synclint.analysis.tier import FunctionTiers
from synclint.config import Settings
from synclint.context import LintContext
from synclint.positions import node_positions
from synclint.rules import all_rules, select_codes
from synclint.rules.base import Finding, FixSpec, Rule
from synclint.violation import (
    IO_ERROR,
    SYNTAX_ERROR,
    UNUSED_SUPPRESSION,
    Confidence,
    Edit,
    Fix,
    Location,
    Severity,
    Violation,
)


@dataclass
class FileResult:
    filename: str
    violations: list[Violation] = field(default_factory=list)
    text: str | None = None  # the decoded source (None when it could not be decoded)
    encoding: str = "utf-8"
    parsed: bool = False  # whether libcst parsed it (False: prefiltered, skipped or broken)
    suppressed: int = 0
    # Findings hidden by the tiers shown (synclint/tier.py), by tier: `cold` without
    # --include-cold, `unknown` under --only-hot. The summary counts them, so that a run that
    # hides every finding does not read as if nothing were found.
    hidden: dict = field(default_factory=dict)
    # Each suppressed finding with the comment that suppressed it (for --show-suppressions).
    suppressions: list = field(default_factory=list)


@lru_cache(maxsize=64)
def enabled_rules(settings: Settings) -> tuple[Rule, ...]:
    codes = select_codes(settings.select, settings.extend_select, settings.ignore)
    return tuple(rule(settings) for rule in all_rules() if rule.code in codes)


def _file_ignores(settings: Settings, filename: str) -> frozenset[str]:
    from synclint.discover import per_file_ignored_codes

    return per_file_ignored_codes(settings, filename)


_LOOPS = (cst.For, cst.While)
# Nodes that hold only whitespace, comments or punctuation (and so only more of the same).
_TRIVIA = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Comment, cst.Newline,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.BaseBinaryOp,
    cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.ImportStar,
)


@lru_cache(maxsize=None)
def _child_fields(kind: type) -> tuple[str, ...]:
    """A node type's fields in declaration order (children first, as libcst declares them)."""
    return tuple(f.name for f in dataclasses.fields(kind))


@lru_cache(maxsize=64)
def _walk_tables(wanted: frozenset) -> tuple[tuple[type, ...], dict]:
    """Trivia types to skip (unless a rule asked for one) and an empty per-type decision cache."""
    skip = tuple(t for t in _TRIVIA if not any(issubclass(w, t) for w in wanted))
    return skip, {}


@lru_cache(maxsize=None)
def _is_statement(kind: type) -> bool:
    return issubclass(kind, (cst.BaseStatement, cst.SimpleStatementSuite))


class BatchedVisitor(cst.CSTVisitor):
    """One pass over the tree; calls each enabled rule's handler for each node type."""

    def __init__(self, ctx: LintContext, rules: tuple[Rule, ...]) -> None:
        super().__init__()
        self.ctx = ctx
        self.dispatch: dict[type, list] = {}
        for rule in rules:
            for type_name, method in rule.handlers().items():
                node_type = getattr(cst, type_name, None)
                if node_type is None:
                    raise TypeError(f"{type(rule).__name__}.{method}: libcst has no node {type_name}")
                self.dispatch.setdefault(node_type, []).append(getattr(rule, method))
        # Node type -> whether the walk goes into it; shared by every walk with the same rules.
        self._skip, self._descend = _walk_tables(frozenset(self.dispatch))

    def on_visit(self, node: cst.CSTNode) -> bool:
        ctx = self.ctx
        ctx.stack.append(node)
        kind = type(node)
        if _is_statement(kind):
            ctx.statements.append(node)
        if kind is cst.FunctionDef:
            ctx.enter_function(node)
        elif kind is cst.ClassDef:
            ctx.chain.append(node)
        elif kind is cst.With:
            ctx.enter_with(node)
        handlers = self.dispatch.get(kind)
        if handlers:
            for handler in handlers:
                handler(node, ctx)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        ctx = self.ctx
        kind = type(original_node)
        if kind is cst.FunctionDef:
            ctx.leave_function()
        elif kind is cst.ClassDef:
            ctx.chain.pop()
        elif kind is cst.With:
            ctx.leave_with()
        if _is_statement(kind):
            ctx.statements.pop()
        ctx.stack.pop()

    def walk(self, node: cst.CSTNode) -> None:
        """The same pass as `node.visit(self)`, without libcst's rebuilding of every node
        (its generic visit reconstructs each node even for a read-only visitor) and without
        descending into whitespace, comments and punctuation, which no rule reads. Type tests
        are answered once per node type (libcst's base classes are ABCs: `isinstance` on them
        is slow enough to show in a profile)."""
        if not self.on_visit(node):
            return
        kind = type(node)
        loop = kind in _LOOPS
        descend = self._descend
        for name in _child_fields(kind):
            value = getattr(node, name)
            value_type = type(value)
            if value_type is list or value_type is tuple:
                for child in value:
                    go = descend.get(type(child))
                    if go is None:
                        go = self._learn(type(child))
                    if go:
                        self.walk(child)
                continue
            go = descend.get(value_type)
            if go is None:
                go = self._learn(value_type)
            if not go:
                continue
            if loop and name == "body":
                self.ctx.loop_depth += 1
                self.walk(value)
                self.ctx.loop_depth -= 1
            else:
                self.walk(value)
        self.on_leave(node)

    def _learn(self, value_type: type) -> bool:
        """Whether the walk goes into values of this type: nodes, except trivia no rule reads."""
        go = isinstance(value_type, type) and issubclass(value_type, cst.CSTNode) and not issubclass(value_type, self._skip)
        self._descend[value_type] = go
        return go

    # Loops: the body (not the iterable or the `else`) runs once per iteration.
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute == "body" and type(node) in (cst.For, cst.While):
            self.ctx.loop_depth += 1

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if attribute == "body" and type(original_node) in (cst.For, cst.While):
            self.ctx.loop_depth -= 1


def _input_violation(filename: str, code: str, message: str, row: int = 1, column: int = 1) -> Violation:
    loc = Location(max(row, 1), max(column, 1))
    return Violation(
        code=code,
        message=message,
        filename=filename,
        location=loc,
        end_location=loc,
        severity=Severity.ERROR,
        confidence=Confidence.HIGH,
        noqa_row=None,
    )


def syntax_error_violation(filename: str, exc: Exception) -> Violation:
    if isinstance(exc, cst.ParserSyntaxError):
        message = exc.message.strip().splitlines()[0] if exc.message else "invalid syntax"
        return _input_violation(filename, SYNTAX_ERROR, f"SyntaxError: {message}", exc.raw_line, exc.raw_column + 1)
    if isinstance(exc, SyntaxError):
        return _input_violation(filename, SYNTAX_ERROR, f"SyntaxError: {exc.msg}", exc.lineno or 1, exc.offset or 1)
    return _input_violation(filename, SYNTAX_ERROR, f"SyntaxError: {exc}")


def _python_syntax_error(text: str) -> SyntaxError | None:
    """CPython's own error for text libcst rejected: a clearer message ("'(' was never
    closed") at the location Python reports. None when Python accepts the text."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError):
        return None
    return None


def io_error_violation(filename: str, message: str) -> Violation:
    return _input_violation(filename, IO_ERROR, message)


def lint_source(
    source: bytes | str, filename: str, settings: Settings | None = None, function_tiers: FunctionTiers | None = None
) -> FileResult:
    """Lint one file's content. Never raises for bad input: it becomes SL001/SL002 findings.
    A file nested too deeply for the default stack is linted again on a deep one."""
    settings = settings or Settings()
    try:
        try:
            return _lint_source(source, filename, settings, function_tiers)
        except RecursionError:
            pass
        from synclint.limits import TooDeep, run_deep

        try:
            return run_deep(_lint_source, source, filename, settings, function_tiers)
        except TooDeep as exc:
            result = FileResult(filename)
            result.violations.append(io_error_violation(filename, f"cannot analyse: {exc}; skipped"))
            return result
    finally:
        forget_file()  # the memos of this file's nodes, which would keep its tree alive


def _lint_source(source: bytes | str, filename: str, settings: Settings, function_tiers: FunctionTiers | None = None) -> FileResult:
    result = FileResult(filename)
    if isinstance(source, bytes):
        if len(source) > settings.max_file_size:
            result.violations.append(
                io_error_violation(filename, f"file is {len(source):,} bytes, over max-file-size ({settings.max_file_size:,}); skipped")
            )
            return _filtered(result, settings)
        try:
            text, result.encoding = decode(source)
        except DecodeError as exc:
            result.violations.append(io_error_violation(filename, f"cannot decode: {exc}"))
            return _filtered(result, settings)
    else:
        text = source
    result.text = text
    if suppressions.skips_file(text):
        return result
    rules = tuple(r for r in enabled_rules(settings) if r.code not in _file_ignores(settings, filename))
    front = screened.screened_input(text, filename, settings, rules, function_tiers)
    if not front.rules:
        # No parse with libcst needed; still report a syntax error, which ast finds cheaply.
        try:
            ast.parse(text, filename=filename)
        except SyntaxError as exc:
            result.violations.append(syntax_error_violation(filename, exc))
        except (ValueError, RecursionError) as exc:  # null bytes, absurd nesting
            result.violations.append(syntax_error_violation(filename, exc))
        return _filtered(result, settings)
    if front.reduced == screen.NOTHING:
        return _filtered(result, settings)  # ast parsed it, and no unit can hold a finding
    lookup = screened.lookup()
    if lookup is not None:
        found = lookup(*front.digest(filename, text))
        if found is not None:
            result.violations, result.hidden = found
            return result
    try:
        module = _parse(text, front.reduced)
    except cst.ParserSyntaxError as exc:
        result.violations.append(syntax_error_violation(filename, _python_syntax_error(text) or exc))
        return _filtered(result, settings)
    except (RecursionError, ValueError) as exc:
        result.violations.append(syntax_error_violation(filename, exc))
        return _filtered(result, settings)
    result.parsed = True
    findings = run_rules(module, front.rules, settings, filename, front.workers, front.function_tiers, front.hosts, front.devices)
    if findings:
        result.violations.extend(to_violations(module, findings, filename, settings, text))
    return _filtered(result, settings)


def _parse(text: str, reduced: str | None) -> cst.Module:
    if reduced is not None:
        try:
            return parse_module(reduced)
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            pass  # the whole text's parse gives the error, where it is in the file
    return parse_module(text)


# A backslash continuation on the last line, then only a line break: CPython accepts it
# after `\r\n` (its tokenizer drops the empty continued line), libcst does not.
_EOF_CONTINUATION = re.compile(r"\\(?=(?:\r\n|\r|\n)?[ \t\f]*\Z)")


def parse_module(text: str) -> cst.Module:
    """libcst's parse, accepting what CPython accepts where libcst differs: a file ending in
    a backslash and a line break is parsed with the backslash read as a space (same length,
    so every position is that of the file)."""
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError:
        match = _EOF_CONTINUATION.search(text)
        if match is None or _python_syntax_error(text) is not None:
            raise
        return cst.parse_module(text[: match.start()] + " " + text[match.end() :])


def run_rules(
    module: cst.Module,
    rules: tuple[Rule, ...],
    settings: Settings,
    filename: str = "",
    workers: frozenset[str] = frozenset(),
    function_tiers: FunctionTiers | None = None,
    host_fields: frozenset[str] = frozenset(),
    device_fields: frozenset[str] = frozenset(),
) -> list[Finding]:
    """Run `rules` over `module`. `workers`: functions the file runs on a worker thread
    (`tier.worker_functions` of the whole text); `function_tiers`: a repository's verdicts
    on how often each function runs (see synclint/analysis/tier.py)."""
    imports = ImportTable()
    imports.collect_top_level(module)
    ctx = LintContext(
        module, settings, imports, filename=filename, workers=workers, function_tiers=function_tiers, host_fields=host_fields,
        device_fields=device_fields,
    )
    try:
        BatchedVisitor(ctx, rules).walk(module)
    finally:
        ctx.release()
    return ctx.findings


@lru_cache(maxsize=64)
def enabled_codes(settings: Settings) -> frozenset[str]:
    """Every code (rules and the engine's own) that the settings enable."""
    return select_codes(settings.select, settings.extend_select, settings.ignore)


def _filtered(result: FileResult, settings: Settings) -> FileResult:
    """Drop findings below --min-confidence, ignored per file, or suppressed by comments;
    add SL003 for the suppression comments that suppressed nothing."""
    ignored = _file_ignores(settings, result.filename)
    text = result.text
    directives = None
    if text is not None and suppressions.may_have_directives(text):
        directives = suppressions.FileSuppressions(suppressions.source_lines(text))
    kept = []
    for v in result.violations:
        if v.code in ignored:
            continue
        if v.confidence < settings.min_confidence:
            if directives is not None:
                directives.suppressing(v)  # hidden by a setting: its comment is not unused
            continue
        if (v.tier == "cold" and not settings.include_cold) or (
            v.tier == "unknown" and settings.only_hot and v.code not in (SYNTAX_ERROR, IO_ERROR)
        ):
            if directives is None or directives.suppressing(v) is None:
                result.hidden[v.tier] = result.hidden.get(v.tier, 0) + 1
            continue  # hidden by a setting: a comment on its line is not unused
        if directives is not None and v.code not in (SYNTAX_ERROR, IO_ERROR):
            directive = directives.suppressing(v)
            if directive is not None:
                result.suppressed += 1
                result.suppressions.append((v, directive))
                continue
        kept.append(v)
    enabled = enabled_codes(settings) - ignored
    if (
        directives is not None
        and UNUSED_SUPPRESSION in enabled
        and not any(v.code in (SYNTAX_ERROR, IO_ERROR) for v in result.violations)
    ):
        from synclint.rules import known_codes

        kept.extend(directives.unused(result.filename, enabled, known_codes()))
    kept.sort(key=lambda v: v.sort_key)
    result.violations = kept
    return result


# --- positions and fixes ------------------------------------------------------------------


def to_violations(module: cst.Module, findings: list[Finding], filename: str, settings: Settings, text: str | None = None) -> list[Violation]:
    # Positions only for files with findings, and only for the nodes they name.
    positions = node_positions(module, _nodes_to_place(module, findings))
    import_anchor = _import_anchor(module, positions)
    bound = _BoundNames(module)
    layout = Layout(text) if text is not None and any(f.fix for f in findings) else None
    seen = set()
    out: list[Violation] = []
    for finding in findings:
        rng = positions[finding.node]
        start = Location(rng.start.line, rng.start.column + 1)
        end = Location(rng.end.line, rng.end.column + 1)
        key = (finding.code, start, end)
        if key in seen:  # the same node reached twice (e.g. nested handlers): report once
            continue
        seen.add(key)
        noqa_row = positions[finding.statement].start.line if finding.statement in positions else start.row
        fix = _to_fix(module, finding.fix, positions, import_anchor, finding.indents, bound, layout) if finding.fix else None
        provenance = tuple(
            f"line {positions[ev.node].start.line}: {ev.reason}" if ev.node in positions else ev.reason
            for ev in finding.evidence
        )
        out.append(
            Violation(
                code=finding.code,
                message=finding.message,
                filename=filename,
                location=start,
                end_location=end,
                fix=fix,
                severity=finding.severity,
                confidence=finding.confidence,
                noqa_row=noqa_row,
                provenance=provenance,
                hot_path=finding.hot_path,
                tier=finding.tier,
                tier_reason=finding.tier_reason,
            )
        )
    return out


def _nodes_to_place(module: cst.Module, findings: list[Finding]) -> list[cst.CSTNode]:
    nodes: list[cst.CSTNode] = []
    for finding in findings:
        nodes += [finding.node, finding.statement, *(ev.node for ev in finding.evidence)]
        if finding.fix is not None:
            nodes += [old for old, _ in finding.fix.replacements]
            if finding.fix.imports:
                nodes += _leading_block(module)
    return nodes


def _leading_block(module: cst.Module) -> list[cst.CSTNode]:
    """The module's leading docstring and imports: where an added import goes after."""
    block = []
    for index, stmt in enumerate(module.body):
        if _is_import_line(stmt) or (index == 0 and _is_docstring(stmt)):
            block.append(stmt)
        else:
            break
    return block


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def _import_anchor(module: cst.Module, positions) -> Location:
    """Where a new import goes: after the last import of the module's leading block of
    imports (a docstring and `__future__` imports included), else after the header comments."""
    block = _leading_block(module)
    anchor_row = positions[block[-1]].end.line if block and block[-1] in positions else 0
    if anchor_row == 0:
        anchor_row = len(module.header)
    return Location(anchor_row + 1, 1)


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


class _BoundNames:
    """The module's top-level import table, collected once per file (not once per fix: a
    file with thousands of fixable findings took quadratic time and memory)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._table: ImportTable | None = None
        self._names: set[str] | None = None

    @property
    def aliases(self) -> dict:
        if self._table is None:
            self._table = ImportTable()
            self._table.collect_top_level(self.module)
        return self._table.aliases

    @property
    def names(self) -> set[str]:
        """Every name the module binds at its top level (imports, defs, classes, assignments,
        also inside top-level `if`/`try`/`with` blocks)."""
        if self._names is None:
            self._names = set(self.aliases)
            pending = list(self.module.body)
            while pending:
                stmt = pending.pop()
                if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                    self._names.add(stmt.name.value)
                elif isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        targets = []
                        if isinstance(small, cst.Assign):
                            targets = [t.target for t in small.targets]
                        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                            targets = [small.target]
                        for target in targets:
                            self._names.update(_bound_in(target))
                elif isinstance(stmt, (cst.If, cst.Try, cst.With, cst.For, cst.While)):
                    pending.extend(inner_statements(stmt))
        return self._names


def _bound_in(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _bound_in(el.value)]
    return []


def _already_bound(bound: _BoundNames, name: str, module_path: str) -> bool:
    return bound.aliases.get(name) == (f"{module_path}.{name}" if module_path else name)


def _bound_otherwise(bound: _BoundNames, name: str, module_path: str) -> bool:
    """The module already binds `name` to something else: importing ours would shadow it."""
    return not _already_bound(bound, name, module_path) and name in bound.names


def render_in_place(module: cst.Module, node: cst.CSTNode, indents: tuple[str, ...]) -> str:
    """`node`'s code as it reads inside the blocks whose indents are given. Rendered alone
    (`code_for_node`), the continuation lines of a multi-line call would lose the enclosing
    blocks' indentation; libcst adds it from the code generator's indent stack."""
    try:
        from libcst._nodes.internal import CodegenState
    except ImportError:  # pragma: no cover - a libcst that moved its internals
        return module.code_for_node(node)
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    for indent in indents:
        state.increase_indent(indent)
    node._codegen(state)
    return "".join(state.tokens)


def _to_fix(module: cst.Module, spec: FixSpec, positions, anchor: Location, indents: tuple[str, ...] = (), bound: _BoundNames | None = None,
            layout: Layout | None = None) -> Fix | None:
    edits: list[Edit] = []
    for old, new in spec.replacements:
        rng = positions[old]
        content = new if isinstance(new, str) else render_in_place(module, new, indents)
        if layout is not None and not isinstance(new, str):
            # the file's line structure kept: a multi-line call stays open, a long line breaks
            content = layout.fit(new, content, rng, lambda node: render_in_place(module, node, indents), "".join(indents), old)
        edits.append(Edit(content, Location(rng.start.line, rng.start.column + 1), Location(rng.end.line, rng.end.column + 1)))
    newline = module.default_newline
    bound = bound or _BoundNames(module)
    for module_path, name in spec.imports:
        if _bound_otherwise(bound, name, module_path):
            return None  # a second binding of a name the module has would change its meaning
        if not _already_bound(bound, name, module_path):
            line = f"from {module_path} import {name}" if module_path else f"import {name}"
            edits.append(Edit(f"{line}{newline}", anchor, anchor))
    return Fix(spec.applicability, spec.message, tuple(edits))
