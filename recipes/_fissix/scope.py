"""Statements, scopes and bindings in the fissix tree: the import table,
the statements of a block, what a statement binds, the assignment that
reaches a use, GradientTape blocks."""

from __future__ import annotations

import keyword
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

from fissix.pgen2 import token
from fissix.pytree import Leaf, Node

from migrate.slicing import unseen
from recipes._fissix.nodes import (call_args, call_parts, index_of, is_name, literal_elements, name_leaves,
                                   syms, unparen)
from recipes._fissix.cache import nodes_of_type
from recipes._pyast import Declarations

LAYOUT = (token.NEWLINE, token.INDENT, token.DEDENT, token.ENDMARKER)  # tokens between statements

_STATEMENT_CONTAINERS = (
    syms.file_input, syms.suite, syms.simple_stmt, syms.if_stmt, syms.try_stmt, syms.with_stmt,
    syms.for_stmt, syms.while_stmt, syms.funcdef, syms.classdef, syms.decorated,
    syms.async_stmt, syms.async_funcdef,
)


def import_statements(root) -> List:
    """Every ``import``/``from ... import`` node, found without walking into
    expressions (cheap on large files)."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.type in (syms.import_name, syms.import_from):
            found.append(node)
        elif node.type in _STATEMENT_CONTAINERS:
            stack.extend(reversed(node.children))
    return found


def import_table(root) -> Declarations:
    """What the file's import statements bind (``import m as x``, ``from m
    import a as b``; relative imports left out), in one walk."""
    table = Declarations()
    for node in import_statements(root):
        if node.type == syms.import_name:
            target = node.children[1]
            items = target.children if target.type == syms.dotted_as_names else [target]
            for item in items:
                if item.type == syms.dotted_as_name:
                    table.aliases.setdefault(dotted_name_text(item.children[0]), set()).add(
                        item.children[2].value)
                elif item.type != token.COMMA:
                    module = dotted_name_text(item)
                    table.aliases.setdefault(module, set()).add(module)
        elif not dotted_name_text(node.children[1]).startswith("."):  # not a relative import
            names = table.names.setdefault(dotted_name_text(node.children[1]), {})
            for child in node.children[3:]:
                items = child.children if child.type == syms.import_as_names else [child]
                for item in items:
                    if item.type == syms.import_as_name:
                        names[item.children[2].value] = item.children[0].value
                    elif is_name(item):
                        names[item.value] = item.value
    return table


def dotted_name_text(node) -> str:
    return "".join(leaf.value for leaf in node.leaves()) if isinstance(node, Node) else node.value


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


def bindings(scope) -> Dict[str, List]:
    """name -> values of every ``name = value`` in ``scope`` (outside nested scopes)."""
    found: Dict[str, List] = {}
    for node in scope_nodes(scope):
        parts = single_assignment(node)
        if parts and is_name(parts[0]):
            found.setdefault(parts[0].value, []).append(parts[1])
    return found


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


def _target_names(target) -> Iterator[str]:
    if is_name(target):
        yield target.value
    elif target.type in (syms.exprlist, syms.testlist_star_expr, syms.testlist_gexp,
                         syms.listmaker, syms.atom, syms.star_expr):
        for child in target.children:
            yield from _target_names(child)


def bound_names(stmt) -> Set[str]:
    """Names a statement binds in its own scope (nested scopes excluded)."""
    found: Set[str] = set()

    def visit(node):
        if node.type in (syms.funcdef, syms.classdef):
            found.add(node.children[1].value)
            return
        if node.type == syms.lambdef:
            return
        if node.type == syms.expr_stmt:
            kids = node.children
            for i, kid in enumerate(kids[:-1]):
                if kids[i + 1].type == token.EQUAL or kids[i + 1].type == syms.annassign \
                        or (isinstance(kids[i + 1], Leaf) and kids[i + 1].value.endswith("=")):
                    found.update(_target_names(kid))
        elif node.type in (syms.for_stmt,):
            if node.type == syms.for_stmt:
                found.update(_target_names(node.children[1]))
        elif node.type in (syms.with_stmt, syms.with_item):
            kids = node.children
            for i, kid in enumerate(kids):
                if isinstance(kid, Leaf) and kid.value == "as":
                    found.update(_target_names(kids[i + 1]))
        elif node.type in (syms.import_name, syms.import_from):
            for leaf in node.leaves():
                if leaf.type == token.NAME and leaf.value not in ("import", "from", "as"):
                    nxt = leaf.next_sibling
                    if nxt is None or not (isinstance(nxt, Leaf) and nxt.value in (".", "as")):
                        found.add(leaf.value)
        elif node.type in (syms.global_stmt, getattr(syms, "nonlocal_stmt", -1)):
            found.update(c.value for c in node.children[1:] if is_name(c))
        elif node.type == syms.namedexpr_test:
            found.update(_target_names(node.children[0]))
        elif node.type == syms.except_clause:
            kids = node.children
            for i, kid in enumerate(kids):
                if isinstance(kid, Leaf) and kid.value == "as":
                    found.update(_target_names(kids[i + 1]))
        for child in getattr(node, "children", []):
            visit(child)

    visit(stmt)
    return found


def reads(node, name: str) -> bool:
    return any(leaf.value == name for leaf in name_leaves(node))


def reaching_value(name: str, at) -> Optional[object]:
    """The value expression of the one assignment that certainly reaches the
    use of ``name`` in statement ``at`` (straight-line code, `with` bodies
    included); None when it is a parameter, a global, a loop-carried or a
    branch-dependent binding, or anything else it cannot prove."""
    stmt = at
    while stmt is not None:
        container = stmt.parent
        siblings = statements(container) if is_block(container) else [stmt]
        index = index_of(siblings, stmt)
        for previous in reversed(siblings[:index]):
            if name not in bound_names(previous):
                continue
            return _value_of(name, previous)
        owner = container if not is_block(container) else container.parent
        if owner is None or owner.type in (syms.file_input, syms.funcdef, syms.classdef):
            return None
        if owner.type in LOOPS | {syms.try_stmt} and name in bound_names(owner):
            return None
        if owner.type == syms.with_stmt and name in _header_names(owner):
            return None
        stmt = enclosing_statement(owner) if owner.type != syms.file_input else None
    return None


def binder(name: str, node):
    """The statement that last bound ``name`` where ``node`` runs: an earlier
    statement of the same or an enclosing block, or an enclosing ``with``/
    ``for`` whose header binds it; None at the scope's start."""
    stmt = enclosing_statement(node)
    while stmt is not None:
        container = stmt.parent
        siblings = statements(container) if is_block(container) else [stmt]
        for previous in reversed(siblings[:index_of(siblings, stmt)]):
            if name in bound_names(previous):
                return previous
        owner = container if not is_block(container) else container.parent
        if owner is None or owner.type in (syms.file_input, syms.funcdef, syms.classdef):
            return None
        if owner.type in (syms.with_stmt, syms.for_stmt) and name in _header_names(owner):
            return owner
        stmt = enclosing_statement(owner)
    return None


