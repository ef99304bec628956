"""Parse only the top-level statements the prechecks point at.

fissix is pure Python, several times slower than CPython's parser; a file
that passes every precheck because of one function would otherwise be
parsed whole. The prechecks (stdlib ``ast``) say where each recipe's pattern
can be; the fissix run then sees those top-level statements, all module
code that is not a ``def``/``class`` and, for the semantic model's
module-wide answers, a closure of the rest (see ``_closure``). Every other
top-level statement's lines become placeholder comments, one per line, so
positions stay those of the input; the output's placeholders are then put
back. Any doubt (a placeholder lost, moved or edited; an edit touching one;
an error) and the engine runs on the whole text instead.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set

from .result import Diagnostic

MARK = "# tf-migrate:elided"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")  # lines as CPython counts them
_PAREN_WITH = re.compile(r"\bwith[ \t\f]*\(")
# calls whose reach is the whole module (recipes._model's _Readers): an
# attribute read by a computed name, globals(), eval/exec, get_layer("...")
_ATTRIBUTE_READERS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
_MODULE_READERS = frozenset({"globals", "eval", "exec", "__import__"})
# syntax fissix rejects wherever it is: match, except* (Python 3.10, 3.11);
# assignment expressions only in some places (kept wherever they are)
_NEWER = frozenset(getattr(ast, name) for name in ("Match", "TryStar", "NamedExpr") if hasattr(ast, name))
_NAMED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_DEFINITIONS = frozenset(_NAMED)


@dataclass
class _Statement:
    first: int  # 0-based index of its first line (decorators included)
    last: int  # 0-based index of its last line
    node: ast.stmt
    words: Set[str]  # every name it mentions (variables, attributes, parameters, keywords)
    defines: Set[str]  # names it binds for the module: defs and classes (nested ones
    # too), imports, ``global`` names, attributes read by ``getattr(x, "name")``
    module_wide: bool  # reaches the whole module (a call), or fissix may reject its syntax
    functions: Set[str] = field(default_factory=set)  # names of its defs and classes


@dataclass
class Slice:
    """The text the fissix run sees, and how to put the elided lines back."""

    text: str
    elided: Dict[int, str]  # 0-based line index -> the input's line (with its ending)

    def restore(self, output: str) -> Optional[str]:
        """``output`` with every placeholder replaced by its input line; None
        unless each placeholder is there once, intact, in order, under the
        line that was above its run in the input."""
        lines = _LINE.findall(output)
        if lines and lines[-1] == "":
            lines.pop()
        wanted = {_placeholder(i): i for i in self.elided}
        found: List[int] = []
        positions: Dict[int, int] = {}
        for position, line in enumerate(lines):
            if MARK in line:
                index = wanted.get(line.rstrip("\r\n"))
                if index is None or index in positions:
                    return None
                positions[index] = position
                found.append(index)
        if found != sorted(self.elided):
            return None
        source = _LINE.findall(self.text)
        for index, position in positions.items():
            if index - 1 in self.elided:
                if positions[index - 1] != position - 1:
                    return None
            elif (source[index - 1] if index else None) != (lines[position - 1] if position else None):
                return None
            lines[position] = self.elided[index]
        return "".join(lines)

    def touched_by(self, diagnostics: Sequence[Diagnostic]) -> bool:
        """Does any fix edit (relative to the input) reach a placeholder line?"""
        lines = sorted(self.elided)
        for diagnostic in diagnostics:
            for edit in diagnostic.fix or ():
                if MARK in edit.replacement:
                    return True
                last = edit.end_line if edit.end_column > 1 else edit.end_line - 1
                if any(edit.line - 1 <= i <= max(last, edit.line) - 1 for i in lines):
                    return True
        return False


def cut(text: str, tree: ast.Module, places: Iterable[ast.AST]) -> Optional[Slice]:
    """The Slice of ``text`` keeping the top-level statements holding
    ``places`` and their closure; None when nothing would be left out."""
    if MARK in text:
        return None
    lines = _LINE.findall(text)
    statements = _statements(tree, lines)
    starts = [s.first + 1 for s in statements]
    kept: Set[int] = {i for i, s in enumerate(statements)
                      if not isinstance(s.node, _NAMED) or s.module_wide}
    for place in places:
        index = _holder(starts, getattr(place, "lineno", 0))
        if index is not None:
            kept.add(index)
    kept = _closure(statements, kept)
    if len(kept) == len(statements):
        return None
    out = list(lines)
    elided: Dict[int, str] = {}
    for index, statement in enumerate(statements):
        if index in kept:
            continue
        for line in range(statement.first, statement.last + 1):
            elided[line] = lines[line]
            body = lines[line].rstrip("\r\n")
            out[line] = _placeholder(line) + lines[line][len(body):]
    if not elided:
        return None
    return Slice("".join(out), elided)


def _placeholder(index: int) -> str:
    """The comment standing for the input's line ``index`` (0-based)."""
    return f"{MARK} {index}"


