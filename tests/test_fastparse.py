"""migrate/fastparse.py: the tree fissix's own driver builds, node for node,
and fissix's own errors on what it cannot parse."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from fissix import pytree
from fissix.pgen2 import driver

from migrate import fastparse
from migrate.traversal import GRAMMAR
from python_sources import PYTHON

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "tests" / "corpus").rglob("*.py"))


def fissix_parse(text: str):
    return driver.Driver(GRAMMAR, convert=pytree.convert).parse_string(text)


def described(tree):
    """Every node in pre-order: its class, attributes (in their order, with
    values), parent and children as positions in that order, and the root's
    ``used_names``."""
    nodes, stack = [], [tree]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(reversed(node.children))
    position = {id(node): i for i, node in enumerate(nodes)}
    return [(type(node).__name__,
             [(key, value) for key, value in vars(node).items() if key not in ("parent", "children")],
             position.get(id(node.parent)) if node.parent is not None else None,
             [position[id(child)] for child in node.children])
            for node in nodes]


def test_the_sources_parse_to_fissix_trees():
    assert len(SOURCES) > 100
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        expected = fissix_parse(text)
        got = fastparse.parse_string(text, GRAMMAR)
        assert str(got) == text, path
        assert described(got) == described(expected), path


def test_a_clone_is_fissixs_clone():
    """fastparse.clone copies each node as ``Node.clone``/``Leaf.clone`` do,
    a fixer's mark (``fixers_applied``) included, not shared."""
    for path in SOURCES:
        tree = fastparse.parse_string(path.read_text(encoding="utf-8"), GRAMMAR)
        for number, node in enumerate(tree.pre_order()):
            if number % 7 == 0:
                node.fixers_applied = [number]
        copy = fastparse.clone(tree)
        assert described(copy) == described(tree.clone()), path
        assert not {id(node) for node in copy.pre_order()} & {id(node) for node in tree.pre_order()}
        leaf = next(copy.leaves())
        leaf.fixers_applied.append("fixer")
        assert "fixer" not in next(tree.leaves()).fixers_applied


@pytest.mark.parametrize("text", [
    "", "\n", "# only a comment", "pass\n", "x = 1  # c\n\n\n# tail\n",
    "async def f():\n    async with a as b:\n        await c\n    async for i in d:\n        yield i\n",
    "def f(a, *args, b=1, **kw) -> int:\n    return (yield)\n",
    "class A(B, metaclass=M):\n    @dec.x(1)\n    def g(self): ...\n",
    "x = [i for i in range(3) if i]\ny = {k: v for k, v in z}\nprint(*a, **b)\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n",
    "try:\n    pass\nexcept (A, B) as e:\n    raise X from e\nfinally:\n    del q\n",
    "s = f'{a!r:>{w}}' 'x' \\\n    'y'\nlambda x, *y: x\nz = a if b else c\n",
    "(x := 1)\nglobal g\nwith a, b as c: pass\nassert x, 'm'\n",
    "x = 1\r\ny = 2\r\n",
])
def test_small_programs_parse_to_fissix_trees(text):
    assert described(fastparse.parse_string(text, GRAMMAR)) == described(fissix_parse(text))


@pytest.mark.parametrize("text", [
    "def f(:\n", "x = = 1\n", "return\nreturn )\n", "if x:\npass\n", "x = (1,\n",
    "x", "  x = 1\n", "def f(a, /):\n    pass\n", "print 'a'\n", "s = '''never closed\n",
])
def test_what_fissix_cannot_parse_raises_fissixs_error(text):
    with pytest.raises(Exception) as expected:
        fissix_parse(text)
    with pytest.raises(type(expected.value)) as got:
        fastparse.parse_string(text, GRAMMAR)
    assert str(got.value) == str(expected.value)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(PYTHON)
def test_generated_programs_parse_as_fissix_parses_them(text):
    """Any text, valid Python or not to fissix: the same tree, or the same error."""
    try:
        expected = fissix_parse(text)
    except Exception as err:
        with pytest.raises(type(err)) as got:
            fastparse.parse_string(text, GRAMMAR)
        assert str(got.value) == str(err)
        return
    assert described(fastparse.parse_string(text, GRAMMAR)) == described(expected)
