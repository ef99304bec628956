"""scripts/corpus_score.py: the label parser, the matcher, the rewrite of one
safe fix, an end-to-end score of a small corpus, and the floors of issue 12
on the team corpus (tests/corpus)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def _load():
    spec = importlib.util.spec_from_file_location("corpus_score", ROOT / "scripts" / "corpus_score.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


cs = _load()
Label, Finding = cs.Label, cs.Finding


def _notebook(*cells) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": kind, "metadata": {}, "source": source,
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, source in cells]})


# --- labels -----------------------------------------------------------------

def test_label_body_with_several_labels():
    assert cs.parse_label_body("typed-convert safe; scalar-target report", "f.py:3") == [
        ("typed-convert", "safe"), ("scalar-target", "report")]


@pytest.mark.parametrize("body", ["typed-convert", "typed-convert fixable", "a safe extra", ""])
def test_bad_label_names_file_and_line(body):
    with pytest.raises(cs.CorpusError, match=r"^f\.py:7: bad label"):
        cs.parse_label_body(body, "f.py:7")


def test_labels_are_read_from_comments_only():
    source = ('x = 1\n'
              's = "# expect: typed-convert safe"\n'
              'y = tf.cast(tf.convert_to_tensor(a), tf.float32)  # expect: typed-convert safe\n'
              '#   expect:   suffix-mixup unsafe\n')
    assert cs.labels_in_source(source, "p.py") == [
        Label("p.py", 3, "typed-convert", "safe"), Label("p.py", 4, "suffix-mixup", "unsafe")]


def test_unreadable_source_is_a_label_error():
    with pytest.raises(cs.CorpusError, match=r"^p\.py: cannot read its labels"):
        cs.labels_in_source('x = """never closed\n', "p.py")


def test_notebook_labels_name_the_cell_and_count_every_cell(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook(("markdown", "# title  # expect: typed-convert safe"),
                              ("code", "%matplotlib inline\nimport tensorflow as tf"),
                              ("code", ["x = 1\n", "out = model(x)  # expect: scalar-target unsafe\n"])),
                    encoding="utf-8")
    assert cs.labels_in_file(path, "nb.ipynb") == [Label("nb.ipynb:cell 3", 2, "scalar-target", "unsafe")]


def test_sidecar_labels_and_their_errors():
    text = ("# real files\n\nrepo/a.py:12: typed-convert unsafe\n"
            "nb.ipynb:cell 2:4: per-step-tape safe; scalar-target unsafe\n")
    assert cs.sidecar_labels(text, "labels.txt") == [
        Label("repo/a.py", 12, "typed-convert", "unsafe"),
        Label("nb.ipynb:cell 2", 4, "per-step-tape", "safe"),
        Label("nb.ipynb:cell 2", 4, "scalar-target", "unsafe")]
    with pytest.raises(cs.CorpusError, match=r"^labels\.txt:1: expected 'path:line: recipe kind'"):
        cs.sidecar_labels("repo/a.py typed-convert unsafe", "labels.txt")


