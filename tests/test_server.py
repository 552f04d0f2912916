"""`synclint server` end to end: a real LSP client (pygls's LanguageClient) starts
`python -m synclint server` as a subprocess and talks JSON-RPC to it over stdio, as an editor
does. Every wait is bounded, so a hang fails the test instead of blocking CI."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Union

import pytest

pytest.importorskip("pygls", reason="the `server` extra (pygls) is not installed")

from lsprotocol import types  # noqa: E402
try:  # pygls 2
    from pygls.lsp.client import LanguageClient
except ImportError:  # pygls 1.x
    from pygls.lsp.client import BaseLanguageClient as LanguageClient

import synclint  # noqa: E402
from conftest import unwrapped  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 60  # seconds for any one answer (a loaded CI machine is slow, a hang is forever)

# The emoji before the `.cuda()` call is one character but two UTF-16 code units: the
# diagnostics' columns must be in the client's units.
SOURCE = textwrap.dedent(
    """\
    import torch


    def step(req_gpu, n: list[int], device):
        counts = torch.tensor(n, dtype=torch.int32, pin_memory=True).to(device, non_blocking=True)
        ids = torch.repeat_interleave(req_gpu, counts)
        tag, y = "\N{GRINNING FACE}", torch.tensor([1, 2, 3]).cuda()
        return ids, y, tag
    """
)


# lsprotocol's name for a whole-document change (older releases numbered the union's types).
_WHOLE_DOCUMENT = getattr(types, "TextDocumentContentChangeWholeDocument", None) or getattr(types, "TextDocumentContentChangeEvent_Type2")


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) as an editor does: all against the same text."""
    lines = text.splitlines(keepends=True)

    def offset(pos: types.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        line = lines[pos.line]
        units = 0
        for index, ch in enumerate(line):
            if units >= pos.character:
                return sum(len(x) for x in lines[: pos.line]) + index
            units += _utf16(ch)
        return sum(len(x) for x in lines[: pos.line]) + len(line.rstrip("\r\n"))

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for begin, end, new in spans:
        text = text[:begin] + new + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    assert edit is not None, action
    if edit.document_changes:
        (change,) = edit.document_changes
        assert change.text_document.uri == uri
        return list(change.edits)
    return list(edit.changes[uri])


class Session:
    """One server process and one client, with the notifications it sent us in queues."""

    def __init__(self, root: Path, show_document: bool = True) -> None:
        self.root = root
        self.show_document = show_document
        self.client = LanguageClient("synclint-test", "1")
        self.diagnostics: asyncio.Queue = asyncio.Queue()
        self.shown: list[types.ShowDocumentParams] = []
        self.messages: list[types.ShowMessageParams] = []
        # lsprotocol reads any code action that has a `command` as a bare Command (its union
        # hook tries Command first). Tell them apart as VS Code's client does: a Command's
        # `command` is a string, a CodeAction's is an object.
        converter = self.client.protocol._converter

        def command_or_action(obj, _type):
            kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
            return converter.structure(obj, kind)

        converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics.put_nowait(params)

        @self.client.feature(types.WINDOW_SHOW_DOCUMENT)
        def on_show_document(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
            self.shown.append(params)
            return types.ShowDocumentResult(success=True)

        self.registrations: list[types.Registration] = []

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show_message(params: types.ShowMessageParams) -> None:
            self.messages.append(params)

    async def start(self) -> types.InitializeResult:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        await self.client.start_io(sys.executable, "-m", "synclint", "server", env=env, cwd=str(self.root))
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            ),
            window=types.WindowClientCapabilities(show_document=types.ShowDocumentClientCapabilities(support=self.show_document)),
        )
        result = await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(
                    capabilities=capabilities, process_id=os.getpid(), root_uri=self.root.as_uri(),
                )
            ),
            TIMEOUT,
        )
        self.client.initialized(types.InitializedParams())
        return result

    async def next_diagnostics(self, uri: str, version: int | None = None) -> list[types.Diagnostic]:
        while True:
            params = await asyncio.wait_for(self.diagnostics.get(), TIMEOUT)
            if params.uri == uri and (version is None or params.version == version):
                return list(params.diagnostics)

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text))
        )

    def change(self, uri: str, text: str, version: int) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[_WHOLE_DOCUMENT(text=text)],
            )
        )

    async def actions(self, uri: str, diagnostic: types.Diagnostic, only: list[str] | None = None) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
        return list(await asyncio.wait_for(self.client.text_document_code_action_async(params), TIMEOUT) or [])

    async def stop(self) -> int:
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        server = self.client._server
        code = await asyncio.wait_for(server.wait(), TIMEOUT)
        await asyncio.wait_for(self.client.stop(), TIMEOUT)
        return code

    def kill(self) -> bool:
        server = self.client._server
        if server is not None and server.returncode is None:
            server.kill()
            return True
        return False


