"""migrate/slicing.py: which top-level statements the fissix run sees, and
that the engine's answer on a slice is the whole text's."""

from __future__ import annotations

import ast
import textwrap

from migrate import slicing
from migrate.engine import Options, transform
from migrate.registry import all_recipes
from migrate.result import Status

RECIPES = tuple(all_recipes().values())

BUGGY = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf


    def helper(values):
        return [v * 2 for v in values]


    def far_away(values):
        return sum(values)


    def attributions(model, x):
        grads = np.zeros(x.shape)
        for i in range(3):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = model(x)
            grads[i] = tape.gradient(y, x)
        return helper(grads)
    ''')


BUFFER_LINE = BUGGY.splitlines().index("    grads = np.zeros(x.shape)") + 1


def _elided_names(text: str, line: int) -> set:
    tree = ast.parse(text)
    places = [node for node in ast.walk(tree) if getattr(node, "lineno", 0) == line]
    part = slicing.cut(text, tree, places)
    kept = ast.parse(part.text) if part else tree
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} - \
        {n.name for n in kept.body if isinstance(n, ast.FunctionDef)}


def test_only_the_pointed_statement_and_what_it_calls_are_kept():
    assert _elided_names(BUGGY, BUFFER_LINE) \
        == {"far_away"}


def test_a_caller_of_a_kept_function_is_kept():
    text = BUGGY + "\n\ndef far_caller(model, x):\n    with tf.GradientTape() as t:\n        return attributions(model, x)\n"
    assert "far_caller" not in _elided_names(text, BUFFER_LINE)


def test_what_module_code_mentions_is_kept():
    """`explain(build(), ...)` at module level: the model types `explain`'s
    parameter from that call, so `build` must stay."""
    text = BUGGY + "\n\ndef build():\n    return tf.keras.layers.Dense(3)\n\n\nattributions(build(), 1)\n"
    assert _elided_names(text, BUFFER_LINE) == {"far_away"}


def test_a_function_reaching_the_whole_module_is_kept():
    text = BUGGY + "\n\ndef dynamic(o):\n    return globals()[o]\n"
    assert _elided_names(text, BUFFER_LINE) == {"far_away"}


def test_placeholders_keep_every_line_where_it_was():
    tree = ast.parse(BUGGY)
    part = slicing.cut(BUGGY, tree, [tree.body[-1]])
    assert len(part.text.splitlines()) == len(BUGGY.splitlines())
    assert part.restore(part.text) == BUGGY
    assert part.restore(part.text.replace("elided 9\n", "elided 9 edited\n")) is None
    moved = part.text.splitlines(keepends=True)
    moved.insert(3, moved.pop(8))
    assert part.restore("".join(moved)) is None


def test_sliced_fix_equals_the_whole_fix():
    for isolated in (True, False):
        sliced = transform(BUGGY, "b.py", Options(RECIPES, unsafe_fixes=True, isolated=isolated))
        whole = transform(BUGGY, "b.py", Options(RECIPES, unsafe_fixes=True, isolated=isolated), sliced=False)
        assert sliced.diagnostics and sliced.diagnostics == whole.diagnostics
        assert (sliced.status, sliced.output) == (whole.status, whole.output)


def test_syntax_fissix_rejects_in_an_elided_function_still_skips_the_file():
    text = BUGGY + "\n\ndef positional(a, /):\n    return a\n"
    result = transform(text, "b.py", Options(RECIPES))
    assert result.status == Status.SKIPPED and "positional-only" in result.reason


def test_a_slice_is_never_made_of_text_holding_the_mark():
    text = BUGGY + f"\n\n{slicing.MARK} 3\n"
    tree = ast.parse(text)
    assert slicing.cut(text, tree, [tree.body[-1]]) is None
