"""The per-step-tape variant family (tests/variants/per_step_tape.py): every
program scored by the engine in this process with every recipe (no
TensorFlow), and a fixed sample of five run by verify, before and after its
fix, on current TF and on TF 2.3."""

from __future__ import annotations

import pytest

from migrate.runner.runtimes import current

from tf23_runtime import tf23_runtime
from variant_checks import check_space, score_family, verify_sample
from variants import all_programs, families

FAMILY = families()["per-step-tape"]
PROGRAMS = list(all_programs(FAMILY))
# a fixed sample: a stacked path rebuilt per step, a NumPy step of a
# two-input model, a watched Python number (unsafe fix), SmoothGrad's
# samples, a near-miss (a notebook)
SAMPLE = [p for p in PROGRAMS if p.name in {
    "stacked_for_range_subclassed_short_np_linspace", "numpy_step_for_range_two_input_short_np_linspace",
    "number_scale_for_alphas_functional_short_np_linspace", "noise_samples_while_functional_descriptive",
    "bound_slice_enumerate_sequential_short_list"}]


def test_the_space_is_hundreds_of_programs_a_third_near_misses_with_notebooks():
    assert len(SAMPLE) == 5 and any(p.suffix == ".ipynb" for p in SAMPLE)
    check_space(PROGRAMS, 300, "# expect: per-step-tape")
    assert sum("# expect: per-step-tape unsafe" in p.source for p in PROGRAMS) >= 30


def test_every_program_scores_at_least_0_97_and_near_misses_stay_byte_identical():
    score_family(PROGRAMS, {"per-step-tape"})


@pytest.mark.tf
def test_a_fixed_sample_fails_before_and_passes_after_its_fix_on_current_tf_and_tf23(tmp_path):
    """Bugs: the before fails, the after passes; near-misses (byte-identical
    after the fix) pass as written."""
    verify_sample(SAMPLE, tmp_path, [current(), tf23_runtime()])
