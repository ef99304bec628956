"""The runner over every fixture: each `before` fails for the reason its
recipe names, each `after` passes, and each `before` rewritten by the engine
with every recipe (unsafe fixes on) passes (but a report-only one, which
the engine leaves failing: fixture_cases.Case.report_only), the TF 2.3 API check included;
under the current TF with tf-keras and under the real TF 2.3 (tf23_runtime:
skipped without a Python 3.8/3.7, a failure in CI).

One verify call per runtime over the fixtures and the rewrites, in one pool
of workers, so TensorFlow is imported once per worker however many fixtures
there are; new fixtures are picked up from fixtures/ through fixture_cases.
A rewrite whose text is its case's after (or its before, left unchanged) is
not run a second time: that file's report is read instead, and must pass
every check (most rewrites are one or the other: on 2 Dec 2026, 45 of 50,
so 89 programs per runtime instead of 134).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.engine import Options, transform
from migrate.registry import all_recipes, resolve
from migrate.result import Status
from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import current

from fixture_cases import all_cases
from tf23_runtime import tf23_runtime

CASES = all_cases()
PAIRS = [c for c in CASES if c.after]


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory):
    """Each before through the engine (all recipes, unsafe fixes): before path ->
    rewritten file (the case's after or before when the text is theirs), or ->
    the engine's reason when it could not rewrite."""
    out = tmp_path_factory.mktemp("rewritten")
    options = Options(tuple(resolve(None)), unsafe_fixes=True)
    files = {}
    for case in CASES:
        result = transform(case.before.read_text(), str(case.before), options)
        if result.status not in (Status.CHANGED, Status.UNCHANGED):
            files[case.before] = result.reason or "; ".join(result.errors)
            continue
        same = [p for p in (case.after, case.before) if p and p.read_text() == result.output]
        target = same[0] if same else out / case.recipe / f"{case.name}.rewritten.py"
        if not same:
            target.parent.mkdir(exist_ok=True)
            target.write_text(result.output)
        files[case.before] = target
    return files


# under xdist (--dist loadgroup) each runtime's tests run on one worker, which makes its
# report once; the two runtimes may run side by side
@pytest.fixture(scope="module", params=[
    pytest.param("current", id="current-tf", marks=pytest.mark.xdist_group("verify-fixtures-current")),
    pytest.param("2.3", id="tf2.3", marks=pytest.mark.xdist_group("verify-fixtures-tf2.3"))])
def reports(request, rewritten):
    """One verify call per runtime over the fixtures and the rewrites."""
    runtime = tf23_runtime() if request.param == "2.3" else current()
    paths = [p for case in CASES for p in (case.before, case.after) if p]
    paths += [p for p in rewritten.values() if isinstance(p, Path)]
    report = verify(list(dict.fromkeys(paths)), VerifyOptions(api="2.3", runtimes=(runtime,), jobs=2))
    return {Path(p.path).resolve(): p for p in report.programs}  # verify names files relative to the cwd


def passes_every_check(program) -> bool:
    """What a rewrite must do, whatever role its file has (an after, a
    negative before or a plain program): run, and fail no check."""
    return program.status == "ran" and all(c.passed for c in program.checks)


def _explain(program) -> str:
    lines = [f"{program.path} [{program.runtime}]: {program.verdict} {program.message or ''}"]
    lines += [f"  {c.name}: {c.summary} {c.error or ''}" for c in program.checks if not c.passed]
    return "\n".join(lines)


@pytest.mark.tf
@pytest.mark.parametrize("case", PAIRS, ids=lambda c: c.id)
def test_before_fails_for_the_reason_its_recipe_names(case, reports):
    program = reports[case.before]
    expected = all_recipes()[case.recipe].before_fails
    assert program.ok, _explain(program)
    if expected is None:
        assert program.verdict == "pass", _explain(program)
    else:
        assert program.verdict.startswith("expected failure observed"), _explain(program)


@pytest.mark.tf
@pytest.mark.parametrize("case", PAIRS, ids=lambda c: c.id)
def test_after_passes(case, reports):
    program = reports[case.after]
    assert program.ok and program.verdict == "pass", _explain(program)
    if all_recipes()[case.recipe].before_fails is None:  # a fix that keeps behaviour
        equivalent = program.check("equivalence")
        assert equivalent is not None and equivalent.passed, _explain(program)


@pytest.mark.tf
@pytest.mark.parametrize("case", [c for c in CASES if not c.report_only], ids=lambda c: c.id)
def test_engine_rewritten_before_passes(case, rewritten, reports):
    target = rewritten[case.before]
    assert isinstance(target, Path), f"the engine could not rewrite it: {target}"
    program = reports[target]
    assert passes_every_check(program), _explain(program)
    assert program.check("api").passed
