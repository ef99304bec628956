"""The gradient-sources variant family (tests/variants/gradient_sources.py):
every program scored by the engine in this process with every recipe (no
TensorFlow), and a fixed sample of four run by verify, before and after its
fix, on current TF with tf-keras."""

from __future__ import annotations

from fractions import Fraction

import pytest

from migrate.runner.runtimes import current

from variant_checks import check_space, score_family, verify_sample
from variants import all_programs, families

FAMILY = families()["gradient-sources"]
PROGRAMS = list(all_programs(FAMILY))
RECIPES = {"unwatched-source", "integer-source"}
# a fixed sample: a watch after the computation, NumPy data converted, an
# integer variable made float, a near-miss (an alias watched)
SAMPLE = [p for p in PROGRAMS if p.name in {
    "zeros_after_persistent_float32", "np_array_none_nested_float32", "variable_after_persistent_int32",
    "tf_constant_alias_persistent_float32"}]


def test_the_space_crosses_every_dimension_a_third_near_misses():
    assert len(SAMPLE) == 4
    check_space(PROGRAMS, 400, "# expect: ", misses_share=Fraction(3, 10))
    for dimension in ("unwatched-source safe", "unwatched-source unsafe", "unwatched-source report",
                      "integer-source safe", "integer-source report"):
        assert any(f"# expect: {dimension}\n" in p.source for p in PROGRAMS), dimension


def test_every_program_scores_at_least_0_97_and_near_misses_stay_byte_identical():
    score_family(PROGRAMS, RECIPES)


@pytest.mark.tf
def test_a_fixed_sample_fails_before_and_passes_after_its_fix(tmp_path):
    """Bugs: the before fails, the after passes; a near-miss (byte-identical
    after the fix) passes as written."""
    assert verify_sample(SAMPLE, tmp_path, [current()]) == 7
