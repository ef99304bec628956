"""What the CLI names and in which order: paths relative to the working
directory in every format, diffs that `git apply` and `patch -p1` take,
findings sorted by file, line and column, symlinks not followed as warnings."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrate.cli import app

runner = CliRunner()
TWO_FINDINGS = "risky()\nold_api()\n"  # toy-risky (line 1) runs after toy-rename (line 2)


@pytest.fixture
def package(tmp_path, monkeypatch, toy_recipes):
    """A project folder, the working directory: pkg/{a,b}.py, pkg/sub/c.py."""
    for name in ("pkg/b.py", "pkg/a.py", "pkg/sub/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(TWO_FINDINGS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _paths_in(format: str, stdout: str) -> set:
    if format == "text":
        return {line.split(":", 1)[0] for line in stdout.splitlines()}
    if format == "json":
        return {d["path"] for d in json.loads(stdout)["diagnostics"]}
    if format == "sarif":
        return {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(stdout)["runs"][0]["results"]}
    return {line.split("file=", 1)[1].split(",", 1)[0] for line in stdout.splitlines()}


@pytest.mark.parametrize("format", ["text", "json", "sarif", "github"])
@pytest.mark.parametrize("spelling", ["pkg", "./pkg", "{cwd}/pkg"])
def test_every_format_names_files_relative_to_the_working_directory(package, format, spelling):
    result = runner.invoke(app, ["check", "--no-cache", "--format", format,
                                 spelling.format(cwd=package)])
    assert result.exit_code == 1, result.stderr
    assert _paths_in(format, result.stdout) == {"pkg/a.py", "pkg/b.py", "pkg/sub/c.py"}


def test_a_file_outside_the_working_directory_keeps_its_absolute_path(tmp_path, monkeypatch, toy_recipes):
    outside = tmp_path / "outside.py"
    outside.write_text("old_api()\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    result = runner.invoke(app, ["check", "--no-cache", "../outside.py"])
    assert result.stdout.startswith(f"{outside}:1:1: toy-rename")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
                   cwd=cwd, check=True, capture_output=True)


def test_a_folder_diff_applies_with_git_apply_and_patch(package):
    _git(package, "init", "-q")
    _git(package, "add", ".")
    _git(package, "commit", "-qm", "before")
    result = runner.invoke(app, ["diff", "--no-cache", "--unsafe-fixes", "pkg"])
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/pkg/a.py\n+++ b/pkg/a.py\n")
    fixed = "safer()\nnew_api()\n"
    (package / "fix.diff").write_text(result.stdout)
    _git(package, "apply", "fix.diff")
    assert {p.read_text() for p in (package / "pkg").rglob("*.py")} == {fixed}
    if shutil.which("patch"):
        _git(package, "checkout", "--", "pkg")
        subprocess.run(["patch", "-p1", "-i", "fix.diff"], cwd=package, check=True, capture_output=True)
        assert {p.read_text() for p in (package / "pkg").rglob("*.py")} == {fixed}


def test_a_diff_of_a_file_outside_the_working_directory_has_valid_headers(tmp_path, monkeypatch, toy_recipes):
    """As `git diff --no-index` names an absolute path: ``a/tmp/...``, which
    `patch -p1 -d /` applies (never ``a//tmp``, which both refuse)."""
    target = tmp_path / "far" / "x.py"
    target.parent.mkdir()
    target.write_text("old_api()\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    result = runner.invoke(app, ["diff", "--no-cache", str(target.parent)])
    relative = str(target).lstrip("/")
    assert result.stdout.startswith(f"--- a/{relative}\n+++ b/{relative}\n")
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "-d", "/"], input=result.stdout, text=True, check=True,
                       capture_output=True)
        assert target.read_text() == "new_api()\n"


