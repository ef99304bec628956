"""Golden tests over every fixture pair: rewrite, no-op, idempotence, parse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.engine import Options, check_output, transform
from migrate.registry import all_recipes, resolve
from migrate.result import Status

from fixture_cases import FIXTURES, ROOT, all_cases
from snapshot import assert_snapshot

CASES = all_cases()


def _fix(source: str, recipes, path: str) -> str:
    result = transform(source, path, Options(tuple(resolve(recipes)), unsafe_fixes=True))
    assert result.status in (Status.CHANGED, Status.UNCHANGED), result.reason
    assert check_output(result.output, path) is None
    return result.output


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_before_rewrites_to_after(case):
    source = case.before.read_text()
    expected = case.after.read_text() if case.after and not case.report_only else source
    assert _fix(source, case.recipes, str(case.before)) == expected


@pytest.mark.parametrize("case", [c for c in CASES if c.report_only], ids=lambda c: c.id)
def test_report_only_before_is_reported_without_a_fix(case):
    result = transform(case.before.read_text(), str(case.before), Options(tuple(resolve([case.recipe])),
                                                                          unsafe_fixes=True))
    found = [d for d in result.diagnostics if d.recipe == case.recipe]
    assert found and not any(d.fixable for d in found), result.diagnostics


@pytest.mark.parametrize("case", [c for c in CASES if c.after], ids=lambda c: c.id)
def test_after_is_a_fixpoint(case):
    after = case.after.read_text()
    assert _fix(after, case.recipes, str(case.after)) == after


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fixture_files_parse(case):
    for path in filter(None, (case.before, case.after)):
        assert check_output(path.read_text(), str(path)) is None


def test_every_fixture_folder_names_a_recipe():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders <= set(all_recipes()), folders - set(all_recipes())


@pytest.mark.parametrize("recipe", sorted(all_recipes()))
def test_every_recipe_has_a_rewrite_and_a_negative(recipe):
    mine = [c for c in CASES if c.recipe == recipe]
    assert any(c.after for c in mine), f"{recipe} has no before/after pair"
    assert any(c.after is None for c in mine), f"{recipe} has no negative case"


def _findings(diagnostics) -> list:
    """What a finding says, without the fix's edits: the no-regression record."""
    return [
        {"path": Path(d["path"]).resolve().relative_to(ROOT).as_posix(), "recipe": d["recipe"], "line": d["line"], "column": d["column"],
         "message": d["message"], "safety": d["safety"], "fixable": d["fix"] is not None,
         "after": d.get("after")}
        for d in diagnostics]


def _key(finding: dict):
    return (finding["path"], finding["line"], finding["column"], finding["recipe"], finding["message"])


def test_check_on_the_fixtures_reports_the_recorded_findings():
    """`tf-migrate check fixtures --format json` gives the findings recorded
    before the engine ran every recipe in one traversal (issue 11), plus the
    follow-on findings of the fixpoint, marked ``after`` (issue 15)."""
    done = subprocess.run([sys.executable, "-m", "migrate", "check", "fixtures", "--format", "json",
                           "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["errors"] == []
    assert_snapshot("check_fixtures", sorted(_findings(report["diagnostics"]), key=_key))


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe-fixes"])
def test_fix_on_the_fixtures_reports_the_recorded_findings(unsafe):
    """`fix` (with and without --unsafe-fixes) over every fixture: same findings, same verdicts."""
    recipes = tuple(all_recipes().values())
    found = []
    for case in CASES:
        result = transform(case.before.read_text(), case.id, Options(recipes, unsafe_fixes=unsafe))
        found.extend({"path": d.path, "recipe": d.recipe, "line": d.line, "column": d.column,
                      "message": d.message, "safety": d.safety, "fixable": d.fixable,
                      "applied": d.applied} for d in result.diagnostics)
    assert_snapshot(f"fix_fixtures_{'unsafe' if unsafe else 'safe'}",
                    sorted(found, key=lambda f: (_key(f), f["applied"])))
