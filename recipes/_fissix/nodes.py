"""Names, expressions and positions in the fissix tree: what a node is
(a name, a dotted name, a call, a subscript, a display) and where it is.
Everything here is conservative: an answer it cannot prove is None/False."""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Tuple

from fissix import pygram
from fissix.pgen2 import token
from fissix.pytree import Leaf, Node

syms = pygram.python_symbols

def is_name(node, value: Optional[str] = None) -> bool:
    return node.type == token.NAME and (value is None or node.value == value)


def dotted_name(node) -> Optional[str]:
    """``a.b.c`` for a NAME or a power of NAME and ``.attr`` trailers, else None."""
    if is_name(node):
        return node.value
    return _dotted(node.children) if node.type == syms.power else None


def _dotted(children) -> Optional[str]:
    """``a.b.c`` for the children of a power node that are a NAME and ``.attr`` trailers."""
    if not is_name(children[0]):
        return None
    parts = [children[0].value]
    for trailer in children[1:]:
        if not (trailer.type == syms.trailer and trailer.children[0].type == token.DOT):
            return None
        parts.append(trailer.children[1].value)
    return ".".join(parts)


def call_parts(node) -> Optional[Tuple[str, List, Dict[str, object]]]:
    """(callee, positional args, keyword args) when ``node`` is a call of a
    dotted name (``f(...)``, ``np.zeros(...)``); None otherwise."""
    if node.type != syms.power or len(node.children) < 2:
        return None
    last = node.children[-1]
    if not (last.type == syms.trailer and last.children[0].type == token.LPAR):
        return None
    name = _dotted(node.children[:-1]) if len(node.children) > 2 else dotted_name(node.children[0])
    if name is None:
        return None
    positional, keywords = split_arguments(last)
    return name, positional, keywords


def split_arguments(trailer) -> Tuple[List, Dict[str, object]]:
    """Positional argument nodes and keyword name -> value node of a call trailer."""
    inner = trailer.children[1:-1]
    if not inner:
        return [], {}
    args = inner[0].children if inner[0].type == syms.arglist else inner
    positional, keywords = [], {}
    for arg in args:
        if arg.type == token.COMMA:
            continue
        if arg.type == syms.argument and len(arg.children) == 3 and arg.children[1].type == token.EQUAL:
            keywords[arg.children[0].value] = arg.children[2]
        else:
            positional.append(arg)
    return positional, keywords


def is_call(node) -> bool:
    return (node.type == syms.power and node.children[-1].type == syms.trailer
            and node.children[-1].children[0].type == token.LPAR)


def subscript_parts(node) -> Optional[Tuple[str, List]]:
    """(name, index components) for ``name[a, b, ...]``; None otherwise."""
    if node.type != syms.power or len(node.children) != 2 or not is_name(node.children[0]):
        return None
    trailer = node.children[1]
    if trailer.type != syms.trailer or trailer.children[0].type != token.LSQB:
        return None
    index = trailer.children[1]
    if index.type == syms.subscriptlist:
        parts = [c for c in index.children if c.type != token.COMMA]
    else:
        parts = [index]
    return node.children[0].value, parts


def is_full_slice(node) -> bool:
    """A bare ``:``."""
    return node.type == token.COLON


def source(node) -> str:
    """The code of ``node`` without its leading whitespace/comments."""
    return str(node).strip()


def code(node) -> str:
    """Canonical text of an expression: its leaves without whitespace/comments."""
    return "".join(leaf.value for leaf in node.leaves())


def shown(node) -> str:
    """An expression as the user wrote it, on one line (for messages)."""
    return re.sub(r"\s+", " ", str(node).strip())


def call_args(trailer) -> List:
    """Argument nodes of a call trailer ``( ... )``."""
    if len(trailer.children) == 2:
        return []
    inner = trailer.children[1]
    if inner.type == syms.arglist:
        return [c for c in inner.children if not (isinstance(c, Leaf) and c.value == ",")]
    return [inner]


def keyword_arg(arg) -> Optional[Tuple[str, object]]:
    """(name, value) for a ``name=value`` argument."""
    if arg.type == syms.argument and len(arg.children) == 3 and arg.children[1].value == "=":
        return arg.children[0].value, arg.children[2]
    return None


