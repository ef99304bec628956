"""The kind of an expression, through calls, methods, names and loops."""

import pytest

from recipes._model import Kind

HEADER = """
import numpy as np
import pandas as pd
import tensorflow as tf
from tensorflow import keras
"""

TENSORS = [
    ("n = tf.shape(x)[0]", "tf.shape(x)[0]"),
    ("i = tf.argmax(logits, axis=-1)", "tf.argmax(logits, axis=-1)"),
    ("t = tf.convert_to_tensor(a)", "tf.convert_to_tensor(a)"),
    ("t = tf.compat.v2.reduce_sum(a)", "tf.compat.v2.reduce_sum(a)"),
    ("y = keras.layers.Dense(3)(h)", "keras.layers.Dense(3)(h)"),
    ("m = keras.Sequential([keras.layers.Dense(2)])\ny = m(x)", "m(x)"),
    ("t = tf.ones(3)\nu = t * np.ones(3)", "t * np.ones(3)"),
    ("t = tf.ones(3)\nu = -t", "-t"),
    ("t = tf.ones(3)\nu = t[:, 0]", "t[:, 0]"),
    ("def f(x: tf.Tensor):\n    return x", "x"),
    ("v = tf.Variable(1.0)\nw = v + 1", "v + 1"),
    ("ts = tf.unstack(x)\nfirst = ts[0]", "ts[0]"),
]

ARRAYS = [
    ("a = np.array(data).reshape(-1, 1)", "np.array(data).reshape(-1, 1)"),
    ("a = np.array(data).flatten()", "np.array(data).flatten()"),
    ("a = np.asarray(data).astype('float32')", "np.asarray(data).astype('float32')"),
    ("t = tf.ones(3)\na = t.numpy()", "t.numpy()"),
    ("a = model(x).numpy()", "model(x).numpy()"),
    ("df = pd.read_csv('f.csv')\na = df.values", "df.values"),
    ("df = pd.read_csv('f.csv')\na = df[['x']].to_numpy()", "df[['x']].to_numpy()"),
    ("from numpy import zeros\nbuf = zeros(3)", "zeros(3)"),
    ("a = np.zeros(3)\nb = a + 1", "a + 1"),
    ("a = np.zeros((3, 2))\nb = a[:, 0]", "a[:, 0]"),
    ("m = keras.Sequential([keras.layers.Dense(2)])\np = m.predict(x)", "m.predict(x)"),
    ("g = sess.run(dx).ravel().view(np.float32)", "sess.run(dx).ravel().view(np.float32)"),
    ("def f(y):\n    return y.ravel()", "y.ravel()"),
    ("v = tf.keras.backend.get_value(t)", "tf.keras.backend.get_value(t)"),
    ("y = keras.utils.to_categorical(labels)", "keras.utils.to_categorical(labels)"),
]


@pytest.mark.parametrize("code, expr", TENSORS)
def test_tensor_valued_expressions(snippet, code, expr):
    assert snippet(HEADER, code + "\n").kind(expr).kind in (Kind.TENSOR, Kind.VARIABLE)


@pytest.mark.parametrize("code, expr", ARRAYS)
def test_numpy_valued_expressions(snippet, code, expr):
    assert snippet(HEADER, code + "\n").kind(expr).kind == Kind.NDARRAY


@pytest.mark.parametrize("code, expr, kind", [
    ("n = len(items)", "len(items)", Kind.NUMBER),
    ("n = 3 * 2.0", "3 * 2.0", Kind.NUMBER),
    ("s = 'a' + 'b'", "'a' + 'b'", Kind.STRING),
    ("p = (1, 2)", "(1, 2)", Kind.PYTUPLE),
    ("v = tf.Variable(0.0)", "tf.Variable(0.0)", Kind.VARIABLE),
    ("ds = tf.data.Dataset.from_tensor_slices(x).batch(8)",
     "tf.data.Dataset.from_tensor_slices(x).batch(8)", Kind.DATASET),
    ("d = foo(x)", "foo(x)", Kind.UNKNOWN),
    ("s = tf.random.set_seed(0)", "tf.random.set_seed(0)", Kind.OTHER),
    ("d = x.whatever()", "x.whatever()", Kind.UNKNOWN),
    ("df = pd.DataFrame(x)\ncol = df['a']", "df['a']", Kind.DATAFRAME),
])
def test_other_kinds(snippet, code, expr, kind):
    assert snippet(HEADER, code + "\n").kind(expr).kind == kind


