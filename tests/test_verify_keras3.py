"""Every recipe's rewrites train under Keras 3 too (TF >= 2.16's default
`tf.keras`, what most users run): every fixture's after, and every before
rewritten by the engine (but a report-only one, which the engine leaves
failing), passes `verify` under Keras 3 -- eager, `tf.function` and `fit`,
where a subclassed `call` is not autographed; a behaviour-preserving
recipe's after computes the same outputs() as its before there too.

The tf-keras and TF 2.3 columns are tests/test_verify_fixtures.py; this
reuses its engine rewrites (a rewrite that is its after, or its unchanged
negative before, runs once, as that file) and runs one Keras 3 pool over
them. The befores that fail by design are not run here: what they fail is
the other columns' question, and skipping them keeps this file's cost to
about one program per case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.registry import all_recipes
from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import current

from test_verify_fixtures import CASES, PAIRS, _explain, passes_every_check
from test_verify_fixtures import rewritten  # noqa: F401 (a pytest fixture)


# under xdist (--dist loadgroup) one worker runs this file, making the Keras 3 run once
pytestmark = pytest.mark.xdist_group("verify-keras3")


def _preserves_behaviour(case) -> bool:
    return all_recipes()[case.recipe].before_fails is None


@pytest.fixture(scope="module")
def keras3_run(rewritten):  # noqa: F811 (the imported fixture)
    """One Keras 3 verify call over the afters, the befores whose after is
    judged against them (equivalence) and the rewritten befores."""
    paths = [p for c in PAIRS for p in ((c.before, c.after) if _preserves_behaviour(c) else (c.after,))]
    paths += [rewritten[c.before] for c in CASES
              if not c.report_only and isinstance(rewritten[c.before], Path)]
    return verify(list(dict.fromkeys(paths)), VerifyOptions(runtimes=(current(keras="3"),), jobs=2))


@pytest.fixture(scope="module")
def keras3_reports(keras3_run):
    return {Path(p.path).resolve(): p for p in keras3_run.programs}  # verify names files relative to the cwd


@pytest.mark.tf
def test_the_workers_ran_keras3(keras3_run):
    assert keras3_run.workers and all("(Keras 3)" in w.keras for w in keras3_run.workers), \
        [w.keras for w in keras3_run.workers]


@pytest.mark.tf
@pytest.mark.parametrize("case", PAIRS, ids=lambda c: c.id)
def test_after_passes_under_keras3(case, keras3_reports):
    program = keras3_reports[case.after]
    assert program.keras == "3" and program.runtime == "keras3"
    assert program.ok and program.verdict == "pass", _explain(program)
    if _preserves_behaviour(case):
        equivalent = program.check("equivalence")
        assert equivalent is not None and equivalent.passed, _explain(program)


@pytest.mark.tf
@pytest.mark.parametrize("case", [c for c in CASES if not c.report_only], ids=lambda c: c.id)
def test_engine_rewritten_before_passes_under_keras3(case, rewritten, keras3_reports):  # noqa: F811
    target = rewritten[case.before]
    assert isinstance(target, Path), f"the engine could not rewrite it: {target}"
    program = keras3_reports[target]
    assert program.runtime == "keras3" and passes_every_check(program), _explain(program)
