"""Helpers that found a node or a line by scanning, now faster on repeated
code, answer as the plain definitions do: statements_at as a filter of every
statement above the line, index_of by identity (list.index compares fissix
trees by structure, so an equal statement before it answered instead)."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.engine import parse
from migrate.recipe import SourceFacts
from recipes import _fissix as s
from recipes._pyast import _statements_by_line, statements_at

FIXTURES = sorted(Path(__file__).resolve().parents[1].glob("fixtures/*/*.before.py"))[::3]


def plain_statements_at(facts: SourceFacts, line: int):
    _, ordered = _statements_by_line(facts)
    holding = [node for node in ordered if node.lineno <= line <= node.end_lineno]
    last = max((node.lineno for node in holding), default=None)
    return [node for node in holding if node.lineno == last]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_statements_at_every_line_as_the_plain_filter(path):
    facts = SourceFacts(path.read_text())
    for line in range(1, facts.text.count("\n") + 2):
        assert statements_at(facts, line) == plain_statements_at(facts, line), line


def test_index_of_finds_the_node_not_an_equal_one_before_it():
    tree = parse("x = 1\nx = 1\nx = 1\n")
    second = tree.children[1]
    assert tree.children.index(second) == 0  # what list.index answered
    assert s.index_of(tree.children, second) == 1
    with pytest.raises(ValueError):
        s.index_of(tree.children[:1], second)


def test_index_of_and_sibling_answer_for_every_node_in_any_order():
    """index_of starts near its last answer: asked in every order, about
    lists that change between questions, it answers as a scan by identity,
    and sibling as fissix's prev_sibling / next_sibling."""
    tree = parse("".join(f"x = {n % 3}\nif x:\n    y = 1\n" for n in range(40)))
    children = tree.children
    for order in (range(len(children)), reversed(range(len(children))), range(0, len(children), 7)):
        for at in order:
            assert s.index_of(children, children[at]) == at
            assert s.sibling(children[at], -1) is children[at].prev_sibling
            assert s.sibling(children[at], 1) is children[at].next_sibling
    moved = children[30]
    moved.remove()  # the list changes: the positions after it move up
    assert s.index_of(children, children[30]) == 30
    tree.insert_child(3, moved)
    assert s.index_of(children, moved) == 3 and s.index_of(children, children[31]) == 31


def test_orphan_edits_go_to_the_first_nearest_finding():
    """engine._Nearest answers as min() over the findings in their order."""
    from migrate.engine import _Nearest
    from migrate.result import Diagnostic

    lines = [7, 3, 3, 12, 9, 5, 20, 12]
    found = [Diagnostic("f.py", line, 1, line, 2, "r", str(n), "safe", True, True, [])
             for n, line in enumerate(lines)]
    nearest = _Nearest(found)
    for line in range(0, 25):
        assert nearest.to(line) is min(found, key=lambda d: abs(d.line - line)), line
    assert _Nearest([]).to(4) is None
