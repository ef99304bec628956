"""migrate/runner/diagnosis.py: a None gradient the run saw, matched to the
static finding that explains it (issue 26, item 8). Not-tf tests use
synthetic run reports and findings on the reproductions of
tests/corpus/none_gradient; the tf test runs verify on three of them."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from migrate.registry import all_recipes
from migrate.result import Diagnostic
from migrate.runner import diagnosis
from migrate.runner.report import Check, ProgramReport

CORPUS = Path(__file__).resolve().parent / "corpus" / "none_gradient"
_CAUSE = re.compile(r"#\s*expect-cause:\s*([\w-]+)")


def _finding(recipe: str, line: int, end_line: int = 0, message: str = "the cause: details",
             safety: str = "safe", fixable: bool = True) -> Diagnostic:
    return Diagnostic("p.py", line, 1, end_line or line, 1, recipe, message, safety, fixable, False)


def _label(name: str):
    """(path, text, label line, cause) of a reproduction."""
    path = next(CORPUS.glob(f"{name}_*.py"))
    text = path.read_text(encoding="utf-8")
    line, cause = next((n, m.group(1)) for n, l in enumerate(text.splitlines(), 1) for m in [_CAUSE.search(l)] if m)
    return path, text, line, cause


def _program(*checks: Check) -> ProgramReport:
    return ProgramReport("p.py", "program", "2", "ran", checks=list(checks))


# --- what the run saw ---------------------------------------------------------

def test_sightings_of_the_dynamic_check_the_optimizer_error_and_the_gradient_step(tmp_path):
    path = str(tmp_path / "p.py")
    report = _program(
        Check("run", False, "the script raised",
              error=f"ValueError: No gradients provided for any variable: (['dd:0'],). Provided ... (at {path}:7)"),
        Check("dynamic", False, "p.py:7 returned None",
              details={"none_calls": [{"file": path, "line": 7, "none_sources": ["source[0]"]},
                                      {"file": "/elsewhere/lib.py", "line": 3, "none_sources": ["w"]},
                                      {"file": path, "line": 12, "none_sources": ["dense/kernel:0"]}]}),
        Check("gradients", False, "1/2", details={"none_variables": ["dense/bias:0"]}),
        Check("training", True, "ok"))
    found = diagnosis.none_gradients(report, path)
    assert [(n.line, n.variables) for n in found] == [
        (None, ("dense/bias",)), (7, ("dd",)), (12, ("dense/kernel",))]


def test_a_passing_program_saw_nothing(tmp_path):
    report = _program(Check("dynamic", True, "no call returned None", details={"none_calls": []}))
    assert diagnosis.none_gradients(report, str(tmp_path / "p.py")) == []


# --- matching -----------------------------------------------------------------

# where `verify --tf 2.3` sees the first None gradient of each reproduction (the dynamic check's
# line, or the line an optimizer raised on; the same lines on current TF but for r31 and r36, which
# raise there); r37, r47, r48 and r49 show none (docs/none-gradient-causes.md)
SIGHTINGS = {"r01": 17, "r02": 13, "r03": 12, "r04": 7, "r05": 12, "r07": 8, "r08": 17, "r09": 18, "r10": 16,
             "r12": 8, "r13": 9, "r15": 10, "r16": 18, "r17": 11, "r18": 10, "r19": 12, "r20": 11, "r21": 20,
             "r22": 10, "r23": 25, "r26": 7, "r27": 15, "r28": 9, "r30": 17, "r31": 12, "r32": 9, "r33": 12,
             "r34": 9, "r35": 7, "r36": 14, "r38": 23, "r39": 24, "r40": 10, "r41": 11, "r42": 12, "r43": 11,
             "r44": 13, "r45": 14, "r46": 16}


@pytest.mark.parametrize("name", sorted(SIGHTINGS))
def test_the_labelled_finding_explains_the_sighting(name):
    """As if each recipe reported on its labelled line: verify names it."""
    path, text, line, cause = _label(name)
    none = diagnosis.NoneGradient(str(path), SIGHTINGS[name], ("dense/kernel",), "dynamic")
    decoy = _finding("unrelated-cause", 1)  # the docstring's line: nothing flows from it
    found = diagnosis.diagnose(none, [decoy, _finding(cause, line)], text)
    assert (found.cause, found.finding.line) == (cause, line)


def test_without_a_related_finding_no_recipe_covers_it():
    path, text, _, _ = _label("r46")
    none = diagnosis.NoneGradient(str(path), 16, ("dense/kernel", "dense/bias"), "dynamic")
    found = diagnosis.diagnose(none, [_finding("decoy", 1)], text)
    assert found.cause is None
    assert found.sentence() == ("None gradient for dense/kernel, dense/bias at "
                                "r46_forward_pass_before_tape.py:16: no recipe covers it")
    assert diagnosis.diagnose(none, [], text).to_dict()["finding_id"] is None


def test_the_finding_on_the_failing_line_comes_first_and_names_the_way_out():
    path, text, line, _ = _label("r03")
    none = diagnosis.NoneGradient(str(path), line, ("source[0]",), "dynamic")
    found = diagnosis.diagnose(none, [_finding("outside-tape", line, message="target computed after the tape: "
                                               "move it inside", safety="unsafe")], text, "train.py")
    assert found.sentence() == ("None gradient for x at train.py:12: cause outside-tape (finding train.py:12: "
                                "target computed after the tape) -- tf-migrate fix --select outside-tape "
                                "--unsafe-fixes")
    data = found.to_dict()
    assert (data["cause"], data["finding_id"], data["variables"]) == ("outside-tape", "outside-tape@train.py:12:1",
                                                                      ["x"])


def test_a_report_only_finding_points_at_explain_and_the_gradient_step_takes_the_first():
    none = diagnosis.NoneGradient("p.py", None, ("dense/kernel",), "gradients")
    found = diagnosis.diagnose(none, [_finding("assign-in-forward", 9, fixable=False),
                                      _finding("variable-in-call", 12)], "x = 1\n")
    assert found.cause == "assign-in-forward"
    assert found.sentence().endswith("-- report only: tf-migrate explain assign-in-forward")
    assert "p.py (the gradient step of training_case())" in found.sentence()


def test_feeding_names_follow_assignments_mutations_and_called_functions():
    _, text, _, _ = _label("r01")
    names = diagnosis.feeding_names(ast.parse(text), 17)  # grads = tape.gradient(loss, model.trainable_variables)
    assert {"loss", "losses", "loss_object", "logits", "model"} <= names
    assert not names & {"tf", "np", "float", "grads"}
    _, text, _, _ = _label("r38")
    assert {"loss_fn", "output", "layer"} <= diagnosis.feeding_names(ast.parse(text), 23)


# --- the recipes that exist ---------------------------------------------------

def test_findings_come_from_the_none_gradient_recipes_only():
    recipes = {r.id for r in all_recipes().values() if r.before_fails == "none-gradient"}
    for name in ("r01", "r40", "r46"):
        path, text, _, _ = _label(name)
        assert {f.recipe for f in diagnosis.none_gradient_findings(text, str(path))} <= recipes


@pytest.mark.tf
def test_verify_names_the_cause_of_three_reproductions():
    """verify on three reproductions (current TF + tf-keras): each None
    gradient is diagnosed at its line; where a recipe for the labelled cause
    exists, it is the cause named."""
    from migrate.runner.verification import VerifyOptions, verify

    paths = [next(CORPUS.glob(f"{name}_*.py")) for name in ("r02", "r26", "r40")]
    report = verify(paths, VerifyOptions(timeout=60))
    for path, program in zip(paths, report.programs):
        _, _, line, cause = _label(path.name[:3])
        assert program.diagnoses, program.checks
        first = program.diagnoses[0]
        assert first["line"] == SIGHTINGS[path.name[:3]] and first["variables"]
        assert first["message"].startswith(f"None gradient for {first['variables'][0]}")
        if cause in all_recipes():
            assert (first["cause"], first["finding"]["line"]) == (cause, line), first["message"]
        else:
            assert first["cause"] is None or first["cause"] in all_recipes()


def test_the_engine_finds_the_cause_and_the_run_report_is_diagnosed():
    """r40 end to end without TensorFlow: nondifferentiable-op's finding
    (line 9) explains the None gradient the dynamic check saw at the gradient call."""
    diagnosis.none_gradient_findings.cache_clear()
    path, _, line, cause = _label("r40")
    report = _program(Check("dynamic", False, "None", details={"none_calls": [
        {"file": str(path), "line": SIGHTINGS["r40"], "none_sources": ["dense/kernel:0", "dense/bias:0"]}]}))
    try:
        [found] = diagnosis.diagnose_program(report, str(path), "train.py")
    finally:
        diagnosis.none_gradient_findings.cache_clear()
    assert (found.cause, found.finding.line) == (cause, line)
    sentence = found.sentence()
    assert sentence.startswith("None gradient for dense/kernel, dense/bias at train.py:10: cause "
                               "nondifferentiable-op (finding train.py:9: `tf.round(model(x))` has no gradient")
    assert sentence.endswith("-- tf-migrate fix --select nondifferentiable-op --unsafe-fixes")  # straight-through


def test_the_sentence_is_printed_under_the_failed_checks_and_kept_in_json():
    import io
    import json

    from rich.console import Console

    from migrate.runner.render import render, to_json
    from migrate.runner.report import Report

    sentence = "None gradient for x at p.py:3: no recipe covers it"
    program = _program(Check("dynamic", False, "p.py:3 returned None entirely (1 call)"))
    program.verdict, program.diagnoses = "fail: dynamic", [{"message": sentence, "cause": None}]
    report = Report(programs=[program], runtimes=[("current", "current TF")])
    out = io.StringIO()
    render(report, Console(file=out, width=200))
    assert f"  {sentence}\n" in out.getvalue()
    assert json.loads(to_json(report))["programs"][0]["diagnoses"] == [{"message": sentence, "cause": None}]


def test_a_copy_run_for_fix_verify_is_read_under_the_path_its_errors_name(tmp_path):
    copy, real = str(tmp_path / "copy" / "w.py"), str(tmp_path / "w.py")
    report = _program(Check("run", False, "raised", error=f"LookupError: No gradient defined for operation "
                                                          f"'IteratorGetNext' (at {real}:8)"))
    assert diagnosis.none_gradients(report, copy) == []
    assert [(n.line, n.variables) for n in diagnosis.none_gradients(report, copy, real)] == [(8, ())]


def test_a_finding_that_appears_only_after_another_fix_is_no_cause(monkeypatch):
    """Under the fixpoint, a later recipe reports on code an earlier fix wrote
    (`after`); the run executed the text as it is."""
    real = all_recipes()["nondifferentiable-op"]  # both ids none-gradient recipes: only `after` tells them apart
    monkeypatch.setattr(diagnosis, "all_recipes", lambda: {"nondifferentiable-op": real, "later": real})
    monkeypatch.setattr(diagnosis, "transform", lambda text, path, options: type("R", (), {"diagnostics": [
        _finding("nondifferentiable-op", 2), dataclasses.replace(_finding("later", 1), after=["other"])]})())
    diagnosis.none_gradient_findings.cache_clear()
    try:
        assert [f.recipe for f in diagnosis.none_gradient_findings("x = 1\n", "p.py")] == ["nondifferentiable-op"]
    finally:
        diagnosis.none_gradient_findings.cache_clear()
