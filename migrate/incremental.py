"""Which top-level statements a pass after the first must visit.

A pass that changed a few statements of a large file leaves the others as
they were: the same text, and (by the premise migrate/slicing.py rests on)
the same answers from the semantic model as long as no statement in their
closure changed. The next pass therefore visits, for the recipes that ran
the pass before, the changed statements (as they are now) and every
statement whose closure reaches one of them (as it was or as it is): a
def/class mentioning a name one defines, or defining a function one
mentions. A change in module code that is not a def/class, or in a
statement whose reach is the whole module, is in every statement's closure:
then the next pass visits everything, as does any pass whose tree is not
the previous pass's output (a full re-parse), and any recipe that crashed
or only reported in the previous pass. A recipe that did not run the
previous pass was ruled out on its text by the prefilter: it found nothing
there then, so nothing where nothing changed now. A restricted pass that
changes a statement it was not to visit is run again on the whole tree.

The pass sees those statements in a module holding only them and their
closure (``context_of``, as slicing would keep them), so the per-tree facts
and the semantic model are built for what it visits, not the whole file.

Each top-level statement carries what slicing reads of it (words, defined
names, functions, reach), read once from its own text with ``ast``: from
the pass's text for the first pass's tree, and as printed for a statement a
pass made.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Sequence, Set, Tuple

from fissix import pytree

from . import slicing
from .edits import split_lines

_FACTS = "_tf_migrate_reads"  # attribute of a top-level fissix statement


@dataclass(frozen=True)
class Reads:
    """What slicing's closure reads of one top-level statement."""

    words: FrozenSet[str]
    defines: FrozenSet[str]
    functions: FrozenSet[str]
    everywhere: bool  # module code, or a reach of the whole module: in every closure


_UNREADABLE = Reads(frozenset(), frozenset(), frozenset(), True)


def _merged(statements: Sequence[slicing._Statement]) -> Reads:
    """One fissix statement may hold several ``ast`` ones (``a = 1; b = 2``)."""
    words: Set[str] = set()
    defines: Set[str] = set()
    functions: Set[str] = set()
    everywhere = False
    for statement in statements:
        words |= statement.words
        defines |= statement.defines
        functions |= statement.functions
        everywhere |= statement.module_wide or not isinstance(statement.node, slicing._NAMED)
    return Reads(frozenset(words), frozenset(defines), frozenset(functions), everywhere)


def _read_text(text: str) -> Reads:
    """The Reads of one top-level statement's text (prefix included)."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return _UNREADABLE
    return _merged(slicing._statements(module, slicing._LINE.findall(text)))


def read_spans(spans: Sequence[Tuple[pytree.Base, int]], text: str) -> None:
    """Give each top-level statement of a pass's tree (``spans``, before the
    pass, see traversal.spans) its Reads, from its lines of ``text`` (the
    pass's text: a statement the pass changed is read as it was); one
    statement's ``ast`` at a time, never the whole file's at once beside its
    fissix tree. Statements read before keep theirs."""
    if all(_FACTS in node.__dict__ for node, _ in spans):
        return
    lines = split_lines(text)
    ends = [line for _, line in spans[1:]] + [len(lines) + 1]
    for (node, first), end in zip(spans, ends):
        if _FACTS not in node.__dict__:
            node.__dict__[_FACTS] = _read_text("".join(lines[first - 1:end - 1]))


def _reads(node: pytree.Base) -> Reads:
    found = node.__dict__.get(_FACTS)
    if found is None:
        found = node.__dict__[_FACTS] = _read_text(str(node))
    return found


def to_revisit(before: Sequence[Tuple[pytree.Base, int]], after: pytree.Node) -> Optional[Set[int]]:
    """The ids of the top-level statements of ``after`` (a pass's output
    tree, re-parsed incrementally) that the next pass must visit, or None
    for all. ``before`` are the pass's top-level statements (spans), read
    by ``read_spans``; a statement of ``after`` that is not one of them is
    new (made or re-parsed) and is read from its own text."""
    kept = {id(node) for node, _ in before}
    present = {id(child) for child in after.children}
    gone = [node for node, _ in before if id(node) not in present]
    made = [child for child in after.children if id(child) not in kept]
    if len(made) == len(after.children):
        return None  # a full parse: nothing is known to be the same
    changed = [_reads(node) for node in gone + made]
    if any(reads.everywhere for reads in changed):
        return None
    revisit = {id(child) for child in made}
    defines = set().union(*(r.defines for r in changed))
    words = set().union(*(r.words for r in changed))
    others = [(child, _reads(child)) for child in after.children if id(child) not in revisit]
    while True:  # every statement whose closure reaches a changed one
        more = [(child, reads) for child, reads in others
                if reads.words & defines or reads.functions & words]
        if not more:
            break
        if any(reads.everywhere for _, reads in more):
            return None
        for child, reads in more:
            revisit.add(id(child))
            defines |= reads.defines
            words |= reads.words
        others = [(child, reads) for child, reads in others if id(child) not in revisit]
    return revisit


def context_of(tree: pytree.Node, revisit: Set[int]) -> List[pytree.Base]:
    """The top-level statements of ``tree`` a pass visiting those in
    ``revisit`` needs (and its last, the end marker): slicing's kept set
    for them, so the model answers there as on the whole tree. Every
    statement has its Reads (``to_revisit`` read them)."""
    children = tree.children
    reads = [_reads(child) for child in children]
    kept = {i for i, child in enumerate(children) if id(child) in revisit or reads[i].everywhere}
    kept = slicing._closure(reads, kept) | {len(children) - 1}
    return [children[i] for i in sorted(kept)]
