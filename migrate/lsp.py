"""`tf-migrate lsp`: a Language Server over stdio (pygls).

On open, change and save it runs the engine over the document as it is in
the editor, with every recipe in isolation and unsafe fixes on, so each
finding's fix edits are relative to the document, and publishes the findings
as warnings. Code actions offer each finding's fix as a quick fix (its title
says whether the fix is safe or unsafe) and "fix all safe" (``source.fixAll``),
which rewrites the document as `tf-migrate fix` would.

Notebooks (LSP 3.17 notebook sync, Python cells): the server analyses a
notebook's code cells as one module, as `tf-migrate check` does (the imports
of cell 1 count in cell 5), publishes each finding on its cell's URI, and
offers quick fixes whose WorkspaceEdit changes the cell (and another cell,
when a fix also adds an import there). Quick fixes in a cell are computed when
asked, from the notebook as the editor has it then.

Config (``[tool.tf-migrate]``) is read from the pyproject.toml nearest to the
document (to the notebook, for a cell). Our positions are 1-based code
points; LSP's are 0-based in the negotiated encoding (UTF-16 by default), so
every position goes through pygls' position codec.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from . import config, notebook, registry
from .engine import Options, transform
from .formats import tool_version
from .result import Diagnostic, Edit, SourceResult

SOURCE = "tf-migrate"
FIX_ALL = types.CodeActionKind.SourceFixAll
# the Python cells of every notebook ("*": any notebook type; lsprotocol cannot
# read the filter back without it)
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(notebook_selector=[types.NotebookDocumentFilterWithCells(
    notebook="*", cells=[types.NotebookCellLanguage(language="python")])])


class ConfigProblem(Exception):
    """The document's config cannot be used; the message says why."""


def _options(path: Optional[str], *, isolated: bool, unsafe_fixes: bool) -> Options:
    """The run's options from the config nearest to ``path`` (a file, or None)."""
    where = Path(path).parent if path else Path.cwd()
    try:
        conf = config.load(where if where.exists() else Path.cwd())
        recipes = registry.resolve(conf.select, conf.ignore)
    except (config.ConfigError, registry.UnknownRecipe) as error:
        raise ConfigProblem(str(error)) from None
    return Options(tuple(recipes), unsafe_fixes=unsafe_fixes, isolated=isolated,
                   recipe_options=(("target_index", conf.target_index),))


def _text(document: TextDocument) -> str:
    return document.source.replace("\r\n", "\n")


def _newline(document: TextDocument) -> str:
    return "\r\n" if "\r\n" in document.source else "\n"


def _range(document: TextDocument, line: int, column: int, end_line: int,
           end_column: int) -> types.Range:
    """1-based code points, end exclusive -> an LSP range in client units."""
    server = ServerTextRange(ServerTextPosition(line - 1, column - 1),
                             ServerTextPosition(end_line - 1, end_column - 1))
    return document.range_to_client_units(server)


def _lsp_diagnostic(document: TextDocument, diag: Diagnostic,
                    fix: Optional[bool] = None) -> types.Diagnostic:
    """``fix``: whether a quick fix is offered (default: the finding has fix edits)."""
    fix = bool(diag.fixable and diag.fix) if fix is None else fix
    tag = f"{diag.safety} fix available" if fix else "report only"
    return types.Diagnostic(
        range=_range(document, diag.line, diag.column, diag.end_line, diag.end_column),
        message=f"{diag.message} [{tag}]",
        severity=types.DiagnosticSeverity.Warning,
        code=diag.recipe,
        source=SOURCE,
    )


def analyse(document: TextDocument) -> SourceResult:
    """The engine's findings for the document, fix edits relative to it."""
    return transform(_text(document), document.path or document.uri,
                     _options(document.path, isolated=True, unsafe_fixes=True))


def _text_edits(document: TextDocument, edits: List[Edit]) -> List[types.TextEdit]:
    newline = _newline(document)
    return [types.TextEdit(range=_range(document, e.line, e.column, e.end_line, e.end_column),
                           new_text=e.replacement.replace("\n", newline))
            for e in edits]


