"""The language server proper (needs pygls >= 1.3 and its lsprotocol; tested with pygls
1.3.1 / lsprotocol 2023.0.1 and pygls 2.1.1 / lsprotocol 2025.0.0).

What it does, per open Python document:
- diagnostics on open, change (debounced) and save, from the editor's buffer, with the
  settings of the file's nearest project configuration (`synclint.settings_for`);
  files the configuration excludes get none; every open file is linted again when a
  `pyproject.toml` / `synclint.toml` changes (where the client can watch files);
- code actions: each finding's fix as a quick fix (a safe fix is the preferred one; an
  unsafe one says "(unsafe)" and is never preferred), "Suppress SLxxx on this line" (adds
  `# noqa: SLxxx`, merged into a `# noqa: ...` already there), "Show documentation for
  SLxxx" (the `synclint.showDocumentation` command), and `source.fixAll.synclint` (every
  safe fix, for an editor's fix-on-save);
- hover over a finding: the rule's documentation in Markdown.

Everything goes through the public API (`synclint.lint_source`, `synclint.fix_source`),
run in one worker process so that the server keeps answering while a large file is linted
(a 7,192-line file takes seconds; a hover on another file meanwhile is answered at once).
Positions are converted between the engine's characters and the client's position
encoding (UTF-16 by default) by pygls's codec.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import multiprocessing
import pickle
import re
import tempfile
import tokenize
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

try:  # pygls 2
    from pygls.lsp.server import LanguageServer
except ImportError:  # pygls 1.x
    from pygls.server import LanguageServer

import synclint
from synclint.violation import IO_ERROR, SYNTAX_ERROR, Applicability, Severity, Violation

logger = logging.getLogger(__name__)

SOURCE = "synclint"
SHOW_DOCUMENTATION = "synclint.showDocumentation"
FIX_ALL = types.CodeActionKind.SourceFixAll.value + ".synclint"  # "source.fixAll.synclint"
DEBOUNCE_S = 0.2  # typing pauses this long before the buffer is linted again
PYTHON_SUFFIXES = (".py", ".pyi")
CONFIG_FILES = ("pyproject.toml", "synclint.toml")

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}
_NOQA_CODES = re.compile(r"#\s*noqa:\s*[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*", re.I)
_BARE_NOQA = re.compile(r"#\s*noqa(?!\s*:)", re.I)


@dataclass
class Linted:
    """One lint of one document version: the findings and the diagnostics sent for them."""

    version: int | None
    text: str
    filename: str
    settings: object | None
    violations: list[Violation] = field(default_factory=list)
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    document: TextDocument | None = None  # the snapshot linted (its version, its codec)


class SynclintLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("synclint", synclint.__version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        # One worker process runs the engine ("spawn": the server has threads, which a fork
        # would copy in whatever state they are).
        self.pool: ProcessPoolExecutor | None = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))

    # --- linting -------------------------------------------------------------------------

    def settings_for_uri(self, uri: str):
        """The file's project settings (None with a ConfigError's message when invalid)."""
        path = _path(uri)
        try:
            if path is None:
                root = self.workspace.root_path
                return synclint.settings_for(Path(root) if root else Path.cwd()), None
            return synclint.settings_for(path), None
        except synclint.ConfigError as exc:
            return None, str(exc)

    def snapshot(self, uri: str) -> TextDocument:
        """The buffer as it is now, frozen: the lint reads this copy while the buffer may
        change, and the edits made from that lint carry its version."""
        doc = self.workspace.get_text_document(uri)
        return TextDocument(doc.uri, doc.source, doc.version, doc.language_id, position_codec=doc.position_codec)

    async def run_engine(self, func, *args, **kwargs):
        """Run `synclint.lint_source` / `fix_source` in the worker process (the server's own
        process keeps answering: a large file takes seconds, and a thread would hold the
        GIL); in a thread if the worker cannot be used."""
        loop = asyncio.get_running_loop()
        if self.pool is not None:
            try:
                return await loop.run_in_executor(self.pool, functools.partial(func, *args, **kwargs))
            except (BrokenProcessPool, OSError, pickle.PicklingError) as exc:
                logger.warning("the lint worker process failed (%s); linting in the server process from now on", exc)
                self.pool = None
        return await asyncio.to_thread(func, *args, **kwargs)

    async def compute(self, document: TextDocument) -> Linted:
        """Lint one snapshot of a buffer."""
        text = document.source
        path = _path(document.uri)
        filename = str(path) if path is not None else document.uri
        settings, problem = self.settings_for_uri(document.uri)
        linted = Linted(document.version, text, filename, settings, document=document)
        if problem is not None:
            linted.diagnostics = [_config_diagnostic(problem)]
        elif not _excluded(path, settings):
            linted.violations = await self.run_engine(synclint.lint_source, text, filename, settings)
            lines = text.splitlines(keepends=True)
            linted.diagnostics = [self.diagnostic(document, lines, v) for v in linted.violations]
        return linted

    async def lint(self, uri: str) -> Linted:
        """The lint of the buffer as it is now: the cached one if the buffer has not changed,
        else a new one (one at a time per document)."""
        lock = self.locks.setdefault(uri, asyncio.Lock())
        async with lock:
            document = self.snapshot(uri)
            cached = self.linted.get(uri)
            if cached is not None and cached.version == document.version and cached.text == document.source:
                return cached
            linted = await self.compute(document)
            self.linted[uri] = linted
            return linted

    async def publish(self, uri: str) -> None:
        linted = await self.lint(uri)
        if uri not in self.workspace.text_documents:
            return  # closed meanwhile
        if self.workspace.get_text_document(uri).version != linted.version:
            return  # the buffer changed meanwhile: the lint of the new version publishes
        self.send_diagnostics(uri, linted.diagnostics, linted.version)

    def diagnostic(self, document: TextDocument, lines: list[str], v: Violation) -> types.Diagnostic:
        message = f"{v.message} [{v.confidence.label} confidence]"
        if v.fix is not None:
            message += " (fix available)" if v.fix.applicability is Applicability.SAFE else " (unsafe fix available)"
        return types.Diagnostic(
            range=_range(document, lines, v.location, v.end_location),
            message=message,
            severity=_SEVERITY.get(v.severity, types.DiagnosticSeverity.Warning),
            code=v.code,
            code_description=types.CodeDescription(href=v.url) if v.url else None,
            source=SOURCE,
            data={"code": v.code, "row": v.location.row, "column": v.location.column},
        )

    # --- code actions ----------------------------------------------------------------------

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        linted = await self.lint(uri)
        document = linted.document
        lines = linted.text.splitlines(keepends=True)
        wanted = params.range
        only = params.context.only
        actions: list[types.CodeAction] = []
        quick = _wants(only, types.CodeActionKind.QuickFix)
        suppressed_rows: set[tuple[int, str]] = set()
        documented: set[str] = set()
        for v, diag in zip(linted.violations, linted.diagnostics):
            if not _touches(diag.range, wanted):
                continue
            if quick and v.fix is not None and v.fix.edits:
                unsafe = v.fix.applicability is not Applicability.SAFE
                title = f"{v.code}: {v.fix.message}" + (" (unsafe)" if unsafe else "")
                edits = [
                    types.TextEdit(range=_range(document, lines, e.location, e.end_location), new_text=e.content)
                    for e in v.fix.edits
                ]
                actions.append(
                    types.CodeAction(
                        title=title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        is_preferred=not unsafe,
                        edit=self.workspace_edit(document, edits),
                    )
                )
            if quick and v.code not in (SYNTAX_ERROR, IO_ERROR):
                edit = _noqa_edit(linted.text, lines, v)
                if edit is not None and (edit[0], v.code) not in suppressed_rows:
                    suppressed_rows.add((edit[0], v.code))
                    row, column, end_column, new_text = edit
                    rng = _range(document, lines, _loc(row, column), _loc(row, end_column))
                    actions.append(
                        types.CodeAction(
                            title=f"Suppress {v.code} on this line",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diag],
                            is_preferred=False,
                            edit=self.workspace_edit(document, [types.TextEdit(range=rng, new_text=new_text)]),
                        )
                    )
            if quick and v.code not in documented and v.code not in (SYNTAX_ERROR, IO_ERROR):
                documented.add(v.code)
                actions.append(
                    types.CodeAction(
                        title=f"Show documentation for {v.code}",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        is_preferred=False,
                        command=types.Command(title=f"Show documentation for {v.code}", command=SHOW_DOCUMENTATION, arguments=[v.code]),
                    )
                )
        if _wants(only, FIX_ALL, explicit=True) and any(
            v.fix is not None and v.fix.applicability is Applicability.SAFE for v in linted.violations
        ):
            fixed = await self.run_engine(synclint.fix_source, linted.text, linted.filename, linted.settings, unsafe=False)
            if fixed.changed and fixed.fixed is not None:
                end = _range(document, lines, _loc(len(lines) + 1, 1), _loc(len(lines) + 1, 1)).end
                whole = types.Range(start=types.Position(line=0, character=0), end=end)
                actions.append(
                    types.CodeAction(
                        title=f"synclint: apply {fixed.applied} safe fix{'es' * (fixed.applied != 1)}",
                        kind=FIX_ALL,
                        edit=self.workspace_edit(document, [types.TextEdit(range=whole, new_text=fixed.fixed)]),
                    )
                )
        return actions

    def workspace_edit(self, document: TextDocument, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        """Edits tied to the document's version when the client supports it, so an edit made
        for an older buffer is refused rather than applied in the wrong place."""
        caps = self.client_capabilities.workspace
        if caps and caps.workspace_edit and caps.workspace_edit.document_changes:
            ident = types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=ident, edits=edits)])
        return types.WorkspaceEdit(changes={document.uri: edits})

    async def relint_all(self) -> None:
        """Lint every open Python document again (a configuration file changed)."""
        self.linted.clear()
        for uri in list(self.workspace.text_documents):
            if _is_python(self.workspace.get_text_document(uri)):
                await self.publish(uri)

    def watch_configuration(self) -> None:
        """Ask the client to report changes to configuration files, where it can."""
        caps = self.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if not (watched and watched.dynamic_registration):
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
        )
        params = types.RegistrationParams(
            registrations=[types.Registration(id="synclint-config", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)]
        )
        if hasattr(self, "client_register_capability"):  # pygls 2
            self.client_register_capability(params)
        else:  # pygls 1.x
            self.register_capability(params)

    # --- what the server sends (pygls 2 names each LSP method; pygls 1.x had helpers) ----

    def send_diagnostics(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        if hasattr(self, "text_document_publish_diagnostics"):  # pygls 2
            self.text_document_publish_diagnostics(params)
        else:  # pygls 1.x
            self.lsp.notify(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)

    def message(self, kind: types.MessageType, text: str) -> None:
        if hasattr(self, "window_show_message"):  # pygls 2
            self.window_show_message(types.ShowMessageParams(type=kind, message=text))
        else:  # pygls 1.x
            self.show_message(text, kind)

    # --- documentation -------------------------------------------------------------------

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        linted = await self.lint(params.text_document.uri)
        position = params.position
        hits = [(v, d) for v, d in zip(linted.violations, linted.diagnostics) if _contains(d.range, position)]
        if not hits:
            return None
        parts, seen = [], set()
        for v, _ in hits:
            if v.code in seen:
                continue
            seen.add(v.code)
            parts.append(f"**{v.code}** ({v.confidence.label} confidence): {v.message}\n\n{rule_markdown(v.code)}")
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
            range=hits[0][1].range,
        )

    def show_documentation(self, code: str) -> str | None:
        """Open the rule's documentation in the editor (a Markdown file written for it), or
        show its summary in a message where the client cannot open documents."""
        text = rule_markdown(code)
        if text is None:
            self.message(types.MessageType.Error, f"synclint: unknown rule {code}")
            return None
        window = self.client_capabilities.window
        if window and window.show_document and window.show_document.support:
            path = _docs_file(code, text)
            params = types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
            if hasattr(self, "window_show_document"):  # pygls 2
                self.window_show_document(params)
            else:  # pygls 1.x
                self.show_document(params)
            return path.as_uri()
        first = text.split("\n\n", 2)
        self.message(types.MessageType.Info, " ".join(first[:2]))
        return None


# --- helpers -------------------------------------------------------------------------------


def _path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


def _excluded(path: Path | None, settings) -> bool:
    """Whether `synclint check` would skip this file (its configuration's excludes, as the
    pre-commit hooks apply them with --force-exclude)."""
    if path is None or settings is None or not path.exists():
        return False
    from synclint.discover import discover

    return not discover([path], settings.replace(force_exclude=True)).files


def _loc(row: int, column: int):
    from synclint.violation import Location

    return Location(row, column)


def _range(document: TextDocument, lines: list[str], start, end) -> types.Range:
    """Engine locations (1-based rows, 1-based character columns) -> an LSP range in the
    client's position encoding."""
    codec = document.position_codec

    def position(loc) -> types.Position:
        line, character = loc.row - 1, loc.column - 1
        if line >= len(lines):  # just past the last line (an insertion at the end)
            return types.Position(line=len(lines), character=0)
        return codec.position_to_client_units(lines, types.Position(line=line, character=character))

    return types.Range(start=position(start), end=position(end))


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def _touches(rng: types.Range, wanted: types.Range) -> bool:
    """Whether a diagnostic shares a line with the requested range (a cursor is an empty
    range): the actions of a finding are offered anywhere on its lines, as editors that send
    the cursor's position (Neovim) expect."""
    return rng.start.line <= wanted.end.line and wanted.start.line <= rng.end.line


