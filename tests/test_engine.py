"""The engine contract: a value for every input, never an exception."""

from __future__ import annotations

import pytest

from migrate import engine
from migrate.engine import Options, apply_edits, transform
from migrate.recipe import PassContext, running, stop_running
from migrate.registry import all_recipes
from migrate.result import Status

from fixture_cases import all_cases

from toy_recipes import BROKEN, CRASH, RENAME, RISKY

SOURCE = "import x\n\ny = old_api(1)  # keep me\nz = risky(2)\n"


def test_safe_fix_applies_and_unsafe_waits():
    result = transform(SOURCE, "a.py", Options((RENAME, RISKY)))
    assert result.status is Status.CHANGED
    assert result.output == "import x\n\ny = new_api(1)  # keep me\nz = risky(2)\n"
    by_recipe = {d.recipe: d for d in result.diagnostics}
    assert by_recipe["toy-rename"].applied and (by_recipe["toy-rename"].line, by_recipe["toy-rename"].column) == (3, 5)
    assert not by_recipe["toy-risky"].applied
    assert [d.recipe for d in result.pending] == ["toy-risky"]


def test_unsafe_fixes_flag_applies_unsafe():
    result = transform(SOURCE, "a.py", Options((RENAME, RISKY), unsafe_fixes=True))
    assert "safer(2)" in result.output and not result.pending


def test_check_mode_leaves_source_and_offers_edits_relative_to_input():
    result = transform(SOURCE, "a.py", Options((RENAME, RISKY), unsafe_fixes=True, isolated=True))
    assert result.output == SOURCE
    edits = [e for d in result.diagnostics for e in d.fix]
    assert apply_edits(SOURCE, edits) == "import x\n\ny = new_api(1)  # keep me\nz = safer(2)\n"


def test_suppression_comment():
    source = "a = old_api()  # tf-migrate: ignore\nb = old_api()  # tf-migrate: ignore[toy-risky]\n" \
             "c = old_api()  # tf-migrate: ignore[toy-risky, toy-rename]\n"
    result = transform(source, "a.py", Options((RENAME,)))
    assert result.output == source.replace("b = old_api", "b = new_api")
    assert [d.line for d in result.diagnostics] == [2]


def test_unparsable_input_is_skipped_with_reason():
    result = transform("def f(a, /):\n    return old_api(a)\n", "p.py", Options((RENAME,)))
    assert result.status is Status.SKIPPED
    assert "positional-only" in result.reason and "line 1" in result.reason


def test_syntax_error_is_skipped_with_reason():
    result = transform("def f(:\n  old_api()\n", "s.py", Options((RENAME,)))
    assert result.status is Status.SKIPPED and "syntax error at line 1" in result.reason


def test_broken_rewrite_is_discarded_and_reported():
    source = "breakme(1)\nold_api()\n"
    result = transform(source, "b.py", Options((BROKEN, RENAME)))
    assert result.status is Status.FAILED
    assert result.output == "breakme(1)\nnew_api()\n"
    assert any("toy-broken" in e and "discarded" in e for e in result.errors)


def test_crashing_recipe_is_reported_and_others_run():
    result = transform("crashme(1)\nold_api()\n", "c.py", Options((CRASH, RENAME)))
    assert result.status is Status.FAILED and "toy-crash crashed" in result.reason
    assert result.output == "crashme(1)\nnew_api()\n"


def test_prefilter_skips_parsing_files_without_tokens():
    # unparsable but irrelevant: never parsed, so not skipped
    result = transform("def f(a, /): pass\n", "p.py", Options((RENAME,)))
    assert result.status is Status.UNCHANGED


def test_missing_final_newline_is_kept_missing():
    result = transform("old_api()", "n.py", Options((RENAME,)))
    assert result.output == "new_api()"


def test_output_is_a_fixpoint():
    once = transform(SOURCE, "a.py", Options((RENAME, RISKY), unsafe_fixes=True)).output
    twice = transform(once, "a.py", Options((RENAME, RISKY), unsafe_fixes=True))
    assert twice.status is Status.UNCHANGED and twice.output == once


def _refactored(recipe, source: str, refactor) -> tuple:
    tree = engine.parse(source)
    ctx = PassContext(recipe, source.splitlines(), unsafe_fixes=True)
    token = running(ctx)
    try:
        refactor(engine._tool(recipe), tree)
    finally:
        stop_running(token)
    return str(tree), [(p.line, p.column, p.message, p.applied) for p in ctx.proposals]


def test_root_only_fast_path_equals_bowlers_full_traversal():
    """Every recipe selects the root: the engine then calls its fixer on the
    root alone instead of Bowler walking the whole tree. Same rewrites, same
    findings, on every fixture."""
    compared = 0
    for case in all_cases():
        recipe = all_recipes()[case.recipe]
        source = case.before.read_text()
        fast = _refactored(recipe, source, lambda tool, tree: engine._refactor(tool, tree, "f.py"))
        full = _refactored(recipe, source, lambda tool, tree: tool.refactor_tree(tree, "f.py"))
        assert fast == full, case.id
        compared += bool(fast[1])
    if not compared:
        pytest.fail("no fixture produced a finding: the comparison proved nothing")

