"""The per-step-tape variant family (tests/variants/per_step_tape.py): every
program scored by the engine in this process with every recipe (no
TensorFlow), and a fixed sample of five run by verify, before and after its
fix, on current TF and on TF 2.3."""

from __future__ import annotations

import pytest

from migrate.runner import VerifyOptions, verify
from migrate.runner.runtimes import current

from test_variants_ig_attribution import _run, cs
from tf23_runtime import tf23_runtime
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
    misses = sum(p.near_miss for p in PROGRAMS)
    assert len(PROGRAMS) >= 300 and misses * 3 >= len(PROGRAMS)
    labelled = {p.name for p in PROGRAMS if "# expect: per-step-tape" in p.source}
    assert sum("# expect: per-step-tape unsafe" in p.source for p in PROGRAMS) >= 30
    assert labelled == {p.name for p in PROGRAMS if not p.near_miss}


def test_every_program_scores_at_least_0_97_and_near_misses_stay_byte_identical():
    labels, findings, changed = [], [], []
    for program in PROGRAMS:
        found_labels, found, output = _run(program)
        labels += found_labels
        findings += found
        if program.near_miss and output != program.source:
            changed.append(program.name)
    scores = cs.match(labels, findings)
    assert set(scores) == {"per-step-tape"}, scores.keys()  # no other recipe fires on these programs
    score = scores["per-step-tape"]
    assert score.precision >= 0.97 and score.recall >= 0.97, (score.false_positives[:3], score.false_negatives[:3])
    assert score.kind_agree == score.tp, score.kind_mismatches[:3]
    assert not changed


@pytest.mark.tf
def test_a_fixed_sample_fails_before_and_passes_after_its_fix_on_current_tf_and_tf23(tmp_path):
    """Bugs: the before fails, the after passes; near-misses (byte-identical
    after the fix) pass as written."""
    paths, bugs_before = [], set()
    for program in SAMPLE:
        _, _, output = _run(program)
        for role, text in (("before", program.source), ("after", output)):
            if program.suffix == ".ipynb":
                text = "\n".join(source for _, source in cs.notebook_cells(text, program.name))
            if role == "after" or not program.near_miss:
                path = tmp_path / role / f"{program.name}.py"
                path.parent.mkdir(exist_ok=True)
                path.write_text(text, encoding="utf-8")
                paths.append(path)
                if role == "before":
                    bugs_before.add(str(path))
    report = verify(paths, VerifyOptions(timeout=120, runtimes=(current(), tf23_runtime())))
    assert len(report.programs) == 2 * len(paths)
    for run in report.programs:
        assert run.ok != (str(run.path) in bugs_before), (run.path, run.interpreter, run.message)