def _contains(rng: types.Range, pos: types.Position) -> bool:
    return not _before(pos, rng.start) and not _before(rng.end, pos)


def _wants(only: list[str] | None, kind: str, explicit: bool = False) -> bool:
    """Whether a code action of `kind` was asked for (`only` filters by kind prefix); an
    `explicit` kind is offered only when asked for (a whole-file fix is not a quick fix)."""
    if not only:
        return not explicit
    return any(kind == k or kind.startswith(k + ".") for k in only)


def _comment_rows(text: str) -> set[int] | None:
    """Rows whose end is outside any string and not a backslash continuation: where a
    comment can be appended. None when the text does not tokenize."""
    rows: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                rows.add(tok.start[0])
            elif tok.type == tokenize.ENDMARKER:
                break
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return rows


def _noqa_edit(text: str, lines: list[str], v: Violation) -> tuple[int, int, int, str] | None:
    """(row, start column, end column, new text) that suppresses `v` on the row its noqa
    goes on: merged into an existing `# noqa: CODES`, else `  # noqa: CODE` at the end."""
    from synclint.suppressions import _comment

    candidates = [r for r in (v.noqa_row, v.location.row) if r]
    rows_ok = _comment_rows(text)
    row = next((r for r in candidates if rows_ok is None or r in rows_ok), None)
    if row is None or row > len(lines):
        return None
    line = lines[row - 1]
    body = line.rstrip("\r\n")
    comment = _comment(body)
    if comment is not None:
        start = len(body) - len(comment)
        if _BARE_NOQA.search(comment):
            return None  # a bare `# noqa` already suppresses every code
        match = _NOQA_CODES.search(comment)
        if match is not None:
            at = start + match.end()
            return row, at + 1, at + 1, f", {v.code}"
    stripped = body.rstrip()
    return row, len(stripped) + 1, len(body) + 1, f"  # noqa: {v.code}"


