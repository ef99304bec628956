"""Configuration as Ruff finds it: per file, the nearest pyproject.toml with
a [tool.tf-migrate] table; --config FILE; --isolated; --select winning over
a file's ignore for the ids it names; unknown ids in suppression comments."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from migrate.cli import app

runner = CliRunner()
SOURCE = "risky()\nold_api()\n"


@pytest.fixture
def projects(tmp_path, monkeypatch, toy_recipes):
    """top/pyproject.toml selects toy-rename; top/a has its own table
    (toy-risky only); top/b's pyproject.toml has no table, so top's applies."""
    top = tmp_path / "top"
    for folder in ("a", "b"):
        (top / folder).mkdir(parents=True)
        (top / folder / "x.py").write_text(SOURCE)
    (top / "pyproject.toml").write_text('[tool.tf-migrate]\nselect = ["toy-rename"]\n')
    (top / "a" / "pyproject.toml").write_text('[tool.tf-migrate]\nselect = ["toy-risky"]\n')
    (top / "b" / "pyproject.toml").write_text('[tool.black]\nline-length = 100\n')
    monkeypatch.chdir(top)
    return top


def findings(*args):
    result = runner.invoke(app, ["check", "--no-cache", *args])
    assert result.exit_code in (0, 1), result.stderr
    return [line.split(" ", 2)[:2] for line in result.stdout.splitlines()]


def test_each_file_gets_the_nearest_pyproject_with_the_table(projects):
    expected = [["a/x.py:1:1:", "toy-risky"], ["b/x.py:2:1:", "toy-rename"]]
    assert findings("a", "b") == expected
    assert findings("b", "a") == expected  # the order of the paths changes nothing
    assert findings("b/x.py", "a/x.py") == expected
    assert findings() == expected


def test_config_file_applies_to_every_file(projects, tmp_path):
    settings = tmp_path / "settings.toml"
    settings.write_text('ignore = ["toy-rename"]\n')
    assert findings("--config", str(settings), "a", "b") == [["a/x.py:1:1:", "toy-risky"],
                                                             ["b/x.py:1:1:", "toy-risky"]]
    assert findings("--config", "a/pyproject.toml", "b") == [["b/x.py:1:1:", "toy-risky"]]
    missing = runner.invoke(app, ["check", "--config", str(tmp_path / "nope.toml"), "a"])
    assert missing.exit_code == 2 and "nope.toml: --config file not found" in missing.stderr


def test_isolated_reads_no_config(projects):
    everything = [["a/x.py:1:1:", "toy-risky"], ["a/x.py:2:1:", "toy-rename"],
                  ["b/x.py:1:1:", "toy-risky"], ["b/x.py:2:1:", "toy-rename"]]
    assert findings("--isolated", "--select", "toy-risky,toy-rename", "a", "b") == everything
    (projects / "pyproject.toml").write_text('[tool.tf-migrate]\nselct = 1\n')  # not even read
    assert findings("--isolated", "--select", "toy-risky,toy-rename", "b") == everything[2:]


def test_select_on_the_command_line_wins_over_the_files_ignore(projects):
    (projects / "b" / "pyproject.toml").write_text('[tool.tf-migrate]\nignore = ["toy-rename", "toy-risky"]\n')
    assert findings("b") == []
    assert findings("--select", "toy-rename", "b") == [["b/x.py:2:1:", "toy-rename"]]
    # an explicit --ignore replaces the file's, as every flag does
    assert findings("--select", "toy-rename,toy-risky", "--ignore", "toy-risky", "b") == [["b/x.py:2:1:", "toy-rename"]]


def test_unknown_id_in_a_suppression_comment_is_a_warning_with_did_you_mean(projects):
    (projects / "b" / "x.py").write_text("import os\nold_api()  # tf-migrate: ignore[toy-renam, toy-risky]\n"
                                         "risky()  # tf-migrate: ignore[zzz]\n")
    for command in (["check"], ["diff"], ["fix"]):
        result = runner.invoke(app, [*command, "--no-cache", "--isolated", "b"])
        warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
        assert warnings == [
            "warning: b/x.py:2: unknown recipe id 'toy-renam' (did you mean toy-rename?) "
            "in a `# tf-migrate: ignore[...]` comment",
            "warning: b/x.py:3: unknown recipe id 'zzz' (see `tf-migrate list`) "
            "in a `# tf-migrate: ignore[...]` comment"]
        assert result.exit_code == 1  # a warning is not an error


def test_fix_warns_at_the_lines_of_the_written_file(projects):
    (projects / "b" / "x.py").write_text("make_ones()\nrisky()  # tf-migrate: ignore[toy-rsky]\n")
    result = runner.invoke(app, ["fix", "--no-cache", "--isolated", "b"])
    assert (projects / "b" / "x.py").read_text().splitlines()[2].startswith("risky()")  # an import above
    assert "warning: b/x.py:3: unknown recipe id 'toy-rsky' (did you mean toy-risky?)" in result.stderr


def test_a_broken_config_of_one_file_is_a_usage_error(projects):
    (projects / "a" / "pyproject.toml").write_text('[tool.tf-migrate]\nselect = ["toy-riskyy"]\n')
    result = runner.invoke(app, ["check", "--no-cache", "b", "a"])
    assert result.exit_code == 2
    assert result.stderr == (f"tf-migrate: {projects / 'a' / 'pyproject.toml'}: [tool.tf-migrate] "
                             "unknown recipe id 'toy-riskyy' (did you mean toy-risky?)\n")


def test_unknown_id_in_a_notebook_cell_is_named_by_cell_and_line(tmp_path, monkeypatch, toy_recipes):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1"),
                      nbformat.v4.new_code_cell("y = 2\nold_api()  # tf-migrate: ignore[toy-rnme]")]
    nbformat.write(notebook, str(tmp_path / "nb.ipynb"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--no-cache", "--isolated", "nb.ipynb"])
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == [
        "warning: nb.ipynb:cell 2:2: unknown recipe id 'toy-rnme' (did you mean toy-rename?) "
        "in a `# tf-migrate: ignore[...]` comment"]


def test_fix_interactive_runs_each_file_with_its_own_config(projects):
    """a/x.py is offered only toy-risky, b/x.py only toy-rename (as check
    finds them), whichever path comes first."""
    result = runner.invoke(app, ["fix", "--interactive", "--unsafe-fixes", "--no-cache", "b", "a"],
                           input="y\ny\n")
    assert result.exit_code == 0, result.output
    assert (projects / "a" / "x.py").read_text() == "safer()\nold_api()\n"
    assert (projects / "b" / "x.py").read_text() == "risky()\nnew_api()\n"
