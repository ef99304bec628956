"""outside-tape's statements: where they are, what they read and bind,
whether moving them keeps every value, and proposing a move
(recipes/outside_tape.py)."""

from __future__ import annotations

from typing import List, Optional, Set

from migrate.recipe import propose
from recipes import _fissix as s
from recipes._model import model_of
from recipes._model.recording import Sources, effects, feeders


def method_at(power, names) -> Optional[int]:
    for i in range(len(power.children) - 2, 0, -1):
        trailer, args = power.children[i], power.children[i + 1]
        if trailer.children[0].type == s.token.DOT and trailer.children[1].value in names \
                and args.type == s.syms.trailer and args.children[0].type == s.token.LPAR:
            return i
    return None



def argument(trailer, position: int, keyword: str):
    positional, keywords = s.split_arguments(trailer)
    return positional[position] if len(positional) > position else keywords.get(keyword)



def within(node, ancestor) -> bool:
    return s.contains(ancestor, node)



def among(node, nodes) -> bool:
    """``node in nodes`` by identity (fissix's ``==`` compares trees: two
    statements spelled alike are equal)."""
    return any(other is node for other in nodes)



def depends(model, stmt, on, sources: Sources) -> bool:
    """Does ``stmt`` read the sources, or a value computed by a statement of ``on``?"""
    if sources.read_by(stmt):
        return True
    return any(among(f, on) for f in feeders(model, stmt))



def reading_sources(model, candidates: List, sources: Sources) -> List:
    """The statements of ``candidates`` that read the sources, or read what
    such a statement computes, in source order."""
    chosen: List = []
    for stmt in candidates:
        if sources.read_by(value(stmt)) or any(among(f, chosen) for f in feeders(model, value(stmt))):
            chosen.append(stmt)
    return chosen



def value(stmt):
    small = stmt.children[0] if stmt.type == s.syms.simple_stmt else stmt
    return small.children[-1] if small.type == s.syms.expr_stmt else small



def sibling_holding(node, stmt):
    """The statement of ``stmt``'s block that holds ``node``, when it comes after ``stmt``."""
    while node is not None and node.parent is not stmt.parent:
        node = node.parent
    if node is None or node is stmt:
        return None
    sibling = stmt.next_sibling
    while sibling is not None and sibling is not node:
        sibling = sibling.next_sibling
    return node if sibling is node else None



def between(stmt, first, last) -> bool:
    if stmt.parent is not first.parent:
        return False
    sibling = first.next_sibling
    while sibling is not None and sibling is not last:
        if sibling is stmt:
            return True
        sibling = sibling.next_sibling
    return False



def propose_moving(where, message: str, blocked: Optional[str], moved: List, when: str = "") -> bool:
    """Report only (``blocked`` says why), or offer to move the expressions
    ``moved``: unsafe when one has effects. True: rewrite now."""
    if blocked:
        propose(where, f"{message} ({blocked})", fixable=False)
        return False
    effect = next((e for e in (effects(model_of(where), expr) for expr in moved) if e), None)
    if effect:
        message += f" (unsafe: {effect}{when})"
    return propose(where, message, safety="unsafe" if effect else "safe")



def movable(stmts: List) -> Optional[str]:
    for stmt in stmts:
        pair = s.simple_assignment(stmt)
        if pair is None or not names_only(pair[0]) or stmt.parent is None or not s.is_block(stmt.parent):
            return f"`{code(stmt)}` is not a single assignment to names"
    return None



def names_only(target) -> bool:
    target = s.unparen(target)
    if target.type == s.token.NAME:
        return True
    if target.type in (s.syms.testlist_star_expr, s.syms.exprlist, s.syms.testlist_gexp, s.syms.atom):
        parts = s.literal_elements(target) if target.type == s.syms.atom else \
            [c for c in target.children if c.type != s.token.COMMA]
        return parts is not None and all(names_only(p) for p in parts)
    return False



def crossed(between: List, moved: List, read: Set[str]) -> Optional[str]:
    """Moving ``moved`` (and code reading ``read``) across ``between`` keeps
    every value: nothing there rebinds what they read, nor reads or rebinds
    what they bind."""
    bound = bound_names(moved)
    read = read | read_names_of(moved)
    for stmt in between:
        rebinds = model_of(stmt).names_bound_in(stmt) & (read | bound)
        reads = {leaf.value for leaf in s.name_leaves(stmt)} & bound
        if rebinds or reads:
            names = ", ".join(f"`{n}`" for n in sorted(rebinds | reads))
            return f"line {stmt.get_lineno()} reads or rebinds {names} in between"
    return None



def statements_between(first, last) -> List:
    found, sibling = [], first.next_sibling
    while sibling is not None and sibling is not last:
        if sibling.type not in s.LAYOUT:
            found.append(sibling)
        sibling = sibling.next_sibling
    return found



def bound_names(stmts: List) -> Set[str]:
    return {name for stmt in stmts for name in model_of(stmt).names_bound_in(stmt)}



def read_names(node) -> Set[str]:
    return {leaf.value for leaf in s.name_leaves(node)}



def read_names_of(stmts: List) -> Set[str]:
    return {name for stmt in stmts for name in read_names(value(stmt))}



def statement_text(stmt) -> str:
    text = str(stmt)[len(stmt.prefix):]
    return text if text.endswith("\n") else text + "\n"



def shown_part(stmt):
    """A statement without its newline and comment: where a finding spans."""
    return stmt.children[0] if stmt.type == s.syms.simple_stmt else stmt



def code(stmt) -> str:
    """A statement on one line, without the comments above it."""
    part = shown_part(stmt)
    return " ".join(str(part)[len(part.prefix):].split())
