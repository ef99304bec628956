"""`tf-migrate lsp` in a real conversation: a subprocess speaking JSON-RPC
over stdio with pygls' client: initialize, didOpen, publishDiagnostics,
codeAction, apply the edit, the fixed document."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# The server process cannot see the toy_recipes fixture's monkeypatch, so this
# bootstrap applies the same patch in the child before running `tf-migrate lsp`.
TOY_SERVER = (
    "import sys; sys.path.insert(0, {tests!r}); "
    "from migrate import registry; from toy_recipes import ALL; "
    "registry.all_recipes = lambda: dict(ALL); "
    "sys.argv = ['tf-migrate', 'lsp']; from migrate.cli import main; main()"
).format(tests=str(TESTS))


def apply_text_edits(text: str, edits: List[types.TextEdit]) -> str:
    """What an editor does with a WorkspaceEdit (UTF-16 positions, last edit first)."""
    lines = text.splitlines(keepends=True) + [""]

    def offset(position: types.Position) -> int:
        line = lines[position.line]
        utf16 = line.encode("utf-16-le")[:position.character * 2].decode("utf-16-le")
        return sum(len(l) for l in lines[:position.line]) + len(utf16)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                       reverse=True):
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


class Conversation:
    """A started server plus the diagnostics it published, per document URI."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.diagnostics: Dict[str, asyncio.Queue] = {}
        self.capabilities: Optional[types.ServerCapabilities] = None

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.queue(params.uri).put_nowait(params.diagnostics)

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params) -> None:
            pass

    def queue(self, uri: str) -> asyncio.Queue:
        return self.diagnostics.setdefault(uri, asyncio.Queue())

    async def next_diagnostics(self, uri: str) -> List[types.Diagnostic]:
        return await asyncio.wait_for(self.queue(uri).get(), timeout=60)

    async def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        return uri

    async def actions(self, uri: str, diagnostics: List[types.Diagnostic],
                      only=None) -> List[types.CodeAction]:
        whole = types.Range(start=types.Position(line=0, character=0),
                            end=types.Position(line=10_000, character=0))
        return await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range if diagnostics else whole,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only)))


# a client that syncs notebooks, as VS Code does (the server declares notebook sync only then)
NOTEBOOK_CLIENT = types.ClientCapabilities(notebook_document=types.NotebookDocumentClientCapabilities(
    synchronization=types.NotebookDocumentSyncClientCapabilities()))


def converse(server_args: List[str], script) -> None:
    """Start the server, initialize, run ``script(conversation)``, shut down."""

    async def main() -> None:
        client = LanguageClient("tf-migrate-test", "1")
        conversation = Conversation(client)
        await client.start_io(sys.executable, *server_args, cwd=str(ROOT))
        try:
            result = await asyncio.wait_for(client.initialize_async(types.InitializeParams(
                capabilities=NOTEBOOK_CLIENT, root_uri=None)), timeout=60)
            conversation.capabilities = result.capabilities
            provider = result.capabilities.code_action_provider
            assert types.CodeActionKind.SourceFixAll in provider.code_action_kinds
            client.initialized(types.InitializedParams())
            await script(conversation)
            await asyncio.wait_for(client.shutdown_async(None), timeout=30)
            client.exit(None)
        finally:
            server = client._server  # pygls keeps the process private; a failed test must not hang
            if server is not None and server.returncode is None:
                server.kill()
            await client.stop()

    asyncio.run(main())


BUFFER = "import x\n\ns = '😀'; a = old_api(1)\nb = risky(2)\n"


def test_toy_conversation_diagnostics_quick_fixes_and_fix_all(tmp_path):
    async def script(talk: Conversation) -> None:
        path = tmp_path / "buf.py"
        uri = await talk.open(path, BUFFER)
        diagnostics = await talk.next_diagnostics(uri)
        by_code = {d.code: d for d in diagnostics}
        assert set(by_code) == {"toy-rename", "toy-risky"}
        rename = by_code["toy-rename"]
        # '😀' is two UTF-16 code units: old_api starts at code point 13, UTF-16 unit 14
        assert (rename.range.start.line, rename.range.start.character) == (2, 14)
        assert (rename.range.end.line, rename.range.end.character) == (2, 21)
        assert rename.source == "tf-migrate" and "safe fix available" in rename.message

        [fix] = [a for a in await talk.actions(uri, [by_code["toy-risky"]])
                 if a.kind == types.CodeActionKind.QuickFix]
        assert fix.title == "Fix toy-risky: risky() may change behaviour (unsafe fix)"
        assert apply_text_edits(BUFFER, fix.edit.changes[uri]) == BUFFER.replace("risky", "safer")

        [fix_all] = await talk.actions(uri, [], only=[types.CodeActionKind.SourceFixAll])
        fixed = apply_text_edits(BUFFER, fix_all.edit.changes[uri])
        assert fixed == BUFFER.replace("old_api", "new_api")  # safe only: risky() stays

        talk.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        assert [d.code for d in await talk.next_diagnostics(uri)] == ["toy-risky"]

        talk.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        assert [d.code for d in await talk.next_diagnostics(uri)] == ["toy-risky"]

    converse(["-c", TOY_SERVER], script)


