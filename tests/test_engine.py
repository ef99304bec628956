"""The engine contract: a value for every input, never an exception."""

from __future__ import annotations

import sys

import pytest

from migrate import engine, traversal
from migrate.engine import Options, apply_edits, transform
from migrate.registry import all_recipes
from migrate.result import Status

from fixture_cases import FIXTURES, ROOT, all_cases
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


@pytest.mark.parametrize("isolated", [False, True])
def test_identical_lines_at_different_places_are_separate_findings(isolated):
    source = "import x\n\ny = risky(2)\nif x:\n    y = risky(2)\ny = risky(2)\n"
    result = transform(source, "a.py", Options((RISKY,), isolated=isolated))
    assert [d.line for d in result.diagnostics] == [3, 5, 6]


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


sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_check import CANDIDATE_TAIL  # noqa: E402 (every recipe's candidate, no recipe's finding)

SUFFIXED = "    b2 = (y2 - x1) * x2\n"  # the line that makes suffix-mixup a candidate
EVERY_RECIPE = CANDIDATE_TAIL.replace(SUFFIXED, "")


@pytest.fixture
def counted(monkeypatch):
    """Count fissix parses, traversals by the bottom matcher and node-by-node walks."""
    from fissix.btm_matcher import BottomMatcher
    from fissix.refactor import RefactoringTool

    counts = {"parse": 0, "refactor_tree": 0, "bottom matcher": 0, "node walk": 0}

    def counting(name, original):
        def call(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)
        return call

    monkeypatch.setattr(engine, "parse", counting("parse", engine.parse))
    monkeypatch.setattr(RefactoringTool, "refactor_tree",
                        counting("refactor_tree", RefactoringTool.refactor_tree))
    monkeypatch.setattr(BottomMatcher, "run", counting("bottom matcher", BottomMatcher.run))
    walk = RefactoringTool.traverse_by

    def traverse_by(self, fixers, traversal):
        walked = []  # the walk yields nothing when no recipe of the pass needs it

        def nodes():
            for node in traversal:
                walked.append(True)
                yield node

        walk(self, fixers, nodes())
        counts["node walk"] += bool(walked)

    monkeypatch.setattr(RefactoringTool, "traverse_by", traverse_by)
    return counts


@pytest.mark.parametrize("isolated", [False, True], ids=["fix", "check"])
def test_every_recipe_runs_in_one_traversal_of_one_parse(counted, isolated):
    recipes = tuple(all_recipes().values())
    candidates = [r.id for r in recipes if engine.wants(r, EVERY_RECIPE)]
    assert set(candidates) == set(all_recipes()) - {"suffix-mixup"}
    result = transform(EVERY_RECIPE, "every.py", Options(recipes, isolated=isolated))
    assert result.status is Status.UNCHANGED and not result.diagnostics
    assert counted == {"parse": 1, "refactor_tree": 1, "bottom matcher": 1, "node walk": 0}


def test_a_pattern_without_a_name_literal_adds_one_node_walk(counted):
    """suffix-mixup's product `a * b` has no name the bottom matcher could
    climb from: fissix walks the nodes for it, in the same traversal call."""
    assert SUFFIXED in CANDIDATE_TAIL
    result = transform(CANDIDATE_TAIL, "every.py", Options(tuple(all_recipes().values())))
    assert not result.diagnostics
    assert counted == {"parse": 1, "refactor_tree": 1, "bottom matcher": 1, "node walk": 1}


def test_a_fixed_file_is_parsed_once_and_traversed_once_per_pass(counted, monkeypatch):
    """The input is parsed whole once; after a pass that changed the text,
    the next pass's tree is rebuilt from the untouched statements and a
    parse of the changed ones (migrate/reparse.py), never a whole parse;
    the last pass changes nothing."""
    source = (FIXTURES / "numpy-accumulator" / "seed_hierarchical.before.py").read_text()
    parsed, rebuilt = [], []
    counting, rebuild = engine.parse, engine.reparse
    monkeypatch.setattr(engine, "parse", lambda text: parsed.append(text) or counting(text))
    monkeypatch.setattr(engine, "reparse", lambda *args: rebuilt.append(rebuild(*args)) or rebuilt[-1])
    result = transform(source, "seed.py", Options(tuple(all_recipes().values()), unsafe_fixes=True))
    assert result.status is Status.CHANGED
    passes = counted["refactor_tree"]
    assert counted["bottom matcher"] == passes
    assert passes == 3  # numpy-accumulator and unused-model-instance; vectorize-sample-loop; none
    assert len(rebuilt) == passes - 1 and None not in rebuilt
    assert parsed.count(source) == 1 and result.output not in parsed