def test_list_comprehension_of_tensors_is_a_python_list_whose_items_are_tensors(snippet):
    s = snippet(HEADER, """
        paths = [tf.constant(i * 0.1) for i in range(10)]
        p = paths[3]
    """)
    value = s.kind("paths", 0)
    assert value.kind == Kind.PYLIST and value.element.kind == Kind.TENSOR
    assert s.kind("paths[3]").kind == Kind.TENSOR
    assert s.kind("paths[1:3]").kind == Kind.PYLIST if "paths[1:3]" in str(s.tree) else True


def test_slice_of_a_list_is_a_list(snippet):
    s = snippet(HEADER, "xs = [tf.ones(1), tf.ones(2)]\nys = xs[1:]\n")
    assert s.kind("xs[1:]").kind == Kind.PYLIST
    assert s.kind("xs[1:]").element.kind == Kind.TENSOR


def test_for_over_a_dataset_gives_tensors(snippet):
    s = snippet(HEADER, """
        ds = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(100).batch(32)
        for x, y in ds:
            use(x, y)
        for batch in ds:
            first = batch[0]
    """)
    assert s.kind("x", -1).kind == Kind.TENSOR
    assert s.kind("y", -1).kind == Kind.TENSOR
    assert s.kind("batch", -1).kind == Kind.DATASET_ELEMENT
    assert s.kind("batch[0]").kind == Kind.TENSOR


def test_for_over_range_and_enumerate_gives_numbers(snippet):
    s = snippet(HEADER, """
        for i in range(10):
            use(i)
        for j, row in enumerate(np.zeros((3, 3))):
            use(j, row)
    """)
    assert s.kind("i", -1).kind == Kind.NUMBER
    assert s.kind("j", -1).kind == Kind.NUMBER
    assert s.kind("row", -1).kind == Kind.NDARRAY


def test_as_numpy_iterator_gives_arrays(snippet):
    s = snippet(HEADER, """
        ds = tf.data.Dataset.from_tensor_slices(x)
        for item in ds.as_numpy_iterator():
            use(item)
    """)
    assert s.kind("item", -1).kind == Kind.NDARRAY


def test_names_follow_reaching_definitions_through_branches(snippet):
    s = snippet(HEADER, """
        if flag:
            v = tf.ones(3)
        else:
            v = tf.zeros(3)
        use(v)
        if flag:
            w = tf.ones(3)
        else:
            w = np.ones(3)
        use(w)
    """)
    assert s.kind("v", -1).kind == Kind.TENSOR
    assert s.kind("w", -1).kind == Kind.UNKNOWN


def test_a_loop_carried_tensor_stays_a_tensor(snippet):
    s = snippet(HEADER, """
        total = tf.zeros(3)
        for step in range(5):
            total = total + tf.ones(3)
        use(total)
    """)
    assert s.kind("total", -1).kind == Kind.TENSOR


def test_augmented_assignment_keeps_the_kind(snippet):
    s = snippet(HEADER, """
        acc = np.zeros(3)
        for t in parts:
            acc += 1
        use(acc)
    """)
    assert s.kind("acc", -1).kind == Kind.NDARRAY


