"""The numpy-on-loss-path variant family (tests/variants/numpy_loss_path.py):
every program scored by the engine in this process with every recipe (no
TensorFlow), and a fixed sample of three run by verify, before and after its
fix, on current TF with tf-keras."""

from __future__ import annotations

import pytest

from migrate.runner.runtimes import current

from variant_checks import check_space, score_family, verify_sample
from variants import all_programs, families

FAMILY = families()["numpy-on-loss-path"]
PROGRAMS = list(all_programs(FAMILY))
# a fixed sample: a mask built from the copy in a Keras call, NumPy math on
# the copy in a tape helper under tf.function, a near-miss logging after the
# gradient (compiled losses: the fixtures; the `float` programs keep their bug
# in `train()`, which the runner's protocol does not run)
SAMPLE = [p for p in PROGRAMS if p.name in {
    "astype_call_reduction_tf_keras", "np_math_tf_function_reduction_tf_keras_pkg",
    "numpy_tape_after_gradient_tf_keras"}]


def test_the_space_crosses_every_dimension_with_near_misses():
    assert len(SAMPLE) == 3
    check_space(PROGRAMS, 140, "# expect: numpy-on-loss-path")
    assert not any("import tensorflow" in p.source for p in PROGRAMS if p.name.endswith("keras3"))


def test_every_program_scores_at_least_0_97_and_near_misses_stay_byte_identical():
    fixed = score_family(PROGRAMS, {"numpy-on-loss-path"})
    assert not [p.name for p, output in fixed if p.name.endswith("keras3") and "tensorflow" in output]


@pytest.mark.tf
def test_a_fixed_sample_fails_before_and_passes_after_its_fix_on_current_tf(tmp_path):
    """Bugs: the before fails, the after passes; the near-miss (byte-identical
    after the fix) passes as written."""
    verify_sample(SAMPLE, tmp_path, [current()])
