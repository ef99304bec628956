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
        walk = traversal._Statements(tree, tree.children, walks=True)
        assert [id(n) for n in walk.post_order()] == [id(n) for n in tree.post_order()], case.id
        assert [id(n) for n in walk.leaves()] == [id(n) for n in tree.leaves()], case.id
        assert [id(n) for n in walk.pre_order()] == [id(n) for n in tree.pre_order()], case.id


def test_the_bottom_matcher_finds_a_fixers_nodes_whatever_else_its_tool_holds():
    """The passes share one tool (traversal.shared_tool), so a fixer's
    candidates must not depend on the other fixers in the automaton. fissix's
    matcher carries its state from node to node and, when it fails, retries
    the node from the root: another pattern could then lead it elsewhere.
    It cannot when no pattern's path starts at a node type (after a failure
    at a node, nothing more matches on that climb) and none reaches the
    module (every climb ends at the root state)."""
    from fissix import pygram

    recipes = tuple(all_recipes().values())
    every = traversal.tool(recipes)
    stack, keys = [(every.BM.root, 0)], []
    while stack:
        state, depth = stack.pop()
        keys += [(depth, key) for key in state.transition_table]
        stack += [(child, depth + 1) for child in state.transition_table.values()]
    assert not [key for depth, key in keys if depth == 0 and isinstance(key, int) and key >= 256]
    assert pygram.python_symbols.file_input not in {key for _, key in keys}
    alone = {recipe.id: traversal.tool((recipe,)) for recipe in recipes}
    found = 0
    for case in all_cases():
        together = every.BM.run(engine.parse(case.before.read_text()).leaves())
        tree = engine.parse(case.before.read_text())
        for recipe in recipes:
            for fixer, nodes in alone[recipe.id].BM.run(tree.leaves()).items():
                shared = next(f for f in every.BM.fixers if type(f) is type(fixer))
                assert [str(n) for n in together.get(shared, [])] == [str(n) for n in nodes], case.id
                found += len(nodes)
    assert found > 100
