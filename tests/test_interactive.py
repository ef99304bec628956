"""`fix --interactive` driven through stdin, on toy recipes."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from migrate.cli import app
from migrate.interactive import Unit, compose, hunks_of

runner = CliRunner()

TWO_RECIPES = "import x\n\na = old_api(1)\nb = 2\nc = 3\nd = 4\ne = risky(5)\n"


def fix_interactive(*args, answers):
    return runner.invoke(app, ["fix", "--interactive", "--unsafe-fixes", *map(str, args)],
                         input=answers)


def test_yes_then_no_lands_exactly_the_first_change(tmp_path, toy_recipes):
    target = tmp_path / "two.py"
    target.write_text(TWO_RECIPES)
    result = fix_interactive(target, answers="y\nn\n")
    assert target.read_text() == TWO_RECIPES.replace("old_api", "new_api")
    assert result.exit_code == 1  # a change was declined
    assert "toy-rename [safe] old_api is deprecated" in result.stdout
    assert "toy-risky [unsafe] risky() may change behaviour" in result.stdout
    assert f"{target}:3" in result.stdout and f"{target}:7" in result.stdout


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
    assert result.stdout.count("accepted (toy-rename: r)") == 3


@pytest.mark.parametrize("answer", ["y", "n"])
def test_hunks_of_one_finding_are_one_question(tmp_path, toy_recipes, answer):
    """The import a fix adds at the top and the call it rewrites land together or not at all."""
    target = tmp_path / "a.py"
    source = "x = 1\n\n\n\n\ny = make_ones()\n"
    target.write_text(source)
    result = fix_interactive(target, answers=f"{answer}\n")
    assert result.stdout.count("Apply this change?") == 1
    assert "@@ line 1" in result.stdout and "@@ line 6" in result.stdout
    expected = "import numpy\nx = 1\n\n\n\n\ny = numpy.ones()\n" if answer == "y" else source
    assert target.read_text() == expected


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


def test_quit_writes_finished_files_only(tmp_path, toy_recipes):
    first = tmp_path / "a.py"
    second = tmp_path / "b.py"
    first.write_text("old_api()\n")
    second.write_text("old_api()\n\n\n\nrisky()\n")
    result = fix_interactive(tmp_path, answers="y\ny\nq\n")
    assert first.read_text() == "new_api()\n"
    assert second.read_text() == "old_api()\n\n\n\nrisky()\n"  # its accepted hunk is not written
    assert result.exit_code == 1


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
    assert "--interactive needs answers, but stdin is not a terminal" in result.stderr
    assert target.read_text() == "old_api()\n"


def test_answers_running_out_stop_like_quit(tmp_path, toy_recipes):
    target = tmp_path / "a.py"
    target.write_text("old_api()\n\n\n\nrisky()\n")
    result = fix_interactive(target, answers="y\n")
    assert "no more answers on stdin" in result.stdout
    assert target.read_text() == "old_api()\n\n\n\nrisky()\n" and result.exit_code == 1


def test_stdin_source_is_refused(toy_recipes):
    result = runner.invoke(app, ["fix", "-i", "-"], input="old_api()\n")
    assert result.exit_code == 2 and "cannot read source from '-'" in result.stderr


def test_partial_result_that_does_not_parse_is_not_written(tmp_path, toy_recipes, monkeypatch):
    """Two hunks that only parse together: accepting one must not write."""
    from migrate import batch

    target = tmp_path / "a.py"
    source = "x = (1,\n\n\n\n     2)\n"
    target.write_text(source)
    real_process = batch.process

    def bracket_swap(path, options):
        outcome = real_process(path, options)
        outcome.result.output = "x = [1,\n\n\n\n     2]\n"
        return outcome

    monkeypatch.setattr(batch, "process", bracket_swap)
    result = fix_interactive(target, answers="y\nn\n")
    assert target.read_text() == source
    assert "the accepted changes alone do not parse" in result.stdout
    assert result.exit_code == 2


def test_rejected_hunk_is_byte_identical_between_accepted_neighbours():
    source = "a = 1  \r\nkeep = 'é'\t\nb = 2\n"
    unit = Unit("u", source, "a = 10  \r\nkeep = 'x'\nb = 20\n", [], lambda text: None)
    hunks = hunks_of(unit)
    assert len(hunks) == 1  # adjacent changed lines form one hunk
    spread = Unit("u", "a = 1\nx\nkeep = 'é'\t \ny\nb = 2", "a = 10\nx\nkeep = 2\ny\nb = 20", [],
                  lambda text: None)
    first, middle, last = hunks_of(spread)
    assert compose(spread, [first, last]) == "a = 10\nx\nkeep = 'é'\t \ny\nb = 20"