def _header_names(compound) -> Set[str]:
    header = Node(compound.type, [c.clone() for c in compound.children if c.type != syms.suite
                                  and c.type != syms.simple_stmt])
    return bound_names(header)


def _value_of(name: str, stmt):
    if stmt.type == syms.with_stmt and name not in _header_names(stmt):
        body = stmt.children[-1]
        for inner in reversed(statements(body)):
            if name in bound_names(inner):
                return _value_of(name, inner)
        return None
    pair = simple_assignment(stmt)
    if pair is None:
        return None
    target, value = pair
    if is_name(target):
        return value if target.value == name else None
    targets = literal_elements(target) if target.type == syms.atom else \
        [c for c in target.children if not (isinstance(c, Leaf) and c.value == ",")] \
        if target.type in (syms.exprlist, syms.testlist_star_expr) else None
    if not targets or not all(is_name(t) for t in targets):
        return None
    position = [t.value for t in targets].index(name)
    source = unparen(value)
    if is_name(source):
        source = reaching_value(source.value, stmt)
        if source is None:
            return None
    elements = literal_elements(source) if source.type == syms.atom else \
        [c for c in source.children if not (isinstance(c, Leaf) and c.value == ",")] \
        if source.type in (syms.testlist_star_expr, syms.testlist, syms.exprlist) else None
    if elements is None or len(elements) != len(targets):
        return None
    return elements[position]


def scope_names(scope) -> Set[str]:
    """Every NAME spelled anywhere in a scope (for picking fresh names); for
    the module, also in the statements a sliced run does not see."""
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


class Tape:
    """A ``with ...GradientTape(...) as name:`` statement."""

    def __init__(self, stmt, name: str):
        self.stmt = stmt
        self.name = name

    @property
    def body(self):
        return self.stmt.children[-1]

    def watch_arguments(self) -> List:
        """Expressions passed to ``tape.watch`` in the body (lists flattened)."""
        found = []
        for node in self.body.pre_order():
            call = call_parts(node)
            args = call_args(node.children[-1]) if call else []
            if not call or call[0] != f"{self.name}.watch" or len(args) != 1:
                continue
            arg = args[0]
            elements = literal_elements(arg)
            found.extend(elements if elements is not None else [arg])
        return found

    def later_statements(self, names) -> List:
        """Statements after the ``with`` in its block, up to one that rebinds
        the tape or any of ``names``."""
        siblings = statements(self.stmt.parent)
        later = []
        for stmt in siblings[index_of(siblings, self.stmt) + 1:]:
            bound = bound_names(stmt)
            if self.name in bound or bound & names:
                break
            later.append(stmt)
        return later


def tapes(tree) -> List[Tape]:
    """Every ``with ...GradientTape(...) as name:`` in the tree."""
    found = []
    for node in nodes_of_type(tree, syms.with_stmt):
        if len(node.children) != 4:
            continue
        item = node.children[1]
        if item.type != syms.with_item or not is_name(item.children[2]):
            continue
        call = call_parts(item.children[0])
        if call and call[0].split(".")[-1] == "GradientTape":
            found.append(Tape(node, item.children[2].value))
    return found


def tapes_by_statement(root) -> Dict[int, Tape]:
    """id(with statement) -> its Tape, for the whole tree."""
    return {id(tape.stmt): tape for tape in tapes(root)}
