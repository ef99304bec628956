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


def _shape(value):
    """A value as (kind, element shape, items' kinds, width): what a rule decided."""
    if value is None:
        return None
    items = None if value.items is None else tuple(v.kind for v in value.items)
    return value.kind, _shape(value.element), items, value.width


TENSOR = (Kind.TENSOR, None, None, None)


@pytest.mark.parametrize("expr, element", [
    ("tf.data.Dataset.from_tensor_slices((x, y))",
     (Kind.DATASET_ELEMENT, None, (Kind.TENSOR, Kind.TENSOR), None)),
    ("tf.data.Dataset.from_tensors((x, y, z))",
     (Kind.DATASET_ELEMENT, None, (Kind.TENSOR,) * 3, None)),
    ("tf.data.Dataset.from_tensor_slices({'a': x})", (Kind.DATASET_ELEMENT, None, None, None)),
    ("tf.data.Dataset.from_tensor_slices(x)", TENSOR),
    ("tf.data.Dataset.range(3)", TENSOR),
    ("tf.data.TFRecordDataset(files)", TENSOR),
    ("tf.data.TextLineDataset(files)", TENSOR),
    ("tf.data.FixedLengthRecordDataset(files, 4)", TENSOR),
    ("tf.data.Dataset.list_files(pattern)", TENSOR),
    ("tf.data.Dataset.from_generator(gen)", None),
    ("tf.data.Dataset.from_tensor_slices()", None),
])
def test_what_a_dataset_source_yields(snippet, expr, element):
    value = snippet(HEADER, f"ds = {expr}\n").kind(expr)
    assert _shape(value) == (Kind.DATASET, element, None, None)


def test_a_loop_over_a_dataset_of_pairs_unpacks_tensors(snippet):
    s = snippet(HEADER, """
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(2)
        for a, b in ds:
            print(b)
        """)
    assert s.kind("b").kind == Kind.TENSOR


@pytest.mark.parametrize("annotation, value", [
    ("List[tf.Tensor]", (Kind.PYLIST, TENSOR, None, None)),
    ("typing.Tuple[np.ndarray]", (Kind.PYTUPLE, (Kind.NDARRAY, None, None, None), None, None)),
    ("List[Foo]", (Kind.PYLIST, None, None, None)),
    ("list", (Kind.PYLIST, None, None, None)),
    ("tf.Variable", (Kind.VARIABLE, None, None, None)),
    ("keras.Model", (Kind.MODEL, None, None, None)),
    ("Dict[str, tf.Tensor]", (Kind.UNKNOWN, None, None, None)),
    ("Foo", (Kind.UNKNOWN, None, None, None)),
])
def test_annotated_parameters(snippet, annotation, value):
    s = snippet(HEADER, f"""
        import typing
        from typing import Dict, List
        def f(a: {annotation}):
            return a
        """)
    assert _shape(s.kind("a")) == value


CLASSES = """
class Block(keras.layers.Layer):
    def call(self, x):
        return x

class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.head = keras.layers.Dense(4)

    def call(self, x):
        return self.head(x)

class Deeper(Net):
    pass

class Plain:
    pass

"""


@pytest.mark.parametrize("code, expr, value", [
    ("b = Block()", "Block()", (Kind.LAYER, None, None, None)),
    ("n = Net()", "Net()", (Kind.MODEL, None, None, 4)),
    ("n = Deeper()", "Deeper()", (Kind.MODEL, None, None, None)),
    ("p = Plain()", "Plain()", (Kind.OTHER, None, None, None)),
    ("y = Net()(x)", "Net()(x)", (Kind.TENSOR, None, None, 4)),
])
def test_instances_of_classes_of_the_module(snippet, code, expr, value):
    s = snippet(HEADER, CLASSES, code + "\n")
    assert _shape(s.kind(expr)) == value


def test_an_instance_of_a_plain_class_is_named_an_instance(snippet):
    s = snippet(HEADER, CLASSES, "p = Plain()\n")
    assert s.kind("Plain()").what == "instance"


@pytest.mark.parametrize("outputs, width", [
    ("out", 3), ("[out]", 3), ("(out,)", 3), ("[out, out]", None), ("h", 8), ("inp", None),
])
def test_a_functional_model_has_the_width_of_its_one_output(snippet, outputs, width):
    s = snippet(HEADER, f"""
        inp = keras.Input((5,))
        h = keras.layers.Dense(8)(inp)
        out = keras.layers.Dense(3)(h)
        m = keras.Model(inp, {outputs})
        k = keras.Model(inputs=inp, outputs={outputs})
        """)
    assert s.kind("m").width == width and s.kind("k").width == width


def test_the_value_of_each_binding(snippet):
    s = snippet(HEADER, """
        x = tf.ones(3)
        a = np.zeros(3)
        y = x
        b = a
        """)
    kinds = [s.model.binding_kind(s.model.last_assignment(name, s.node(name))).kind for name in "xa"]
    assert kinds == [Kind.TENSOR, Kind.NDARRAY]