def test_keras_call_inputs_and_train_step_data_are_tensors(snippet):
    s = snippet(HEADER, """
        class Net(keras.Model):
            def call(self, inputs):
                return inputs
            def train_step(self, data):
                x, y = data
                return x
    """)
    assert s.kind("inputs", -1).kind == Kind.TENSOR
    assert s.kind("data", -1).kind == Kind.DATASET_ELEMENT
    assert s.kind("x", -1).kind == Kind.TENSOR


def test_parameter_without_annotation_is_unknown(snippet):
    s = snippet(HEADER, "def f(x):\n    return x\n")
    assert s.kind("x", -1).kind == Kind.UNKNOWN


def test_return_value_of_a_module_function(snippet):
    s = snippet(HEADER, """
        def preprocess(x):
            return np.asarray(x).astype('float32')
        batch = preprocess(raw)
    """)
    assert s.kind("preprocess(raw)").kind == Kind.NDARRAY


def test_tape_gradient_with_a_list_of_sources_is_a_list_of_tensors(snippet):
    s = snippet(HEADER, """
        x = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            y = x * x
        g = tape.gradient(y, [x])
        h = tape.gradient(y, x)
    """)
    value = s.kind("tape.gradient(y, [x])")
    assert value.kind == Kind.PYLIST and value.element.kind == Kind.TENSOR
    assert s.kind("tape.gradient(y, x)").kind == Kind.TENSOR


def test_pasted_snippet_without_imports(snippet):
    s = snippet("a = np.array(x).reshape(2, 2)\nt = tf.shape(a)[0]\n")
    assert s.kind("np.array(x).reshape(2, 2)").kind == Kind.NDARRAY
    assert s.kind("tf.shape(a)[0]").kind == Kind.TENSOR


def test_a_list_filled_by_append_holds_what_was_appended(snippet):
    s = snippet(HEADER, """
        grads = []
        for step in range(8):
            grads.append(tf.ones(3) * step)
        stacked = np.array(grads)
        rows = []
        for step in range(8):
            rows.append(np.zeros(3))
        table = np.stack(rows)
        mixed = []
        mixed.append(np.zeros(3))
        mixed.append(tf.ones(3))
        use(mixed)
    """)
    assert s.kind("grads", -1).element.kind == Kind.TENSOR
    assert s.kind("rows", -1).element.kind == Kind.NDARRAY
    assert s.kind("mixed", -1).kind == Kind.PYLIST
    assert s.kind("mixed", -1).element.kind == Kind.UNKNOWN


def test_unpacked_with_targets_and_starred_targets_do_not_break_inference(snippet):
    s = snippet(HEADER, """
        with make() as (a, b):
            use(a)
        first, *rest = tf.unstack(x)
        use(rest)
    """)
    assert s.kind("a", -1).kind == Kind.UNKNOWN
    assert s.kind("first", -1).kind == Kind.TENSOR
    assert s.kind("rest", -1).kind == Kind.PYLIST


def test_a_name_that_changes_kind_around_a_loop_is_unknown_inside_it(snippet):
    s = snippet(HEADER, """
        total = 0
        for t in tf.unstack(x):
            before = total
            total = total + t
        after = total
    """)
    # first iteration a number, later a tensor: neither can be promised
    assert s.kind("total", 1).kind == Kind.UNKNOWN     # ``before = total``
    assert s.kind("total + t").kind == Kind.TENSOR
    assert s.kind("total", -1).kind == Kind.UNKNOWN    # zero iterations leave the 0
    # asked in the other order: the answer inside the loop must not be one
    # that was only assumed while the answer after it was being worked out
    fresh = snippet(HEADER, """
        total = 0
        for t in tf.unstack(x):
            total = total + t
        after = total
    """)
    assert fresh.kind("total", -1).kind == Kind.UNKNOWN
    assert fresh.kind("total + t").kind == Kind.TENSOR
    assert fresh.kind("total", 2).kind == Kind.UNKNOWN


# --- parameters typed from the calls of their function (likely_kind_of) ------

