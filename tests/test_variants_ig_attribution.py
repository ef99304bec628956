"""The ig-attribution variant family (tests/variants/ig_attribution.py):
every program scored by the engine in this process (no TensorFlow), and a
fixed sample of five run by ``verify`` on current TF and on TF 2.3."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.engine import Options, transform
from migrate.notebook import transform_notebook
from migrate.registry import all_recipes
from variants import all_programs, families

ROOT = Path(__file__).resolve().parent.parent
FAMILY = families()["ig-attribution"]
RECIPES = ("scalar-target", "suffix-mixup")


def _corpus_score():
    spec = importlib.util.spec_from_file_location("corpus_score", ROOT / "scripts" / "corpus_score.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


cs = _corpus_score()
PROGRAMS = list(all_programs(FAMILY))
# a fixed sample: a bug of each recipe (an IG path function among them), near-misses, a notebook
SAMPLE = [p for p in PROGRAMS if p.name in {
    "scalar_functional_w3_ig_while_argmax", "suffix_underscore_digits_path_function_crossed",
    "scalar_two_input_w3_selected_ig_range", "suffix_none_smoothgrad_statistic",
    "scalar_sequential_unknown_silent_ig_linspace"}]


def _run(program):
    """(labels, findings, output) of every recipe on one program, unsafe fixes on."""
    path = program.name + program.suffix
    options = Options(tuple(all_recipes().values()), unsafe_fixes=True)
    if program.suffix == ".ipynb":
        result = transform_notebook(program.source, path, options)
        labels = [label for number, source in cs.notebook_cells(program.source, path)
                  for label in cs.labels_in_source(source, cs.cell_label(path, number))]
    else:
        result = transform(program.source, path, options)
        labels = cs.labels_in_source(program.source, path)
    assert not result.errors, (path, result.errors)
    findings = [cs.Finding(d.path, d.line, d.end_line, d.recipe, d.safety if d.fixable else "report", d.message)
                for d in result.diagnostics]
    return labels, findings, result.output


def test_the_space_is_large_with_a_third_near_misses_and_notebooks():
    assert len(SAMPLE) == 5 and any(p.suffix == ".ipynb" for p in SAMPLE)
    misses = sum(p.near_miss for p in PROGRAMS)
    assert len(PROGRAMS) >= 250 and misses * 3 >= len(PROGRAMS)
    assert any(p.suffix == ".ipynb" for p in PROGRAMS)
    labelled = {p.name for p in PROGRAMS if "# expect:" in p.source}
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
    assert set(scores) == set(RECIPES), scores.keys()  # no other recipe fires on these programs
    for recipe in RECIPES:
        score = scores[recipe]
        assert score.precision >= 0.97 and score.recall >= 0.97, (recipe, score.false_positives[:3],
                                                                  score.false_negatives[:3])
        assert score.kind_agree == score.tp, score.kind_mismatches[:3]
    assert not changed


@pytest.mark.tf
@pytest.mark.parametrize("runtime", [[], ["--tf", "2.3"]], ids=["current", "tf2.3"])
def test_a_fixed_sample_runs_and_its_fixes_pass_verify(tmp_path, runtime):
    """Bugs: the before fails, the after passes; near-misses (byte-identical
    after the fix) pass as written, run once."""
    runs = []
    for program in SAMPLE:
        _, _, output = _run(program)
        folder = tmp_path / program.name
        folder.mkdir()
        for role, text in (("before", program.source), ("after", output)):
            if program.suffix == ".ipynb":
                text = "\n".join(source for _, source in cs.notebook_cells(text, program.name))
            if role == "after" or not program.near_miss:
                (folder / f"{role}.py").write_text(text)
        runs.append((program, folder))
    paths = sorted(str(p) for _, folder in runs for p in folder.iterdir())
    done = subprocess.run([sys.executable, "-m", "migrate", "verify", "--format", "json", *runtime, *paths],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    report = {str(Path(p["path"]).resolve()): p for p in json.loads(done.stdout)["programs"]}
    for program, folder in runs:
        after = report[str((folder / "after.py").resolve())]
        assert after["ok"], (program.name, after)
        if not program.near_miss and "expect: scalar-target report" not in program.source:
            assert not report[str((folder / "before.py").resolve())]["ok"], program.name