def _quick_fix(lsp_diag: types.Diagnostic, diag: Diagnostic,
               changes: Dict[str, List[types.TextEdit]]) -> types.CodeAction:
    return types.CodeAction(
        title=f"Fix {diag.recipe}: {diag.message} ({diag.safety} fix)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diag],
        is_preferred=diag.safety == "safe",
        edit=types.WorkspaceEdit(changes=changes),
    )


def quick_fixes(document: TextDocument, result: SourceResult,
                wanted: types.Range) -> List[types.CodeAction]:
    """One quick fix per fixable finding whose range touches ``wanted``."""
    actions = []
    for diag in result.diagnostics:
        lsp_diag = _lsp_diagnostic(document, diag)
        if not (diag.fixable and diag.fix) or not _touches(lsp_diag.range, wanted):
            continue
        actions.append(_quick_fix(lsp_diag, diag, {document.uri: _text_edits(document, diag.fix)}))
    return actions


def _touches(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position):
        return position.line, position.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def fix_all_safe(document: TextDocument) -> Optional[types.CodeAction]:
    """The whole document rewritten with the safe fixes, as `tf-migrate fix` would."""
    result = transform(_text(document), document.path or document.uri,
                       _options(document.path, isolated=False, unsafe_fixes=False))
    if not result.changed or result.errors:
        return None
    return _fix_all_action({document.uri: _whole(document, result.output)})


def _whole(document: TextDocument, text: str) -> List[types.TextEdit]:
    """The edit replacing all of ``document`` by ``text``."""
    lines = document.source.split("\n")
    end = document.position_to_client_units(ServerTextPosition(len(lines) - 1, len(lines[-1])))
    whole = types.Range(start=types.Position(line=0, character=0), end=end)
    return [types.TextEdit(range=whole, new_text=text.replace("\n", _newline(document)))]


def _fix_all_action(changes: Dict[str, List[types.TextEdit]]) -> types.CodeAction:
    return types.CodeAction(title="tf-migrate: fix all safe", kind=FIX_ALL,
                            edit=types.WorkspaceEdit(changes=changes))


class Notebook:
    """A notebook document as the editor has it: its Python code cells (by
    position among all its cells, markdown included) and where it lives."""

    def __init__(self, workspace: Workspace, document: types.NotebookDocument) -> None:
        self.uri = document.uri
        self.path = to_fs_path(document.uri)
        opened = workspace.text_documents
        self.cells: Dict[int, TextDocument] = {
            index: opened[unquote(cell.document)] for index, cell in enumerate(document.cells)
            if cell.kind == types.NotebookCellKind.Code and unquote(cell.document) in opened
            and opened[unquote(cell.document)].language_id in (None, "python")}

    def analyse(self, *, isolated: bool = True, unsafe_fixes: bool = True) -> notebook.Analysis:
        """The cells as one module, through the engine."""
        return notebook.analyse([(i, _text(d)) for i, d in self.cells.items()],
                                self.path or self.uri, _options(self.path, isolated=isolated,
                                                                unsafe_fixes=unsafe_fixes))

    def diagnostics(self, analysis: notebook.Analysis) -> Dict[str, List[types.Diagnostic]]:
        """Every code cell's URI with its findings (none: an empty list, which clears)."""
        found: Dict[str, List[types.Diagnostic]] = {d.uri: [] for d in self.cells.values()}
        for finding in analysis.findings:
            cell = self.cells[finding.cell]
            found[cell.uri].append(_lsp_diagnostic(cell, finding.diagnostic, bool(finding.edits)))
        return found

    def quick_fixes(self, analysis: notebook.Analysis, uri: str,
                    wanted: types.Range) -> List[types.CodeAction]:
        """A quick fix per fixable finding in the cell ``uri`` touching ``wanted``;
        its edit changes every cell the fix changes."""
        actions = []
        for finding in analysis.findings:
            cell = self.cells[finding.cell]
            lsp_diag = _lsp_diagnostic(cell, finding.diagnostic, bool(finding.edits))
            if cell.uri != uri or not finding.edits or not _touches(lsp_diag.range, wanted):
                continue
            changes = {self.cells[index].uri: _text_edits(self.cells[index], edits)
                       for index, edits in finding.edits.items()}
            actions.append(_quick_fix(lsp_diag, finding.diagnostic, changes))
        return actions

    def fix_all_safe(self) -> Optional[types.CodeAction]:
        """Every cell rewritten with the safe fixes, as `tf-migrate fix` would."""
        analysis = self.analyse(isolated=False, unsafe_fixes=False)
        changed = {i: text for i, text in analysis.outputs.items() if text != _text(self.cells[i])}
        if not changed or analysis.errors:
            return None
        return _fix_all_action({self.cells[i].uri: _whole(self.cells[i], text)
                                for i, text in changed.items()})


