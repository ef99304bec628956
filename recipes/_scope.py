"""Statement-level helpers for the seed-003 recipes: blocks, bindings, the
assignment that reaches a use, module aliases, and tree surgery that keeps
comments and indentation.

Everything here is conservative: an answer it cannot prove is None/False.
"""

from __future__ import annotations

import keyword
import re
from typing import Iterator, List, Optional, Set, Tuple

from fissix import pygram
from fissix.pgen2 import token
from fissix.pytree import Leaf, Node

from migrate.engine import parse
from recipes._ast import dotted_name as dotted
from recipes._ast import enclosing, is_name

syms = pygram.python_symbols

COMPOUND = {syms.if_stmt, syms.for_stmt, syms.while_stmt, syms.with_stmt, syms.try_stmt,
            syms.funcdef, syms.classdef, syms.async_stmt, syms.async_funcdef, syms.decorated}
LOOPS = {syms.for_stmt, syms.while_stmt}
_BLOCK_FILLER = {token.NEWLINE, token.INDENT, token.DEDENT, token.ENDMARKER}


# ---------------------------------------------------------------- text / shape

def code(node) -> str:
    """Canonical text of an expression: its leaves without whitespace/comments."""
    return "".join(leaf.value for leaf in node.leaves())


def shown(node) -> str:
    """An expression as the user wrote it, on one line (for messages)."""
    return re.sub(r"\s+", " ", str(node).strip())


def split_call(node) -> Optional[Tuple[str, List]]:
    """(dotted callee, argument nodes) when ``node`` is exactly ``a.b.c(args)``."""
    if node.type != syms.power or len(node.children) < 2:
        return None
    last = node.children[-1]
    if not (last.type == syms.trailer and last.children[0].value == "("):
        return None
    head = node.children[:-1]
    if len(head) == 1:
        callee = dotted(head[0])
    else:
        callee = dotted(Node(syms.power, [c.clone() for c in head]))
    if callee is None:
        return None
    return callee, call_args(last)


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


# ---------------------------------------------------------------- statements

def is_block(node) -> bool:
    return node.type in (syms.suite, syms.file_input)


def statements(block) -> List:
    """Statements of a suite / file_input (or a one-line body)."""
    if not is_block(block):
        return [block]
    return [c for c in block.children if not (isinstance(c, Leaf) and c.type in _BLOCK_FILLER)]


def enclosing_statement(node):
    """The statement (a child of a block) that contains ``node``."""
    while node.parent is not None:
        parent = node.parent
        if is_block(parent) or (node.type == syms.simple_stmt and parent.type in COMPOUND):
            return node
        node = parent
    return None


def attached(node, root) -> bool:
    """Is ``node`` still part of the tree under ``root`` (not replaced away)?"""
    while node is not None:
        if node is root:
            return True
        node = node.parent
    return False


def scope_of(node):
    """The function (or module) whose locals ``node`` reads."""
    return enclosing(node, syms.funcdef, syms.file_input)


def blocks(tree) -> Iterator:
    """Every suite and the module itself."""
    for node in tree.pre_order():
        if is_block(node):
            yield node


def simple_assignment(stmt) -> Optional[Tuple[object, object]]:
    """(target, value) of ``target = value`` on its own line."""
    if stmt.type != syms.simple_stmt or len(stmt.children) != 2:
        return None
    expr = stmt.children[0]
    if expr.type != syms.expr_stmt or len(expr.children) != 3 or expr.children[1].type != token.EQUAL:
        return None
    return expr.children[0], expr.children[2]


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
        index = siblings.index(stmt)
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
        for previous in reversed(siblings[:siblings.index(stmt)]):
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
    """Every NAME spelled anywhere in a scope (for picking fresh names)."""
    return {leaf.value for leaf in scope.leaves() if leaf.type == token.NAME}


def fresh_name(base: str, taken: Set[str]) -> str:
    """``base`` (or ``base2``, ``base3``...) not yet spelled in ``taken``, never a keyword."""
    base = re.sub(r"\W", "_", base)
    name, n = base, 2
    while name in taken or keyword.iskeyword(name):
        name = f"{base}{n}"
        n += 1
    taken.add(name)
    return name


# ---------------------------------------------------------------- tapes

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
            call = split_call(node) if node.type == syms.power else None
            if not call or call[0] != f"{self.name}.watch" or len(call[1]) != 1:
                continue
            arg = call[1][0]
            elements = literal_elements(arg)
            found.extend(elements if elements is not None else [arg])
        return found

    def later_statements(self, names) -> List:
        """Statements after the ``with`` in its block, up to one that rebinds
        the tape or any of ``names``."""
        siblings = statements(self.stmt.parent)
        later = []
        for stmt in siblings[siblings.index(self.stmt) + 1:]:
            bound = bound_names(stmt)
            if self.name in bound or bound & names:
                break
            later.append(stmt)
        return later


