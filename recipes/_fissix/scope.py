"""Statements and scopes in the fissix tree: the statements of a block, the
nodes of a scope, fresh names. Imports, bindings (what a statement binds,
the assignments of a scope), reaching definitions and tapes are the
semantic model's (``recipes._model``)."""

from __future__ import annotations

import keyword
import re
from typing import Iterator, List, Optional, Set, Tuple

from fissix.pgen2 import token
from fissix.pytree import Leaf

from migrate.toplevel import unseen
from recipes._fissix.nodes import is_name, name_leaves, syms

LAYOUT = (token.NEWLINE, token.INDENT, token.DEDENT, token.ENDMARKER)  # tokens between statements

_SCOPES = (syms.funcdef, syms.classdef, syms.lambdef)


COMPOUND = {syms.if_stmt, syms.for_stmt, syms.while_stmt, syms.with_stmt, syms.try_stmt,
            syms.funcdef, syms.classdef, syms.async_stmt, syms.async_funcdef, syms.decorated}


LOOPS = {syms.for_stmt, syms.while_stmt}


def enclosing(node, *types):
    """Nearest proper ancestor of one of ``types``."""
    node = node.parent
    while node is not None and node.type not in types:
        node = node.parent
    return node


def enclosing_function(node):
    """The funcdef around ``node``; None at module level."""
    return enclosing(node, syms.funcdef)


def scope_nodes(scope) -> Iterator:
    """Nodes of ``scope`` (a funcdef or file_input) outside nested
    functions, classes and lambdas."""
    body = scope.children[-1] if scope.type == syms.funcdef else scope
    stack = [body]
    while stack:
        node = stack.pop()
        yield node
        for child in reversed(node.children):
            if child.type not in _SCOPES:
                stack.append(child)


def statement_of(node):
    """The statement (a direct child of a suite or file_input) containing ``node``."""
    while node.parent is not None and node.parent.type not in (syms.suite, syms.file_input):
        node = node.parent
    return node


def single_assignment(node) -> Optional[Tuple[object, object]]:
    """(target, value) when ``node`` is an ``expr_stmt`` ``target = value``."""
    if node.type != syms.expr_stmt or len(node.children) != 3:
        return None
    if node.children[1].type != token.EQUAL:
        return None
    return node.children[0], node.children[2]


def is_sole_statement_on_line(expr_stmt) -> bool:
    """True when the expr_stmt is the only small statement of its line (no ``;``)."""
    parent = expr_stmt.parent
    return parent is not None and parent.type == syms.simple_stmt and len(parent.children) == 2


def is_block(node) -> bool:
    return node.type in (syms.suite, syms.file_input)


def statements(block) -> List:
    """Statements of a suite / file_input (or a one-line body)."""
    if not is_block(block):
        return [block]
    return [c for c in block.children if not (isinstance(c, Leaf) and c.type in LAYOUT)]


def enclosing_statement(node):
    """The statement (a child of a block) that contains ``node``."""
    while node.parent is not None:
        parent = node.parent
        if is_block(parent) or (node.type == syms.simple_stmt and parent.type in COMPOUND):
            return node
        node = parent
    return None


def scope_of(node):
    """The function (or module) whose locals ``node`` reads."""
    return enclosing(node, syms.funcdef, syms.file_input)


def blocks(tree) -> Iterator:
    """Every suite and the module itself."""
    for node in tree.pre_order():
        if is_block(node):
            yield node


def simple_assignment(stmt) -> Optional[Tuple[object, object]]:
    """(target, value) of ``target = value`` on its own line (a simple_stmt)."""
    if stmt.type != syms.simple_stmt or len(stmt.children) != 2:
        return None
    return single_assignment(stmt.children[0])


def assigned_name(stmt) -> Optional[str]:
    pair = simple_assignment(stmt)
    if pair and is_name(pair[0]):
        return pair[0].value
    return None


def reads(node, name: str) -> bool:
    return any(leaf.value == name for leaf in name_leaves(node))


def scope_names(scope) -> Set[str]:
    """Every NAME spelled anywhere in a scope (for picking fresh names); for
    the module, also in the statements a restricted pass does not see."""
    names = {leaf.value for leaf in scope.leaves() if leaf.type == token.NAME}
    return names | unseen().names if scope.type == syms.file_input else names


def fresh_name(base: str, taken: Set[str]) -> str:
    """``base`` (or ``base2``, ``base3``...) not yet spelled in ``taken``, never a keyword."""
    base = re.sub(r"\W", "_", base)
    name, n = base, 2
    while name in taken or keyword.iskeyword(name):
        name = f"{base}{n}"
        n += 1
    taken.add(name)
    return name