CALLED = """
def scaled(x, factor=2.0, *rest, scale, **options):
    return x, factor, rest, scale, options

def typed_by_keyword(x):
    return x

y = scaled(tf.ones(3), scale=tf.ones(1))
z = typed_by_keyword(x=tf.ones(3))
"""


@pytest.mark.parametrize("param, kind", [
    ("x", Kind.TENSOR),  # passed by position
    ("factor", Kind.NUMBER),  # its default
    ("rest", Kind.UNKNOWN),  # after * or ** or keyword-only: not typed from calls
    ("scale", Kind.UNKNOWN),
    ("options", Kind.UNKNOWN),
])
def test_parameters_typed_from_the_calls_in_the_module(snippet, param, kind):
    s = snippet(HEADER, CALLED)
    assert s.model.likely_kind_of(s.node(param, 1)).kind == kind


def test_a_parameter_passed_by_keyword_is_typed_from_it(snippet):
    s = snippet(HEADER, CALLED)
    assert s.model.likely_kind_of(s.node("x", 3)).kind == Kind.TENSOR


def test_a_call_unpacking_arguments_types_nothing(snippet):
    s = snippet(HEADER, "def f(a):\n    return a\n\nf(tf.ones(3))\nf(*xs)\n")
    assert s.model.likely_kind_of(s.node("a", 1)).kind == Kind.UNKNOWN


def test_a_class_attribute_grown_in_place_stays_a_list(snippet):
    s = snippet(HEADER, """
        class Keeper:
            def __init__(self):
                self.seen = []

            def add(self, t):
                self.seen.append(t)

            def all(self):
                return self.seen
        """)
    assert s.kind("self.seen").kind == Kind.PYLIST


def test_a_model_inside_a_sequential_gives_it_no_width(snippet):
    """Only layers are read for the width: a nested model is not (the
    answer stays unknown, never wrong)."""
    s = snippet(HEADER, """
        inner = keras.Sequential([keras.layers.Dense(2)])
        m = keras.Sequential([keras.layers.Dense(3), inner])
        """)
    assert s.kind("m").width is None


@pytest.mark.parametrize("expr, value", [
    ("np.pi", (Kind.NUMBER, None)),
    ("np.newaxis", (Kind.NUMBER, None)),
    ("tf.float32", (Kind.OTHER, "dtype")),
    ("np.int64", (Kind.OTHER, "dtype")),
    ("tf.bfloat16", (Kind.OTHER, "dtype")),
    ("tf.dtypes.string", (Kind.OTHER, "dtype")),
    ("np.float", (Kind.OTHER, "dtype")),
    ("tf.uint8", (Kind.OTHER, "dtype")),
    ("tf.bool", (Kind.OTHER, "dtype")),
    ("np.complex64", (Kind.OTHER, "dtype")),
    ("tf.half", (Kind.OTHER, "dtype")),
    ("tf.floatx", (Kind.OTHER, "module")),
    ("tf.keras", (Kind.OTHER, "module")),
    ("tf.Tensor", (Kind.OTHER, "class")),
    ("tf.random.float32", (Kind.OTHER, "module")),
])
def test_imported_names_used_as_values(snippet, expr, value):
    found = snippet(HEADER, f"v = {expr}\n").kind(expr)
    assert (found.kind, found.what) == value


@pytest.mark.parametrize("index, kind", [
    ("0", Kind.STRING), ("1", Kind.NDARRAY), ("-1", Kind.NDARRAY), ("-2", Kind.STRING),
    ("0x1", Kind.UNKNOWN), ("i", Kind.UNKNOWN), ("-i", Kind.UNKNOWN),
])
def test_an_item_of_a_tuple_by_a_literal_index(snippet, index, kind):
    s = snippet(HEADER, f"pair = ('a', np.zeros(3))\nv = pair[{index}]\n")
    assert s.kind(f"pair[{index}]").kind == kind


@pytest.mark.parametrize("expr, value", [
    ("'text'", (Kind.STRING, None, None, None)),
    ("{'a': 1}", (Kind.OTHER, None, None, None)),
    ("[]", (Kind.PYLIST, None, (), None)),
    ("()", (Kind.PYTUPLE, None, (), None)),
    ("[tf.ones(3) for _ in range(2)]", (Kind.PYLIST, TENSOR, None, None)),
    ("(np.zeros(3))", (Kind.NDARRAY, None, None, None)),
    ("[1, 2.0]", (Kind.PYLIST, (Kind.NUMBER, None, None, None), (Kind.NUMBER, Kind.NUMBER), None)),
    ("(np.zeros(3), 'a')", (Kind.PYTUPLE, (Kind.UNKNOWN, None, None, None),
                            (Kind.NDARRAY, Kind.STRING), None)),
])
def test_literals(snippet, expr, value):
    assert _shape(snippet(HEADER, f"v = {expr}\n").kind(expr)) == value


def test_a_generator_expression_yields_its_element(snippet):
    s = snippet(HEADER, "g = (tf.ones(3) for _ in range(2))\n")
    found = s.kind("(tf.ones(3) for _ in range(2))")
    assert (found.kind, found.what, found.element.kind) == (Kind.OTHER, "generator", Kind.TENSOR)
