"""migrate/traversal.py's bottom matcher gives what fissix's gives: the
same nodes, in the same order, for every fixer, on every fixture."""

from __future__ import annotations

from pathlib import Path

from fissix.btm_matcher import BottomMatcher

from migrate import engine, traversal
from migrate.registry import all_recipes

FIXTURES = Path(__file__).parent.parent / "fixtures"
SEMICOLONS = "import tensorflow as tf\nx = tf.constant(1.0); tape = tf.GradientTape()\nwith tape: y = x * x; tape.watch(x)\n"


def _matches(matcher_class, tool, source: str) -> dict:
    matcher = matcher_class()
    for fixer in tool.BM.fixers:
        matcher.add_fixer(fixer)
    found = matcher.run(engine.parse(source).leaves())
    return {tool.BM.fixers.index(fixer): [(n.type, str(n), n.get_lineno()) for n in nodes]
            for fixer, nodes in found.items()}


def test_same_matches_as_fissix_on_every_fixture():
    tool = traversal.tool(tuple(all_recipes().values()))
    sources = [path.read_text() for path in sorted(FIXTURES.rglob("*.py"))] + [SEMICOLONS]
    compared = 0
    for source in sources:
        ours = _matches(traversal._BottomMatcher, tool, source)
        assert ours == _matches(BottomMatcher, tool, source)
        compared += sum(map(len, ours.values()))
    assert compared > 100
