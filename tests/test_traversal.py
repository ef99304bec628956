"""The traversal's own speed-ups answer as fissix does: patterns without
their one-shot wildcards, and walks by an explicit stack."""

from __future__ import annotations

from fissix.patcomp import PatternCompiler

from migrate import engine, traversal
from migrate.registry import all_recipes

from fixture_cases import all_cases


def _fixers():
    """Each fixer the engine runs, with fissix's own compilation of its pattern."""
    tool = traversal.tool(tuple(all_recipes().values()))
    return [(fixer, PatternCompiler().compile_pattern(fixer.PATTERN))
            for fixer in tool.pre_order + tool.post_order]


def _match(pattern, node):
    """fissix's ``BaseFix.match`` with ``pattern``."""
    results = {"node": node}
    return pattern.match(node, results) and results


def test_unwrapped_patterns_match_the_same_nodes_with_the_same_results():
    compared = matched = 0
    for case in all_cases():
        tree = engine.parse(case.before.read_text())
        for shipped, compiled in _fixers():
            for node in (n for n in tree.pre_order() if n.type == compiled.type):
                ours, theirs = shipped.match(node), _match(compiled, node)
                assert ours == theirs, (case.id, type(shipped).__name__, str(node)[:60])
                compared += 1
                matched += bool(ours)
    assert matched > 100 and compared > matched


def test_a_pattern_is_compiled_once_in_a_process():
    recipes = tuple(all_recipes().values())
    every, some = traversal.tool(recipes), traversal.tool(recipes[1:3])
    compiled = {fixer.PATTERN: fixer.pattern for fixer in every.pre_order + every.post_order}
    assert all(compiled[fixer.PATTERN] is fixer.pattern for fixer in some.pre_order + some.post_order)


def test_walks_by_stack_yield_fissix_order():
    for case in all_cases():
        tree = engine.parse(case.before.read_text())
        walk = traversal._Statements(tree, tree.children)
        assert [id(n) for n in walk.post_order()] == [id(n) for n in tree.post_order()], case.id
        assert [id(n) for n in walk.leaves()] == [id(n) for n in tree.leaves()], case.id
        assert [id(n) for n in walk.pre_order()] == [id(n) for n in tree.pre_order()], case.id
