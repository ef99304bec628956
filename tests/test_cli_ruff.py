"""Ruff's spellings, as aliases of what tf-migrate already does: `check
--fix`, `--diff` on check and fix, `--unsafe-fixes` on check, `--exit-zero`,
`--statistics`, `-q`, `--output-file`, and no path meaning '.'."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from migrate.cli import app

runner = CliRunner()
SOURCE = "risky()\nold_api()\n"
SAFE_ONLY = "risky()\nnew_api()\n"
BOTH = "safer()\nnew_api()\n"


@pytest.fixture
def project(tmp_path, monkeypatch, toy_recipes):
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "b.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def texts(project):
    return [(project / name).read_text() for name in ("a.py", "b.py")]


def invoke(*args):
    return runner.invoke(app, [*args, "--no-cache"])


def test_check_fix_is_fix(project):
    result = invoke("check", "--fix", "a.py", "b.py")
    assert texts(project) == [SAFE_ONLY, SAFE_ONLY]
    assert result.exit_code == 1  # the unsafe finding is left
    assert result.stdout.splitlines() == [f"{n}:1:1: toy-risky risky() may change behaviour [unsafe fix]" for n in ("a.py", "b.py")]
    assert "2 fixed, 2 left: unsafe, rerun with --unsafe-fixes" in result.stderr


def test_check_fix_with_unsafe_fixes_applies_them(project):
    assert invoke("check", "--fix", "--unsafe-fixes", "a.py").exit_code == 0
    assert texts(project) == [BOTH, SOURCE]


@pytest.mark.parametrize("command", [["diff"], ["fix", "--diff"], ["check", "--diff"], ["check", "--fix", "--diff"]])
def test_every_diff_spelling_prints_the_same_diff_and_writes_nothing(project, command):
    result = invoke(*command, "--unsafe-fixes", "a.py")
    assert result.exit_code == 1
    assert result.stdout == "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-risky()\n-old_api()\n+safer()\n+new_api()\n"
    assert texts(project) == [SOURCE, SOURCE]


def test_no_path_means_the_working_directory(project):
    result = invoke("check")
    assert [line.split(":", 1)[0] for line in result.stdout.splitlines()] == ["a.py", "a.py", "b.py", "b.py"]
    invoke("fix", "--unsafe-fixes")
    assert texts(project) == [BOTH, BOTH]


@pytest.mark.parametrize("command", [["check"], ["diff"], ["fix"]])
def test_exit_zero_keeps_findings_and_changes_at_zero_but_not_errors(project, command):
    result = invoke(*command, "--exit-zero", ".")
    assert result.exit_code == 0 and result.stdout
    (project / "bad.py").write_text("def f(:\n")
    assert invoke(*command, "--exit-zero", ".").exit_code == 2


def test_statistics_count_findings_per_recipe(project):
    result = invoke("check", "--statistics")
    assert result.exit_code == 1
    assert result.stdout == "2  toy-rename  (2 with a fix)\n2  toy-risky   (2 with a fix)\n"
    assert result.stderr == ""
    data = json.loads(invoke("check", "--statistics", "--format", "json").stdout)
    assert data == [{"recipe": "toy-rename", "count": 2, "fixable": 2},
                    {"recipe": "toy-risky", "count": 2, "fixable": 2}]


@pytest.mark.parametrize("command", [["check"], ["diff"], ["fix"]])
def test_quiet_prints_findings_and_errors_but_no_summary(project, command):
    (project / "bad.py").write_text("def f(:\n")
    for flag in ("-q", "--quiet"):
        (project / "a.py").write_text(SOURCE)
        result = invoke(*command, flag, "a.py", "bad.py")
        assert result.exit_code == 2
        assert result.stdout if command != ["fix"] else "a.py:1:1: toy-risky" in result.stdout
        assert result.stderr.startswith("error: bad.py: ") and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("command, format", [(["check"], "text"), (["check"], "json"), (["check"], "sarif"),
                                             (["diff"], None), (["fix"], "json")])
def test_output_file_gets_the_report_stdout_nothing(project, command, format):
    report = project / "reports" / "out.txt"
    formats = ["--format", format] if format else []
    result = invoke(*command, *formats, "--output-file", str(report), "a.py")
    assert result.exit_code == 1
    assert result.stdout == ""
    text = report.read_text()
    if format in ("json", "sarif"):
        json.loads(text)
    assert "a.py" in text


@pytest.mark.parametrize("args", [["check", "--fix", "--statistics"], ["check", "--diff", "--format", "json"],
                                  ["fix", "--diff", "-i"], ["check", "--statistics", "--format", "sarif"]])
def test_flags_that_do_not_combine_are_a_usage_error(project, args):
    result = invoke(*args)
    assert result.exit_code == 2 and result.stderr.startswith("tf-migrate: ")
    assert texts(project) == [SOURCE, SOURCE]