def test_without_pygls_the_command_says_what_to_install(monkeypatch):
    from typer.testing import CliRunner

    from migrate.cli import app

    monkeypatch.delitem(sys.modules, "migrate.lsp", raising=False)
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)
    result = CliRunner().invoke(app, ["lsp"])
    assert result.exit_code == 2
    assert "pip install 'tf-migrate[lsp]'" in result.stderr


def test_config_next_to_the_document_applies(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tf-migrate]\nignore = ["toy-risky"]\n')

    async def script(talk: Conversation) -> None:
        uri = await talk.open(tmp_path / "buf.py", BUFFER)
        assert [d.code for d in await talk.next_diagnostics(uri)] == ["toy-rename"]

    converse(["-c", TOY_SERVER], script)


def _real_case():
    """The first real fixture (by name) with a fixable finding, that
    finding, and the text its fix alone gives (all recipes, in isolation)."""
    from migrate import registry
    from migrate.engine import Options, apply_edits, transform

    recipes = tuple(registry.all_recipes().values())
    for before in sorted((ROOT / "fixtures").glob("*/*.before.py")):
        text = before.read_text()
        result = transform(text, str(before), Options(recipes, unsafe_fixes=True, isolated=True))
        fixable = [d for d in result.diagnostics if d.fixable and d.fix]
        if fixable:
            return before, fixable[0], apply_edits(text, fixable[0].fix)
    raise AssertionError("no fixture has a fixable finding")


def test_real_recipe_conversation(tmp_path):
    """The quick fix of a real finding is the engine's fix of it: the text
    changes, still compiles, and is exactly what `fix` would write for it."""
    before, finding, expected = _real_case()
    compile(expected, str(before), "exec")
    assert expected != before.read_text()

    async def script(talk: Conversation) -> None:
        text = before.read_text()
        uri = await talk.open(tmp_path / before.name, text)
        diagnostics = [d for d in await talk.next_diagnostics(uri)
                       if d.code == finding.recipe and d.range.start.line == finding.line - 1]
        [fix] = [a for a in await talk.actions(uri, diagnostics)
                 if a.kind == types.CodeActionKind.QuickFix and a.diagnostics[0].code == finding.recipe]
        assert apply_text_edits(text, fix.edit.changes[uri]) == expected

    converse(["-m", "migrate", "lsp"], script)


# --- notebook documents (LSP 3.17 notebook sync), the real recipes


def _notebook_params(path: Path):
    """didOpen parameters for the notebook at ``path``, one cell URI per cell
    as VS Code names them; only Python cells travel as text documents."""
    import nbformat

    from notebook_cases import sources

    notebook = nbformat.read(str(path), as_version=4)
    uri, cells, texts = path.as_uri(), [], []
    for index, cell in enumerate(notebook.cells):
        cell_uri = f"vscode-notebook-cell:{path.as_posix()}#W{index}sZmlsZQ%3D%3D"
        code = cell.cell_type == "code"
        cells.append(types.NotebookCell(kind=types.NotebookCellKind.Code if code
                                        else types.NotebookCellKind.Markup, document=cell_uri))
        if code:
            texts.append(types.TextDocumentItem(uri=cell_uri, language_id="python", version=1,
                                                text=cell.source))
    assert [c.source for c in notebook.cells] == sources(path)
    return types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=uri, notebook_type="jupyter-notebook",
                                                 version=1, cells=cells),
        cell_text_documents=texts)


def _notebook_change(path: Path, version: int, **cells) -> types.DidChangeNotebookDocumentParams:
    return types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=version, uri=path.as_uri()),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(**cells)))