def literal_elements(node) -> Optional[List]:
    """Elements of a list/tuple display (``[a, b]``, ``(a, b)``), else None."""
    if node.type != syms.atom or node.children[0].value not in "[(":
        return None
    if len(node.children) == 2:
        return []
    inner = node.children[1]
    if inner.type in (syms.listmaker, syms.testlist_gexp):
        if any(c.type in (syms.comp_for,) for c in inner.children):
            return None
        return [c for c in inner.children if not (isinstance(c, Leaf) and c.value == ",")]
    if node.children[0].value == "[":
        return [inner]
    return None


def unparen(node):
    while node.type == syms.atom and node.children[0].value == "(" and literal_elements(node) is None \
            and len(node.children) == 3:
        node = node.children[1]
    return node


def name_leaves(node) -> Iterator[Leaf]:
    """Variable references: NAME leaves that are not attribute names, keyword
    argument names or def/class names."""
    for leaf in node.leaves():
        if leaf.type != token.NAME or leaf.value in _KEYWORDS:
            continue
        prev = leaf.prev_sibling
        if prev is not None and isinstance(prev, Leaf) and prev.value == ".":
            continue
        parent = leaf.parent
        if parent is not None and parent.type == syms.argument and parent.children[0] is leaf \
                and len(parent.children) == 3 and parent.children[1].value == "=":
            continue
        if parent is not None and parent.type in (syms.funcdef, syms.classdef) and parent.children[1] is leaf:
            continue
        yield leaf


_KEYWORDS = {"True", "False", "None", "and", "or", "not", "in", "is", "if", "else", "for",
             "lambda", "await", "yield", "return", "def", "class", "with", "as", "import",
             "from", "while", "try", "except", "finally", "pass", "break", "continue", "del",
             "global", "nonlocal", "raise", "assert", "elif", "async"}


def name_reads(scope, name: str) -> List[Leaf]:
    """NAME leaves spelling the variable ``name`` inside ``scope`` (attribute
    names and keyword-argument names are not variables)."""
    found = []
    for leaf in scope.leaves():
        if not is_name(leaf, name):
            continue
        prev = leaf.prev_sibling
        if prev is not None and prev.type == token.DOT:
            continue
        parent = leaf.parent
        if (parent is not None and parent.type == syms.argument and parent.children[0] is leaf
                and len(parent.children) == 3 and parent.children[1].type == token.EQUAL):
            continue
        found.append(leaf)
    return found


def start(node) -> Tuple[int, int]:
    """(line, column) where ``node``'s code begins (in the parsed input)."""
    leaf = next(node.leaves()) if isinstance(node, Node) else node
    return leaf.lineno, leaf.column


_last_found = [0, 0]  # id of the list and the position of index_of's last answer


def index_of(nodes: List, node) -> int:
    """Where ``node`` itself is in ``nodes``. list.index compares fissix trees
    by structure: slow on repeated code, and wrong when an equal one comes
    first. Looked for first around the last answer in the same list (a fix
    asks about the statements next to the one it changes: in a module of
    many, a search of every child per question made fixing quadratic)."""
    near = _last_found[1] if _last_found[0] == id(nodes) else 0
    for at in range(max(near - 4, 0), min(near + 5, len(nodes))):
        if nodes[at] is node:
            break
    else:
        at = list(map(id, nodes)).index(id(node))  # ids compared in C; ValueError when absent
    _last_found[:] = id(nodes), at
    return at


def contains(outer, inner) -> bool:
    """Is ``inner`` ``outer`` or inside it?"""
    node = inner
    while node is not None:
        if node is outer:
            return True
        node = node.parent
    return False


def following_leaf(node):
    """The first leaf after ``node`` in source order (None at the end)."""
    return _adjacent_leaf(node, 1, 0)


def preceding_leaf(node):
    """The last leaf before ``node`` in source order (None at the start)."""
    return _adjacent_leaf(node, -1, -1)


def sibling(node, step: int):
    """The child of ``node``'s parent ``step`` (-1, 1) places from it, or None.
    fissix's ``prev_sibling`` / ``next_sibling`` rebuild the parent's sibling
    maps, a Python loop over its children, after every change to them: once
    per fix in a module of many fixed statements."""
    parent = node.parent
    if parent is None:
        return None
    at = index_of(parent.children, node) + step
    return parent.children[at] if 0 <= at < len(parent.children) else None


def _adjacent_leaf(node, step: int, edge: int):
    while node is not None and sibling(node, step) is None:
        node = node.parent
    if node is None:
        return None
    node = sibling(node, step)
    while isinstance(node, Node) and node.children:
        node = node.children[edge]
    return node


def last_leaf(node):
    while isinstance(node, Node) and node.children:
        node = node.children[-1]
    return node
