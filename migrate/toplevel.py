"""What each top-level statement reads, binds and calls (``read``, from
CPython's ``ast``), and which others a pass visiting some of them needs
(``closure``): the facts migrate/incremental.py keeps per statement to run
a pass over the statements a change touched and their closure. What the
statements left out of such a pass hold, asked of the whole module by name
(their NAME leaves), is handed to the run (``unseen``), for the semantic
model and the recipes' scope questions.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import accumulate
from dataclasses import dataclass, field, fields, replace
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from .conventions import CONVENTIONAL, MUTATORS

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")  # lines as CPython counts them (see lines_of)
# `\bwith`, the boundary asked after the literal: a pattern that starts with a
# literal skips ahead to it, one that starts with `\b` tries every position
_PAREN_WITH = re.compile(r"with(?<!\wwith)[ \t\f]*\(")
_WORD = re.compile(r"\w+")
_NUMBERED = re.compile(r"_\d+$")
# dynamic readers as recipes._model's _Readers counts them: attributes read by
# a string (their names, or any attribute), every module name (globals(), eval, exec)
_ATTRIBUTE_READERS = frozenset({"getattr", "hasattr"})
_MODULE_READERS = frozenset({"globals", "eval", "exec"})
_TF_NP = frozenset({"numpy", "tensorflow"})
# syntax fissix rejects wherever it is: match, except* (Python 3.10, 3.11),
# type aliases (3.12); assignment expressions only in some places (kept wherever they are)
_NEWER = frozenset(getattr(ast, name) for name in ("Match", "TryStar", "NamedExpr", "TypeAlias")
                   if hasattr(ast, name))
_NAMED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_STOPS = frozenset({ast.Return, ast.Raise, ast.Break, ast.Continue})


@dataclass(eq=False, repr=False)
class Unseen:
    """What the statements the current fissix run does not see hold, for the
    questions asked of the whole module: ``names``, their NAME leaves as
    fissix tokenizes them (is a function named anywhere else; is a fresh
    name taken); ``reads_attributes``, whether they may read an attribute
    by a string (``getattr``, ``hasattr``, ``vars(x)``)."""

    names: FrozenSet[str] = frozenset()
    reads_attributes: bool = False


_UNSEEN: ContextVar[Unseen] = ContextVar("tf_migrate_unseen", default=Unseen())


def unseen() -> Unseen:
    """The current run's Unseen; empty when it sees the whole text."""
    return _UNSEEN.get()


@dataclass(eq=False, repr=False)
class _Statement:
    first: int  # 0-based index of its first line (decorators included)
    last: int  # 0-based index of its last line
    node: ast.stmt
    leaves: Set[str] = field(default_factory=set)  # every name fissix sees in it as a NAME
    # leaf: variables, attributes, parameters, keywords, defs, imports (not inside f-strings)
    names: Set[str] = field(default_factory=set)  # the variables it reads or binds (ast.Name)
    variables: Set[str] = field(default_factory=set)  # names, parameters, defs and classes,
    # imports, ``except ... as``, ``global``: what the model may record as read or bound
    binds: Set[str] = field(default_factory=set)  # module names it may bind: its own def or
    # class, imports (anywhere: the model's import table is the module's), ``global`` names
    imported: Set[str] = field(default_factory=set)  # names its imports bind
    functions: Set[str] = field(default_factory=set)  # functions it binds in the module scope
    classes: Set[str] = field(default_factory=set)  # its classes, nested ones too
    defined: Set[str] = field(default_factory=set)  # its functions' names, methods and nested ones too
    by_string: Set[str] = field(default_factory=set)  # attributes read as ``getattr(x, "name")``
    callees: Dict[str, int] = field(default_factory=dict)  # last name of what it calls -> first line
    strings: List[str] = field(default_factory=list)  # the lines of its string literals
    reads_attributes: bool = False  # getattr/hasattr/vars(x): attributes read by a string
    stops: bool = False  # may not fall through (return, raise, break, continue outside a def)
    function_lines: List[Tuple[int, int]] = field(default_factory=list)  # (def line, last line) of its functions
    imports: bool = False  # holds an import
    imports_tf_np: bool = False  # imports from numpy or tensorflow (the import table's answers)
    module_wide: bool = False  # reaches the whole module (a call), or fissix may reject its syntax


