"""The outside-tape variant family (tests/variants/outside_tape.py): every
program scored by the engine in this process with every recipe (no
TensorFlow), and a fixed sample of four run by verify, before and after its
fix, on current TF with tf-keras."""

from __future__ import annotations

import pytest

from migrate.runner.runtimes import current

from variant_checks import check_space, score_family, verify_sample
from variants import all_programs, families

FAMILY = families()["outside-tape"]
PROGRAMS = list(all_programs(FAMILY))
# a fixed sample: the forward pass before the tape, the loss written in the
# gradient call, minimize over a lambda returning a precomputed cost (with a
# random draw: an unsafe fix), and a near-miss (a value kept on purpose)
SAMPLE = [p for p in PROGRAMS if p.name in {
    "before_sequential_mse_pure", "call_subclass_huber_pure", "lambda_raw_mse_noisy", "kept_sequential_mse_pure"}]


def test_the_space_crosses_every_place_with_a_third_near_misses():
    assert len(SAMPLE) == 4
    check_space(PROGRAMS, 200, "# expect: outside-tape")
    for kind in ("safe", "unsafe", "report"):
        assert sum(f"# expect: outside-tape {kind}" in p.source for p in PROGRAMS) >= 18, kind


def test_every_program_is_found_with_its_fix_kind_and_near_misses_stay_byte_identical():
    score_family(PROGRAMS, {"outside-tape"}, floor=1.0)


@pytest.mark.tf
def test_a_fixed_sample_fails_before_and_trains_after_its_fix(tmp_path):
    """Bugs: the before fails (None gradients), the after trains; the
    near-miss (byte-identical after the fix) trains as written."""
    assert verify_sample(SAMPLE, tmp_path, [current()]) == 7
