"""Checks of the engine's speed and safety layers that mutation testing
found unexercised (docs/mutation.md): a slice's restore refuses placeholders
that lost their neighbour, ``touched_by`` sees an edit reaching an elided
line, the cache key covers ``apply``, and per-step-tape never hoists a
random call. Each test fails on the mutant named in its docstring."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from migrate import slicing
from migrate.cache import Cache
from migrate.options import Options
from migrate.registry import all_recipes
from migrate.result import Diagnostic, Edit
from recipe_cases import run_body

TEXT = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf


    def helper(values):
        return [v * 2 for v in values]


    def far_away(values):
        return sum(values)


    def attributions(model, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = model(x)
        return helper(tape.gradient(y, x))
    ''')
FAR_AWAY = (9, 10)  # its 1-based lines, the ones the slice elides


@pytest.fixture
def part():
    tree = ast.parse(TEXT)
    found = slicing.cut(TEXT, tree, [tree.body[-1]])
    assert sorted(found.elided) == [line - 1 for line in FAR_AWAY]
    return found


def _with_line(text: str, before: int, line: str) -> str:
    """``text`` with ``line`` inserted above its 1-based line ``before``."""
    lines = text.splitlines(keepends=True)
    lines.insert(before - 1, line)
    return "".join(lines)


def test_restore_puts_back_placeholders_whose_neighbours_moved_with_them(part):
    """An edit above the elided run shifts it; its neighbours still hold."""
    output = _with_line(part.text, 3, "import os\n")
    assert part.restore(output) == _with_line(TEXT, 3, "import os\n")


def test_restore_refuses_a_line_inserted_inside_an_elided_run(part):
    """Mutant: the check that a placeholder sits right under the previous one."""
    assert part.restore(_with_line(part.text, FAR_AWAY[1], "x = 1\n")) is None


def test_restore_refuses_a_new_line_right_above_an_elided_run(part):
    """Mutant: the check that the line above a run is the input's."""
    assert part.restore(_with_line(part.text, FAR_AWAY[0], "x = 1\n")) is None


def test_restore_of_a_run_at_the_top_of_the_file():
    """Mutant: the first line of the file has no line above it to compare."""
    text = "def far_away(values):\n    return sum(values)\n\n\n" + TEXT
    tree = ast.parse(text)
    part = slicing.cut(text, tree, [tree.body[-1]])
    assert 0 in part.elided
    assert part.restore(part.text) == text
    assert part.restore("import os\n" + part.text) is None


def _touches(part, line, column, end_line, end_column, replacement="") -> bool:
    edit = Edit(line, column, end_line, end_column, replacement)
    return part.touched_by([Diagnostic("b.py", line, column, end_line, end_column, "r", "m",
                                       "safe", True, False, fix=[edit])])


@pytest.mark.parametrize("edit, touched", [
    ((FAR_AWAY[0], 1, FAR_AWAY[0], 5), True),  # inside an elided line
    ((FAR_AWAY[1], 1, FAR_AWAY[1], 1), True),  # an insertion between two of them
    ((FAR_AWAY[0] - 1, 1, FAR_AWAY[0], 2), True),  # ends one column into one
    ((FAR_AWAY[0] - 2, 1, FAR_AWAY[1] + 2, 1), True),  # spans the run
    ((FAR_AWAY[0] - 1, 1, FAR_AWAY[0], 1), False),  # ends where the run starts
    ((FAR_AWAY[1] + 1, 1, FAR_AWAY[1] + 1, 1), False),  # an insertion right below it
    ((1, 1, 1, 7), False),  # far above
    ((14, 5, 14, 9), False),  # far below
])
def test_touched_by_sees_edits_reaching_an_elided_line(part, edit, touched):
    """Mutants: the end-column rule and the comparison with the first elided
    line at or after the edit."""
    assert _touches(part, *edit) is touched


def test_an_edit_writing_a_placeholder_touches_the_slice(part):
    assert _touches(part, 14, 5, 14, 9, f"{slicing.MARK} 8") is True


def test_the_cache_key_covers_apply(tmp_path):
    """Mutant: ``apply`` left out of the run key: `diff` (not applied) and
    `fix` results would be served for each other."""
    recipes = tuple(all_recipes().values())[:2]
    key = Cache(tmp_path, Options(recipes)).key(Path("a.py"), b"x")
    assert Cache(tmp_path, Options(recipes, apply=False)).key(Path("a.py"), b"x") != key


def _watched_three_times(factor: str) -> str:
    return f"""
        def f(m, x):
            with tf.GradientTape() as t:
                t.watch(x * {factor})
                y = m(x * {factor})
            return t.gradient(y, x * {factor})
        """


def test_per_step_tape_binds_a_deterministic_expression():
    """The control: without the random call the same code is a finding, so
    the next test reaches the random-call check."""
    assert run_body(_watched_three_times("tf.math.abs(x)"), "per-step-tape").diagnostics


@pytest.mark.parametrize("factor", ["tf.random.normal((2,))", "tf.random.uniform((2,))",
                                    "tf.nn.dropout(x, 0.5)", "tf.random.shuffle(x)",
                                    "np.random.rand(2)"])
def test_per_step_tape_never_binds_a_random_expression(factor):
    """Mutant: the random-call check (binding it once would draw once where
    the program drew three times)."""
    result = run_body(_watched_three_times(factor), "per-step-tape")
    assert result.output == result.source and not result.diagnostics
