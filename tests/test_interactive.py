"""`fix --interactive` driven through stdin (toy recipes and the real ones),
and once end to end under a pseudo-terminal."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from fissix.fixer_util import Number
from typer.testing import CliRunner

from migrate import registry
from migrate.cli import app
from migrate.recipe import Recipe, propose

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
SEED003 = ROOT / "fixtures" / "per-step-tape" / "seed003_churn_ig.before.py"

TWO_RECIPES = "import x\n\na = old_api(1)\nb = 2\nc = 3\nd = 4\ne = risky(5)\n"


def fix_interactive(*args, answers, unsafe=True):
    flags = ["--unsafe-fixes"] if unsafe else []
    return runner.invoke(app, ["fix", "--interactive", *flags, *map(str, args)], input=answers)


def test_yes_then_no_lands_exactly_the_first_change(tmp_path, toy_recipes):
    target = tmp_path / "two.py"
    target.write_text(TWO_RECIPES)
    result = fix_interactive(target, answers="y\nn\n")
    assert target.read_text() == TWO_RECIPES.replace("old_api", "new_api")
    assert result.exit_code == 1  # a change was declined
    assert "toy-rename [safe fix]" in result.stdout and "old_api is deprecated" in result.stdout
    assert "toy-risky [unsafe fix]" in result.stdout and "risky() may change behaviour" in result.stdout
    assert f"{target}:3" in result.stdout and f"{target}:7" in result.stdout
    assert "1 accepted, 1 rejected, 0 not offered, 0 left unsafe" in result.stdout


def test_one_question_per_recipe_and_safety_even_on_one_line(tmp_path, toy_recipes):
    """A safe rename and an unsafe rewrite on the same line are two questions:
    rejecting the unsafe one keeps the safe one whole."""
    target = tmp_path / "a.py"
    target.write_text("x = old_api(risky(1))\n")
    result = fix_interactive(target, answers="y\nn\n")
    assert result.stdout.count("Apply this change?") == 2
    assert target.read_text() == "x = new_api(risky(1))\n"
    first, second = result.stdout.split("Apply this change?")[:2]
    assert "toy-rename [safe fix]" in first and "toy-risky" not in first
    assert "toy-risky [unsafe fix]" in second and "toy-rename" not in second


def test_change_is_recomputed_from_accepted_changes_only(tmp_path, toy_recipes):
    """After rejecting the first finding, the second change is shown against
    the original line, not against a text that contains the rejected fix."""
    target = tmp_path / "a.py"
    target.write_text("x = old_api(risky(1))\n")
    result = fix_interactive(target, answers="n\ny\n")
    assert "-x = old_api(risky(1))\n+x = old_api(safer(1))" in result.stdout
    assert target.read_text() == "x = old_api(safer(1))\n"


def test_recipe_answer_accepts_that_recipe_everywhere_and_nothing_else(tmp_path, toy_recipes):
    first = tmp_path / "a.py"
    second = tmp_path / "b.py"
    body = "old_api()\n\n\n\nrisky()\n\n\n\nold_api(2)\n"
    first.write_text(body)
    second.write_text("risky(1)\n\n\n\n" + body)
    # a.py: r on the first rename, n on risky; b.py: asked only about its two risky calls
    result = fix_interactive(tmp_path, answers="r\nn\nn\nn\n")
    assert first.read_text() == body.replace("old_api", "new_api")
    assert second.read_text() == "risky(1)\n\n\n\n" + body.replace("old_api", "new_api")
    assert result.stdout.count("Apply this change?") == 4
    assert result.stdout.count("accepted (toy-rename [safe]: r)") == 3


@pytest.mark.parametrize("answer", ["y", "n"])
def test_edits_of_one_finding_are_one_question(tmp_path, toy_recipes, answer):
    """The import a fix adds at the top and the call it rewrites land together or not at all."""
    target = tmp_path / "a.py"
    source = "x = 1\n" + "\n" * 8 + "y = make_ones()\n"
    target.write_text(source)
    result = fix_interactive(target, answers=f"{answer}\n")
    assert result.stdout.count("Apply this change?") == 1
    assert result.stdout.count("\n@@ ") == 2  # two hunks, one question
    expected = "import numpy\n" + source.replace("make_ones", "numpy.ones") if answer == "y" else source
    assert target.read_text() == expected


def test_each_reason_is_shown_once(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text("old_api()\n\n\n\nold_api(2)\n\n\n\nold_api(3)\n")
    result = fix_interactive(target, answers="y\nn\ny\n")
    assert result.stdout.splitlines().count("old_api is deprecated") == 1
    assert result.stdout.count("why: old_api() becomes new_api()") == 1
    assert result.stdout.count("(same reason as above)") == 2
    assert target.read_text() == "new_api()\n\n\n\nold_api(2)\n\n\n\nnew_api(3)\n"


def _follow_on(node, capture, filename):
    name = capture["name"]
    if propose(name, "numpy.ones() without a shape is numpy.ones(1)"):
        capture["call"].insert_child(1, Number("1"))


FOLLOW = Recipe(id="toy-follow", summary="numpy.ones() gets a shape", safety="safe",
                query=lambda q: q.select("power< name='numpy' trailer< '.' 'ones' > "
                                         "call=trailer< '(' ')' > >").modify(_follow_on),
                tokens=("numpy",))


@pytest.fixture
def chained_recipes(toy_recipes, monkeypatch):
    """toy-import's fix brings a finding of toy-follow: a change that depends on another."""
    recipes = {"toy-import": toy_recipes["toy-import"], "toy-follow": FOLLOW}
    monkeypatch.setattr(registry, "all_recipes", lambda: dict(recipes))
    return recipes