def run_session(root: Path, scenario, show_document: bool = True) -> None:
    async def main() -> None:
        session = Session(root, show_document)
        try:
            await session.start()
            await scenario(session)
        finally:
            if session.kill():  # only if the scenario failed before a clean exit
                await asyncio.wait_for(session.client.stop(), TIMEOUT)

    asyncio.run(asyncio.wait_for(main(), 5 * TIMEOUT))


def by_code(diagnostics) -> dict[str, types.Diagnostic]:
    return {d.code: d for d in diagnostics}


def test_diagnostics_fixes_suppression_docs_and_clean_exit(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    uri = path.as_uri()

    async def scenario(s: Session) -> None:
        s.open(uri, SOURCE)
        diagnostics = await s.next_diagnostics(uri, 1)
        assert sorted(d.code for d in diagnostics) == ["SL103", "SL106", "SL403"]
        found = by_code(diagnostics)
        sl103 = found["SL103"]
        assert sl103.source == "synclint"
        assert sl103.severity == types.DiagnosticSeverity.Warning
        assert "[high confidence]" in sl103.message and "(fix available)" in sl103.message
        assert "[medium confidence]" in found["SL403"].message and "(unsafe fix available)" in found["SL403"].message
        # codeDescription links the rule's page only where one exists (Violation.url).
        (expected,) = [v for v in synclint.lint_source(SOURCE, str(path)) if v.code == "SL103"]
        assert (sl103.code_description.href if sl103.code_description else None) == expected.url
        # Columns in UTF-16 units: the emoji counts twice.
        line = SOURCE.splitlines()[6]
        column = line.index("torch.tensor([1, 2, 3])")
        assert sl103.range.start == types.Position(line=6, character=_utf16(line[:column]))
        assert sl103.range.start.character == column + 1

        # Quick fixes: the safe one preferred, the unsafe one marked and not preferred.
        actions = await s.actions(uri, sl103)
        titles = [a.title for a in actions]
        fix = next(a for a in actions if a.title.startswith("SL103:"))
        assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix and "(unsafe)" not in fix.title
        assert "Suppress SL103 on this line" in titles and "Show documentation for SL103" in titles
        unsafe = next(a for a in await s.actions(uri, found["SL403"]) if a.title.startswith("SL403:"))
        assert unsafe.title.endswith("(unsafe)") and not unsafe.is_preferred

        # Apply the safe fix as the editor would, send the new buffer: SL103 is gone.
        assert fix.edit.document_changes[0].text_document.version == 1
        fixed = apply_text_edits(SOURCE, edits_of(fix, uri))
        assert 'torch.tensor([1, 2, 3], pin_memory=torch.cuda.is_available()).to("cuda", non_blocking=torch.cuda.is_available())' in unwrapped(fixed)
        assert "synclint" not in fixed  # the default fix adds no dependency
        s.change(uri, fixed, 2)
        diagnostics = await s.next_diagnostics(uri, 2)
        assert sorted(d.code for d in diagnostics) == ["SL106", "SL403"]

        # Suppress SL106 on its line: `# noqa: SL106` appended, the finding disappears.
        sl106 = by_code(diagnostics)["SL106"]
        suppress = next(a for a in await s.actions(uri, sl106) if a.title == "Suppress SL106 on this line")
        assert not suppress.is_preferred
        suppressed = apply_text_edits(fixed, edits_of(suppress, uri))
        assert suppressed.splitlines()[sl106.range.start.line].endswith("  # noqa: SL106")
        s.change(uri, suppressed, 3)
        diagnostics = await s.next_diagnostics(uri, 3)
        assert [d.code for d in diagnostics] == ["SL403"]

        # The unsafe fix applies too, and then nothing is left.
        unsafe = next(a for a in await s.actions(uri, diagnostics[0]) if a.title.startswith("SL403:"))
        final = apply_text_edits(suppressed, edits_of(unsafe, uri))
        assert "output_size=sum(n)" in final
        s.change(uri, final, 4)
        assert await s.next_diagnostics(uri, 4) == []

        # Documentation: on hover over a finding, and through the code action's command.
        s.change(uri, SOURCE, 5)
        diagnostics = await s.next_diagnostics(uri, 5)
        sl403 = by_code(diagnostics)["SL403"]
        hover = await asyncio.wait_for(
            s.client.text_document_hover_async(
                types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=sl403.range.start)
            ),
            TIMEOUT,
        )
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert hover.contents.value.startswith("**SL403** (medium confidence)")
        assert "# SL403 repeat-interleave-size" in hover.contents.value and "output_size" in hover.contents.value
        nothing = await asyncio.wait_for(
            s.client.text_document_hover_async(
                types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))
            ),
            TIMEOUT,
        )
        assert nothing is None
        docs = next(a for a in await s.actions(uri, sl403) if a.title == "Show documentation for SL403")
        assert docs.command.command == "synclint.showDocumentation" and list(docs.command.arguments) == ["SL403"]
        result = await asyncio.wait_for(
            s.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=docs.command.command, arguments=list(docs.command.arguments))
            ),
            TIMEOUT,
        )
        assert len(s.shown) == 1 and s.shown[0].uri == result
        shown = Path(types_uri_path(result)).read_text(encoding="utf-8")
        assert shown.startswith("# SL403 repeat-interleave-size\n") and "## Why it stalls" in shown

        # Save: diagnostics again (of the saved file). Close: cleared.
        path.write_text(SOURCE, encoding="utf-8")
        s.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        assert sorted(d.code for d in await s.next_diagnostics(uri)) == ["SL103", "SL106", "SL403"]
        s.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        assert await s.next_diagnostics(uri) == []

        assert await s.stop() == 0

    run_session(tmp_path, scenario)


