"""The nondiff-assign variant family (tests/variants/nondiff_assign.py):
every program scored by the engine in this process with every recipe (no
TensorFlow): nondifferentiable-op and assign-in-forward find each labelled
line with the labelled kind (assign-in-forward's functional update where
every later read is explicit, a report under a loop, a second write or a
helper that reads the variable), no other recipe fires, and near-misses (an
accuracy beside the loss, a mask, a metric, state nobody reads, a counter,
a read before the assign only) stay byte-identical."""

from __future__ import annotations

from variant_checks import check_space, score_family
from variants import all_programs, families

FAMILY = families()["nondiff-assign"]
PROGRAMS = list(all_programs(FAMILY))
RECIPES = {"nondifferentiable-op", "assign-in-forward"}


def test_the_space_crosses_spellings_contexts_and_reach_with_near_misses():
    check_space(PROGRAMS, 200)
    assert sum("# expect: nondifferentiable-op unsafe" in p.source for p in PROGRAMS) >= 30
    assert sum("# expect: assign-in-forward unsafe" in p.source for p in PROGRAMS) >= 10
    assert sum("# expect: assign-in-forward report" in p.source for p in PROGRAMS) >= 10


def test_every_program_scores_at_least_0_97_and_near_misses_stay_byte_identical():
    score_family(PROGRAMS, RECIPES)
