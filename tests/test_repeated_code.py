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