@pytest.mark.parametrize("format", ["text", "json", "sarif", "github"])
def test_findings_are_sorted_by_file_line_and_column_in_every_format(package, format):
    result = runner.invoke(app, ["check", "--no-cache", "--format", format, "pkg/sub", "pkg/b.py", "pkg/a.py"])
    if format == "text":
        positions = [line.split(": ", 1)[0] for line in result.stdout.splitlines()]
    elif format == "json":
        positions = [f"{d['path']}:{d['line']}:{d['column']}" for d in json.loads(result.stdout)["diagnostics"]]
    elif format == "sarif":
        positions = [f"{r['locations'][0]['physicalLocation']['artifactLocation']['uri']}:"
                     f"{r['locations'][0]['physicalLocation']['region']['startLine']}:"
                     f"{r['locations'][0]['physicalLocation']['region']['startColumn']}"
                     for r in json.loads(result.stdout)["runs"][0]["results"]]
    else:
        positions = [line.split("file=")[1].split(",title")[0].replace(",line=", ":").split(",end")[0]
                     .replace(",col=", ":") for line in result.stdout.splitlines()]
    assert positions == [f"pkg/{name}:{line}:1" for name in ("a.py", "b.py", "sub/c.py") for line in (1, 2)]


def test_findings_left_by_fix_are_sorted(package):
    result = runner.invoke(app, ["fix", "--no-cache", "--select", "toy-risky", "pkg/b.py", "pkg/a.py"])
    assert [line.split(" ", 1)[0] for line in result.stdout.splitlines()] == ["pkg/a.py:1:1:", "pkg/b.py:1:1:"]


def test_a_symlink_loop_and_a_link_out_of_the_tree_are_warnings(package, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "o.py").write_text("old_api()\n")
    (package / "pkg" / "loop").symlink_to(package / "pkg", target_is_directory=True)
    (package / "pkg" / "out").symlink_to(outside, target_is_directory=True)
    (package / "pkg" / "self.py").symlink_to(package / "pkg" / "self.py")
    result = runner.invoke(app, ["check", "--no-cache", "--select", "toy-rename", "pkg"])
    assert result.exit_code == 1  # findings; the links are no error
    assert result.stdout.splitlines() == [f"pkg/{name}:2:1: toy-rename old_api is deprecated [safe fix]"
                                          for name in ("a.py", "b.py", "sub/c.py")]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == ["warning: pkg/loop: symlink loop, not followed",
                        "warning: pkg/out: symlink out of pkg, not followed",
                        "warning: pkg/self.py: symlink loop, not followed"]
    assert "0 could not be processed" in result.stderr
    clean = runner.invoke(app, ["check", "--no-cache", "--select", "toy-risky", "--exit-zero", "pkg"])
    assert clean.exit_code == 0


def test_a_follow_on_finding_points_at_the_loop_it_concerns(monkeypatch):
    """vectorize-sample-loop finds these loops only once numpy-accumulator
    has rewritten them (with the line above): the finding is on the loop."""
    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(root)
    cases = ["empty_like_rows", "seed_hierarchical", "shape_zero_bound"]
    result = runner.invoke(app, ["check", "--no-cache", "--format", "json",
                                 *(f"fixtures/numpy-accumulator/{case}.before.py" for case in cases)])
    follow_on = [d for d in json.loads(result.stdout)["diagnostics"] if d.get("after")]
    assert {d["path"] for d in follow_on} == {f"fixtures/numpy-accumulator/{case}.before.py" for case in cases}
    for diag in follow_on:
        line = (root / diag["path"]).read_text().splitlines()[diag["line"] - 1]
        assert line[diag["column"] - 1:].startswith("for "), (diag["path"], diag["line"], line)


def test_verify_prints_discovery_warnings_as_check_does(package):
    (package / "only").mkdir()
    (package / "only" / "loop").symlink_to(package / "only", target_is_directory=True)
    result = runner.invoke(app, ["verify", "only"])
    assert result.exit_code == 0, result.output  # nothing to run, and a link is no error
    assert [line for line in result.stderr.splitlines() if line.startswith("warning: ")] == \
        ["warning: only/loop: symlink loop, not followed"]
