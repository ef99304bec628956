"""Which top-level statements a pass after the first must visit.

A pass that changed a few statements of a large file leaves the others as
they were: the same text, and (by the premise migrate/toplevel.py rests on)
the same answers from the semantic model as long as nothing they depend on
changed. A statement depends on those in its closure (toplevel's
``_Closure``: what it names that another binds, a function it binds that
another names, a class or a ``getattr`` string it names, the strings
spelling the Keras auto-name of a class it calls) and, through ``unseen()``,
on what any other spells (a function it defines named elsewhere). The next
pass therefore visits, for the recipes that ran the pass before, the
changed statements (as they are now) and every statement that may depend
on one of them, as it was or as it is (``to_revisit``, a superset of the
closure's rules, transitively). It visits everything when a changed
statement is module code (not a def or class), reaches the whole module,
may read attributes by a string, is in every statement's closure (an
import from numpy or tensorflow, ``__all__``, a conventional alias) or
cannot be read; when such a statement depends on a changed one; after a
full re-parse; and, for a recipe that crashed or only reported in the
previous pass, always. A recipe that did not run the previous pass was
ruled out on its text by the prefilter: it found nothing there then, so
nothing where nothing changed now. A restricted pass that changes a
statement it was not to visit is run again on the whole tree.

Code outside every function (module code, a class line or body,
decorators) is where a recipe scans the whole module: after any change,
every statement where an enabled recipe's pattern matches a node of such
code is visited again, and then on the whole tree. Where no pattern matches any node outside
its functions (imports, lone constants, a class whose own lines are
``class A(keras.layers.Layer):`` and docstrings around its methods), every
node a recipe's callbacks are called on there is inside a function (fissix
calls them only on a node its fixer's pattern matches), as for a def: the
statement is revisited when it depends on a change, with its closure. A
function's ``def`` node counts as inside it, as its lines do for statements.
Whether a changed statement that is not a def or class revisits everything
is still decided by its lines.

Otherwise the pass sees the statements it visits in a module holding only
them and their closure (``context_of``), the names of those it leaves
out handed to the run (``unseen()``), so the per-tree facts and the semantic model are
built for what it visits, not the whole file.

Each top-level statement carries what toplevel.read reads of it, read once from
its own text with ``ast`` (lines counted from its first, moved to where it
stands when its closure is taken): from the pass's text for the first
pass's tree, and as printed for a statement a pass made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Set, Tuple

from fissix import pygram, pytree
from fissix.pgen2 import token

from . import toplevel, traversal
from .edits import split_lines

_FACTS = "_tf_migrate_reads"  # attribute of a top-level fissix statement
_MATCHED = "_tf_migrate_matched"  # fixers -> does one match outside its functions
_FUNCDEF = pygram.python_symbols.funcdef
_LONE_CR = re.compile(r"\r(?!\n)")  # a line end to CPython, not to fissix: lines would differ


@dataclass(eq=False, repr=False)
class Context:
    """What a restricted pass sees: the top-level statements its module
    holds, and what the statements it leaves out hold (``unseen()``)."""

    children: List[pytree.Base]
    unseen: toplevel.Unseen


def _read(text: str) -> Optional[toplevel._Statement]:
    return None if _LONE_CR.search(text) else toplevel.read(text)


def read_spans(spans: Sequence[Tuple[pytree.Base, int]], text: str) -> None:
    """Give each top-level statement of a pass's tree (``spans``, before the
    pass, see traversal.spans) what toplevel.read reads of it, from its lines of
    ``text`` (the pass's text: a statement the pass changed is read as it
    was); one statement's ``ast`` at a time, never the whole file's at once
    beside its fissix tree. Statements read before keep theirs."""
    if all(_FACTS in node.__dict__ for node, _ in spans):
        return
    lines = split_lines(text)
    ends = [line for _, line in spans[1:]] + [len(lines) + 1]
    for (node, first), end in zip(spans, ends):
        if _FACTS not in node.__dict__:
            node.__dict__[_FACTS] = _read("".join(lines[first - 1:end - 1]))


def _facts(node: pytree.Base) -> Optional[toplevel._Statement]:
    """What toplevel.read reads of it (None: unreadable), lines counted from the
    first of its text (prefix included)."""
    if _FACTS not in node.__dict__:
        node.__dict__[_FACTS] = _read(str(node))
    return node.__dict__[_FACTS]


def _statements(nodes) -> list:
    return [node for node in nodes if node.type != token.ENDMARKER]


def _in_every_closure(statement: toplevel._Statement, index: int, conventional: Set[str]) -> bool:
    """Pinned in every closure, or needed by any statement (``_Closure``): then
    whatever it depends on, every statement does. ``conventional``: the
    aliases no head import binds, before the pass or after it."""
    return toplevel.pinned(statement, index) or statement.imports_tf_np \
        or "__all__" in statement.names or bool(statement.variables & conventional)


def _outside_lines(statement: toplevel._Statement) -> bool:
    """Lines outside every function, not an import or a lone constant."""
    return toplevel.outside_functions(statement) and not toplevel.heading(statement.node)


def _module_code(node: pytree.Base, statement: toplevel._Statement, fixers: Sequence) -> bool:
    """Code outside every function where a pattern of ``fixers`` (the
    enabled recipes') matches a node. Asked once per statement node and
    set of fixers."""
    if not _outside_lines(statement):
        return False
    asked = node.__dict__.setdefault(_MATCHED, {})
    if fixers not in asked:
        asked[fixers] = _matched_outside_functions(node, fixers)
    return asked[fixers]


def _matched_outside_functions(node: pytree.Base, fixers: Sequence) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == _FUNCDEF:
            continue
        if any(fixer.match(current) for fixer in fixers):
            return True
        stack.extend(current.children)
    return False


def fixers_of(recipes) -> Tuple:
    """The compiled fixers of ``recipes`` (every enabled one: the passes'
    shared tool's), what ``to_revisit`` matches."""
    found = traversal.shared_tool(recipes, recipes)
    return tuple(found.pre_order + found.post_order)


def to_revisit(before: Sequence[Tuple[pytree.Base, int]], after: pytree.Node,
               fixers: Sequence) -> Optional[Set[int]]:
    """The ids of the top-level statements of ``after`` (a pass's output
    tree, re-parsed incrementally) that the next pass must visit, or None
    for all. ``before`` are the pass's top-level statements (spans), read
    by ``read_spans``; a statement of ``after`` that is not one of them is
    new (made or re-parsed) and is read from its own text. ``fixers``: the
    enabled recipes' (``fixers_of``)."""
    kept = {id(node) for node, _ in before}
    present = {id(child) for child in after.children}
    gone = _statements(node for node, _ in before if id(node) not in present)
    made = _statements(child for child in after.children if id(child) not in kept)
    if len(made) == len(_statements(after.children)):
        return None  # a full parse: nothing is known to be the same
    changed = [_facts(node) for node in gone + made]
    if any(s is None or s.reads_attributes or _outside_lines(s) and not isinstance(s.node, toplevel._NAMED)
           for s in changed):
        return None
    revisit = {id(child) for child in made}
    facts = [_facts(child) for child in _statements(after.children)]
    if None in facts:
        return None
    conventional = toplevel.presumed_aliases([_facts(node) for node in _statements(n for n, _ in before)]) \
        | toplevel.presumed_aliases(facts)
    if any(_in_every_closure(s, 0, conventional) for s in changed):  # at the head, if a constant
        return None
    others = [(index, child, s) for index, (child, s) in enumerate(zip(_statements(after.children), facts))
              if id(child) not in revisit]
    classes = set().union(*(s.classes for s in facts), *(s.classes for s in changed))
    offered: Set[str] = set()  # what a statement depending on them names
    named: Set[str] = set()  # what names a function it binds
    spelled: Set[str] = set()  # what names a function it defines (unseen: call sites)
    words: Set[str] = set()  # the auto-names a call of a class of its would match
    new = changed
    while new:
        for s in new:
            offered |= s.binds | s.imported | s.classes | s.by_string
            named |= s.names
            spelled |= s.leaves
            words |= toplevel.auto_name_words(s)
        depending = [(index, child, s) for index, child, s in others
                     if s.leaves & offered or s.functions & named or s.defined & spelled
                     or toplevel.auto_named(s, classes) & words]
        if any(_in_every_closure(s, index, conventional) for index, _, s in depending):
            return None
        revisit.update(id(child) for _, child, _ in depending)
        others = [(index, child, s) for index, child, s in others if id(child) not in revisit]
        new = [s for _, _, s in depending]
    revisit.update(id(child) for _, child, s in others if _module_code(child, s, fixers))
    return revisit


def context_of(tree: pytree.Node, revisit: Set[int], fixers: Sequence) -> Optional[Context]:
    """What a pass visiting the statements in ``revisit`` needs: the
    closure of them (and the end marker), so the model answers there as
    on the whole tree, and what the others hold; None (the whole tree) when
    a pattern of ``fixers`` matches one of them outside its functions.
    Every statement has been read (``to_revisit``)."""
    children = tree.children
    statements = []
    for child, line in traversal.spans(tree):
        if child.type != token.ENDMARKER:
            statements.append(toplevel.moved(_facts(child), line - 1))
    visited = {i for i, child in enumerate(children) if id(child) in revisit}
    if any(_module_code(children[i], statements[i], fixers) for i in visited):
        return None
    kept = toplevel.closure(statements, visited)
    left = [s for i, s in enumerate(statements) if i not in kept]
    kept |= {i for i, child in enumerate(children) if child.type == token.ENDMARKER}
    return Context([children[i] for i in sorted(kept)], toplevel.also_unseen(left))
