"""Rules of the kind inference that mutation testing found untested
(docs/mutation.md): each case fails when its rule is mutated away, and is
asked through ``model_of(node).kind_of`` only, so it survives a rewrite of
the layer behind it."""

import pytest

from recipes._model import Kind

HEADER = """
import numpy as np
import tensorflow as tf
import keras
"""

# one lower-case op per namespace whose calls make tensors; a namespace
# dropped from the rule turns its op's result into "unknown"
TENSOR_NAMESPACES = [
    "tf.reduce_sum(x)", "tf.math.reduce_sum(x)", "tf.linalg.matmul(x, x)", "tf.nn.relu(x)",
    "tf.image.flip_left_right(x)", "tf.random.normal((2,))", "tf.signal.fft(x)",
    "tf.strings.length(x)", "tf.dtypes.cast(x, tf.float32)", "tf.bitwise.invert(x)",
    "tf.experimental.numpy.sum(x)",
    "tf.io.decode_raw(x, tf.uint8)", "tf.audio.decode_wav(x)", "tf.sets.size(x)",
    "tf.ragged.constant(x)", "keras.ops.sum(x)", "keras.backend.sum(x)",
    "keras.activations.relu(x)", "keras.losses.mse(x, x)", "keras.ops.numpy.sum(x)",
]


@pytest.mark.parametrize("expr", TENSOR_NAMESPACES)
def test_ops_of_tensor_namespaces_make_tensors(snippet, expr):
    assert snippet(HEADER, f"y = {expr}\n").kind(expr).kind == Kind.TENSOR


@pytest.mark.parametrize("expr", ["tf.keras.utils.Progbar(3)", "tf.nn.RNNCellWrapper(c)"])
def test_a_capitalised_name_in_a_tensor_namespace_is_no_tensor(snippet, expr):
    assert snippet(HEADER, f"y = {expr}\n").kind(expr).kind == Kind.OTHER


@pytest.mark.parametrize("expr", ["tf.saved_model.load(p)", "tf.train.latest_checkpoint(p)",
                                  "keras.utils.plot_model(m)"])
def test_ops_outside_the_tensor_namespaces_are_unknown(snippet, expr):
    assert snippet(HEADER, f"y = {expr}\n").kind(expr).kind == Kind.UNKNOWN


@pytest.mark.parametrize("expr", ["tf.make_ndarray(proto)", "tf.get_static_value(t)"])
def test_numpy_results_of_tensorflow_calls(snippet, expr):
    assert snippet(HEADER, f"a = {expr}\n").kind(expr).kind == Kind.NDARRAY


def test_a_tensor_joined_with_a_variable_is_a_tensor(snippet):
    s = snippet(HEADER, """
        if flag:
            x = tf.ones(3)
        else:
            x = tf.Variable(1.0)
        y = x
        """)
    assert s.kind("x").kind == Kind.TENSOR


def test_a_number_joined_with_an_array_is_an_array(snippet):
    s = snippet(HEADER, """
        x = 0.0
        if flag:
            x = np.zeros(3)
        y = x
        """)
    assert s.kind("x").kind == Kind.NDARRAY


def test_a_tensor_joined_with_an_array_is_unknown(snippet):
    s = snippet(HEADER, """
        x = np.zeros(3)
        if flag:
            x = tf.zeros(3)
        y = x
        """)
    assert s.kind("x").kind == Kind.UNKNOWN
