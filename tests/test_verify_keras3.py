"""The seed-000 recipes' rewrites train under Keras 3 too (TF >= 2.16's default
`tf.keras`): every after of numpy-accumulator, vectorize-sample-loop and
unused-model-instance, and every before of theirs rewritten by the engine,
passes `verify` under Keras 3 -- eager, `tf.function` and `fit`, where a
subclassed `call` is not autographed.

The tf-keras column is tests/test_verify_fixtures.py; this reuses its engine
rewrites (one per before; a rewrite that is its after runs once, as the
after) and runs one Keras 3 pool over these recipes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.registry import all_recipes
from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import current

from test_verify_fixtures import CASES, _explain, passes_every_check
from test_verify_fixtures import rewritten  # noqa: F401 (a pytest fixture)

RECIPES = ("numpy-accumulator", "vectorize-sample-loop", "unused-model-instance")
MINE = [c for c in CASES if c.recipe in RECIPES]


@pytest.fixture(scope="module")
def keras3_reports(rewritten):  # noqa: F811 (the imported fixture)
    """One Keras 3 verify call over these recipes' afters, the befores of
    behaviour-preserving recipes (an after is judged against its before:
    equivalence; numpy-accumulator's befores fail by design and nothing here
    asks how) and rewritten befores."""
    paths = [p for c in MINE if c.after
             for p in ((c.before, c.after) if all_recipes()[c.recipe].before_fails is None else (c.after,))]
    paths += [rewritten[c.before] for c in MINE if isinstance(rewritten[c.before], Path)]
    report = verify(list(dict.fromkeys(paths)), VerifyOptions(runtimes=(current(keras="3"),), jobs=2))
    return {Path(p.path).resolve(): p for p in report.programs}  # verify names files relative to the cwd


@pytest.mark.tf
@pytest.mark.parametrize("case", [c for c in MINE if c.after], ids=lambda c: c.id)
def test_after_passes_under_keras3(case, keras3_reports):
    program = keras3_reports[case.after]
    assert program.keras == "3" and program.runtime == "keras3"
    assert program.ok and program.verdict == "pass", _explain(program)


@pytest.mark.tf
@pytest.mark.parametrize("case", MINE, ids=lambda c: c.id)
def test_engine_rewritten_before_passes_under_keras3(case, rewritten, keras3_reports):  # noqa: F811
    target = rewritten[case.before]
    assert isinstance(target, Path), f"the engine could not rewrite it: {target}"
    program = keras3_reports[target]
    assert passes_every_check(program), _explain(program)
