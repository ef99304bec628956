"""fissix's parser, its loop specialised: the same grammar, tokens and tree.

fissix's ``Driver.parse_tokens`` and ``Parser.addtoken`` scan a state's arcs
for every token, computing each time what a (rule, state, token label) triple
always decides: shift to a state, push a rule, pop (an accepting state) or
fail. Here that decision, the pushes followed down to the shift, is looked
up in a table filled as the triples are met, the parser's stack entries are
mutable lists, and nodes and leaves are
built with the attributes ``pytree.convert`` gives them, without a call per
token to ``convert``, ``shift``, ``push`` or ``pop``. The tree is the one
fissix builds (tests/test_fastparse.py compares them on every fixture and
corpus file). Any failure (a token error, a parse error) is left to fissix
itself, which then raises its own error for the same text.
"""

from __future__ import annotations

import io
from typing import Dict, List, Tuple

from fissix import pytree
from fissix.pgen2 import driver as pgen_driver
from fissix.pgen2 import grammar as pgen_grammar
from fissix.pgen2 import token, tokenize

__all__ = ["clone", "parse_string"]

_POP, _FAIL = "pop", "fail"
_COMMENT, _NL, _OP, _NAME = tokenize.COMMENT, tokenize.NL, token.OP, token.NAME
_OPMAP = pgen_grammar.opmap
_new = object.__new__
_Node, _Leaf = pytree.Node, pytree.Leaf


class _Failed(Exception):
    """The specialised loop gives up; fissix parses the text and reports."""


class _Tables:
    """The decisions of one grammar. ``actions``, filled lazily:
    ``(rule, state, label)`` -> _POP, _FAIL, or the rules pushed before the
    token is shifted (each with the state its parent moves to) and the state
    the token's rule moves to. ``accepting``: rule -> the states fissix pops
    right after a shift (they only accept)."""

    def __init__(self, grammar: pgen_grammar.Grammar):
        self.grammar = grammar
        self.actions: Dict[Tuple[int, int, int], object] = {}
        self.accepting = {rule: frozenset(state for state, arcs in enumerate(states)
                                          if arcs == [(0, state)])
                          for rule, (states, _) in grammar.dfas.items()}

    def decide(self, rule: int, state: int, label: int):
        """What ``Parser.addtoken`` does in this state with this label (the
        arcs tried in order as it tries them), pushes followed down to the
        shift."""
        pushes: List[Tuple[int, int]] = []
        while True:
            step = self._step(rule, state, label)
            if step[0] == "shift":
                return tuple(pushes), step[1]
            if step[0] != "push":
                if pushes:  # unreachable: a rule is pushed for a label in its first set
                    raise _Failed
                return step[0]
            pushes.append((step[1], step[2]))
            rule, state = step[2], 0

    def _step(self, rule: int, state: int, label: int):
        grammar = self.grammar
        arcs = grammar.dfas[rule][0][state]
        for arc_label, new_state in arcs:
            kind = grammar.labels[arc_label][0]
            if label == arc_label:
                return ("shift", new_state)
            if kind >= 256 and label in grammar.dfas[kind][1]:
                return ("push", new_state, kind)
        return (_POP,) if (0, state) in arcs else (_FAIL,)


_TABLES: Dict[int, _Tables] = {}


def parse_string(text: str, grammar: pgen_grammar.Grammar) -> pytree.Node:
    """The fissix tree of ``text`` (``Driver.parse_string`` with
    ``pytree.convert``); fissix's own exceptions when it cannot parse it."""
    tables = _TABLES.get(id(grammar))
    if tables is None or tables.grammar is not grammar:
        tables = _TABLES[id(grammar)] = _Tables(grammar)
    try:
        return _parse(tokenize.generate_tokens(io.StringIO(text).readline), tables)
    except Exception:  # fissix raises its own error, the one its callers expect
        return fissix_parse(text, grammar)


