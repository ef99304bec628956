"""Property-based fuzzing of the engine with every real recipe, unsafe fixes on:
it never fails, never returns unparsable code, and its output is a fixpoint.

Inputs: valid Python from hypothesmith (grammar- and CST-driven), and the
fixture programs cut into top-level statements, some dropped, shuffled in
with generated code, so the recipes see their bug patterns in odd company.

Profiles: ``ci`` (the default, 50 examples a test) runs in CI; by hand,
``HYPOTHESIS_PROFILE=long pytest tests/test_fuzz.py`` runs 2,000.
"""

from __future__ import annotations

import os

import hypothesmith
from hypothesis import HealthCheck, assume, event, given, note, settings, strategies as st

from migrate.engine import Options, check_output, transform
from migrate.registry import all_recipes
from migrate.result import Status

from fixture_cases import all_cases, top_level_chunks

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=50, deadline=None, suppress_health_check=_SLOW_OK)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_OK)
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

FIX = Options(tuple(all_recipes().values()), unsafe_fixes=True)
CHECK = Options(tuple(all_recipes().values()), unsafe_fixes=True, isolated=True)


SNIPPETS = [chunks for case in all_cases()
            for chunks in (top_level_chunks(case.before),
                           top_level_chunks(case.after) if case.after else [])
            if chunks]
GENERATED = st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())
# several draws per example: hypothesmith's targeting allows one per example
FILLER = st.one_of(hypothesmith.from_grammar(auto_target=False),
                   hypothesmith.from_node(auto_target=False))


@st.composite
def spliced(draw) -> str:
    """A fixture program with statements dropped and generated code spliced in."""
    kept = list(draw(st.sampled_from(SNIPPETS)))
    for _ in range(draw(st.integers(0, 2))):
        kept.pop(draw(st.integers(0, len(kept) - 1)))
        if not kept:
            break
    for _ in range(draw(st.integers(0, 3))):
        code = draw(FILLER)
        if code and not code.endswith("\n"):
            code += "\n"
        kept.insert(draw(st.integers(0, len(kept))), code)
    return "".join(kept)


def _assert_engine_contract(source: str) -> None:
    note(source)
    first = transform(source, "fuzz.py", FIX)
    event(f"first pass: {first.status.value}")
    assert first.status is not Status.FAILED, (first.reason, first.errors)
    if first.status is Status.SKIPPED:
        return  # fissix cannot parse it (e.g. Python 3.8+ only syntax): reported, not fatal
    if first.status is Status.UNCHANGED:
        assert first.output == source
    else:
        assert check_output(first.output, "fuzz.py") is None
    second = transform(first.output, "fuzz.py", FIX)
    assert second.status is Status.UNCHANGED and second.output == first.output, second.diagnostics
    checked = transform(source, "fuzz.py", CHECK)
    assert checked.status is not Status.FAILED, (checked.reason, checked.errors)
    assert checked.output == source


def _compiles(source: str) -> bool:
    try:
        compile(source, "fuzz.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


@settings(PROFILE)
@given(GENERATED)
def test_generated_python(source):
    _assert_engine_contract(source)


@settings(PROFILE)
@given(spliced())
def test_fixture_snippets_spliced_into_generated_python(source):
    assume(_compiles(source))
    _assert_engine_contract(source)