def tapes(tree) -> List[Tape]:
    """Every ``with ...GradientTape(...) as name:`` in the tree."""
    found = []
    for node in tree.pre_order():
        if node.type != syms.with_stmt or len(node.children) != 4:
            continue
        item = node.children[1]
        if item.type != syms.with_item or not is_name(item.children[2]):
            continue
        call = split_call(item.children[0]) if item.children[0].type == syms.power else None
        if call and call[0].split(".")[-1] == "GradientTape":
            found.append(Tape(node, item.children[2].value))
    return found


# ---------------------------------------------------------------- surgery

def parse_statement(source: str):
    """One statement node parsed from ``source`` (no prefix), detached."""
    stmt = parse(source.rstrip("\n") + "\n").children[0]
    stmt.remove()
    stmt.prefix = ""
    return stmt


def parse_expression(source: str):
    stmt = parse_statement(source)
    expr = stmt.children[0]
    expr.remove()
    return expr


def indent_of(stmt) -> str:
    return " " * next(stmt.leaves()).column


def insert_before(stmt, new_stmt) -> None:
    """Insert ``new_stmt`` just above ``stmt`` at the same indentation; the
    comments above ``stmt`` stay above the pair."""
    indent = indent_of(stmt)
    new_stmt.prefix = "" if _first_in_suite(stmt) else stmt.prefix
    stmt.prefix = indent
    parent = stmt.parent
    parent.insert_child(parent.children.index(stmt), new_stmt)


def _first_in_suite(stmt) -> bool:
    prev = stmt.prev_sibling
    return prev is not None and isinstance(prev, Leaf) and prev.type == token.INDENT


def remove_statement(stmt) -> None:
    """Delete a statement; its comments (above it and at its end) move to the
    statement that follows."""
    lines = [line for line in stmt.prefix.splitlines() if line.strip()]
    newline = stmt.children[-1] if stmt.type == syms.simple_stmt else None
    if newline is not None and newline.prefix.strip().startswith("#"):
        lines.append(indent_of(stmt) + newline.prefix.strip())
    comments = "".join(line + "\n" for line in lines)
    following = stmt.next_sibling
    first = _first_in_suite(stmt)
    stmt.remove()
    if following is None:
        return
    if first and not isinstance(following, Leaf):
        own = "".join(line + "\n" for line in following.prefix.splitlines() if line.strip())
        following.prev_sibling.prefix += comments + own
        following.prefix = ""
    else:
        following.prefix = comments + following.prefix


def move_leading_comments(source_stmt, target_stmt) -> None:
    """Move the comment lines above one statement to above another."""
    lines = [line.strip() for line in source_stmt.prefix.splitlines() if line.strip().startswith("#")]
    if not lines:
        return
    comments = "".join(indent_of(target_stmt) + line + "\n" for line in lines)
    source_stmt.prefix = source_stmt.prefix[source_stmt.prefix.rfind("\n") + 1:]
    if _first_in_suite(target_stmt):
        target_stmt.prev_sibling.prefix += comments
    else:
        cut = target_stmt.prefix.rfind("\n") + 1
        target_stmt.prefix = target_stmt.prefix[:cut] + comments + target_stmt.prefix[cut:]


def move_trailing_comment(source_stmt, target_stmt) -> None:
    """Move ``# comment`` at the end of one simple statement's line to
    another's, unless that one already has its own."""
    src, dst = source_stmt.children[-1], target_stmt.children[-1]
    if src.prefix.strip().startswith("#") and not dst.prefix.strip():
        dst.prefix, src.prefix = src.prefix, ""


def occurrences(root, expr) -> List[Tuple[object, int]]:
    """Where ``expr`` is evaluated inside ``root``: (node, k) pairs; k > 0 when
    ``expr`` is the first k children of a longer ``power`` node
    (``path[i].shape`` holds ``path[i]``), k == 0 for a whole node."""
    wanted = code(expr)
    found = []
    parts = [code(c) for c in expr.children] if expr.type == syms.power else None
    for node in root.pre_order():
        if node.type == expr.type and code(node) == wanted:
            found.append((node, 0))
        elif parts and node.type == syms.power and len(node.children) > len(parts) \
                and [code(c) for c in node.children[:len(parts)]] == parts:
            found.append((node, len(parts)))
    return found


def substitute(node, k: int, name: str) -> None:
    """Replace an occurrence found by `occurrences` with the variable ``name``."""
    leaf = Leaf(token.NAME, name)
    if k == 0:
        replace_with(node, leaf)
        return
    head = node.children[:k]
    leaf.prefix = head[0].prefix
    for child in head:
        child.remove()
    node.insert_child(0, leaf)


def fill(template: str, **parts):
    """Parse a statement from ``template`` whose ``__name__`` placeholders are
    replaced by the given (detached or cloned) nodes."""
    stmt = parse_statement(template)
    for leaf in list(stmt.leaves()):
        key = leaf.value.strip("_") if leaf.value.startswith("__") else None
        if key in parts:
            node = parts[key]
            if node.parent is not None:
                node.remove()
            node.prefix = leaf.prefix
            leaf.replace(node)
    return stmt


def replace_with(old, new) -> None:
    new.prefix = old.prefix
    old.replace(new)
