"""Rules of the kind inference a random sample of its mutants found unasserted
(docs/mutation.md, ``scripts/mutation.py recipes/_model/kinds.py --sample 200
--seed 1``): builtins, attributes and methods of known values, Keras
constructors, expressions. Each row names the source, the expression asked
and what the model must answer; asked through ``model_of(node).kind_of``."""

import pytest

from recipes._model import Kind
from recipes._model.kinds import keras_base_role

HEADER = """
import numpy as np
import tensorflow as tf
import keras
from tqdm import trange
xs = [tf.ones(3)]
arrays = [np.zeros(3)]
v = tf.Variable(1.0)
t = tf.ones(3)
a = np.zeros(3)
dense = keras.layers.Dense(3)
model = keras.Sequential([keras.layers.Dense(4)])
"""

# (code, expression, kind, element kind or None, what or None)
RULES = [
    # builtins
    ("y = format(t, 'd')", "format(t, 'd')", Kind.STRING, None, None),
    ("y = tuple(xs)", "tuple(xs)", Kind.PYTUPLE, Kind.TENSOR, None),
    ("y = iter(xs)", "iter(xs)", Kind.OTHER, Kind.TENSOR, "iterator"),
    ("y = zip(xs, arrays)", "zip(xs, arrays)", Kind.OTHER, Kind.PYTUPLE, "iterator"),
    ("y = next(iter(xs))", "next(iter(xs))", Kind.TENSOR, None, None),
    ("y = abs(v)", "abs(v)", Kind.TENSOR, None, None),
    ("y = sum(xs)", "sum(xs)", Kind.TENSOR, None, None),
    ("for i in trange(3):\n    pass\n", "trange(3)", Kind.OTHER, Kind.NUMBER, "iterator"),
    # attributes
    ("y = model.layers", "model.layers", Kind.PYLIST, Kind.LAYER, None),
    ("y = model.variables", "model.variables", Kind.PYLIST, Kind.VARIABLE, None),
    ("y = dense.bias", "dense.bias", Kind.VARIABLE, None, None),
    # methods
    ("y = v.assign_add(1.0)", "v.assign_add(1.0)", Kind.TENSOR, None, None),
    ("y = t.get_shape()", "t.get_shape()", Kind.OTHER, None, "shape"),
    ("y = a.fill(0)", "a.fill(0)", Kind.OTHER, None, "none"),
    ("y = model.get_layer('d')", "model.get_layer('d')", Kind.LAYER, None, None),
    ("y = xs.copy()", "xs.copy()", Kind.PYLIST, Kind.TENSOR, None),
    ("y = 'a b'.split()", "'a b'.split()", Kind.PYLIST, Kind.STRING, None),
    ("y = unknown.ravel().tolist()", "unknown.ravel().tolist()", Kind.PYLIST, None, None),
    ("y = unknown.tobytes()", "unknown.tobytes()", Kind.OTHER, None, "bytes"),
    ("y = range(3)[0]", "range(3)[0]", Kind.NUMBER, None, None),
    ("for ch in 'abc':\n    y = ch\n", "ch", Kind.STRING, None, None),
    ("with tf.GradientTape() as tape:\n    z = t * t\ny = tape.jacobian(z, t)\n",
     "tape.jacobian(z, t)", Kind.TENSOR, None, None),
    ("with tf.GradientTape() as tape:\n    z = t * t\ny = tape.watch(t)\n",
     "tape.watch(t)", Kind.UNKNOWN, None, None),
    # functions and classes of the module
    ("def f():\n    pass\ny = f()\n", "f()", Kind.OTHER, None, "none"),
    ("class A:\n    def f(self):\n        return np.zeros(3)\nb = A()\ny = b.f()\nz = b.g()\n",
     "b.g()", Kind.UNKNOWN, None, None),
    ("class A:\n    def f(self):\n        return np.zeros(3)\nb = A()\ny = b.f()\n",
     "b.f()", Kind.NDARRAY, None, None),
    # Keras and TensorFlow constructors
    ("inputs = keras.Input((4,))", "keras.Input((4,))", Kind.TENSOR, None, None),
    ("y = keras.callbacks.EarlyStopping()", "keras.callbacks.EarlyStopping()", Kind.OTHER, None,
     "EarlyStopping"),
    ("y = tf.TensorSpec((3,))", "tf.TensorSpec((3,))", Kind.OTHER, None, "TensorSpec"),
    ("loss = keras.losses.MeanSquaredError()\ny = loss(t, t)", "loss(t, t)", Kind.TENSOR, None, None),
    ("loss = keras.losses.CategoricalCrossentropy()\ny = loss(t, t)", "loss(t, t)", Kind.TENSOR,
     None, None),
    ("loss = keras.losses.Loss()\ny = loss(t, t)", "loss(t, t)", Kind.TENSOR, None, None),
    # expressions
    ("y = -v", "-v", Kind.TENSOR, None, None),
    ("y = not t", "not t", Kind.NUMBER, None, None),
    ("y = t if flag else t + 1", "t if flag else t + 1", Kind.TENSOR, None, None),
    ("y = (z := tf.ones(3))", "z := tf.ones(3)", Kind.TENSOR, None, None),
    ("y = lambda q: q", "lambda q: q", Kind.OTHER, None, "function"),
    ("y = t, a, t", "t, a, t", Kind.PYTUPLE, None, None),
    # names bound by walrus, comprehension, import
    ("if (n := len(xs)):\n    y = n\n", "n", Kind.NUMBER, None, None),
    ("y = [e for e in xs]\n", "e", Kind.TENSOR, None, None),
    ("import os\ny = os\n", "os", Kind.OTHER, None, "module"),
    # the same list grown by insert
    ("ys = []\nys.insert(0, t)\ny = ys\n", "ys", Kind.PYLIST, Kind.TENSOR, None),
]