def test_notebook_diagnostics_per_cell_and_a_quick_fix_equal_to_fix(tmp_path):
    from typer.testing import CliRunner

    from migrate.cli import app
    from notebook_cases import COUNTS, FINDING, sources, training_notebook, write

    path = tmp_path / "train.ipynb"
    write(path, training_notebook(with_last_cell=False))  # imports, markdown, the finding
    params = _notebook_params(path)
    imports_uri, prose_uri, counts_uri = [c.document for c in params.notebook_document.cells]
    assert CliRunner().invoke(app, ["fix", str(path)]).exit_code == 0
    fixed_by_cli = sources(path)[2]
    assert fixed_by_cli != COUNTS

    async def script(talk: Conversation) -> None:
        sync = talk.capabilities.notebook_document_sync
        assert [c.language for f in sync.notebook_selector for c in f.cells] == ["python"]
        talk.client.notebook_document_did_open(params)
        assert not await talk.next_diagnostics(imports_uri)
        [diagnostic] = await talk.next_diagnostics(counts_uri)
        assert diagnostic.code == FINDING and "safe fix available" in diagnostic.message
        assert (diagnostic.range.start.line, diagnostic.range.start.character) == (2, 11)
        assert prose_uri not in talk.diagnostics  # markdown: nothing published

        actions = await talk.actions(counts_uri, [diagnostic])
        [fix] = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
        assert set(fix.edit.changes) == {counts_uri}
        assert apply_text_edits(COUNTS, fix.edit.changes[counts_uri]) == fixed_by_cli
        [fix_all] = await talk.actions(counts_uri, [], only=[types.CodeActionKind.SourceFixAll])
        assert apply_text_edits(COUNTS, fix_all.edit.changes[counts_uri]) == fixed_by_cli

        # the editor applies the quick fix to the cell: its finding goes away
        talk.client.notebook_document_did_change(_notebook_change(path, 2, text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=counts_uri, version=2),
                changes=[types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                         for e in fix.edit.changes[counts_uri]])]))
        assert not await talk.next_diagnostics(imports_uri)
        assert not await talk.next_diagnostics(counts_uri)

        # undo it, then delete the imports cell: tf and np, now unbound, are presumed
        # to be the modules (a pasted snippet), so the finding stays
        talk.client.notebook_document_did_change(_notebook_change(path, 3, text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=counts_uri, version=3),
                changes=[types.TextDocumentContentChangeWholeDocument(text=COUNTS)])]))
        assert not await talk.next_diagnostics(imports_uri)
        assert [d.code for d in await talk.next_diagnostics(counts_uri)] == [FINDING]
        talk.client.notebook_document_did_change(_notebook_change(path, 4, structure=(
            types.NotebookDocumentCellChangeStructure(
                array=types.NotebookCellArrayChange(start=0, delete_count=1),
                did_close=[types.TextDocumentIdentifier(uri=imports_uri)]))))
        assert not await talk.next_diagnostics(imports_uri)  # cleared: the cell is gone
        assert [d.code for d in await talk.next_diagnostics(counts_uri)] == [FINDING]

        talk.client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=path.as_uri()),
            cell_text_documents=[types.TextDocumentIdentifier(uri=counts_uri)]))
        assert not await talk.next_diagnostics(counts_uri)

    converse(["-m", "migrate", "lsp"], script)


def test_a_notebook_quick_fix_that_adds_an_import_edits_both_cells(tmp_path):
    """toy-import's fix adds `import numpy` after the imports of cell 1."""
    import nbformat

    from notebook_cases import write

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import os\n!ls"),
                      nbformat.v4.new_markdown_cell("Ones"),
                      nbformat.v4.new_code_cell("ones = make_ones()\nprint(ones)")]
    path = tmp_path / "ones.ipynb"
    write(path, notebook)
    params = _notebook_params(path)
    first, _, third = [c.document for c in params.notebook_document.cells]

    async def script(talk: Conversation) -> None:
        talk.client.notebook_document_did_open(params)
        [diagnostic] = await talk.next_diagnostics(third)
        assert "safe fix available" in diagnostic.message
        [fix] = [a for a in await talk.actions(third, [diagnostic])
                 if a.kind == types.CodeActionKind.QuickFix]
        assert apply_text_edits("import os\n!ls", fix.edit.changes[first]) == "import os\nimport numpy\n!ls"
        assert apply_text_edits("ones = make_ones()\nprint(ones)", fix.edit.changes[third]) == \
            "ones = numpy.ones()\nprint(ones)"

    converse(["-c", TOY_SERVER], script)
