"""The runner over every fixture: each `before` fails for the reason its
recipe names, each `after` passes, and each `before` rewritten by the engine
with every recipe (unsafe fixes on) passes, the TF 2.3 API check included.

Two verify calls in all (fixtures as they are; the rewrites), so TensorFlow is
imported twice however many fixtures there are; new fixtures are picked up
from fixtures/ through fixture_cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.engine import Options, transform
from migrate.registry import all_recipes, resolve
from migrate.result import Status
from migrate.runner import VerifyOptions, verify, verify_rewrite

from fixture_cases import all_cases

CASES = all_cases()
PAIRS = [c for c in CASES if c.after]


@pytest.fixture(scope="module")
def fixture_reports():
    paths = [p for case in CASES for p in (case.before, case.after) if p]
    report = verify(paths, VerifyOptions(api="2.3"))
    return {Path(p.path): p for p in report.programs}


@pytest.fixture(scope="module")
def rewrite_reports(tmp_path_factory):
    """Each before through the engine (all recipes, unsafe fixes), then verified."""
    out = tmp_path_factory.mktemp("rewritten")
    options = Options(tuple(resolve(None)), unsafe_fixes=True)
    pairs, failures = [], {}
    for case in CASES:
        result = transform(case.before.read_text(), str(case.before), options)
        if result.status not in (Status.CHANGED, Status.UNCHANGED):
            failures[case.before] = result.reason or "; ".join(result.errors)
            continue
        target = out / case.recipe / f"{case.name}.rewritten.py"
        target.parent.mkdir(exist_ok=True)
        target.write_text(result.output)
        pairs.append((case.before, target))
    report = verify_rewrite(pairs, VerifyOptions(api="2.3"))
    return {Path(pair.original.path): pair for pair in report.pairs}, failures


def _explain(program) -> str:
    lines = [f"{program.path}: {program.verdict} {program.message or ''}"]
    lines += [f"  {c.name}: {c.summary} {c.error or ''}" for c in program.checks if not c.passed]
    return "\n".join(lines)


@pytest.mark.tf
@pytest.mark.parametrize("case", PAIRS, ids=lambda c: c.id)
def test_before_fails_for_the_reason_its_recipe_names(case, fixture_reports):
    program = fixture_reports[case.before]
    expected = all_recipes()[case.recipe].before_fails
    assert program.ok, _explain(program)
    if expected is None:
        assert program.verdict == "pass", _explain(program)
    else:
        assert program.verdict.startswith("expected failure observed"), _explain(program)


@pytest.mark.tf
@pytest.mark.parametrize("case", PAIRS, ids=lambda c: c.id)
def test_after_passes(case, fixture_reports):
    program = fixture_reports[case.after]
    assert program.ok and program.verdict == "pass", _explain(program)
    if all_recipes()[case.recipe].before_fails is None:
        assert program.check("equivalence") is not None


@pytest.mark.tf
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_engine_rewritten_before_passes(case, rewrite_reports):
    pairs, failures = rewrite_reports
    assert case.before not in failures, failures.get(case.before)
    rewritten = pairs[case.before].rewritten
    assert rewritten.ok, _explain(rewritten)
    assert rewritten.check("api").passed