def _wants(kind: str, only: Optional[List[str]]) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


def build() -> LanguageServer:
    """The server with its features registered (start it with ``start_io``)."""
    server = LanguageServer("tf-migrate", tool_version(),
                            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                            notebook_document_sync=NOTEBOOK_SYNC)
    published: Dict[str, int] = {}
    cells_published: Dict[str, Set[str]] = {}  # notebook URI -> its cells' URIs

    def send(uri: str, diagnostics: List[types.Diagnostic], version: Optional[int]) -> None:
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=diagnostics, version=version))

    def log(message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        server.window_log_message(types.LogMessageParams(type=kind, message=f"tf-migrate: {message}"))

    def config_problem(problem: ConfigProblem) -> None:
        server.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Error, message=f"tf-migrate: {problem}"))

    def publish(uri: str) -> None:
        document = server.workspace.get_text_document(uri)
        try:
            result = analyse(document)
        except ConfigProblem as problem:
            config_problem(problem)
            return
        if result.reason:
            log(result.reason)
        diagnostics = [_lsp_diagnostic(document, d) for d in result.diagnostics]
        published[uri] = len(diagnostics)
        send(uri, diagnostics, document.version)

    def publish_notebook(uri: str) -> None:
        document = server.workspace.get_notebook_document(notebook_uri=uri)
        if document is None:
            return
        book = Notebook(server.workspace, document)
        try:
            analysis = book.analyse()
        except ConfigProblem as problem:
            config_problem(problem)
            return
        for error in analysis.errors:
            log(error)
        found = book.diagnostics(analysis)
        versions = {cell.uri: cell.version for cell in book.cells.values()}
        for gone in cells_published.get(uri, set()) - set(found):  # cells deleted since
            found[gone] = []
        cells_published[uri] = set(versions)
        for cell_uri, diagnostics in found.items():
            send(cell_uri, diagnostics, versions.get(cell_uri))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        if published.pop(params.text_document.uri, 0):
            send(params.text_document.uri, [], None)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(params: types.DidOpenNotebookDocumentParams) -> None:
        publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(params: types.DidChangeNotebookDocumentParams) -> None:
        publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(params: types.DidCloseNotebookDocumentParams) -> None:
        for cell_uri in cells_published.pop(params.notebook_document.uri, set()):
            send(cell_uri, [], None)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(params: types.CodeActionParams) -> List[types.CodeAction]:
        uri, only = params.text_document.uri, params.context.only
        owner = server.workspace.get_notebook_document(cell_uri=uri)
        try:
            if owner is not None:
                actions, fix_all = _notebook_actions(Notebook(server.workspace, owner), uri,
                                                     params.range, only)
            else:
                actions, fix_all = _document_actions(server.workspace.get_text_document(uri),
                                                     params.range, only)
        except ConfigProblem:
            return []  # already shown when the document was analysed
        return actions + ([fix_all] if fix_all else [])

    return server


Actions = Tuple[List[types.CodeAction], Optional[types.CodeAction]]


def _document_actions(document: TextDocument, wanted: types.Range,
                      only: Optional[List[str]]) -> Actions:
    quick = quick_fixes(document, analyse(document), wanted) \
        if _wants(types.CodeActionKind.QuickFix, only) else []
    return quick, fix_all_safe(document) if _wants(FIX_ALL, only) else None


def _notebook_actions(book: Notebook, uri: str, wanted: types.Range,
                      only: Optional[List[str]]) -> Actions:
    quick = book.quick_fixes(book.analyse(), uri, wanted) \
        if _wants(types.CodeActionKind.QuickFix, only) else []
    return quick, book.fix_all_safe() if _wants(FIX_ALL, only) else None


def serve() -> None:
    """Speak LSP on stdin/stdout until the client says exit."""
    build().start_io()
