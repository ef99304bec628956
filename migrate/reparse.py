"""The tree of a pass's output without parsing the whole file again.

A pass changes a few top-level statements of a large file; the others are
the same text, so their nodes are kept and only their line numbers move.
Each run of consecutive changed statements is parsed alone: a top-level
statement starts with the tokenizer in its initial state (no indentation, no
open bracket), so its nodes are those a parse of the whole text would make.
Anything unexpected (a run that does not parse, or whose last block would
hand comments to the end of the file) returns None and the caller parses
the whole text as before.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from fissix import pygram, pytree
from fissix.pgen2 import token

_FILE_INPUT = pygram.python_symbols.file_input


def reparse(root: pytree.Node, spans: Sequence[Tuple[pytree.Base, int]],
            parse: Callable[[str], pytree.Node]) -> Optional[pytree.Node]:
    """What ``parse(str(root))`` gives, ``root`` being a tree after a pass,
    built from it (its children are taken) and ``spans`` (its top-level
    statements before the pass, with the line each began on; see
    traversal.spans). None when the text needs a full parse."""
    begins = {id(node): line for node, line in spans}
    ends = {id(node): line for (node, _), (_, line) in zip(spans, list(spans[1:]) + [(None, None)])}
    ends[id(spans[-1][0])] = spans[-1][1]  # the ENDMARKER: nothing follows it
    children: List[pytree.Base] = []
    moves: List[Tuple[pytree.Base, int]] = []  # kept statements and how far their lines move
    runs: List[set] = []  # the NAMEs of each parsed run
    line, run = 1, []  # the next statement's first line in ``text``; changed statements pending
    for child in list(root.children) + [None]:
        kept = child is not None and not child.was_changed and id(child) in begins
        if run and (kept or child is None):
            code = "".join(str(node) for node in run)
            parsed = _parse_run(code, line, child is None, parse)
            if parsed is None:
                return None
            children.extend(parsed[0])
            runs.append(parsed[1])
            line += code.count("\n")
            run = []
        if child is None:
            break
        if kept:
            moves.append((child, line - begins[id(child)]))
            children.append(child)
            line += ends[id(child)] - begins[id(child)]
        else:
            run.append(child)
    if not _boundaries_as_parsed(children):
        return None
    for child in root.children:
        child.parent = None
    root.children = []
    names = set()
    for child, shift in moves:
        stack = [child]
        while stack:
            node = stack.pop()
            node.was_checked = False  # set by fissix's bottom matcher on the last pass
            if node.children:
                stack.extend(node.children)
            elif isinstance(node, pytree.Leaf):
                node.lineno += shift
                if node.type == token.NAME:
                    names.add(node.value)
    for parsed in runs:
        names |= parsed
    new = pytree.Node(_FILE_INPUT, children)
    new.used_names = names  # what a parse records (fissix fixers' start_tree reads it)
    return new


def _parse_run(code: str, line: int, last: bool, parse) -> Optional[Tuple[List[pytree.Base], set]]:
    """The statements of ``code`` (a run of top-level statements beginning on
    ``line``), with the file's ENDMARKER when the run ends the file, and the
    NAMEs the parse saw."""
    if not last and not code.endswith("\n"):
        return None  # it would run into the next statement's line
    try:
        tree = parse(code)
    except Exception:  # the caller's full parse gives the reason
        return None
    if not tree.children:
        return None
    *statements, end = tree.children
    if not last and (end.type != token.ENDMARKER or end.prefix):
        return None  # comments left for the end: the next statement's prefix in the file
    for leaf in tree.leaves():
        leaf.lineno += line - 1
    for node in tree.children:
        node.parent = None
    tree.children = []
    return (statements + [end] if last else statements), tree.used_names


def _boundaries_as_parsed(children: Sequence[pytree.Base]) -> bool:
    """After a block, the tokenizer gives the blank lines and comments before
    the next statement to the block's closing DEDENT: a statement that
    follows a block with a prefix of its own came from elsewhere."""
    for before, after in zip(children, children[1:]):
        if after.prefix and _last_leaf(before).type == token.DEDENT:
            return False
    return True


def _last_leaf(node: pytree.Base) -> pytree.Base:
    while isinstance(node, pytree.Node) and node.children:
        node = node.children[-1]
    return node