def _config_diagnostic(problem: str) -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        message=f"synclint: configuration error: {problem}",
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
    )


def rule_markdown(code: str) -> str | None:
    """A rule's documentation as Markdown: its title line, fix and severity, then its docs."""
    from synclint.rules import rule_by_code

    rule = rule_by_code(code)
    if rule is None:
        return None
    return (
        f"# {rule.code} {rule.name}\n\n"
        f"Fix: {rule.fix_availability.value}. Severity: {rule.severity.value}.\n\n"
        f"{rule.doc()}\n"
    )


def _docs_file(code: str, text: str) -> Path:
    folder = Path(tempfile.gettempdir()) / f"synclint-docs-{synclint.__version__}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{code}.md"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def _is_python(document: TextDocument) -> bool:
    return document.language_id == "python" or document.uri.endswith(PYTHON_SUFFIXES)


# --- the server and its handlers -------------------------------------------------------------


def build_server() -> SynclintLanguageServer:
    server = SynclintLanguageServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: SynclintLanguageServer, params: types.InitializedParams) -> None:
        ls.watch_configuration()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_files_changed(ls: SynclintLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith(CONFIG_FILES) for change in params.changes):
            await ls.relint_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: SynclintLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        if _is_python(document):
            await ls.publish(document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: SynclintLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        previous = ls.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.ensure_future(_lint_later(ls, uri))
        ls.pending[uri] = task

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: SynclintLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        # The buffer may be unchanged, but its settings may not be (a configuration edited
        # and saved, a file now excluded): lint again.
        uri = params.text_document.uri
        if _is_python(ls.workspace.get_text_document(uri)):
            ls.linted.pop(uri, None)
            await ls.publish(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SynclintLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.linted.pop(uri, None)
        ls.send_diagnostics(uri, [], None)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False),
    )
    async def code_action(ls: SynclintLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        document = ls.workspace.get_text_document(params.text_document.uri)
        if not _is_python(document):
            return []
        return await ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SynclintLanguageServer, params: types.HoverParams) -> types.Hover | None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        if not _is_python(document):
            return None
        return await ls.hover(params)

    @server.command(SHOW_DOCUMENTATION)
    def show_documentation(ls: SynclintLanguageServer, *args) -> str | None:
        if len(args) == 1 and isinstance(args[0], (list, tuple)):  # pygls 1.x: one list
            args = tuple(args[0])
        return ls.show_documentation(str(args[0]).upper()) if args else None

    return server


async def _lint_later(ls: SynclintLanguageServer, uri: str) -> None:
    try:
        await asyncio.sleep(DEBOUNCE_S)
    except asyncio.CancelledError:
        return
    ls.pending.pop(uri, None)
    if uri in ls.workspace.text_documents and _is_python(ls.workspace.get_text_document(uri)):
        await ls.publish(uri)


def serve() -> None:
    logging.basicConfig(level=logging.WARNING, format="synclint server: %(message)s")
    build_server().start_io()