def types_uri_path(uri: str) -> str:
    from pygls.uris import to_fs_path

    return to_fs_path(uri)


def test_project_settings_noqa_merge_fix_all_and_excludes(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.synclint]\nignore = ["SL403"]\nextend-exclude = ["generated"]\n', encoding="utf-8"
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "generated").mkdir()
    model = tmp_path / "pkg" / "model.py"
    # Another linter's code: a comment to merge into that is not an unused suppression (SL003).
    text = SOURCE.replace(".cuda()\n", ".cuda()  # noqa: E501  keep the tuple\n")
    model.write_text(text, encoding="utf-8")
    skipped = tmp_path / "generated" / "model.py"
    skipped.write_text(SOURCE, encoding="utf-8")

    async def scenario(s: Session) -> None:
        uri = model.as_uri()
        s.open(uri, text)
        diagnostics = await s.next_diagnostics(uri, 1)
        assert sorted(d.code for d in diagnostics) == ["SL103", "SL106"]  # SL403 ignored by the project

        # Suppressing merges into the `# noqa:` already on the line, keeping the comment.
        sl106 = by_code(diagnostics)["SL106"]
        suppress = next(a for a in await s.actions(uri, sl106) if a.title == "Suppress SL106 on this line")
        merged = apply_text_edits(text, edits_of(suppress, uri))
        assert merged.splitlines()[sl106.range.start.line].endswith(".cuda()  # noqa: E501, SL106  keep the tuple")
        s.change(uri, merged, 2)
        assert [d.code for d in await s.next_diagnostics(uri, 2)] == ["SL103"]

        # Fix-all (as an editor's fix-on-save asks for it): every safe fix, one edit.
        actions = await s.actions(uri, by_code(diagnostics)["SL103"], only=["source.fixAll"])
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.synclint"
        fixed = apply_text_edits(merged, edits_of(fix_all, uri))
        assert "torch.tensor([1, 2, 3], pin_memory=torch.cuda.is_available())" in unwrapped(fixed) and "import synclint" not in fixed
        s.change(uri, fixed, 3)
        assert await s.next_diagnostics(uri, 3) == []

        # A file the project excludes gets no diagnostics.
        s.open(skipped.as_uri(), SOURCE)
        assert await s.next_diagnostics(skipped.as_uri(), 1) == []

        # A broken configuration is reported on the document, not a crash.
        (tmp_path / "pyproject.toml").write_text("[tool.synclint]\nnonsense = 1\n", encoding="utf-8")
        s.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        (problem,) = await s.next_diagnostics(uri)
        assert problem.severity == types.DiagnosticSeverity.Error and "nonsense" in problem.message

        assert await s.stop() == 0

    run_session(tmp_path, scenario)


