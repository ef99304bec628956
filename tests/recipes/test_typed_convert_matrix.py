"""typed-convert's rule against its measured table (docs/typed-convert-matrix.md),
cell by cell: one function per (value kind, target dtype) folds a value of
that kind, and the recipe's safety must be the table's answer for the cell.
Where the code pins the kind exactly (Python literals, NumPy arrays with a
dtype) the answers are equal; where it shows only a family (a DataFrame, a
tensor), the recipe is never safe where the fold changes a program that runs."""

from __future__ import annotations

from migrate.engine import Options, transform
from migrate.registry import resolve
from recipes._typed_convert_matrix import CELLS

HEADER = "import numpy as np\nimport pandas as pd\nimport tensorflow as tf\n\n\n"
TARGETS = ("float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool")
EXACT = {
    "py-list-int": "[1, -2, 3]",
    "py-list-float": "[0.1, -2.7]",
    "py-list-bool": "[True, False]",
    "py-list-mixed": "[1, 2.5]",
    "py-nested-int": "[[1, 2], [3, 4]]",
    "py-nested-float": "[[0.1, 2.7], [1.5, 4.0]]",
    "py-tuple-float": "(0.1, -2.7)",
    "py-scalar-int": "3",
    "py-scalar-float": "-2.7",
    "py-scalar-bool": "True",
    **{f"ndarray-{d}": f"np.array([1, 0], dtype=np.{d}{'_' if d == 'object' else ''})"
       for d in ("int32", "int64", "float16", "float32", "float64", "bool", "object")},
}
FAMILY = {
    "pandas-frame-float64": "pd.DataFrame({'a': [0.1, 2.7]})",
    "pandas-frame-int64": "pd.DataFrame({'a': [1, 2]})",
    "pandas-values-float64": "pd.DataFrame({'a': [0.1, 2.7]}).values",
    "pandas-values-int64": "pd.DataFrame({'a': [1, 2]}).to_numpy()",
    "pandas-values-mixed": "pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}).values",
    **{f"tensor-{d}": f"tf.constant([1, 0], dtype=tf.{d})"
       for d in ("int32", "int64", "float16", "float32", "float64", "bool")},
    **{f"variable-{d}": f"tf.Variable([1, 0], dtype=tf.{d})" for d in ("int32", "float32", "float64")},
}


def expected(row: str, target: str) -> str:
    """The rule, read off the table: safe where the fold equals the cast on
    both runtimes, report where it always raises, else unsafe."""
    cells = {run[row][target] for run in CELLS.values()}
    working = cells & {"equal", "differs", "fold-raises"}
    if working and working <= {"equal"}:
        return "safe"
    return "report" if cells <= {"fold-raises", "both-raise"} else "unsafe"


def verdicts(values):
    """The recipe's safety per (row, target), from one module holding every cell."""
    lines, where = [], {}
    for row, value in values.items():
        for target in TARGETS:
            where[len(HEADER.splitlines()) + len(lines) + 2] = (row, target)
            lines += [f"def f_{len(where)}():", f"    return tf.cast(tf.convert_to_tensor({value}), tf.{target})",
                      ""]
    result = transform(HEADER + "\n".join(lines), "cells.py", Options(tuple(resolve(["typed-convert"]))))
    assert not result.errors, result.errors
    found = {where[d.line]: ("report" if not d.fixable else d.safety) for d in result.diagnostics}
    assert set(found) == set(where.values()), sorted(set(where.values()) - set(found))[:5]
    return found


def test_every_row_and_target_of_the_table_is_probed():
    for run in CELLS.values():
        assert set(run) == set(EXACT) | set(FAMILY)
        assert all(set(cells) == set(TARGETS) for cells in run.values())


def test_the_recipe_gives_the_tables_answer_where_the_code_pins_the_kind():
    found = verdicts(EXACT)
    wrong = {cell: (got, expected(*cell)) for cell, got in found.items() if got != expected(*cell)}
    assert not wrong


def test_the_recipe_is_never_safe_where_the_table_is_not_for_a_family_of_kinds():
    found = verdicts(FAMILY)
    # a safe fold never changes what a program that runs computes (a program
    # that raises either way, a mixed frame's object array, may be folded)
    changed = [cell for cell, got in found.items() if got == "safe"
               and not {run[cell[0]][cell[1]] for run in CELLS.values()} <= {"equal", "both-raise"}]
    assert not changed
    assert all(got == "report" for (row, _), got in found.items() if row.startswith(("tensor", "variable")))
    assert any(got == "safe" for got in found.values())  # pandas data into float32 folds
