"""variable-in-call: variables made on every call or step. VALID cases are
one-time creations; INVALID ones' findings are JSON snapshots under
tests/snapshots/variable-in-call/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, invalid, params, valid

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