def test_follow_on_of_accepted_change_is_offered_after_it(tmp_path, chained_recipes):
    target = tmp_path / "a.py"
    target.write_text("y = make_ones()\n")
    result = fix_interactive(target, answers="y\ny\n")
    assert result.stdout.count("Apply this change?") == 2
    assert "toy-follow [safe fix]" in result.stdout.split("Apply this change?")[1]
    assert target.read_text() == "import numpy\ny = numpy.ones(1)\n"
    assert result.exit_code == 0


def test_change_depending_on_a_rejected_one_is_not_offered_with_reason(tmp_path, chained_recipes):
    target = tmp_path / "a.py"
    target.write_text("y = make_ones()\n")
    result = fix_interactive(target, answers="n\ny\n")
    assert result.stdout.count("Apply this change?") == 1
    assert "0 accepted, 1 rejected, 1 not offered" in result.stdout
    assert ("not offered: " in result.stdout and "toy-follow [safe]: appears only after a change "
            "that was rejected (toy-import at line 1)" in result.stdout)
    assert target.read_text() == "y = make_ones()\n"


def test_summary_counts_unsafe_left_without_unsafe_fixes(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text(TWO_RECIPES)
    result = fix_interactive(target, answers="y\n", unsafe=False)
    assert result.stdout.count("Apply this change?") == 1
    assert "1 accepted, 0 rejected, 0 not offered, 1 left unsafe (rerun with --unsafe-fixes" in result.stdout
    assert target.read_text() == TWO_RECIPES.replace("old_api", "new_api")
    assert result.exit_code == 1  # a finding is left


def test_accept_rest_and_skip_rest_of_file(tmp_path, toy_recipes):
    first = tmp_path / "a.py"
    second = tmp_path / "b.py"
    body = "old_api()\n\n\n\nrisky()\n"
    first.write_text(body)
    second.write_text(body)
    result = fix_interactive(tmp_path, answers="a\nd\n")
    assert result.stdout.count("accepted (a)") == 1 and result.stdout.count("rejected (d)") == 1
    assert first.read_text() == "new_api()\n\n\n\nsafer()\n"
    assert second.read_text() == body


def _check_lines(*paths):
    """`check`'s finding lines for the files as they are on disk."""
    result = runner.invoke(app, ["check", "--no-cache", *map(str, paths)])
    return sorted(line for line in result.stdout.splitlines() if line.startswith(str(paths[0].parent)))


def _left_lines(stdout):
    return sorted(line for line in stdout.splitlines() if ": toy-" in line and "[" in line
                  and not line.startswith(" "))


def test_quit_writes_finished_files_only_and_the_summary_is_what_is_on_disk(tmp_path, toy_recipes):
    first = tmp_path / "a.py"
    second = tmp_path / "b.py"
    third = tmp_path / "c.py"
    first.write_text("old_api()\n")
    second.write_text("old_api()\n\n\n\nrisky()\n")
    third.write_text("old_api()\n")
    result = fix_interactive(tmp_path, answers="y\ny\nq\n")
    assert first.read_text() == "new_api()\n"
    assert second.read_text() == "old_api()\n\n\n\nrisky()\n"  # its accepted change is not written
    assert result.exit_code == 1
    # a.py's one change is on disk; b.py's two findings are still there, undecided
    assert "1 accepted, 0 rejected, 0 not offered, 0 left unsafe, 2 undecided" in result.stdout
    assert f"unchanged: {second} (q: not written, its answers are dropped)" in result.stdout
    assert "not reviewed: 1 more file(s) after q" in result.stdout
    assert _left_lines(result.stdout) == _check_lines(first, second)
    assert "1 written" in result.stderr


def test_quit_lists_what_is_in_the_file_not_what_the_fixes_would_write(tmp_path):
    """Without --unsafe-fixes the full run applies per-step-tape, whose
    `path_1_step` the unsafe findings after it quote: after a q nothing is
    written, so the list quotes the file's own code, and matches `check`."""
    target = tmp_path / "churn.py"
    shutil.copy(SEED003, target)
    result = fix_interactive(target, answers="y\nn\ny\nq\n", unsafe=False)
    assert target.read_text() == SEED003.read_text()
    assert "path_1_step" not in result.stdout.split("Apply this change?")[-1]
    left = sorted(line for line in result.stdout.splitlines() if line.startswith(f"{target}:")
                  and line.count(":") >= 3)
    assert len(left) == 9 and left == _check_lines(target)
    assert "0 accepted, 0 rejected, 0 not offered, 4 left unsafe" in result.stdout
    assert "5 undecided" in result.stdout  # the safe fixes: 3 typed-convert, 2 per-step-tape
    assert result.exit_code == 1


def test_headers_give_the_line_in_the_original_file(tmp_path, toy_recipes):
    """The import the first fix adds moves old_api() to line 6 of the text
    under review; the header still says line 5, where it is in the file."""
    target = tmp_path / "a.py"
    target.write_text("y = make_ones()\n\n\n\nz = old_api()\n")
    result = fix_interactive(target, answers="y\ny\n")
    headers = [line for line in result.stdout.splitlines() if "(change " in line]
    assert headers == [f"{target}:1  (change 1, 1 more waiting)", f"{target}:5  (change 2)"]
    assert target.read_text() == "import numpy\ny = numpy.ones()\n\n\n\nz = new_api()\n"


def test_help_then_answer(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text("old_api()\n")
    result = fix_interactive(target, answers="?\nwhat\ny\n")
    assert result.stdout.count("accept this and every remaining change of the same recipe") == 2
    assert target.read_text() == "new_api()\n" and result.exit_code == 0


@pytest.mark.parametrize("answers", ["", None])
def test_refuses_without_answers(tmp_path, toy_recipes, answers):
    target = tmp_path / "a.py"
    target.write_text("old_api()\n")
    result = fix_interactive(target, answers=answers)
    assert result.exit_code == 2
    assert "--interactive needs answers: stdin is not a terminal and is empty" in result.stderr
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1  # nothing asked
    assert target.read_text() == "old_api()\n"


def test_dev_null_stdin_is_refused_before_anything_is_asked(tmp_path):
    target = tmp_path / "a.py"
    shutil.copy(SEED003, target)
    with open(os.devnull) as nothing:
        ran = subprocess.run([sys.executable, "-m", "migrate", "fix", "-i", "--no-cache", str(target)],
                             stdin=nothing, capture_output=True, text=True, env=_env(), timeout=120)
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.splitlines() == [
        "tf-migrate: --interactive needs answers: stdin is not a terminal and is empty (run it in "
        "a terminal, or pipe answers, one of y,n,a,d,r,q per line)"]
    assert target.read_text() == SEED003.read_text()


def test_quit_in_a_terminal_leaves_the_file_and_says_so(tmp_path):
    """y, n, then q typed into a pseudo-terminal: nothing is written and the
    summary counts nothing as accepted."""
    target = tmp_path / "churn.py"
    shutil.copy(SEED003, target)
    child = pexpect.spawn(sys.executable, ["-m", "migrate", "fix", "-i", "--no-cache", str(target)],
                          env=_env(), encoding="utf-8", timeout=120)
    for answer in "y n q".split():
        child.expect_exact("Apply this change? [y,n,a,d,r,q,?]")
        child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1, child.before
    assert target.read_text() == SEED003.read_text()
    summary = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", child.before).split())  # bold stays with NO_COLOR
    assert "0 accepted, 0 rejected, 0 not offered, 4 left unsafe" in summary
    assert f"5 undecided unchanged: {target} (q: not written, its answers are dropped)" in summary
    assert "0 written" in summary


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", COLUMNS="100",
                TF_CPP_MIN_LOG_LEVEL="3")


def test_answers_running_out_stop_like_quit(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text("old_api()\n\n\n\nrisky()\n")
    result = fix_interactive(target, answers="y\n")
    assert "no more answers on stdin" in result.stdout
    assert target.read_text() == "old_api()\n\n\n\nrisky()\n" and result.exit_code == 1


def test_stdin_source_is_refused(toy_recipes):
    result = runner.invoke(app, ["fix", "-i", "-"], input="old_api()\n")
    assert result.exit_code == 2 and "cannot read source from '-'" in result.stderr


def test_fix_the_engine_discards_is_not_offered(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text("breakme()\nold_api()\n")
    result = fix_interactive(target, answers="y\n")
    assert result.stdout.count("Apply this change?") == 1
    assert "toy-broken: its fix cannot be applied on its own" in result.stdout
    assert target.read_text() == "breakme()\nnew_api()\n"


def test_read_only_file_is_not_counted_as_written(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text("old_api()\n")
    target.chmod(0o444)
    result = fix_interactive(target, answers="y\n")
    assert "read-only file" in result.stdout
    assert "0 written, 1 could not be processed" in result.stderr
    assert result.exit_code == 2 and target.read_text() == "old_api()\n"


def test_rejected_lines_stay_byte_identical(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    source = b"a = old_api(1)  \r\nkeep = '\xc3\xa9'\t\r\nb = old_api(2)\r\n"
    target.write_bytes(source)
    fix_interactive(target, answers="n\ny\n")
    assert target.read_bytes() == source.replace(b"old_api(2)", b"new_api(2)")


def test_seed003_review_never_accepts_a_change_resting_on_a_rejected_one(tmp_path):
    """The real recipes on seed 003: rejecting the first per-step-tape rewrite
    (which removes the stacked path_1) while accepting the second (path_2)
    leaves a file whose every name is still defined."""
    target = tmp_path / "churn.py"
    shutil.copy(SEED003, target)
    answers = "y\nn\nr\nn\ny\ny\nn\ny\n"
    result = fix_interactive(target, answers=answers)
    assert "6 accepted, 3 rejected" in result.stdout  # r accepted two typed-convert fixes
    written = target.read_text()
    compile(written, str(target), "exec")
    assert "path_1 = tf.stack(" in written and "path_1[i]" in written  # rejected: kept whole
    assert "path_2 = tf.stack(" not in written and "path_2_step" in written
    assert "model([path_1[i], inputs_2])[:, 0]" in written  # scalar-target on the kept form
    assert "* avg_gradients_2" in written


@pytest.mark.tf
def test_end_to_end_review_in_a_terminal_writes_a_program_that_runs(tmp_path):
    """y/n/r on a file whose changes depend on each other (scalar-target edits
    the lines per-step-tape rewrote; one per-step-tape fix removes both stacked
    paths' neighbours), then q on a second file, typed into a real
    pseudo-terminal; the written program runs."""
    churn, other = tmp_path / "a_churn.py", tmp_path / "b_churn.py"
    shutil.copy(SEED003, churn)
    shutil.copy(SEED003, other)
    env = _env()
    child = pexpect.spawn(sys.executable, ["-m", "migrate", "fix", "-i", "--unsafe-fixes",
                                           "--no-cache", str(tmp_path)],
                          env=env, encoding="utf-8", timeout=120)
    for answer in "y n r y n y y n q".split():
        child.expect_exact("Apply this change? [y,n,a,d,r,q,?]")
        child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1, child.before
    assert other.read_text() == SEED003.read_text()  # quit during its review: not written
    written = churn.read_text()
    assert "model([path_1_step, inputs_2])\n" in written  # rejected scalar-target
    assert "model([inputs_1, path_2_step])[:, 0]" in written  # accepted, on per-step-tape's text
    assert "* avg_gradients_1" in written  # rejected suffix-mixup
    ran = subprocess.run([sys.executable, str(churn)], capture_output=True, text=True,
                         env=dict(env, TF_USE_LEGACY_KERAS="1"), timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "sum of attributions" in ran.stdout


def test_engine_only_applies_the_named_finding(toy_recipes):
    """The mechanism behind each question: Options.only names one finding by
    its place in the input; the others are reported, not applied."""
    from migrate.engine import Options, transform

    rename = toy_recipes["toy-rename"]
    source = "old_api(1)\nold_api(2)\n"
    result = transform(source, "a.py", Options((rename,), only=frozenset({("a.py", "toy-rename", 2, 1)})))
    assert result.output == "old_api(1)\nnew_api(2)\n"
    assert [(d.line, d.applied) for d in result.diagnostics] == [(1, False), (2, True)]
    elsewhere = transform(source, "a.py", Options((rename,), only=frozenset({("b.py", "toy-rename", 2, 1)})))
    assert elsewhere.output == source


def test_real_follow_on_is_not_offered_after_its_origin_is_rejected(tmp_path):
    """vectorize-sample-loop appears only once numpy-accumulator's TensorArrays
    are in: with numpy-accumulator rejected it is not offered, and says why."""
    target = tmp_path / "model.py"
    shutil.copy(ROOT / "fixtures" / "numpy-accumulator" / "seed_hierarchical.before.py", target)
    result = fix_interactive(target, answers="y\nn\nn\n")
    assert "vectorize-sample-loop" not in "".join(result.stdout.split("Apply this change?")[:-1])
    assert ("vectorize-sample-loop [unsafe]: appears only after a change that was rejected "
            "(numpy-accumulator at line") in result.stdout
    compile(target.read_text(), str(target), "exec")


@pytest.mark.parametrize("fixture", ["numpy-accumulator/seed_hierarchical.before.py",
                                     "per-step-tape/seed003_churn_ig.before.py"])
def test_accepting_everything_writes_what_fix_writes(tmp_path, fixture):
    """Follow-ons included (vectorize-sample-loop comes after numpy-accumulator)."""
    reviewed, fixed = tmp_path / "reviewed.py", tmp_path / "fixed.py"
    shutil.copy(ROOT / "fixtures" / fixture, reviewed)
    shutil.copy(ROOT / "fixtures" / fixture, fixed)
    result = fix_interactive(reviewed, answers="y\n" * 20)
    assert result.exit_code == 0, result.stdout
    runner.invoke(app, ["fix", "--unsafe-fixes", "--no-cache", str(fixed)])
    assert reviewed.read_text() == fixed.read_text() != (ROOT / "fixtures" / fixture).read_text()