def _statements(tree: ast.Module, lines: List[str]) -> List[_Statement]:
    found = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]) - 1
        statement = _Statement(first, node.end_lineno - 1, node, set(), set(), False)
        _read(statement)  # module code too: what it mentions is kept
        if isinstance(node, _NAMED):
            statement.module_wide |= any(_PAREN_WITH.search(lines[i]) for i in range(first, node.end_lineno))
        found.append(statement)
    return found


def _read(statement: _Statement) -> None:
    """Its words, what it defines, and whether it reaches the whole module
    or holds syntax fissix may reject (then the whole file must be parsed,
    so that it is skipped as it would be), in one walk."""
    words, defines = statement.words, statement.defines
    for node in ast.walk(statement.node):
        kind = type(node)
        if kind is ast.Name:
            words.add(node.id)
        elif kind is ast.Attribute:
            words.add(node.attr)
        elif kind is ast.Call:
            statement.module_wide |= _module_wide(node, defines)
        elif kind is ast.arg:
            words.add(node.arg)
            statement.module_wide |= isinstance(node.annotation, ast.Starred)  # *args: *Ts
        elif kind is ast.keyword:
            if node.arg:
                words.add(node.arg)
        elif kind is ast.Subscript:
            statement.module_wide |= _starred(node.slice)
        elif kind in _DEFINITIONS:
            defines.add(node.name)
            statement.functions.add(node.name)
            words.add(node.name)
            statement.module_wide |= bool(node.args.posonlyargs) if kind is not ast.ClassDef else False
            statement.module_wide |= not all(map(_plain_decorator, node.decorator_list))
        elif kind is ast.Lambda:
            statement.module_wide |= bool(node.args.posonlyargs)
        elif kind is ast.Import or kind is ast.ImportFrom:
            for alias in node.names:
                defines.add((alias.asname or alias.name).partition(".")[0])
        elif kind is ast.Global or kind is ast.Nonlocal:
            defines.update(node.names)
        elif kind is ast.For or kind is ast.AsyncFor:
            statement.module_wide |= _starred(node.iter)
        elif kind in _NEWER:
            statement.module_wide = True
    words |= defines


def _module_wide(call: ast.Call, defines: Set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr == "get_layer"
    if not isinstance(func, ast.Name):
        return False
    if func.id in _ATTRIBUTE_READERS:
        name = call.args[1] if len(call.args) > 1 else None
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            defines.add(name.value)  # read as an attribute by name
            return False
        return True
    return func.id in _MODULE_READERS or func.id == "vars" and bool(call.args)


def _holder(starts: List[int], line: int) -> Optional[int]:
    """Index of the top-level statement whose lines hold ``line``."""
    index = bisect_right(starts, line) - 1
    return index if index >= 0 else None


def _closure(statements: List[_Statement], kept: Set[int]) -> Set[int]:
    """Kept statements, plus every def/class that a kept one mentions by a
    name it binds (what a kept function calls, a base class, a method
    reached as an attribute, a nested import) and every one that mentions a
    function or class a kept one defines (a caller: a tape there makes the
    callee a gradient context; a use elsewhere changes what the model knows
    of a function's call sites), until nothing is added."""
    kept = set(kept)
    while True:
        words: Set[str] = set().union(*(statements[i].words for i in kept))
        functions: Set[str] = set().union(*(statements[i].functions for i in kept))
        more = {i for i, s in enumerate(statements) if i not in kept
                and (s.defines & words or s.words & functions)}
        if not more:
            return kept
        kept |= more


def _starred(node: ast.AST) -> bool:
    return isinstance(node, ast.Starred) or isinstance(node, ast.Tuple) \
        and any(isinstance(e, ast.Starred) for e in node.elts)


def _plain_decorator(node: ast.AST) -> bool:
    """``@a.b`` or ``@a.b(...)``: fissix's decorator grammar."""
    if isinstance(node, ast.Call):
        node = node.func
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
