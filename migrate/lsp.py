"""`tf-migrate lsp`: a Language Server over stdio (pygls).

On open, change and save it runs the engine over the document as it is in
the editor, with every recipe in isolation and unsafe fixes on, so each
finding's fix edits are relative to the document, and publishes the findings
as warnings. Code actions offer each finding's fix as a quick fix (its title
says whether the fix is safe or unsafe) and "fix all safe" (``source.fixAll``),
which rewrites the document as `tf-migrate fix` would.

Config (``[tool.tf-migrate]``) is read from the pyproject.toml nearest to the
document. Our positions are 1-based code points; LSP's are 0-based in the
negotiated encoding (UTF-16 by default), so every position goes through
pygls' position codec.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from . import config, registry
from .engine import Options, transform
from .formats import tool_version
from .result import Diagnostic, SourceResult

SOURCE = "tf-migrate"
FIX_ALL = types.CodeActionKind.SourceFixAll


class ConfigProblem(Exception):
    """The document's config cannot be used; the message says why."""


def _options(document: TextDocument, *, isolated: bool, unsafe_fixes: bool) -> Options:
    where = Path(document.path).parent if document.path else Path.cwd()
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


def _lsp_diagnostic(document: TextDocument, diag: Diagnostic) -> types.Diagnostic:
    tag = f"{diag.safety} fix available" if diag.fixable and diag.fix else "report only"
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
                     _options(document, isolated=True, unsafe_fixes=True))


def _text_edits(document: TextDocument, diag: Diagnostic) -> List[types.TextEdit]:
    newline = _newline(document)
    return [types.TextEdit(range=_range(document, e.line, e.column, e.end_line, e.end_column),
                           new_text=e.replacement.replace("\n", newline))
            for e in diag.fix or []]


def quick_fixes(document: TextDocument, result: SourceResult,
                wanted: types.Range) -> List[types.CodeAction]:
    """One quick fix per fixable finding whose range touches ``wanted``."""
    actions = []
    for diag in result.diagnostics:
        lsp_diag = _lsp_diagnostic(document, diag)
        if not (diag.fixable and diag.fix) or not _touches(lsp_diag.range, wanted):
            continue
        actions.append(types.CodeAction(
            title=f"Fix {diag.recipe}: {diag.message} ({diag.safety} fix)",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[lsp_diag],
            is_preferred=diag.safety == "safe",
            edit=types.WorkspaceEdit(changes={document.uri: _text_edits(document, diag)}),
        ))
    return actions


def _touches(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position):
        return position.line, position.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def fix_all_safe(document: TextDocument) -> Optional[types.CodeAction]:
    """The whole document rewritten with the safe fixes, as `tf-migrate fix` would."""
    result = transform(_text(document), document.path or document.uri,
                       _options(document, isolated=False, unsafe_fixes=False))
    if not result.changed or result.errors:
        return None
    lines = document.source.split("\n")
    end = document.position_to_client_units(ServerTextPosition(len(lines) - 1, len(lines[-1])))
    whole = types.Range(start=types.Position(line=0, character=0), end=end)
    text = result.output.replace("\n", _newline(document))
    return types.CodeAction(
        title="tf-migrate: fix all safe",
        kind=FIX_ALL,
        edit=types.WorkspaceEdit(changes={document.uri: [types.TextEdit(range=whole, new_text=text)]}),
    )


def _wants(kind: str, only: Optional[List[str]]) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


def build() -> LanguageServer:
    """The server with its features registered (start it with ``start_io``)."""
    server = LanguageServer("tf-migrate", tool_version(),
                            text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    published: Dict[str, int] = {}

    def publish(uri: str) -> None:
        document = server.workspace.get_text_document(uri)
        try:
            result = analyse(document)
        except ConfigProblem as problem:
            server.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"tf-migrate: {problem}"))
            return
        if result.reason:
            server.window_log_message(types.LogMessageParams(
                type=types.MessageType.Info, message=f"tf-migrate: {result.reason}"))
        diagnostics = [_lsp_diagnostic(document, d) for d in result.diagnostics]
        published[uri] = len(diagnostics)
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=diagnostics, version=document.version))

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
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=params.text_document.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(params: types.CodeActionParams) -> List[types.CodeAction]:
        document = server.workspace.get_text_document(params.text_document.uri)
        only = params.context.only
        try:
            actions = []
            if _wants(types.CodeActionKind.QuickFix, only):
                actions.extend(quick_fixes(document, analyse(document), params.range))
            fix_all = fix_all_safe(document) if _wants(FIX_ALL, only) else None
        except ConfigProblem:
            return []  # already shown when the document was analysed
        return actions + ([fix_all] if fix_all else [])

    return server


def serve() -> None:
    """Speak LSP on stdin/stdout until the client says exit."""
    build().start_io()
