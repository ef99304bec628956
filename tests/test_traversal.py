"""The traversal's own speed-ups answer as fissix does: patterns without
their one-shot wildcards, and walks by an explicit stack."""

from __future__ import annotations

from migrate import engine, traversal
from migrate.registry import all_recipes

from fixture_cases import all_cases


def _fixers():
    """Each fixer the engine runs, with a fresh one of its class (fissix's pattern)."""
    tool = traversal.tool(tuple(all_recipes().values()))
    return [(fixer, type(fixer)({"print_function": True}, [])) for fixer in tool.pre_order + tool.post_order]


def test_unwrapped_patterns_match_the_same_nodes_with_the_same_results():
    compared = matched = 0
    for case in all_cases():
        tree = engine.parse(case.before.read_text())
        for shipped, compiled in _fixers():
            assert shipped.pattern is not compiled.pattern
            for node in (n for n in tree.pre_order() if n.type == compiled.pattern.type):
                ours, theirs = shipped.match(node), compiled.match(node)
                assert ours == theirs, (case.id, type(shipped).__name__, str(node)[:60])
                compared += 1
                matched += bool(ours)
    assert matched > 100 and compared > matched


def test_walks_by_stack_yield_fissix_order():
    for case in all_cases():
        tree = engine.parse(case.before.read_text())
        walk = traversal._Statements(tree, tree.children)
        assert [id(n) for n in walk.post_order()] == [id(n) for n in tree.post_order()], case.id
        assert [id(n) for n in walk.leaves()] == [id(n) for n in tree.leaves()], case.id
        assert [id(n) for n in walk.pre_order()] == [id(n) for n in tree.pre_order()], case.id
