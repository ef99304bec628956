"""The model's answers numpy-accumulator used to compute itself (issue 22):
which values may hold a tensor (``may_hold_a_tensor``), the assignments of a
scope, the names a statement binds, which NumPy function a callee names and
how Keras 3 code spells ``keras.ops``."""

import pytest

HEADER = """
    import numpy as np
    import tensorflow as tf
"""

MAY_HOLD = [
    # through a name bound to a TensorFlow call, then arithmetic
    ("def f(x):\n    h = tf.reduce_sum(x)\n    v = h * scale\n    return v\n", "v", True),
    # a helper of the module that returns a tensor
    ("def enc(x):\n    return tf.nn.relu(x)\n\ndef f(x):\n    v = enc(x)\n    return v\n", "v", True),
    # an unknown call fed a tensor: computed from one
    ("def f(x, act):\n    v = act(tf.square(x))\n    return v\n", "v", True),
    # a layer the instance holds, never assigned in this module
    ("class M(tf.keras.Model):\n    def call(self, x):\n        v = self.encoder(x)\n        return v\n", "v", True),
    # a method of the module that returns what a held layer computes
    ("class M(tf.keras.Model):\n    def encode(self):\n        return self.encoder(self.inputs)\n"
     "    def call(self, x):\n        v = self.encode()\n        return v\n", "v", True),
    # a method pasted without its class: `self` is an instance we do not see
    ("def step(self, x):\n    v = self.encoder(x)\n    return v\n", "v", True),
    # the value left TensorFlow
    ("def f(x):\n    v = tf.reduce_sum(x).numpy()\n    return v\n", "v", False),
    ("def f(x):\n    v = float(tf.reduce_sum(x))\n    return v\n", "v", False),
    ("def f(x):\n    v = np.mean(tf.square(x))\n    return v\n", "v", False),
    # a method of the class is no held layer; what it returns decides
    ("class M(tf.keras.Model):\n    def prep(self, x):\n        return np.ones(3)\n"
     "    def call(self, x):\n        v = self.prep(x)\n        return v\n", "v", False),
    # nothing from TensorFlow
    ("def f(x, n):\n    v = x * n\n    return v\n", "v", False),
    # flow-sensitive: the binding that reaches is NumPy's
    ("def f(x):\n    v = tf.square(x)\n    v = np.zeros(3)\n    return v\n", "v", False),
]


@pytest.mark.parametrize("code, name, expected", MAY_HOLD)
def test_may_hold_a_tensor(snippet, code, name, expected):
    s = snippet(HEADER, code)
    assert s.model.may_hold_a_tensor(s.node(name)) is expected


def test_assumed_values_count_as_tensors(snippet):
    s = snippet(HEADER, """
        def f(x):
            buf = np.zeros(3)
            row = buf[0] + 1
            shape = buf.shape
            return row, shape
        """)
    creation = s.node("np.zeros(3)")
    assert not s.model.may_hold_a_tensor(s.node("row"))
    assert s.model.may_hold_a_tensor(s.node("row"), frozenset({id(creation)}))
    assert not s.model.may_hold_a_tensor(s.node("shape"), frozenset({id(creation)}))  # .shape is Python data


def test_assignments_of_a_scope_in_source_order(snippet):
    s = snippet(HEADER, """
        def f(x):
            a = np.zeros(3)
            b, c = 1, 2
            a = tf.convert_to_tensor(a)
            d = e = 0
            for i in range(3):
                g = i
            def inner():
                a = 5
            return a
        """)
    found = s.model.assignments(s.statement("def f"))
    assert {name: [str(v).strip() for v in values] for name, values in found.items()} == {
        "a": ["np.zeros(3)", "tf.convert_to_tensor(a)"], "g": ["i"]}


def test_names_bound_in_a_statement(snippet):
    s = snippet(HEADER, """
        import os.path
        for i, (a, b) in pairs:
            total += a
            with open(p) as fh, ctx() as (u, v):
                buf[i] = b
                obj.attr = 1
        def helper(arg):
            inner = 1
        class K:
            field = 2
        """)
    model = s.model
    assert model.names_bound_in(s.statement("import os.path")) == {"os"}
    assert model.names_bound_in(s.statement("for i")) == {"i", "a", "b", "total", "fh", "u", "v"}
    assert model.names_bound_in(s.statement("def helper")) == {"helper"}
    assert model.names_bound_in(s.statement("class K")) == {"K"}


@pytest.mark.parametrize("imports, callee, expected", [
    ("import numpy as np", "np.zeros", "zeros"),
    ("import numpy as onp", "onp.zeros_like", "zeros_like"),
    ("from numpy import zeros as z", "z", "zeros"),
    ("import numpy as np", "np.random.rand", None),  # not the top level
    ("import numpy as np", "zeros", None),
    ("import tensorflow as tf", "tf.zeros", None),
])
def test_numpy_function(snippet, imports, callee, expected):
    s = snippet(imports + "\n", callee + "\n")
    assert s.model.imports.numpy_function(callee) == expected


@pytest.mark.parametrize("imports, expected", [
    ("import keras\n", "keras.ops"),
    ("from keras import ops\n", "ops"),
    ("import keras as K\n", "K.ops"),
    ("import keras\nimport tensorflow as tf\n", None),  # TensorFlow code: tf.* is spelled
    ("from tensorflow import keras\n", None),
    ("import tf_keras as keras\n", None),
])
def test_keras_ops_only_in_keras_3_code(snippet, imports, expected):
    assert snippet(imports).model.imports.keras_ops == expected