def test_a_check_builds_one_tool_for_the_first_pass_and_one_for_every_enabled_recipe(monkeypatch):
    """seed-003's check runs 9 passes of 6 different sets of recipes: they
    share the first pass's tool until the incremental revisit, which asks
    for every enabled recipe's fixers, widens it; the passes after it run
    on that one."""
    from fissix.refactor import RefactoringTool

    monkeypatch.setattr(traversal, "_tools", {})
    monkeypatch.setattr(traversal, "_shared", {})
    built, passes = [], []
    construct, run = RefactoringTool.__init__, traversal.run
    monkeypatch.setattr(RefactoringTool, "__init__",
                        lambda self, fixers, *a, **k: built.append(len(fixers)) or construct(self, fixers, *a, **k))
    monkeypatch.setattr(traversal, "run", lambda recipes, *a, **k: passes.append(len(recipes)) or run(recipes, *a, **k))
    source = (FIXTURES / "per-step-tape" / "seed003_churn_ig.before.py").read_text()
    recipes = tuple(all_recipes().values())
    result = transform(source, "seed.py", Options(recipes, unsafe_fixes=True, isolated=True))
    assert len(result.diagnostics) == 9
    assert len(passes) == 9 and len(set(passes)) > 2
    fixers = {recipe.id: len(traversal._fixers(recipe)) for recipe in recipes}
    first = [recipe.id for recipe in recipes if engine.wants(recipe, source)]
    assert built == [sum(fixers[r] for r in first), sum(fixers.values())]


def test_bottom_matcher_finds_every_node_a_full_traversal_matches():
    """On every fixture, each recipe pattern the engine gives the bottom
    matcher reaches every node a node-by-node match would."""
    from fissix.btm_matcher import BottomMatcher

    compared = 0
    for case in all_cases():
        for recipe in all_recipes().values():
            for fixer_class in traversal.tool((recipe,)).fixers:
                if not fixer_class.BM_compatible:
                    continue
                tree = engine.parse(case.before.read_text())
                fixer = fixer_class({"print_function": True}, [])
                expected = {id(n) for n in tree.pre_order() if fixer.match(n)}
                matcher = BottomMatcher()
                matcher.add_fixer(fixer)
                found = {id(n) for n in matcher.run(tree.leaves()).get(fixer, [])}
                assert expected <= found, (case.id, recipe.id)
                compared += len(expected)
    assert compared > 50


@pytest.mark.parametrize("source", ["print 'hello'\n", "def f(:\n    pass\n", "x = (1,\n"])
def test_text_cpython_cannot_parse_is_skipped_whatever_the_prefilter_says(source):
    """No recipe's token occurs here, yet the file is no Python: skipped, with the line."""
    result = transform(source, "bad.py", Options((RENAME,)))
    assert result.status is Status.SKIPPED and "line 1" in result.reason, result.reason


VERDICT_CASES = [
    "import numpy as np\nx = np.zeros(3)\n",
    "import numpy as np\nx = np.zeros(3\n",  # the parser's error
    "import numpy as np\nreturn np.zeros(3)\n",  # the compiler's: 'return' outside function
    "import numpy as np\nnonlocal np\n",  # the symbol table's
    "import numpy as np\ndef f(a, a):\n    return np.zeros(a)\n",
    "import numpy as np\nx = np.zeros(3)\x00\n",  # ValueError: null bytes
    "import numpy as np\nx = " + "(" * 150 + "np" + ")" * 150 + "\n",
    "import numpy as np\nx = " + "-" * 3000 + "np.zeros(3)\n",  # deep: a limit only the ast objects may hit
]


@pytest.mark.parametrize("source", VERDICT_CASES)
def test_the_verdict_from_the_prechecks_ast_is_the_texts(source):
    """When a precheck needs the stdlib ``ast``, the verdict compiles it
    instead of the text: the same answer, the text parsed once."""
    from migrate.recipe import SourceFacts
    facts = SourceFacts(source)
    try:
        facts.tree  # what a precheck reading it does: the verdict then compiles it
    except SyntaxError:
        assert facts.parsed() is None
    assert engine._cpython_verdict(source, "v.py", facts) == engine._cpython_verdict(source, "v.py")
