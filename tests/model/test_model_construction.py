"""What building an instance of a module class touches besides the instance
(``construction_effect``): the reasons a random sample of
``construction.py``'s mutants found unasserted (docs/mutation.md)."""

import pytest

from recipes._model.construction import EFFECT, construction_effect

HEADER = """
import tensorflow as tf
from mylib import Base
"""


def _effect(snippet, code):
    s = snippet(HEADER, code)
    return construction_effect(s.model, s.statement("class Built"))


@pytest.mark.parametrize("code, why", [
    ("class Built:\n    def __init__():\n        pass\n", "a constructor without `self`"),
    ("class Built:\n    def __init__(self):\n        global count\n        count = 1\n",
     "it declares a global"),
    ("class Built(Base):\n    pass\n", "a base class it cannot see into"),
    ("class Built:\n    def __init__(self):\n        self.size = Registry.size = 3\n",
     "`self.size = Registry.size = 3` writes outside the object"),
    ("class Built:\n    cache = {}\n\n    def __init__(self):\n        self.cache['a'] = 1\n",
     "`self.cache['a'] = 1` writes outside the object"),
])
def test_an_effect_outside_the_instance_says_why(snippet, code, why):
    effect = _effect(snippet, code)
    assert effect is not None and effect.kind == EFFECT and effect.why == why


@pytest.mark.parametrize("code", [
    "class Built:\n    def __init__(self):\n        self.size = 3\n",
    "class Built:\n    def __init__(self):\n        self.cache = {}\n        self.cache['a'] = 1\n",
    "class Built(tf.keras.layers.Layer):\n    def __init__(self):\n        super().__init__()\n",
])
def test_a_construction_touching_only_the_instance_has_no_effect(snippet, code):
    assert _effect(snippet, code) is None
