"""variable-in-call: variables made on every call or step. VALID cases are
one-time creations; INVALID ones' findings are JSON snapshots under
tests/snapshots/variable-in-call/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, invalid, params, run, valid

RECIPE = "variable-in-call"

CASES = [
    invalid("tf_variable_in_call", """
    import tensorflow as tf


    class Noisy(tf.keras.layers.Layer):
        def call(self, inputs):
            kernel = tf.Variable(tf.random.normal((inputs.shape[-1], 3)))
            return tf.matmul(inputs, kernel)
    """, "a new kernel every call", fixable=False),
    invalid("add_weight_in_call", """
    import tensorflow as tf


    class Scale(tf.keras.layers.Layer):
        def call(self, inputs):
            self.scale = self.add_weight(name="scale", shape=())
            return inputs * self.scale
    """, "add_weight in call", fixable=False),
    invalid("variable_in_train_step", """
    import tensorflow as tf


    class Net(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            temperature = tf.Variable(1.0)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self(x) / temperature - y) ** 2)
            return {"loss": loss}
    """, "a variable per training step", fixable=False),
    invalid("variable_in_a_looped_tape", """
    import tensorflow as tf

    x = tf.ones((2, 3))
    for step in range(10):
        with tf.GradientTape() as tape:
            w = tf.Variable(tf.zeros((3, 1)))
            loss = tf.reduce_sum(tf.matmul(x, w))
        g = tape.gradient(loss, w)
    """, "a tape body run every step", fixable=False),
    invalid("variable_in_a_looped_unnamed_tape", """
    import tensorflow as tf

    x = tf.ones((2, 3))
    for step in range(10):
        with tf.GradientTape():
            w = tf.Variable(tf.zeros((3, 1)))
            loss = tf.reduce_sum(tf.matmul(x, w))
    """, "a tape without `as` is a tape body too: the precheck must let it through", fixable=False),
    valid("made_in_build", """
    import tensorflow as tf


    class Dense(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 3))
            self.bias = tf.Variable(tf.zeros(3))

        def call(self, inputs):
            return tf.matmul(inputs, self.kernel) + self.bias
    """, "build and __init__ run once"),
    valid("guarded_creation", """
    import tensorflow as tf


    class Lazy(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.w = None

        def call(self, inputs):
            if self.w is None:
                self.w = tf.Variable(tf.ones(inputs.shape[-1]))
            return inputs * self.w
    """, "guarded: created on the first call only"),
    valid("tape_once", """
    import tensorflow as tf

    with tf.GradientTape() as tape:
        w = tf.Variable(2.0)
        loss = w * w
    print(tape.gradient(loss, w))
    """, "a tape body run once"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


# each program has one per-step creation (the finding, at ``line``) next to
# one that is not: a receiver other than ``self``, a nested function, a
# class under a module-level ``if`` (no ``if`` between it and its context),
# ``tf.init_scope()``; loops and ``except`` in ``call`` on the way
_ONE_EACH = {
"other_receiver": '''
import tensorflow as tf


class Twin(tf.keras.layers.Layer):
    def call(self, inputs, other):
        w = tf.Variable(1.0)
        other.add_weight(name="k", shape=(1,))
        return inputs * w
''',
"nested_function": '''
import tensorflow as tf


class Lazy(tf.keras.layers.Layer):
    def call(self, inputs):
        w = tf.Variable(1.0)

        def make():
            return tf.Variable(2.0)
        return inputs * w
''',
"class_under_an_if": '''
import tensorflow as tf

if tf.__version__ >= "2":
    class Scale(tf.keras.layers.Layer):
        def call(self, inputs):
            w = tf.Variable(1.0)
            return inputs * w
''',
"init_scope_and_loop_and_except": '''
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def call(self, inputs):
        with tf.init_scope():
            self.v = tf.Variable(0.0)
        for _ in range(2):
            inputs = inputs + 1.0
        try:
            w = tf.Variable(1.0)
        except ValueError:
            w = 1.0
        return inputs * w + self.v
''',
}


@pytest.mark.parametrize("name, line", [("other_receiver", 6), ("nested_function", 6), ("class_under_an_if", 6),
                                        ("init_scope_and_loop_and_except", 11)])
def test_only_the_per_step_creation_is_reported(name, line):
    result = run(_ONE_EACH[name], RECIPE)
    assert [d.line for d in result.diagnostics] == [line]
    assert result.diagnostics[0].message.startswith("`tf.Variable(1.0)` makes a new variable every time")
