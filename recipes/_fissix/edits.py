"""Tree surgery that keeps comments and indentation: statements and
expressions are built by parsing generated source text (so new code is made
of real fissix nodes) and comments in node prefixes move with the code."""

from __future__ import annotations

import functools
import textwrap
from typing import List, Tuple

from fissix.pgen2 import token
from fissix.pytree import Leaf

from recipes._fissix.nodes import code, following_leaf, index_of, last_leaf, preceding_leaf, sibling, syms
from recipes._fissix.scope import LAYOUT

def indent_of(stmt) -> str:
    """The indentation of a statement that sits directly in a suite/file_input."""
    suite = stmt.parent
    if suite is None or suite.type != syms.suite:
        return ""
    for child in suite.children:
        if child.type == token.INDENT:
            return child.value
    return ""


@functools.lru_cache(maxsize=512)
def _parsed(text: str):
    from migrate.engine import parse  # not at import: a run served by the cache never parses

    return parse(text)


def _parse(text: str):
    """A fresh tree of ``text``: a copy of its parse, made once per text (a
    recipe builds the same few snippets for every finding of a file)."""
    return _parsed(text).clone()


def parse_expression(text: str):
    """A fresh expression node for ``text`` (parsed as an expression statement)."""
    stmt = _parse(text.strip() + "\n").children[0]
    expr = stmt.children[0]
    expr.remove()
    expr.prefix = ""
    return expr


def parse_statement(source: str):
    """One statement node parsed from ``source`` (no prefix), detached."""
    stmt = _parse(source.rstrip("\n") + "\n").children[0]
    stmt.remove()
    stmt.prefix = ""
    return stmt


def statements_from_source(text: str, indent: str) -> List:
    """Statement nodes for ``text`` (dedented code), indented by ``indent`` and
    detached, ready to be put in a suite at that indentation. Comment lines
    before the first statement end up in its prefix."""
    code = textwrap.dedent(text)
    if not code.endswith("\n"):
        code += "\n"
    comments = ""
    if indent:
        tree = _parse("if True:\n" + textwrap.indent(code, indent))
        suite = tree.children[0].children[3]
        stmts = [c for c in suite.children if c.type not in LAYOUT]
        comments = next(c for c in suite.children if c.type == token.INDENT).prefix
    else:
        tree = _parse(code)
        stmts = [c for c in tree.children if c.type not in LAYOUT]
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
    indent_leaf = sibling(old, -1) if _first_in_suite(old) else None
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
        last_leaf(stmt).prefix = kept
    parent = stmt.parent
    index = index_of(parent.children, stmt)
    for offset, node in enumerate(new, start=1):
        parent.insert_child(index + offset, node)
    if moved:
        _prepend_to_following(new[-1], moved)
    return new


def remove_statement(stmt) -> None:
    """Remove ``stmt``, keeping the comments around it without doubling blank
    lines; a suite left empty gets a ``pass``."""
    suite = stmt.parent
    if suite.type == syms.suite and not any(c is not stmt and c.type not in LAYOUT for c in suite.children):
        replace_statement(stmt, "pass\n")
        return
    indent = indent_of(stmt)
    indent_leaf = sibling(stmt, -1) if _first_in_suite(stmt) else None
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


def _take_trailing_prefix(stmt) -> str:
    """Detach the prefixes of a compound statement's closing DEDENTs (comments
    and the next line's indentation that fissix stores there); a statement
    ending in nested blocks ends in several."""
    dedents = []
    for leaf in reversed(list(stmt.leaves())):
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


def _prepend_to_following(node, text: str) -> None:
    follower = following_leaf(node)
    if follower is not None:
        follower.prefix = text + follower.prefix


def add_import(root, line: str) -> None:
    """Insert ``line`` (an import statement) after the leading block of
    docstring and imports, so the name exists before any code uses it."""
    anchor = None
    for stmt in (c for c in root.children if c.type not in LAYOUT):
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


def insert_before(stmt, new_stmt) -> None:
    """Insert ``new_stmt`` just above ``stmt`` at the same indentation; the
    comments above ``stmt`` stay above the pair."""
    indent = indent_of(stmt)
    new_stmt.prefix = "" if _first_in_suite(stmt) else stmt.prefix
    stmt.prefix = indent
    parent = stmt.parent
    parent.insert_child(index_of(parent.children, stmt), new_stmt)


def _first_in_suite(stmt) -> bool:
    prev = sibling(stmt, -1)
    return prev is not None and isinstance(prev, Leaf) and prev.type == token.INDENT


def move_leading_comments(source_stmt, target_stmt) -> None:
    """Move the comment lines above one statement to above another."""
    lines = [line.strip() for line in source_stmt.prefix.splitlines() if line.strip().startswith("#")]
    if not lines:
        return
    comments = "".join(indent_of(target_stmt) + line + "\n" for line in lines)
    source_stmt.prefix = source_stmt.prefix[source_stmt.prefix.rfind("\n") + 1:]
    if _first_in_suite(target_stmt):
        sibling(target_stmt, -1).prefix += comments
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
