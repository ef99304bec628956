"""The generated spaces of vectorize-sample-loop and unused-model-instance
(tests/variants/sample_loops.py, unused_models.py): every program scored
statically (engine only, no TensorFlow) against its labels, near-misses left
byte-identical, and a fixed-seed sample of fixes run by verify on the
current TF and the real TF 2.3 (the after trains and computes the before's
outputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.engine import Options, transform
from migrate.registry import resolve
from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import current

from tf23_runtime import tf23_runtime
from variant_checks import score_family
from variants import all_programs, families, sample

FAMILIES = ("vectorize-sample-loop", "unused-model-instance")
# spellings TF 2.3 has (no `keras` 3 package, no tf_keras)
PORTABLE = ("_tfkeras", "_fromtf", "_fromimports")


@pytest.fixture(scope="module")
def programs():
    return {family: list(all_programs(families()[family])) for family in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_the_space_has_a_third_of_near_misses_and_notebooks(family, programs):
    found = programs[family]
    assert sum(p.near_miss for p in found) * 3 >= len(found)
    assert any(p.suffix == ".ipynb" for p in found if p.near_miss)
    assert any(p.suffix == ".ipynb" for p in found if not p.near_miss)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_program_is_found_as_labelled_and_near_misses_stay_byte_identical(family, programs):
    """Every recipe over the whole space: the family's recipe at precision
    and recall >= 0.97 with the labelled fix kinds, no other recipe's
    finding, near-misses (notebooks too) unflagged and byte-identical."""
    score_family(programs[family], {family})


def _fix_pairs(programs, root: Path):
    """Fixture pairs ``<recipe>/<name>.before.py`` / ``.after.py`` (the after
    is the engine's fix, unsafe fixes on), so verify compares their outputs."""
    pairs = []
    for family, chosen in programs.items():
        folder = root / family
        folder.mkdir()
        options = Options(tuple(resolve([family])), unsafe_fixes=True)
        for program in chosen:
            before = folder / f"{program.name}.before.py"
            after = folder / f"{program.name}.after.py"
            before.write_text(program.source, encoding="utf-8")
            after.write_text(transform(program.source, str(before), options).output, encoding="utf-8")
            pairs.append((program, before, after))
    return pairs


@pytest.mark.tf
@pytest.mark.parametrize("runtime", ["current", "2.3"], ids=["current-tf", "tf2.3"])
def test_a_fixed_sample_of_fixes_trains_and_keeps_the_outputs(runtime, programs, tmp_path):
    """Three bug programs per family (fixed seed, TF 2.3 spellings, scripts):
    each after passes every check, the equivalence of outputs() included."""
    chosen = {family: sample([p for p in found if not p.near_miss and p.suffix == ".py"
                              and p.name.endswith(PORTABLE)], 3, seed=23)
              for family, found in programs.items()}
    pairs = _fix_pairs(chosen, tmp_path)
    assert all(before.read_text() != after.read_text() for _, before, after in pairs)
    chosen_runtime = tf23_runtime() if runtime == "2.3" else current()
    report = verify([path for _, before, after in pairs for path in (before, after)],
                    VerifyOptions(runtimes=(chosen_runtime,), jobs=2))
    by_path = {Path(p.path): p for p in report.programs}
    for program, _, after in pairs:
        result = by_path[after]
        failed = [f"{c.name}: {c.summary} {c.error or ''}" for c in result.checks if not c.passed]
        assert result.ok and result.check("equivalence") is not None, (program.name, failed)