def test_server_without_pygls_says_how_to_install_it(tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "pygls.py").write_text("raise ImportError('pygls hidden for this test')\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(REPO)]))
    proc = subprocess.run(
        [sys.executable, "-m", "synclint", "server"], capture_output=True, text=True, env=env, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 2
    assert "needs pygls" in proc.stderr and "pip install 'synclint[server]'" in proc.stderr
    assert proc.stdout == ""


def test_server_help_and_listing():
    proc = subprocess.run(
        [sys.executable, "-m", "synclint", "server", "--help"], capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO
    )
    assert proc.returncode == 0 and "language server" in proc.stdout
    top = subprocess.run([sys.executable, "-m", "synclint", "--help"], capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO)
    assert re.search(r"\n  server +run the language server", top.stdout)


def test_readme_editor_setup_starts_this_server():
    import json
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Editor (language server)", 1)[1].split("\n## ", 1)[0]
    (vscode,) = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, re.S)]
    assert [vscode["glspc.server.command"], *vscode["glspc.server.commandArguments"]] == ["synclint", "server"]
    assert vscode["glspc.server.languageId"] == ["python"]
    lua = re.findall(r"```lua\n(.*?)```", section, re.S)
    assert len(lua) == 2 and all('cmd = { "synclint", "server" }' in block for block in lua)
    assert "pip install -e '.[server]'" in section
    from synclint.config import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(dep.startswith("pygls") for dep in extras["server"]) and any(dep.startswith("pygls") for dep in extras["test"])
    for title in ("(unsafe)", "Suppress SL101 on this line", "Show documentation", "source.fixAll.synclint", "[high confidence]"):
        assert title in section


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # The statement's first row takes the comment, even when the finding is further down.
        ("    y = (\n        torch.tensor([1, 2, 3]).cuda()\n    )\n", "    y = (  # noqa: {code}\n"),
        # No row can hold a comment: after a backslash, or inside a string.
        ("    y = torch.tensor([1, 2, 3]).cuda() + \\\n        1\n", None),
        ('    y = (torch.tensor([1, 2, 3]).cuda(), """a\nb""")\n', None),
        # An existing `# noqa:` list is extended, other comments kept.
        ("    y = torch.tensor([1, 2, 3]).cuda()  # noqa: SL999 (reason)\n", "    y = torch.tensor([1, 2, 3]).cuda()  # noqa: SL999, {code} (reason)\n"),
        ("    y = torch.tensor([1, 2, 3]).cuda()  # a note\n", "    y = torch.tensor([1, 2, 3]).cuda()  # a note  # noqa: {code}\n"),
    ],
)
def test_suppression_goes_where_a_comment_can(statement, expected):
    from synclint.server.lsp import _noqa_edit

    source = "import torch\n\n\ndef step(x):\n" + statement + "    return y\n"
    lines = source.splitlines(keepends=True)
    found = [v for v in synclint.lint_source(source) if v.code == "SL103"]
    assert found, source
    edit = _noqa_edit(source, lines, found[0])
    if expected is None:
        assert edit is None
        return
    row, start, end, text = edit
    line = lines[row - 1]
    assert line[: start - 1] + text + line[end - 1 :] == expected.format(code="SL103")
    # And the comment does suppress the finding.
    patched = "".join(lines[: row - 1]) + expected.format(code="SL103") + "".join(lines[row:])
    assert "SL103" not in {v.code for v in synclint.lint_source(patched)}


def test_documentation_falls_back_to_a_message_without_show_document(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")

    async def scenario(s: Session) -> None:
        result = await asyncio.wait_for(
            s.client.workspace_execute_command_async(types.ExecuteCommandParams(command="synclint.showDocumentation", arguments=["SL403"])),
            TIMEOUT,
        )
        assert result is None and s.shown == []
        for _ in range(100):
            if s.messages:
                break
            await asyncio.sleep(0.05)
        (message,) = s.messages
        assert message.type == types.MessageType.Info and message.message.startswith("# SL403 repeat-interleave-size")
        assert await s.stop() == 0

    run_session(tmp_path, scenario, show_document=False)


def test_open_files_are_linted_again_when_the_configuration_changes(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.synclint]\n", encoding="utf-8")
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    uri = path.as_uri()

    async def scenario(s: Session) -> None:
        s.open(uri, SOURCE)
        assert sorted(d.code for d in await s.next_diagnostics(uri, 1)) == ["SL103", "SL106", "SL403"]
        for _ in range(100):  # the registration request follows `initialized`
            if s.registrations:
                break
            await asyncio.sleep(0.05)
        (registration,) = s.registrations
        assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        patterns = {w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in _watchers(registration)}
        assert patterns == {"**/pyproject.toml", "**/synclint.toml"}

        config.write_text('[tool.synclint]\nignore = ["SL106"]\n', encoding="utf-8")
        s.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)])
        )
        assert sorted(d.code for d in await s.next_diagnostics(uri, 1)) == ["SL103", "SL403"]
        assert await s.stop() == 0

    run_session(tmp_path, scenario)


def _watchers(registration: types.Registration) -> list:
    options = registration.register_options
    return options["watchers"] if isinstance(options, dict) else options.watchers
