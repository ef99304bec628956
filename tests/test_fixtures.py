"""Golden tests over every fixture pair: rewrite, no-op, idempotence, parse."""

from __future__ import annotations

import pytest

from migrate.engine import Options, check_output, transform
from migrate.registry import all_recipes, resolve
from migrate.result import Status

from fixture_cases import FIXTURES, all_cases

CASES = all_cases()


def _fix(source: str, recipes, path: str) -> str:
    result = transform(source, path, Options(tuple(resolve(recipes)), unsafe_fixes=True))
    assert result.status in (Status.CHANGED, Status.UNCHANGED), result.reason
    assert check_output(result.output, path) is None
    return result.output


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_before_rewrites_to_after(case):
    source = case.before.read_text()
    expected = case.after.read_text() if case.after else source
    assert _fix(source, case.recipes, str(case.before)) == expected


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
