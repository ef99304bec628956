"""Shared fissix helpers for recipes: names, scopes, calls, and statement
surgery by parsing generated source text (so generated code is always real
fissix nodes and comments in node prefixes survive).

Not a recipe (the leading underscore keeps the registry away).
"""

from __future__ import annotations

import textwrap
from typing import Dict, Iterator, List, Optional, Set, Tuple

from fissix import pygram
from fissix.pgen2 import token
from fissix.pytree import Leaf, Node

from migrate.engine import parse
from recipes._pyast import Declarations

syms = pygram.python_symbols
LN = "Leaf | Node"

_LAYOUT = (token.NEWLINE, token.INDENT, token.DEDENT, token.ENDMARKER)
_SCOPES = (syms.funcdef, syms.classdef, syms.lambdef)


# --- names and expressions -------------------------------------------------

def is_name(node, value: Optional[str] = None) -> bool:
    return node.type == token.NAME and (value is None or node.value == value)


def dotted_name(node) -> Optional[str]:
    """``a.b.c`` for a NAME or a power of NAME and ``.attr`` trailers, else None."""
    if is_name(node):
        return node.value
    if node.type != syms.power or not is_name(node.children[0]):
        return None
    parts = [node.children[0].value]
    for trailer in node.children[1:]:
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
    callee = Node(syms.power, [c.clone() for c in node.children[:-1]]) \
        if len(node.children) > 2 else node.children[0]
    name = dotted_name(callee)
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


def sequence_items(node) -> Optional[List]:
    """Items of a tuple/list literal (``(a, b)``, ``[a, b]``, ``(a,)``); None otherwise."""
    if node.type != syms.atom or node.children[0].type not in (token.LPAR, token.LSQB):
        return None
    inner = node.children[1:-1]
    if not inner:
        return []
    body = inner[0]
    if body.type in (syms.testlist_gexp, syms.listmaker):
        if any(c.type == syms.comp_for for c in body.children):
            return None
        return [c for c in body.children if c.type != token.COMMA]
    if node.children[0].type == token.LSQB:
        return [body]
    return None  # a parenthesised expression, not a tuple


def source(node) -> str:
    """The code of ``node`` without its leading whitespace/comments."""
    return str(node).strip()


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


# --- imports ---------------------------------------------------------------

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


def add_import(root, line: str) -> None:
    """Insert ``line`` (an import statement) after the leading block of
    docstring and imports, so the name exists before any code uses it."""
    anchor = None
    for stmt in (c for c in root.children if c.type not in _LAYOUT):
        first = stmt.children[0] if stmt.type == syms.simple_stmt else None
        if first is None:
            break
        if first.type in (syms.import_name, syms.import_from):
            anchor = stmt
        elif not (first.type == token.STRING and anchor is None):
            break
        else:
            anchor = stmt
    if anchor is None:
        new = statements_from_source(line + "\n", "")
        first_leaf = next(root.leaves())
        new[0].prefix, first_leaf.prefix = first_leaf.prefix, ""
        for i, stmt in enumerate(new):
            root.insert_child(i, stmt)
    else:
        insert_after(anchor, line + "\n")


# --- scopes and statements -------------------------------------------------

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


def indent_of(stmt) -> str:
    """The indentation of a statement that sits directly in a suite/file_input."""
    suite = stmt.parent
    if suite is None or suite.type != syms.suite:
        return ""
    for child in suite.children:
        if child.type == token.INDENT:
            return child.value
    return ""


def start(node) -> Tuple[int, int]:
    """(line, column) where ``node``'s code begins (in the parsed input)."""
    leaf = next(node.leaves()) if isinstance(node, Node) else node
    return leaf.lineno, leaf.column


def contains(outer, inner) -> bool:
    """Is ``inner`` ``outer`` or inside it?"""
    node = inner
    while node is not None:
        if node is outer:
            return True
        node = node.parent
    return False


# --- building and moving code ----------------------------------------------

def parse_expression(text: str):
    """A fresh expression node for ``text`` (parsed as an expression statement)."""
    stmt = parse(text.strip() + "\n").children[0]
    expr = stmt.children[0]
    expr.remove()
    expr.prefix = ""
    return expr


def statements_from_source(text: str, indent: str) -> List:
    """Statement nodes for ``text`` (dedented code), indented by ``indent`` and
    detached, ready to be put in a suite at that indentation. Comment lines
    before the first statement end up in its prefix."""
    code = textwrap.dedent(text)
    if not code.endswith("\n"):
        code += "\n"
    comments = ""
    if indent:
        tree = parse("if True:\n" + textwrap.indent(code, indent))
        suite = tree.children[0].children[3]
        stmts = [c for c in suite.children if c.type not in _LAYOUT]
        comments = next(c for c in suite.children if c.type == token.INDENT).prefix
    else:
        tree = parse(code)
        stmts = [c for c in tree.children if c.type not in _LAYOUT]
        comments = stmts[0].prefix
    for stmt in stmts:
        stmt.remove()
    stmts[0].prefix = comments + indent if indent else comments
    return stmts


