"""Helpers for recipes' prechecks, which rule a file out before the much
slower fissix parse: first on its text (which modules it may import), then
on the stdlib ``ast`` (CPython's C parser).

Every answer over-approximates the recipe's own analysis on the fissix tree:
a precheck may let a file through for nothing, never stop one the recipe
would report on."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, Iterator, List, Optional, Pattern, Sequence, Set, Tuple, Union

from migrate.recipe import SourceFacts

_CONTINUATION = re.compile(r"\\\r?\n")
# an import statement is one logical line holding the word `import`; the
# module's name is on that line once backslash continuations are joined
# (a parenthesized `from m import (...)` only wraps the imported names)
_IMPORT_LINE = re.compile(r"^.*\bimport\b.*$", re.M)


def dotted(node: ast.AST) -> Optional[str]:
    """``tf.keras.Model`` for that attribute chain; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def assigned_names(node: ast.AST) -> Iterator[str]:
    """Every plain name an ``=`` / annotated assignment statement binds."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                yield sub.id


def may_import(facts: SourceFacts, modules: Sequence[str]) -> bool:
    """Text-only: can the file hold ``import m`` / ``from m import ...`` for
    one of ``modules`` exactly (not a submodule: ``tensorflow.compat.v2`` is
    not ``tensorflow``)? No parse needed."""
    pattern = _module_pattern(tuple(modules))
    return any(pattern.search(line) for line in facts.derived("import lines", _import_lines))


def _import_lines(facts: SourceFacts) -> List[str]:
    return _IMPORT_LINE.findall(_CONTINUATION.sub(" ", facts.text))


@lru_cache(maxsize=None)
def _module_pattern(modules: tuple) -> Pattern:
    spelled = ["[ \t\f]*\\.[ \t\f]*".join(map(re.escape, m.split("."))) for m in modules]
    # not part of a longer dotted name on either side
    return re.compile(r"(?<![\w.])(?:" + "|".join(spelled) + r")(?!\w)(?![ \t\f]*\.)")


@dataclass
class Declarations:
    """What the file's ``import`` statements bind and the bases of its
    classes (of every class of a name, merged). Built from the ``ast`` here
    and from the fissix tree by ``recipes._fissix.import_table``, which must
    never answer more than this one."""

    aliases: Dict[str, Set[str]] = field(default_factory=dict)
    names: Dict[str, Dict[str, str]] = field(default_factory=dict)
    class_bases: Dict[str, List[Optional[str]]] = field(default_factory=dict)

    def module_aliases(self, module: str) -> Set[str]:
        """Local names bound to ``module`` by ``import module [as x]``."""
        return self.aliases.get(module, set())

    def imported_names(self, module: str) -> Dict[str, str]:
        """local name -> original name for ``from module import a [as b]``."""
        return self.names.get(module, {})


def declarations(facts: SourceFacts) -> Declarations:
    """The file's imports and classes, from one walk over its statements
    (expressions are not entered)."""
    return facts.derived("declarations", _collect_declarations)


def _collect_declarations(facts: SourceFacts) -> Declarations:
    found = Declarations()
    stack = list(facts.tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.aliases.setdefault(alias.name, set()).add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                table = found.names.setdefault(node.module, {})
                for alias in node.names:
                    table[alias.asname or alias.name] = alias.name
        else:
            if isinstance(node, ast.ClassDef):
                found.class_bases.setdefault(node.name, []).extend(map(dotted, node.bases))
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                block = getattr(node, name, None)
                if isinstance(block, list):
                    stack.extend(block)
    return found


def tapes(facts: SourceFacts) -> List[Tuple[ast.AST, str]]:
    """(with statement, tape name) for every ``with ...GradientTape(...) as
    name:`` (``recipes._fissix.tapes``); the text is read first."""
    if "GradientTape" not in facts.text:
        return []
    return facts.derived("tapes", _collect_tapes)


def _collect_tapes(facts: SourceFacts) -> List[Tuple[ast.AST, str]]:
    found = []
    for node in facts.nodes(ast.With, ast.AsyncWith):
        for item in node.items:
            call = item.context_expr
            if (isinstance(call, ast.Call) and isinstance(item.optional_vars, ast.Name)
                    and (dotted(call.func) or "").rpartition(".")[2] == "GradientTape"):
                found.append((node, item.optional_vars.id))
    return found


def method_calls(scope: Union[ast.AST, SourceFacts], receiver: str, method: str) -> Iterator[ast.Call]:
    """Calls ``receiver.method(...)`` inside ``scope``: a node, or a file's
    SourceFacts (its whole tree, from the shared index)."""
    for node in scope.nodes(ast.Call) if isinstance(scope, SourceFacts) else ast.walk(scope):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == method and isinstance(node.func.value, ast.Name)
                and node.func.value.id == receiver):
            yield node


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")  # lines as CPython counts them (a form feed is no break)


def source_segment(facts: SourceFacts, node: ast.AST) -> str:
    """``ast.get_source_segment(facts.text, node)`` from the text's lines,
    split once per text (the stdlib splits the whole text at every call)."""
    lines = facts.derived("lines", lambda f: _LINE.findall(f.text))
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset:].decode()
    tail = lines[last].encode()[:node.end_col_offset].decode()
    return head + "".join(lines[first + 1:last]) + tail