def test_sidecar_label_of_a_file_outside_the_corpus_is_an_error(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    sidecar = tmp_path / "labels.txt"
    sidecar.write_text("b.py:1: typed-convert safe\n", encoding="utf-8")
    with pytest.raises(cs.CorpusError, match="b.py: no such file in the corpus"):
        cs.corpus_labels(cs.corpus_files(tmp_path), sidecar, tmp_path)


# --- matching ---------------------------------------------------------------

def _finding(path, line, recipe, kind="safe", end_line=None):
    return Finding(path, line, end_line or line, recipe, kind, "message")


def test_match_counts_tp_fp_fn_per_recipe(tmp_path):
    a, b = str(tmp_path / "a.py"), str(tmp_path / "b.py")
    labels = [Label(a, 3, "typed-convert", "safe"), Label(a, 9, "typed-convert", "unsafe"),
              Label(b, 5, "suffix-mixup", "unsafe")]
    findings = [_finding(a, 3, "typed-convert"), _finding(b, 5, "typed-convert"),
                _finding(b, 5, "suffix-mixup", "unsafe")]
    scores = cs.match(labels, findings)
    tc, sm = scores["typed-convert"], scores["suffix-mixup"]
    assert (tc.tp, tc.fp, tc.fn) == (1, 1, 1)
    assert tc.precision == 0.5 and tc.recall == 0.5
    assert tc.false_negatives == [labels[1]]
    assert (sm.tp, sm.fp, sm.fn, sm.kind_agree) == (1, 0, 0, 1)


def test_a_label_inside_a_multiline_finding_matches_and_kinds_are_compared(tmp_path):
    a = str(tmp_path / "a.py")
    scores = cs.match([Label(a, 12, "per-step-tape", "report")],
                      [_finding(a, 10, "per-step-tape", "safe", end_line=13)])
    score = scores["per-step-tape"]
    assert (score.tp, score.fp, score.fn, score.kind_agree) == (1, 0, 0, 0)
    assert score.kind_mismatches[0][0].kind == "report"


def test_a_label_is_matched_once_and_lines_outside_the_range_do_not_match(tmp_path):
    a = str(tmp_path / "a.py")
    scores = cs.match([Label(a, 4, "scalar-target", "unsafe"), Label(a, 20, "scalar-target", "unsafe")],
                      [_finding(a, 4, "scalar-target"), _finding(a, 4, "scalar-target"),
                       _finding(a, 18, "scalar-target", end_line=19)])
    score = scores["scalar-target"]
    assert (score.tp, score.fp, score.fn) == (1, 2, 1)


def test_relative_and_absolute_paths_and_notebook_cells_meet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    labels = [Label(str(tmp_path / "nb.ipynb") + ":cell 2", 3, "typed-convert", "safe")]
    scores = cs.match(labels, [_finding("nb.ipynb:cell 2", 3, "typed-convert"),
                               _finding("nb.ipynb:cell 3", 3, "typed-convert")])
    assert (scores["typed-convert"].tp, scores["typed-convert"].fp) == (1, 1)


def test_recipe_filter_keeps_listed_recipes_even_without_data(tmp_path):
    a = str(tmp_path / "a.py")
    scores = cs.match([Label(a, 1, "typed-convert", "safe")], [_finding(a, 2, "suffix-mixup")],
                      recipes=["typed-convert", "scalar-target"])
    assert set(scores) == {"typed-convert", "scalar-target"}
    assert scores["scalar-target"].precision == 1.0 and scores["typed-convert"].recall == 0.0


# --- the rewrite of one safe fix ---------------------------------------------

def test_rewritten_applies_one_fix_to_a_script():
    text = "a = 1\nb = 2\nc = 3\n"
    finding = Finding("p.py", 2, 2, "r", "safe", "m", ((2, 1, 3, 1, "b = 20\n"),))
    assert cs.rewritten(text, finding, notebook=False) == (text, "a = 1\nb = 20\nc = 3\n")


def test_rewritten_notebook_becomes_a_script_with_the_fixed_cell():
    text = _notebook(("code", "%load_ext autoreload\nx = 1"), ("markdown", "text"), ("code", "y = 2\nz = 3"))
    finding = Finding("nb.ipynb:cell 3", 2, 2, "r", "safe", "m", ((2, 1, 3, 1, "z = 30\n"),))
    before, after = cs.rewritten(text, finding, notebook=True)
    assert "load_ext" not in before and before.endswith("y = 2\nz = 3")
    assert after.endswith("y = 2\nz = 30\n") and after.startswith(before.split("\n")[0])


def test_a_safe_fix_fails_when_its_after_fails_a_check_or_did_not_run():
    finding = Finding("p.py", 3, 3, "per-step-tape", "safe", "m")
    before = {"ok": False, "checks": [{"name": "dynamic", "passed": False, "summary": "None", "error": None}]}
    after = {"ok": False, "checks": [{"name": "run", "passed": True, "summary": "ran", "error": None},
                                     {"name": "attribution", "passed": False, "summary": "raised",
                                      "error": "ValueError: None"}]}
    verified = cs._verified(finding, before, after)
    assert (verified.before_ok, verified.after_ok) == (False, False)
    assert verified.after_failures == ["attribution: raised ValueError: None"]
    assert cs._verified(finding, before, None).after_failures == ["not run by verify"]
    assert cs._verified(finding, before, {"ok": True, "checks": []}).after_ok


def test_a_behaviour_preserving_fix_may_keep_the_failures_of_another_bug():
    before = {"ok": False, "checks": [{"name": "run", "passed": False, "summary": "raised", "error": "None"},
                                      {"name": "api", "passed": True, "summary": "ok", "error": None}]}
    same = {"ok": False, "checks": [{"name": "run", "passed": False, "summary": "raised", "error": "None"},
                                    {"name": "api", "passed": True, "summary": "ok", "error": None}]}
    worse = {"ok": False, "checks": [{"name": "run", "passed": False, "summary": "raised", "error": "None"},
                                     {"name": "api", "passed": False, "summary": "bad", "error": None}]}
    preserving = Finding("p.py", 3, 3, "typed-convert", "safe", "m")
    repairing = Finding("p.py", 3, 3, "per-step-tape", "safe", "m")
    assert cs._verified(preserving, before, same).after_failures == []
    assert cs._verified(preserving, before, worse).after_failures == ["api: bad"]
    assert cs._verified(repairing, before, same).after_failures == ["run: raised None"]


# --- end to end -------------------------------------------------------------

def test_score_of_a_small_corpus(tmp_path):
    (tmp_path / "buggy.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\n\n"
        "def load():\n"
        "    data = np.ones((2, 2))\n"
        "    return tf.cast(tf.convert_to_tensor(data), tf.float32)  # expect: typed-convert safe\n",
        encoding="utf-8")
    (tmp_path / "clean.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\nx = tf.convert_to_tensor(np.ones(2), dtype=tf.float32)\n",
        encoding="utf-8")
    result = cs.score(tmp_path, recipes=["typed-convert"])
    assert (result["files"], result["labels"]) == (2, 1)
    assert result["recipes"]["typed-convert"]["tp"] == 1
    assert result["recipes"]["typed-convert"]["fp"] == 0


def test_main_prints_json_with_the_per_recipe_figures(tmp_path, capsys):
    (tmp_path / "a.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\n"
        "x = tf.cast(tf.convert_to_tensor(np.ones(2)), tf.float32)\n", encoding="utf-8")
    assert cs.main([str(tmp_path), "--recipes", "typed-convert,suffix-mixup", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["recipes"]) == {"typed-convert", "suffix-mixup"}
    assert printed["recipes"]["typed-convert"]["fp"] == 1  # a finding with no label is a false positive


def test_main_reports_a_bad_sidecar_in_one_line(tmp_path, capsys):
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    sidecar = tmp_path / "labels.txt"
    sidecar.write_text("a.py:1 typed-convert\n", encoding="utf-8")
    assert cs.main([str(tmp_path), "--labels", str(sidecar)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("corpus_score: ") and "labels.txt:1:" in err and "\n" not in err


# --- the floors of issue 12 --------------------------------------------------

# precision >= 0.95 and recall >= 0.95 per recipe (measured on tests/corpus 2026-12-01 before
# issue 12's recipe work: typed-convert P 1.00 R 0.83, per-step-tape P 0.67 R 0.80,
# scalar-target P 0.50 R 0.71, suffix-mixup P 0.50 R 0.33; after it: all 1.00 / 1.00)
def _pooled(*results):
    """Precision and recall per recipe over several corpora scored apart."""
    pooled = {}
    for result in results:
        for recipe, v in result["recipes"].items():
            tp, fp, fn = pooled.get(recipe, (0, 0, 0))
            pooled[recipe] = (tp + v["tp"], fp + v["fp"], fn + v["fn"])
    return {r: (tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 1.0)
            for r, (tp, fp, fn) in pooled.items()}


def test_seed003_recipes_meet_the_floors_on_the_team_corpus():
    # both labelled corpora: a seed-003 finding on a seed-000 program is a false positive too
    # (tests/corpus/none_gradient carries cause labels of issue 26, not recipe labels)
    results = [cs.score(CORPUS / name, recipes=list(cs.SEED003_RECIPES)) for name in ("seed003", "seed000")]
    assert all(results[0]["recipes"][r]["tp"] for r in cs.SEED003_RECIPES), results[0]["recipes"]  # labels exist
    figures = _pooled(*results)
    assert set(figures) == set(cs.SEED003_RECIPES), figures
    assert all(p >= 0.95 and r >= 0.95 for p, r in figures.values()), figures


def test_seed003_recipes_offer_no_fix_on_the_none_gradient_reports():
    # issue 26's reproductions of real reports have no seed-003 bug; a question (report) on an
    # output of unknown width is allowed (issue 24), a fix is not. Known: scalar-target asks about
    # r21's rank-0 posterior, which it cannot yet prove scalar.
    result = cs.score(CORPUS / "none_gradient", recipes=list(cs.SEED003_RECIPES))
    fixes = [f for v in result["recipes"].values() for f in v["false_positives"] if f["kind"] != "report"]
    assert result["files"] >= 40 and fixes == []



# --- the floors of issue 13 --------------------------------------------------

SEED000_RECIPES = ("numpy-accumulator", "vectorize-sample-loop", "unused-model-instance")


# precision >= 0.95 and recall >= 0.95 per recipe on tests/corpus/seed000 (measured 2026-12-01
# with `python scripts/corpus_score.py tests/corpus/seed000`, before and after the recipes asked
# the semantic model: all three 1.00 / 1.00), and a fix of the labelled kind for every label
# (numpy-accumulator fix-kind 0.83 before buf[i, cols] and later axes of _like/copy buffers
# were fixed: 3 safe labels only reported; 1.00 after)
def test_seed000_recipes_meet_the_floors_on_their_corpus():
    result = cs.score(CORPUS / "seed000", recipes=list(SEED000_RECIPES))
    figures = {r: (v["precision"], v["recall"]) for r, v in result["recipes"].items()}
    assert set(figures) == set(SEED000_RECIPES)
    assert all(result["recipes"][r]["tp"] for r in SEED000_RECIPES), result["recipes"]  # labels exist
    assert all(p >= 0.95 and r >= 0.95 for p, r in figures.values()), figures
    mismatches = {r: v["kind_mismatches"] for r, v in result["recipes"].items() if v["kind_mismatches"]}
    assert mismatches == {}


# 0 failing safe fixes per corpus. seed003: measured 2026-12-01 before issue 12's recipe work: 14
# safe fixes, 1 failing (per-step-tape left the feed path[k:k + 1] unrewritten); after it: 16, 0
# failing. seed000 (issue 13, `python scripts/corpus_score.py tests/corpus/seed000 --verify`):
# 19 safe fixes, 18 turning a failing program into a passing one (the other, an
# unused-model-instance removal, keeps a passing program passing), 0 failing; ~55 s.
# Two workers: the programs are independent, and one worker left a core idle.
@pytest.mark.tf
@pytest.mark.parametrize("corpus", ["seed003", "seed000"])
def test_every_safe_fix_in_the_team_corpus_passes_verify(corpus):
    result = cs.score(CORPUS / corpus, verify=True, runtime=("--jobs", "2"))
    assert result["safe_fixes"]
    assert result["failing_safe_fixes"] == []


# --- issue 26: cause labels and the none-gradient corpora ------------------------

NONE_GRADIENT = CORPUS / "none_gradient"
SNIPPETS = CORPUS / "none_gradient_snippets"
CAUSES = {"outside-tape", "predict-in-tape", "unwatched-source", "integer-source", "non-trainable-source",
          "numpy-on-loss-path", "nondifferentiable-op", "assign-in-forward", "variable-in-call",
          "unconnected-source"}


def test_cause_labels_are_labels_of_any_kind_for_the_cause_recipe():
    source = ("x = 1  # expect-cause: outside-tape\n"
              "y = 2  # expect: typed-convert safe\n"
              "s = '# expect-cause: integer-source'\n")
    assert cs.labels_in_source(source, "p.py") == [
        Label("p.py", 1, "outside-tape", cs.ANY_KIND), Label("p.py", 2, "typed-convert", "safe")]
    with pytest.raises(cs.CorpusError, match=r"^p\.py:1: bad label"):
        cs.labels_in_source("x = 1  # expect-cause: outside tape\n", "p.py")


def test_none_gradient_summary_counts_detected_fixed_and_failing(tmp_path):
    a = str(tmp_path / "a.py")
    labels = [Label(a, 3, "outside-tape", cs.ANY_KIND), Label(a, 9, "outside-tape", cs.ANY_KIND),
              Label(a, 12, "integer-source", cs.ANY_KIND), Label(a, 20, "typed-convert", "safe")]
    fixed, broken = _finding(a, 3, "outside-tape", "unsafe"), _finding(a, 12, "integer-source", "safe")
    findings = [fixed, broken, _finding(a, 30, "outside-tape", "report"), _finding(a, 20, "typed-convert")]
    scores = cs.match(labels, findings)
    assert scores["outside-tape"].kind_agree == 1  # a cause label agrees with any kind
    verified = [cs.VerifiedFix(fixed, False, True, []), cs.VerifiedFix(broken, False, False, ["dynamic: None"])]
    causes = cs.none_gradient_summary(scores, verified)
    assert set(causes["causes"]) == {"outside-tape", "integer-source"}
    tape, integer = causes["causes"]["outside-tape"], causes["causes"]["integer-source"]
    assert (tape["labels"], tape["detected"], tape["fixed"], tape["false_alarms"]) == (2, 1, 1, 1)
    assert tape["missed"] == [f"{a}:9"]
    assert (integer["detected"], integer["fixed"], integer["failing_safe_fixes"]) == (1, 0, 1)
    totals = causes["totals"]
    assert (totals["labels"], totals["detected"], totals["fixed"]) == (3, 2, 1)
    assert (totals["detection_rate"], totals["fix_rate"]) == (round(2 / 3, 4), round(1 / 3, 4))
    assert cs.none_gradient_summary(scores, None)["causes"]["outside-tape"]["fixed"] is None
    assert cs.none_gradient_summary(cs.match(labels[3:], findings[3:]), None) is None


def test_the_table_marks_what_a_run_did_not_measure():
    causes = {"causes": {"outside-tape": {"safety": None, "labels": 2, "detected": 0, "fixed": None,
                                          "failing_safe_fixes": None, "false_alarms": 0, "missed": []}},
              "totals": {"labels": 2, "detected": 0, "fixed": 0, "failing_safe_fixes": 0, "false_alarms": 0,
                         "detection_rate": 0.0, "fix_rate": None}}
    table = cs.none_gradient_table(causes).splitlines()
    assert table[2] == f"| `outside-tape` | {cs.NOT_YET} | - | ? | 2 | 0 | ? | ? | ? | ? |"
    assert table[3] == "| **total** | | | | 2 | 0 (0%) | ? | ? | ? | ? |"


def _detection(corpus):
    result = cs.score(corpus)
    causes = result["none_gradient"]
    return causes, causes["totals"]["detection_rate"]


# issue 26 wants >= 80% of the source-visible causes detected. Measured 2026-12-02 on main with
# `python scripts/corpus_score.py tests/corpus/none_gradient`: 43 of 43 (0 before the issue-26
# recipes). The floor is the measured figure: a cause lost is a regression.
NONE_GRADIENT_DETECTION_FLOOR = 1.0


def test_the_none_gradient_reports_meet_the_detection_floor():
    causes, rate = _detection(NONE_GRADIENT)
    assert set(causes["causes"]) == CAUSES and causes["totals"]["labels"] == 43
    assert rate >= NONE_GRADIENT_DETECTION_FLOOR, causes["totals"]


# the pasted snippets (no imports), measured 2026-12-02 on main: 16 of 22 (0.73), 12 of 22 without
# the snippet rules (recipes/_model/presumed.py, presumed aliases in the text gates); the 6 missed
# read data bound nowhere (docs/none-gradient-causes.md)
SNIPPET_DETECTION_FLOOR = 16 / 22


def test_the_pasted_snippets_meet_the_detection_floor():
    causes, rate = _detection(SNIPPETS)
    assert causes["totals"]["labels"] >= 15
    assert rate >= SNIPPET_DETECTION_FLOOR, causes["totals"]


def test_every_snippet_is_a_snippet_with_a_cause_label():
    for path in sorted(SNIPPETS.glob("s*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from \S+ import) ", text, re.M), path.name
        assert next(NONE_GRADIENT.glob(path.name[1:3].join(("r", "_*.py")))), path.name
        assert {lb.recipe for lb in cs.labels_in_source(text, path.name)} <= CAUSES, path.name


# issue 26: >= 60% of the causes fixed with the fix passing verify, 0 failing safe fixes. A small
# fixed sample (one runtime): one reproduction each of predict-in-tape, outside-tape and
# unwatched-source, every fix (safe or unsafe) applied alone and verified. Measured 2026-12-02: no
# fix to verify before the issue-26 recipes; 3 of 3 fixed on main after them.
FIX_SAMPLE = ("r15_predict_in_tape.py", "r26_minimize_precomputed_cost.py", "r35_zeros_not_watched.py")
FIX_SAMPLE_FLOOR = 3


@pytest.mark.tf
def test_the_fixes_of_a_none_gradient_sample_pass_verify(tmp_path):
    for name in FIX_SAMPLE:
        (tmp_path / name).write_text((NONE_GRADIENT / name).read_text(encoding="utf-8"), encoding="utf-8")
    result = cs.score(tmp_path, verify=True, kinds=("safe", "unsafe"))
    assert result["failing_safe_fixes"] == []
    assert result["none_gradient"]["totals"]["fixed"] >= FIX_SAMPLE_FLOOR, result["none_gradient"]
