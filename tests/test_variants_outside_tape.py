"""The outside-tape variant family (tests/variants/outside_tape.py): every
program scored by the engine in this process with every recipe (no
TensorFlow), and a fixed sample of four run by verify, before and after its
fix, on current TF with tf-keras."""

from __future__ import annotations

import pytest

from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import current

from test_variants_ig_attribution import _run, cs
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
    misses = sum(p.near_miss for p in PROGRAMS)
    assert len(PROGRAMS) >= 200 and misses * 3 >= len(PROGRAMS)
    labelled = {p.name for p in PROGRAMS if "# expect: outside-tape" in p.source}
    assert labelled == {p.name for p in PROGRAMS if not p.near_miss}
    for kind in ("safe", "unsafe", "report"):
        assert sum(f"# expect: outside-tape {kind}" in p.source for p in PROGRAMS) >= 18, kind


def test_every_program_is_found_with_its_fix_kind_and_near_misses_stay_byte_identical():
    labels, findings, changed = [], [], []
    for program in PROGRAMS:
        found_labels, found, output = _run(program)
        labels += found_labels
        findings += found
        if program.near_miss and output != program.source:
            changed.append(program.name)
    scores = cs.match(labels, findings)
    assert set(scores) == {"outside-tape"}, scores.keys()  # no other recipe fires on these programs
    score = scores["outside-tape"]
    assert score.precision == 1.0 and score.recall == 1.0, (score.false_positives[:3], score.false_negatives[:3])
    assert score.kind_agree == score.tp, score.kind_mismatches[:3]
    assert not changed


@pytest.mark.tf
def test_a_fixed_sample_fails_before_and_trains_after_its_fix(tmp_path):
    """Bugs: the before fails (None gradients), the after trains; the
    near-miss (byte-identical after the fix) trains as written."""
    paths, bugs_before = [], set()
    for program in SAMPLE:
        _, _, output = _run(program)
        for role, text in (("before", program.source), ("after", output)):
            if role == "after" or not program.near_miss:
                path = tmp_path / role / f"{program.name}.py"
                path.parent.mkdir(exist_ok=True)
                path.write_text(text, encoding="utf-8")
                paths.append(path)
                if role == "before":
                    bugs_before.add(str(path))
    report = verify(paths, VerifyOptions(timeout=120, runtimes=(current(),)))
    assert len(report.programs) == len(paths) == 7
    for run in report.programs:
        assert run.ok != (str(run.path) in bugs_before), (run.path, run.message)