def test_a_parameter_is_typed_from_every_call_in_the_module_only_on_request(snippet):
    s = snippet(HEADER, """
        def make():
            return tf.data.Dataset.from_tensor_slices((xs, ys)).batch(8)

        def train(model, dataset, epochs=2):
            for xb, yb in dataset:
                use(yb, epochs)

        train(keras.Sequential([keras.layers.Dense(1)]), make())
        train(None, make(), epochs=3)
    """)
    yb = s.node("yb", -1)
    assert not s.model.kind_of(yb).is_known
    assert s.model.likely_kind_of(yb).kind == Kind.TENSOR
    assert s.model.likely_kind_of(s.node("epochs", 1)).kind == Kind.NUMBER  # default and keyword


@pytest.mark.parametrize("calls", [
    "",                                   # never called here
    "run(to_tensor)\n",                   # passed around: called with anything elsewhere
    "to_tensor(*args)\n",                 # arguments not known one by one
    "to_tensor(np.ones(3))\nto_tensor(tf.ones(3))\n",  # different kinds
])
def test_a_parameter_stays_unknown_without_a_complete_set_of_calls(snippet, calls):
    s = snippet(HEADER, "def to_tensor(batch):\n    return batch\n", calls)
    assert not s.model.likely_kind_of(s.node("batch", -1)).is_known


def test_a_method_parameter_is_typed_from_self_calls_past_self(snippet):
    s = snippet(HEADER, """
        class Explainer:
            def explain(self, image):
                return self.score(image * 2)

            def score(self, batch):
                return batch
    """)
    assert s.model.likely_kind_of(s.node("batch", -1)).kind == Kind.UNKNOWN  # image: unknown
    s = snippet(HEADER, """
        class Explainer:
            def explain(self):
                return self.score(tf.ones(3))

            def score(self, batch):
                return batch
    """)
    assert s.model.likely_kind_of(s.node("batch", -1)).kind == Kind.TENSOR


def test_trainable_variables_of_any_model_are_variables(snippet):
    s = snippet(HEADER, """
        def train(model, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            return grads
    """)
    assert s.kind("model.trainable_variables").element.kind == Kind.VARIABLE
    grads = s.kind("grads", -1)
    assert grads.kind == Kind.PYLIST and grads.element.kind == Kind.TENSOR


def test_augmented_assignment_of_a_tensor_stays_a_tensor(snippet):
    s = snippet(HEADER, """
        acc = tf.zeros(3)
        for t in parts:
            acc += 1
        use(acc)
    """)
    assert s.kind("acc", -1).kind == Kind.TENSOR
    assert s.kind("acc", 1).kind == Kind.TENSOR   # the target of ``acc += 1``


@pytest.mark.parametrize("annotation, kind", [
    ("tf.Tensor", Kind.TENSOR),
    ("tf.Variable", Kind.VARIABLE),
    ("np.ndarray", Kind.NDARRAY),
    ("pd.DataFrame", Kind.DATAFRAME),
    ("tf.data.Dataset", Kind.DATASET),
    ("keras.Model", Kind.MODEL),
    ("int", Kind.NUMBER),
    ("Optional[tf.Tensor]", Kind.UNKNOWN),
])
def test_parameter_annotations(snippet, annotation, kind):
    s = snippet(HEADER, f"from typing import List, Optional\ndef f(x: {annotation}):\n    return x\n")
    assert s.kind("x", -1).kind == kind


def test_list_of_tensors_annotation(snippet):
    s = snippet(HEADER, "from typing import List\ndef f(xs: List[tf.Tensor]):\n    return xs[0]\n")
    assert s.kind("xs[0]").kind == Kind.TENSOR


def test_a_function_whose_name_is_also_an_operand_is_not_typed_from_calls(snippet):
    s = snippet(HEADER, """
        def scale(batch):
            return batch

        scale(tf.ones(3))
        power = scale ** 2
    """)
    assert not s.model.likely_kind_of(s.node("batch", -1)).is_known
