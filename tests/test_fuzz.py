"""Property-based fuzzing of the engine with every real recipe, unsafe fixes on:
it never fails, never returns unparsable code, its output is a fixpoint, and
a run whose --select leaves out every recipe with a finding changes nothing.

Inputs: valid Python from hypothesmith (grammar- and CST-driven: the parser
and the recipes' guards on code that is nothing like TensorFlow), and
TensorFlow-shaped programs (tests/tf_programs.py: the fixtures' bug patterns
under random names, aliases, layout, comments and company) that the recipes
do rewrite; a fixed-seed run checks that most of them are rewritten and that
every recipe they aim at fires, so the fuzzer cannot silently stop reaching
the rewrites.

Profiles: ``ci`` (the default, 50 examples a test) runs in CI; by hand,
``HYPOTHESIS_PROFILE=long pytest tests/test_fuzz.py`` runs 2,000.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter

from hypothesis import HealthCheck, Phase, event, given, note, settings, strategies as st

from migrate.engine import Options, check_output, transform
from migrate.registry import all_recipes
from migrate.result import SourceResult, Status

from python_sources import PYTHON, quietly
from tf_programs import SNIPPETS, tf_programs

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=50, deadline=None, suppress_health_check=_SLOW_OK)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_OK)
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

RECIPES = tuple(all_recipes().values())
FIX = Options(RECIPES, unsafe_fixes=True)
CHECK = Options(RECIPES, unsafe_fixes=True, isolated=True)


def _assert_engine_contract(source: str) -> SourceResult:
    """The invariants every input keeps; returns the fix run's result."""
    note(source)
    first = transform(source, "fuzz.py", FIX)
    event(f"first pass: {first.status.value}")
    assert first.status is not Status.FAILED, (first.reason, first.errors)
    if first.status is Status.SKIPPED:
        return first  # fissix cannot parse it (e.g. Python 3.8+ only syntax): reported, not fatal
    if first.status is Status.UNCHANGED:
        assert first.output == source
    else:
        assert check_output(first.output, "fuzz.py") is None
    second = transform(first.output, "fuzz.py", FIX)
    assert second.status is Status.UNCHANGED and second.output == first.output, second.diagnostics

    checked = transform(source, "fuzz.py", CHECK)
    assert checked.status is not Status.FAILED, (checked.reason, checked.errors)
    assert checked.output == source
    finders = {d.recipe for d in checked.diagnostics}
    others = Options(tuple(r for r in RECIPES if r.id not in finders), unsafe_fixes=True)
    left_out = transform(source, "fuzz.py", others)  # --select without any recipe that finds
    assert left_out.status is Status.UNCHANGED and left_out.output == source, left_out.diagnostics
    return first


def _assert_tf_program_contract(source: str) -> SourceResult:
    compile(source, "fuzz.py", "exec", dont_inherit=True)  # the generator writes real Python
    result = _assert_engine_contract(source)
    assert result.status is not Status.SKIPPED, result.reason
    for recipe in sorted({d.recipe for d in result.diagnostics if d.applied}):
        event(f"rewritten by {recipe}")
    return result


@settings(PROFILE)
@given(PYTHON)
def test_generated_python(source):
    _assert_engine_contract(source)


@settings(PROFILE)
@given(tf_programs())
def test_tensorflow_shaped_programs(source):
    _assert_tf_program_contract(source)


def test_tensorflow_shaped_programs_reach_the_rewrites():
    """A fixed-seed run: most programs are rewritten, by every recipe they aim at."""
    statuses, rewriters = Counter(), Counter()

    @settings(max_examples=40, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=_SLOW_OK)
    @given(tf_programs())
    def run(source):
        result = _assert_tf_program_contract(source)
        statuses[result.status] += 1
        rewriters.update({d.recipe for d in result.diagnostics if d.applied})

    run()
    assert sum(statuses.values()) == 40
    assert statuses[Status.CHANGED] >= 32, statuses
    assert set(rewriters) >= set(SNIPPETS), rewriters


def _warns_when_drawn() -> st.SearchStrategy:
    return st.builds(lambda: compile("'a'()", "<string>", "exec") and "'a'()")


def test_the_generators_own_syntax_warnings_are_silenced_and_no_other():
    def drawn(strategy):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            given(strategy)(settings(max_examples=1, database=None)(lambda source: None))()
            warnings.warn("the code under test's own", SyntaxWarning)
        return [str(w.message) for w in caught]

    assert any("not callable" in message for message in drawn(_warns_when_drawn()))
    assert drawn(quietly(_warns_when_drawn())) == ["the code under test's own"]