@contextmanager
def running(hidden: Unseen) -> Iterator[None]:
    """``unseen()`` answers ``hidden`` meanwhile."""
    token = _UNSEEN.set(hidden)
    try:
        yield
    finally:
        _UNSEEN.reset(token)


def also_unseen(statements: Iterable[_Statement]) -> Unseen:
    """``unseen()`` with what ``statements``, left out of a run too, hold."""
    current = unseen()
    names, reads_attributes = set(current.names), current.reads_attributes
    for statement in statements:
        names |= statement.leaves
        reads_attributes |= statement.reads_attributes
    return Unseen(frozenset(names), reads_attributes)


def lines_of(text: str) -> List[str]:
    """``_LINE.findall(text)``: the lines as CPython counts them, each with
    its end, and an empty last one. Without a carriage return, ``str.split``
    finds them ~4x faster."""
    if "\r" in text:
        return _LINE.findall(text)
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    lines.append("")
    return lines


def _statements(tree: ast.Module, text: str, lines: List[str]) -> List[_Statement]:
    found = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]) - 1
        statement = _Statement(first, node.end_lineno - 1, node)
        _read(statement, lines, MUTATORS)
        found.append(statement)
    if _PAREN_WITH.search(text):  # ``with (a as b, ...)``: fissix may reject it
        ends = list(accumulate(map(len, lines)))  # offset after each line
        starts = [s.first + 1 for s in found]
        for match in _PAREN_WITH.finditer(text):
            index = _holder(starts, bisect_right(ends, match.start()) + 1)
            if index is not None:
                found[index].module_wide = True
    return found


def closure(statements: List[_Statement], kept: Set[int]) -> Set[int]:
    """The statements a run visiting ``kept`` needs: them, the pinned ones
    and their closure."""
    return _Closure(statements).of(kept | {i for i, s in enumerate(statements) if pinned(s, i)})


