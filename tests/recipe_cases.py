"""What the per-recipe tests (tests/recipes/) share: running one recipe on a
snippet, and VALID / INVALID cases whose diagnostics and fix are compared
with JSON snapshots under tests/snapshots/<recipe>/<case>.json
(``UPDATE_SNAPSHOTS=1`` rewrites them; review the diff)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Optional

import pytest

from migrate.engine import Options, transform
from migrate.registry import resolve

from snapshot import assert_snapshot

HEADER = "import numpy as np\nimport pandas as pd\nimport tensorflow as tf\n\n\n"
NEEDS_MODEL = "needs the semantic model (issue 11 item 1)"


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def run(source: str, recipe: str, unsafe: bool = True):
    """``recipe`` alone on ``source`` (dedented); its output must be a fixpoint."""
    source = dedent(source)
    result = transform(source, "case.py", Options(tuple(resolve([recipe])), unsafe_fixes=unsafe))
    assert not result.errors, result.errors
    again = transform(result.output, "case.py", Options(tuple(resolve([recipe])), unsafe_fixes=unsafe))
    assert again.output == result.output, "not a fixpoint"
    return result


def fixed(source: str, recipe: str, unsafe: bool = True) -> str:
    return run(source, recipe, unsafe).output


def run_body(body: str, recipe, unsafe: bool = True, **options):
    """``recipe`` (None: every recipe) on ``body`` below the usual imports (HEADER)."""
    source = HEADER + dedent(body)
    ids = None if recipe is None else [recipe]
    result = transform(source, "case.py", Options(tuple(resolve(ids)), unsafe_fixes=unsafe,
                                                  recipe_options=tuple(options.items())))
    assert not result.errors, result.errors
    return result


def body_of(result) -> str:
    return result.output[len(HEADER):]


def only(result):
    assert len(result.diagnostics) == 1, result.diagnostics
    return result.diagnostics[0]


@dataclass(frozen=True)
class Case:
    """A program for one recipe: VALID (``findings == 0``: nothing to report)
    or INVALID (its findings, messages and fix are the snapshot). ``why``
    names the failure class of issue 11 it stands for; ``xfail`` says what the
    recipe lacks to get it right today (the case flips when that lands)."""

    name: str
    source: str
    why: str
    valid: bool
    xfail: str = ""
    safety: str = ""  # INVALID: the safety every finding must have
    fixable: Optional[bool] = None  # INVALID: whether the findings offer a fix


def valid(name: str, source: str, why: str, xfail: str = "") -> Case:
    return Case(name, dedent(source), why, True, xfail)


def invalid(name: str, source: str, why: str, xfail: str = "", safety: str = "",
            fixable: Optional[bool] = None) -> Case:
    return Case(name, dedent(source), why, False, xfail, safety, fixable)


def params(cases):
    """pytest parameters, an xfail(strict) mark on the cases the recipe gets wrong today."""
    return [pytest.param(case, id=case.name, marks=[pytest.mark.xfail(strict=True, reason=case.xfail)]
                         if case.xfail else []) for case in cases]


def check_case(recipe: str, case: Case) -> None:
    """VALID: no finding of ``recipe``. INVALID: at least one, and its
    diagnostics and fixed program equal the snapshot."""
    result = transform(case.source, "case.py", Options(tuple(resolve([recipe])), unsafe_fixes=True))
    assert not result.errors, result.errors
    found = [{"line": d.line, "column": d.column, "end_line": d.end_line, "end_column": d.end_column,
              "message": d.message, "safety": d.safety, "fixable": d.fixable}
             for d in result.diagnostics if d.recipe == recipe]
    if case.valid:
        assert found == [], f"{case.why}: {found}"
        return
    assert found, f"{case.why}: no finding"
    if case.safety:
        assert {f["safety"] for f in found} == {case.safety}, f"{case.why}: {found}"
    if case.fixable is not None:
        assert {f["fixable"] for f in found} == {case.fixable}, f"{case.why}: {found}"
    # a case the recipe misses today has no snapshot yet: it flips (XPASS,
    # strict) on its finding alone, then its snapshot is recorded
    assert_snapshot(f"{recipe}/{case.name}", {"why": case.why, "diagnostics": found,
                                              "fixed": result.output}, missing_ok=bool(case.xfail))