def _parse(tokens, tables: _Tables) -> pytree.Node:
    grammar = tables.grammar
    keywords, token_labels = grammar.keywords, grammar.tokens
    actions, decide, accepting = tables.actions, tables.decide, tables.accepting
    used_names: set = set()
    # a stack entry: [rule, state, children, the rule's accepting states]
    stack = [[grammar.start, 0, [], accepting[grammar.start]]]
    lineno, column = 1, 0
    prefix = ""
    for type_, value, start, end, line_text in tokens:
        if start != (lineno, column):
            if (lineno, column) > start:
                raise _Failed  # fissix's driver asserts
            s_lineno, s_column = start
            if lineno < s_lineno:
                prefix += "\n" * (s_lineno - lineno)
                lineno = s_lineno
                column = 0
            if column < s_column:
                prefix += line_text[column:s_column]
                column = s_column
        if type_ == _COMMENT or type_ == _NL:
            prefix += value
            lineno, column = end
            if value.endswith("\n"):
                lineno += 1
                column = 0
            continue
        if type_ == _OP:
            type_ = _OPMAP[value]
        label = None
        if type_ == _NAME:
            used_names.add(value)
            label = keywords.get(value)
        if label is None:
            label = token_labels.get(type_)
            if label is None:
                raise _Failed
        while True:
            top = stack[-1]
            key = (top[0], top[1], label)
            decided = actions.get(key)
            if decided is None:
                decided = actions[key] = decide(*key)
            if decided is _POP:  # convert's answer: the only child, or a Node
                stack.pop()
                children = top[2]
                node = children[0] if len(children) == 1 else _node(top[0], children)
                if not stack:
                    raise _Failed  # too much input
                stack[-1][2].append(node)
                continue
            if decided is _FAIL:
                raise _Failed
            pushes, state = decided
            for parent_state, rule in pushes:
                top[1] = parent_state
                top = [rule, 0, [], accepting[rule]]
                stack.append(top)
            leaf = _new(_Leaf)
            leaf._prefix = prefix
            leaf.lineno, leaf.column = start
            leaf.type = type_
            leaf.value = value
            leaf.fixers_applied = []
            top[2].append(leaf)
            top[1] = state
            while state in top[3]:  # accepting only: popped
                stack.pop()
                children = top[2]
                node = children[0] if len(children) == 1 else _node(top[0], children)
                if not stack:
                    node.used_names = used_names
                    return node
                top = stack[-1]
                top[2].append(node)
                state = top[1]
            break
        prefix = ""
        lineno, column = end
        if value.endswith("\n"):
            lineno += 1
            column = 0
    raise _Failed  # incomplete input


def fissix_parse(text: str, grammar: pgen_grammar.Grammar) -> pytree.Node:
    """fissix's own parse of ``text``."""
    return pgen_driver.Driver(grammar, convert=pytree.convert).parse_string(text)


def _node(rule: int, children: list) -> pytree.Node:
    """``Node(rule, children)``: ``Node.__init__``'s attributes, in its order."""
    node = _new(_Node)
    node.type = rule
    node.children = children
    for child in children:
        child.parent = node
    node.fixers_applied = None
    return node


def clone(tree: pytree.Node) -> pytree.Node:
    """``tree.clone()``: the nodes and leaves fissix's ``clone`` makes, with
    their attributes set as ``_parse`` sets them, by a walk over a stack
    instead of a call to ``clone`` and ``__init__`` per node (a copy of a
    tree then costs a third of a parse instead of half)."""
    copy = _node(tree.type, [])
    stack = [(tree, copy)]
    while stack:
        node, into = stack.pop()
        children = into.children
        for child in node.children:
            if type(child) is _Leaf:
                new = _new(_Leaf)
                new._prefix = child._prefix
                new.lineno, new.column = child.lineno, child.column
                new.type, new.value = child.type, child.value
                new.fixers_applied = child.fixers_applied[:]
            else:
                new = _new(_Node)
                new.type, new.children = child.type, []
                new.fixers_applied = child.fixers_applied[:] if child.fixers_applied else None
                stack.append((child, new))
            new.parent = into
            children.append(new)
    copy.fixers_applied = tree.fixers_applied[:] if tree.fixers_applied else None
    return copy
