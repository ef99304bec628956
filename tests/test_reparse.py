"""migrate/reparse.py: the tree rebuilt after a pass from its untouched
statements is the tree a parse of the whole output gives (or None)."""

from __future__ import annotations

import textwrap

import pytest
from fissix import pytree

from migrate import engine, registry, reparse as reparse_module
from migrate.reparse import reparse
from migrate.traversal import spans


def _shape(node):
    """Everything a recipe can see of a tree: types, values, prefixes, positions."""
    if isinstance(node, pytree.Leaf):
        return (node.type, node.value, node.prefix, node.lineno, node.column)
    return (node.type, [_shape(child) for child in node.children])


def _after(source: str, mutate) -> tuple:
    """(rebuilt tree or None, the text after ``mutate``) for a tree of ``source``."""
    tree = engine.parse(source)
    before = spans(tree)
    mutate(tree)
    text = str(tree)
    return reparse(tree, before, engine.parse), text


def _statement(code: str):
    stmt = engine.parse(code).children[0]
    stmt.remove()
    return stmt


SOURCE = textwrap.dedent("""\
    import numpy as np
    x = 1

    # about f
    def f(a):
        return a  # done
    # after f

    y = 2
    def g():
        if y:
            pass
            # inside
    # trailing
""")


def _replace(index, code):
    def mutate(tree):
        old = tree.children[index]
        new = _statement(code)
        new.prefix = old.prefix
        old.replace(new)
    return mutate


def _remove(index):
    return lambda tree: tree.children[index].remove()


def _insert(index, code):
    return lambda tree: tree.children[index].parent.insert_child(index, _statement(code))


@pytest.mark.parametrize("mutate", [
    _replace(1, "x = 2\n"),
    _replace(1, "for i in range(3):\n    x = i\n"),  # a block now precedes `# about f`
    _replace(2, "def f(a):\n    return a + 1\n"),
    _replace(3, "y = 3\n"),
    _remove(1),
    _remove(3),  # `def g` now follows f's block
    _insert(1, "import tensorflow as tf\n"),
    _insert(3, "z = 0\n"),
    _replace(4, "def g():\n    pass\n"),
], ids=["same-shape", "simple-to-block", "block", "after-block", "remove-first",
        "remove-between-blocks", "insert-import", "insert-after-block", "last-block"])
def test_rebuilt_tree_is_the_parse_of_the_output(mutate):
    rebuilt, text = _after(SOURCE, mutate)
    if rebuilt is None:  # a full parse is the answer then
        return
    full = engine.parse(text)
    assert str(rebuilt) == text
    assert _shape(rebuilt) == _shape(full)
    assert rebuilt.used_names == full.used_names


def test_untouched_statements_keep_their_nodes():
    tree = engine.parse(SOURCE)
    kept = tree.children[2]
    before = spans(tree)
    _replace(1, "x = 2\nw = 3\n")(tree)
    rebuilt = reparse(tree, before, engine.parse)
    assert rebuilt is not None and kept in rebuilt.children
    assert kept.children[1].lineno == 5  # `f` moved down one line


def test_a_block_followed_by_a_prefixed_statement_needs_a_full_parse():
    rebuilt, _ = _after(SOURCE, _replace(1, "for i in range(3):\n    x = i\n"))
    assert rebuilt is None  # the blank line and `# about f` belong to the loop's DEDENT


def test_every_tree_rebuilt_while_fixing_the_fixtures_is_their_parse(monkeypatch):
    """On the fixtures, each pass's rebuilt tree is the full parse of its text."""
    from pathlib import Path

    checked = []

    def compared(root, before, parse):
        text = str(root)
        rebuilt = reparse_module.reparse(root, before, parse)
        if rebuilt is not None:
            assert _shape(rebuilt) == _shape(parse(text))
            checked.append(text)
        return rebuilt

    monkeypatch.setattr(engine, "reparse", compared)
    options = engine.Options(tuple(registry.resolve(None)), unsafe_fixes=True)
    root = Path(__file__).parent.parent / "fixtures"
    for path in sorted(root.rglob("*.py")):
        engine.transform(path.read_text(), str(path), options)
    assert len(checked) > 20
