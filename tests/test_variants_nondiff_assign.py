"""The nondiff-assign variant family (tests/variants/nondiff_assign.py):
every program scored by the engine in this process with every recipe (no
TensorFlow): nondifferentiable-op and assign-in-forward find each labelled
line with the labelled kind, no other recipe fires, and near-misses (an
accuracy beside the loss, a mask, a metric, state nobody reads, a counter)
stay byte-identical."""

from __future__ import annotations

from test_variants_ig_attribution import _run, cs
from variants import all_programs, families

FAMILY = families()["nondiff-assign"]
PROGRAMS = list(all_programs(FAMILY))
RECIPES = {"nondifferentiable-op", "assign-in-forward"}


def test_the_space_crosses_spellings_contexts_and_reach_with_near_misses():
    misses = sum(p.near_miss for p in PROGRAMS)
    assert len(PROGRAMS) >= 200 and misses * 3 >= len(PROGRAMS)
    labelled = {p.name for p in PROGRAMS if "# expect:" in p.source}
    assert labelled == {p.name for p in PROGRAMS if not p.near_miss}
    assert sum("# expect: nondifferentiable-op unsafe" in p.source for p in PROGRAMS) >= 30
    assert sum("# expect: assign-in-forward report" in p.source for p in PROGRAMS) >= 10


def test_every_program_scores_at_least_0_97_and_near_misses_stay_byte_identical():
    labels, findings, changed = [], [], []
    for program in PROGRAMS:
        found_labels, found, output = _run(program)
        labels += found_labels
        findings += found
        if program.near_miss and output != program.source:
            changed.append(program.name)
    scores = cs.match(labels, findings)
    assert set(scores) == RECIPES, scores.keys()  # no other recipe fires on these programs
    for recipe in RECIPES:
        score = scores[recipe]
        assert score.precision >= 0.97 and score.recall >= 0.97, \
            (recipe, score.false_positives[:3], score.false_negatives[:3])
        assert score.kind_agree == score.tp, score.kind_mismatches[:3]
    assert not changed
