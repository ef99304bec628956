"""Prechecks cannot lose a finding: every fixture, every corpus program
(notebooks too) and a fixed sample of every generated variant family gives
the same findings, fixes and output with every recipe's text tokens and
precheck switched off, as
scripts/precheck_soundness.py does on library code."""

from __future__ import annotations

import dataclasses

import pytest

from migrate.engine import Options, transform
from migrate.notebook import transform_notebook
from migrate.registry import all_recipes

from fixture_cases import ROOT, all_cases
from variants import all_programs, families, sample

SHIPPED = tuple(all_recipes().values())
UNGATED = tuple(dataclasses.replace(r, tokens=(), precheck=None) for r in SHIPPED)
VARIANTS_PER_FAMILY = 12  # a fixed sample: the whole space is for scripts/corpus_score.py

_FILES = sorted({p for case in all_cases() for p in (case.before, case.after) if p}
                | set((ROOT / "tests" / "corpus").rglob("*.py"))
                | set((ROOT / "tests" / "corpus").rglob("*.ipynb")))
PROGRAMS = [(str(path.relative_to(ROOT)), str(path), path.read_text(encoding="utf-8")) for path in _FILES] \
    + [(f"variants/{name}/{program.name}", f"{program.name}.py", program.source)
       for name, family in sorted(families().items())
       for program in sample(list(all_programs(family)), VARIANTS_PER_FAMILY)]


def _answer(source: str, path: str, recipes, isolated: bool) -> tuple:
    options = Options(recipes, unsafe_fixes=True, isolated=isolated)
    run = transform_notebook if path.endswith(".ipynb") else transform
    result = run(source, path, options)
    return (result.output,
            [(d.recipe, d.line, d.column, d.end_line, d.end_column, d.message, d.applied, d.fix,
              d.after) for d in result.diagnostics])


@pytest.mark.parametrize("path,source", [(path, source) for _, path, source in PROGRAMS],
                         ids=[name for name, _, _ in PROGRAMS])
def test_findings_do_not_depend_on_prechecks(path, source):
    for isolated in (True, False):  # `check` (each recipe alone) and `fix` (chained)
        assert _answer(source, path, SHIPPED, isolated) == _answer(source, path, UNGATED, isolated)
