"""Checks of the engine's speed and safety layers that mutation testing
found unexercised (docs/mutation.md): the cache key covers ``apply``, and
per-step-tape never hoists a random call. Each test fails on the mutant
named in its docstring."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.cache import Cache
from migrate.options import Options
from migrate.registry import all_recipes
from recipe_cases import run_body


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