def replace_statement(old, text: str) -> List:
    """Replace statement ``old`` by the statements of ``text`` (dedented code);
    comments before ``old`` stay before the first new statement."""
    indent = indent_of(old)
    new = statements_from_source(text, indent)
    comments = new[0].prefix[: len(new[0].prefix) - len(indent)]
    indent_leaf = old.prev_sibling if old.prev_sibling is not None \
        and old.prev_sibling.type == token.INDENT else None
    if indent_leaf is not None:
        indent_leaf.prefix += comments
        new[0].prefix = old.prefix
    else:
        head = old.prefix[: len(old.prefix) - len(indent)] if old.prefix.endswith(indent) else old.prefix
        new[0].prefix = head + comments + indent
    trailing = _take_trailing_prefix(old)
    old.replace(new)
    if trailing:
        _prepend_to_following(new[-1], trailing)
    return new


def insert_after(stmt, text: str) -> List:
    """Insert the statements of ``text`` right after statement ``stmt``.

    Comments that fissix parked at the end of a compound statement (the
    DEDENT prefix) are split: lines indented deeper than ``stmt`` stay at the
    end of its block, the rest keep preceding whatever followed ``stmt``.
    """
    indent = indent_of(stmt)
    new = statements_from_source(text, indent)
    kept, moved = _split_block_comments(_take_trailing_prefix(stmt), indent)
    if kept:
        _last_leaf(stmt).prefix = kept
    parent = stmt.parent
    index = parent.children.index(stmt)
    for offset, node in enumerate(new, start=1):
        parent.insert_child(index + offset, node)
    if moved:
        _prepend_to_following(new[-1], moved)
    return new


def remove_statement(stmt) -> None:
    """Remove ``stmt``, keeping the comments around it without doubling blank
    lines; a suite left empty gets a ``pass``."""
    suite = stmt.parent
    if suite.type == syms.suite and [c for c in suite.children if c.type not in _LAYOUT] == [stmt]:
        replace_statement(stmt, "pass\n")
        return
    indent = indent_of(stmt)
    indent_leaf = stmt.prev_sibling if stmt.prev_sibling is not None \
        and stmt.prev_sibling.type == token.INDENT else None
    head = stmt.prefix
    if indent and head.endswith(indent):
        head = head[: -len(indent)]
    before = head
    previous = preceding_leaf(stmt)
    dangling = indent and indent_leaf is None and not stmt.prefix.endswith(indent)
    while previous is not None and previous.type == token.DEDENT:
        if dangling and previous.prefix.endswith(indent):
            # after a block, fissix keeps this line's indentation in the DEDENT
            previous.prefix = previous.prefix[: -len(indent)]
            dangling = False
        before = previous.prefix + before
        previous = preceding_leaf(previous)
    trailing = _take_trailing_prefix(stmt)
    follower = following_leaf(stmt)
    stmt.remove()
    if follower is None:
        return
    rest = follower.prefix
    if _ends_with_blank_line(before) and not (head + trailing).strip():
        rest = _without_leading_blank_lines(rest)
    text = head + trailing + rest
    if indent_leaf is None:
        follower.prefix = text
        return
    if text.endswith(indent):
        text = text[: -len(indent)]
    if not indent_leaf.prefix.strip():
        text = _without_leading_blank_lines(text)
    indent_leaf.prefix += text  # the new first statement's comments live before the INDENT
    follower.prefix = ""


def _ends_with_blank_line(prefix: str) -> bool:
    lines = prefix.rstrip(" \t").split("\n")[:-1]
    return bool(lines) and not lines[-1].strip()


def _without_leading_blank_lines(prefix: str) -> str:
    lines = prefix.split("\n")
    while len(lines) > 1 and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def _last_leaf(node):
    while isinstance(node, Node) and node.children:
        node = node.children[-1]
    return node


def _take_trailing_prefix(stmt) -> str:
    """Detach the prefix of a compound statement's final DEDENT (comments and
    the next line's indentation that fissix stores there)."""
    dedents = []
    for leaf in reversed(list(stmt.leaves())):  # a nested block ends in several
        if leaf.type != token.DEDENT:
            break
        dedents.insert(0, leaf)
    text = "".join(leaf.prefix for leaf in dedents)
    for leaf in dedents:
        leaf.prefix = ""
    return text


def _split_block_comments(text: str, indent: str) -> Tuple[str, str]:
    """Lines of ``text`` indented deeper than ``indent`` (comments that close
    the block) and the rest."""
    lines = text.splitlines(keepends=True)
    kept = []
    for line in lines:
        if line.endswith("\n") and line.strip() and len(line) - len(line.lstrip()) > len(indent):
            kept.append(line)
        else:
            break
    return "".join(kept), "".join(lines[len(kept):])


def following_leaf(node):
    """The first leaf after ``node`` in source order (None at the end)."""
    while node is not None and node.next_sibling is None:
        node = node.parent
    if node is None:
        return None
    node = node.next_sibling
    while isinstance(node, Node) and node.children:
        node = node.children[0]
    return node


def preceding_leaf(node):
    """The last leaf before ``node`` in source order (None at the start)."""
    while node is not None and node.prev_sibling is None:
        node = node.parent
    if node is None:
        return None
    node = node.prev_sibling
    while isinstance(node, Node) and node.children:
        node = node.children[-1]
    return node


def _prepend_to_following(node, text: str) -> None:
    follower = following_leaf(node)
    if follower is not None:
        follower.prefix = text + follower.prefix