def read(text: str) -> Optional[_Statement]:
    """What the closure reads of one fissix top-level statement, from its
    own text (prefix included; lines counted from its first: see ``moved``):
    its ``ast`` statements merged into one (``a = 1; b = 2``), which keeps
    no ``ast`` but a node standing for the kind that decides (module code,
    the module's head). None when CPython cannot parse it alone, or it
    holds no statement (the end marker)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    parts = _statements(tree, text, lines_of(text))
    if not parts:
        return None
    merged = parts[0]
    for part in parts[1:]:
        for name in (f.name for f in fields(_Statement)):
            mine, theirs = getattr(merged, name), getattr(part, name)
            if isinstance(mine, set):
                mine |= theirs
            elif isinstance(mine, list):
                mine.extend(theirs)
            elif isinstance(mine, dict):
                for key, line in theirs.items():
                    mine[key] = min(line, mine.get(key, line))
            elif isinstance(mine, bool):
                setattr(merged, name, mine or theirs)
    merged.last = parts[-1].last
    merged.node = _stand_in(next((p.node for p in parts if not heading(p.node)), merged.node))
    return merged


def _stand_in(node: ast.stmt) -> ast.stmt:
    """A childless node of ``node``'s kind (a constant's Expr keeps it)."""
    if isinstance(node, ast.Expr):
        return ast.Expr(node.value if isinstance(node.value, ast.Constant) else ast.Name("_", ast.Load()))
    return type(node)()


def moved(statement: _Statement, by: int) -> _Statement:
    """``statement`` (as ``read``) standing ``by`` lines further down."""
    return replace(statement, first=statement.first + by, last=statement.last + by,
                   function_lines=[(a + by, b + by) for a, b in statement.function_lines],
                   callees={name: line + by for name, line in statement.callees.items()})


def outside_functions(statement: _Statement) -> bool:
    """Has it lines outside every function it defines (decorators, a class
    line, module code)? A change there makes recipes scan the module."""
    line = statement.first + 1
    for first, last in sorted(statement.function_lines):
        if first > line:
            return True
        line = max(line, last + 1)
    return line <= statement.last + 1


def auto_name(callee: str) -> str:
    """How a Keras auto-name spells a called class (``Conv2D`` -> ``conv2d``)."""
    return callee.replace("_", "").lower()


def auto_named(statement: _Statement, classes: Set[str]) -> Set[str]:
    """The auto-names of the classes it may call (``_Closure``'s rule)."""
    return {auto_name(c) for c in statement.callees if c[:1].isupper() or c in classes}


def auto_name_words(statement: _Statement) -> Set[str]:
    """The lowercase words of its strings, as a class name would match
    them if they were its Keras auto-name (``Conv2D`` -> ``conv2d`` or
    ``conv2d_3``): without underscores, with and without ``_<n>``."""
    words: Set[str] = set()
    for text in statement.strings:
        for word in set(_WORD.findall(text)):
            if word == word.lower():  # a Keras auto-name is: ``conv2d``, ``conv2d_1``
                words.add(word.replace("_", ""))
                words.add(_NUMBERED.sub("", word).replace("_", ""))
    return words


def heading(node: ast.stmt) -> bool:
    """Can it stand at the module's head (``_header_imports``)?"""
    return isinstance(node, (ast.Import, ast.ImportFrom)) \
        or isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def pinned(statement: _Statement, index: int) -> bool:
    """Kept whatever the places: what reaches the whole module or may hold
    syntax fissix rejects; module code that imports (the import table is
    the module's; fixes add imports next to them), may stop the model's
    walk (``raise`` at module level), or is a leading docstring."""
    if statement.module_wide:
        return True
    if isinstance(statement.node, _NAMED):
        return False
    return statement.imports or statement.stops \
        or index == 0 and isinstance(statement.node, ast.Expr) and isinstance(statement.node.value, ast.Constant)


def _read(statement: _Statement, lines: List[str], mutators: FrozenSet[str]) -> None:
    """What it names, binds and calls, and whether it reaches the whole
    module or holds syntax fissix may reject (then the whole file must be
    parsed, so that it is skipped as it would be), in one walk. f-strings
    are one STRING leaf to fissix: nothing inside them counts as a name.
    What a def or class body binds is its own (``nested``); what module
    code binds, the module's: stores, imports, a parameter of a lambda, the
    object of an attribute or item store or of a mutating call (``mutators``)."""
    leaves, names, variables, binds = statement.leaves, statement.names, statement.variables, statement.binds
    stack = [(statement.node, False)]  # (node, inside a def or class)
    while stack:
        node, nested = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            names.add(node.id)
            if not nested and type(node.ctx) is not ast.Load:
                binds.add(node.id)
            continue
        if kind is ast.Constant or kind is ast.JoinedStr:
            if kind is ast.JoinedStr or type(node.value) is str:  # its lines: the source as fissix has it
                statement.strings.append("".join(lines[node.lineno - 1:node.end_lineno]))
            continue
        if kind is ast.Attribute:
            leaves.add(node.attr)
            if not nested and type(node.ctx) is not ast.Load:
                binds.update(_root_name(node))
        elif kind is ast.Call:
            _call(node, statement)
            func = node.func
            if not nested and type(func) is ast.Attribute and func.attr in mutators:
                binds.update(_root_name(func.value))
        elif kind is ast.arg:
            variables.add(node.arg)
            if not nested:
                binds.add(node.arg)
            statement.module_wide |= isinstance(node.annotation, ast.Starred)  # *args: *Ts
        elif kind is ast.keyword:
            if node.arg:
                leaves.add(node.arg)
        elif kind is ast.Subscript:
            statement.module_wide |= _starred(node.slice)
            if not nested and type(node.ctx) is not ast.Load:
                binds.update(_root_name(node))
        elif kind in _NAMED:
            variables.add(node.name)
            if kind is ast.ClassDef:
                statement.classes.add(node.name)
            else:
                statement.function_lines.append((node.lineno, node.end_lineno))
                statement.defined.add(node.name)
                statement.module_wide |= bool(node.args.posonlyargs)
                if not nested:
                    statement.functions.add(node.name)
                for arg in _parameters(node.args):
                    variables.add(arg.arg)
                    statement.module_wide |= isinstance(arg.annotation, ast.Starred)  # *args: *Ts
            if not nested:
                binds.add(node.name)
            statement.module_wide |= not all(map(_plain_decorator, node.decorator_list)) \
                or bool(getattr(node, "type_params", None))
            stack.extend((child, nested) for child in _evaluated_outside(node))
            stack.extend((child, True) for child in node.body)
            continue
        elif kind is ast.Lambda:
            statement.module_wide |= bool(node.args.posonlyargs)
        elif kind is ast.Import or kind is ast.ImportFrom:
            _import(node, statement)
        elif kind is ast.Global or kind is ast.Nonlocal:
            variables.update(node.names)
            if kind is ast.Global:
                binds.update(node.names)
                statement.functions.update(node.names)
        elif kind is ast.ExceptHandler:
            if node.name:
                variables.add(node.name)
                if not nested:
                    binds.add(node.name)
        elif kind is ast.For or kind is ast.AsyncFor:
            statement.module_wide |= _starred(node.iter)
        elif kind in _STOPS:
            statement.stops |= not nested
        elif kind in _NEWER:
            statement.module_wide = True
        for name in _fields(kind):  # ast.iter_child_nodes, without the Load/Store nodes
            value = getattr(node, name)
            if type(value) is list:
                stack.extend((child, nested) for child in value if isinstance(child, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append((value, nested))
    variables |= names
    leaves |= variables


_NOT_NODES = frozenset({"ctx", "id", "attr", "arg", "name", "names", "module", "level", "kind",
                        "type_comment", "is_async", "conversion", "n", "s"})
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _fields(kind: type) -> Tuple[str, ...]:
    """The fields of an ``ast`` class that may hold nodes (``names`` of an
    import is walked by _import)."""
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _NOT_NODES)
    return found


def _evaluated_outside(node) -> Iterator[ast.AST]:
    """What a def or class statement evaluates where it stands, not in its
    body: decorators, parameter defaults and annotations, bases and keywords
    (a def's parameters bind in its body: _read takes their names)."""
    yield from node.decorator_list
    if isinstance(node, ast.ClassDef):
        yield from node.bases
        yield from node.keywords
        return
    arguments = node.args
    yield from arguments.defaults
    yield from (default for default in arguments.kw_defaults if default is not None)
    yield from (arg.annotation for arg in _parameters(arguments) if arg.annotation is not None)
    if node.returns is not None:
        yield node.returns


def _parameters(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from arguments.posonlyargs
    yield from arguments.args
    if arguments.vararg is not None:
        yield arguments.vararg
    yield from arguments.kwonlyargs
    if arguments.kwarg is not None:
        yield arguments.kwarg


def _root_name(node: ast.AST) -> Iterator[str]:
    """The variable at the root of ``a.b[c].d``: its first name."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    if isinstance(node, ast.Name):
        yield node.id


def _import(node, statement: _Statement) -> None:
    module = getattr(node, "module", None)  # ``from module import ...``
    if module:
        statement.leaves.update(module.split("."))
    relative = bool(getattr(node, "level", 0))
    statement.imports = True
    for alias in node.names:
        statement.leaves.update(alias.name.split("."))
        local = alias.asname or alias.name.partition(".")[0]
        statement.variables.add(local)
        statement.binds.add(local)
        statement.imported.add(local)
        root = (module or alias.name).partition(".")[0]
        statement.imports_tf_np |= not relative and root in _TF_NP


def _call(call: ast.Call, statement: _Statement) -> None:
    func = call.func
    if isinstance(func, ast.Attribute):
        name = func.attr
    elif isinstance(func, ast.Name):
        name = func.id
        if name in _ATTRIBUTE_READERS:
            statement.reads_attributes = True
            attribute = call.args[1] if len(call.args) > 1 else None
            if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                statement.by_string.add(attribute.value)
        elif name == "vars" and call.args:
            statement.reads_attributes = True
        elif name in _MODULE_READERS:
            statement.module_wide = True
    else:
        return
    line = statement.callees.get(name)
    if line is None or call.lineno < line:
        statement.callees[name] = call.lineno


def _holder(starts: List[int], line: int) -> Optional[int]:
    """Index of the top-level statement whose lines hold ``line``."""
    index = bisect_right(starts, line) - 1
    return index if index >= 0 else None


class _Closure:
    """Which left-out ``def``/``class`` statements the kept ones may depend
    on, by what the semantic model (recipes/_model) and the recipes read
    across top-level statements; what is added is kept in turn, until
    nothing more is:

    - a module name a kept statement reads or binds (``ast.Name``) that
      another binds: its def or class, an import anywhere in it, a
      ``global``;
    - a module-level function a kept statement binds, named (``ast.Name``)
      by another: a call there is a call site of it (parameter kinds), or
      makes it a tape callee or a ``tf.function``. A method or a nested
      function cannot be called by name from another top-level statement;
      its name there (then ``call_sites`` is None) is in ``unseen()``;
    - an import from numpy or tensorflow, or one binding a name a kept
      import binds (the import table's ``uses``/``aliases``/``module_of``);
    - a conventional alias (``tf``, ``np``...) read or bound anywhere,
      unless the imports at the head of the module bind it (it decides the
      presumed aliases: read, and bound nowhere in the module);
    - a class named in a kept statement, at any depth (scalar-target finds
      model classes by name);
    - an attribute a kept statement names, read as ``getattr(x, "name")``
      (dynamic readers; that a string may read some attribute is in
      ``unseen()``, for questions about attribute paths);
    - after a kept call of a class, a string spelling its Keras auto-name
      (unused-model-instance reads such strings anywhere below the call);
    - ``__all__`` (unused-model-instance's exports);
    - ``globals()``, ``eval``/``exec`` (every module name may be read), or
      syntax fissix may reject: kept from the start, as module code is."""

    def __init__(self, statements: List[_Statement]):
        self.statements = statements
        self.classes: Set[str] = set().union(*(s.classes for s in statements))
        self._words: Dict[int, Set[str]] = {}

    def of(self, kept: Set[int]) -> Set[int]:
        statements = self.statements
        kept = set(kept)
        conventional = presumed_aliases(statements)
        names: Set[str] = set()
        leaves: Set[str] = set()
        functions: Set[str] = set()
        imported: Set[str] = set()
        auto_names: Dict[str, int] = {}  # a class's auto-name -> the first line calling it
        new = set(kept)
        while new:
            for i in new:
                s = statements[i]
                names |= s.names
                leaves |= s.leaves
                functions |= s.functions
                imported |= s.imported
                for callee, line in s.callees.items():
                    if callee[:1].isupper() or callee in self.classes:
                        key = auto_name(callee)
                        auto_names[key] = min(line, auto_names.get(key, line))
            first_call = min(auto_names.values(), default=None)
            new = set()
            for i, s in enumerate(statements):
                if i in kept:
                    continue
                if s.imports_tf_np or "__all__" in s.names or s.binds & names \
                        or s.imported & imported or s.names & functions \
                        or s.variables & conventional or s.classes & leaves or s.by_string & leaves \
                        or first_call is not None and s.last + 1 >= first_call \
                        and any(auto_names.get(w, s.last + 2) <= s.last + 1 for w in self._words_of(i)):
                    new.add(i)
            kept |= new
        return kept

    def _words_of(self, index: int) -> Set[str]:
        words = self._words.get(index)
        if words is None:
            words = self._words[index] = auto_name_words(self.statements[index])
        return words


def presumed_aliases(statements: List[_Statement]) -> Set[str]:
    """The conventional aliases (``tf``, ``np``...) the imports at the head
    of the module do not bind: a statement naming one is in every closure."""
    return set(CONVENTIONAL) - _header_imports(statements)


def _header_imports(statements: List[_Statement]) -> Set[str]:
    """The names the module's first statements, imports (and strings),
    bind: the model's walk surely reaches those."""
    found: Set[str] = set()
    for statement in statements:
        if not heading(statement.node):
            break
        found |= statement.imported
    return found


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