@pytest.mark.parametrize("code, expr, kind, element, what", RULES, ids=[r[1] for r in RULES])
def test_the_rule_gives_this_value(snippet, code, expr, kind, element, what):
    value = snippet(HEADER, code + "\n").kind(expr)
    assert value.kind == kind, value
    if element is not None:
        assert value.element is not None and value.element.kind == element, value
    assert value.what == what


def test_zip_pairs_the_elements_of_each_argument_in_order(snippet):
    value = snippet(HEADER, "y = zip(xs, arrays)\n").kind("zip(xs, arrays)")
    assert [item.kind for item in value.element.items] == [Kind.TENSOR, Kind.NDARRAY]


def test_a_tuple_knows_each_position_and_stops_at_its_length(snippet):
    s = snippet(HEADER, "pair = t, a\nfirst = pair[0]\nlast = pair[-1]\nout = pair[2]\n")
    assert [item.kind for item in s.kind("pair", 0).items] == [Kind.TENSOR, Kind.NDARRAY]
    assert s.kind("pair[0]").kind == Kind.TENSOR and s.kind("pair[-1]").kind == Kind.NDARRAY
    assert s.kind("pair[2]").kind == Kind.UNKNOWN  # the join of a tensor and an array


def test_an_item_of_a_shape_is_a_number(snippet):
    assert snippet(HEADER, "s = t.get_shape()\nn = s[0]\n").kind("s[0]").kind == Kind.NUMBER


def test_a_keras_functional_model_has_its_output_width(snippet):
    s = snippet(HEADER, """
        inputs = keras.Input((4,))
        m = keras.models.Model(inputs, keras.layers.Dense(3)(inputs))
        y = m.output
        """)
    assert s.kind("m", 0).width == 3
    assert s.kind("m.output").width == 3 and s.kind("m.output").kind == Kind.TENSOR


def test_a_width_keeping_layer_has_the_width_of_what_it_is_fed(snippet):
    s = snippet(HEADER, """
        h = keras.layers.Dense(4)(t)
        y = keras.layers.Dropout(0.5)(h)
        z = keras.layers.Dropout(0.5)(unknown)
        """)
    assert s.kind("y", 0).width == 4
    assert s.kind("z", 0).kind == Kind.TENSOR and s.kind("z", 0).width is None


def test_the_tape_and_numpy_results_know_the_call_that_made_them(snippet):
    s = snippet(HEADER, "with tf.GradientTape() as tape:\n    pass\nb = np.ones(3)\n")
    assert s.kind("tape", 0).origin is s.node("tf.GradientTape()")
    assert s.kind("b", 0).origin is s.node("np.ones(3)")


@pytest.mark.parametrize("path, role", [
    ("keras.Model", "model"), ("keras.layers.Dense", "layer"), ("keras.Layer", "layer"),
    ("tensorflow.Module", None), ("object", None)])
def test_keras_base_roles(path, role):
    assert keras_base_role(path) == role


def test_a_conventional_alias_used_without_its_import_is_the_module(snippet):
    assert snippet("y = np.zeros(3)\nz = np\n").kind("np").what == "module"
