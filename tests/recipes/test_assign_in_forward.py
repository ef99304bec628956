"""assign-in-forward: an assign of a differentiable value in the forward
pass whose variable is then read on the way to the target. VALID cases are
legitimate state updates; INVALID ones' findings are JSON snapshots under
tests/snapshots/assign-in-forward/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, invalid, params, valid

RECIPE = "assign-in-forward"

CASES = [
    invalid("input_stored_in_a_weight", """
    import tensorflow as tf


    class Energy(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(), initializer="ones")

        def call(self, x):
            self.w.assign(x)
            return -0.5 * self.w ** 2
    """, "the call's output reads the weight the input was copied into", fixable=False),
    invalid("assign_add_in_tape", """
    import tensorflow as tf

    v = tf.Variable(1.0)
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        v.assign_add(x)
        loss = v * v
    print(t.gradient(loss, x))
    """, "an inner step with assign_add, then the variable read by the target", fixable=False),
    invalid("fast_weights_copied_into_a_model", """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    copy = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    x = tf.ones((4, 1))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner_loss = tf.reduce_mean(model(x))
        grads = inner.gradient(inner_loss, model.trainable_variables)
        for fast, w, g in zip(copy.trainable_variables, model.trainable_variables, grads):
            fast.assign(w - 0.1 * g)
        outer_loss = tf.reduce_mean(copy(x))
    print(outer.gradient(outer_loss, model.trainable_variables))
    """, "MAML: the copy's weights assigned, then the copy called", fixable=False),
    valid("moving_average", """
    import tensorflow as tf


    class Norm(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.moving_mean = self.add_weight(name="m", shape=input_shape[-1:], trainable=False)

        def call(self, x, training=False):
            if training:
                mean = tf.reduce_mean(x, axis=0)
                self.moving_mean.assign(0.9 * self.moving_mean + 0.1 * mean)
                return x - mean
            return x - self.moving_mean
    """, "BatchNorm-like: the moving average is read only where no assign reaches"),
    valid("counter", """
    import tensorflow as tf


    class Counting(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.calls = self.add_weight(name="calls", shape=(), trainable=False)

        def call(self, x):
            self.calls.assign_add(1.0)
            return x * self.calls
    """, "the assigned value is not differentiable"),
    valid("optimizer_step_after_gradient", """
    import tensorflow as tf

    w = tf.Variable(1.0)
    for step in range(3):
        with tf.GradientTape() as tape:
            loss = (w * 3.0 - 1.0) ** 2
        g = tape.gradient(loss, w)
        w.assign_sub(0.1 * g)
    """, "a manual SGD step after the gradient, outside the tape"),
    valid("state_after_the_target", """
    import tensorflow as tf

    w = tf.Variable(1.0)
    last = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        loss = w * 2.0
        last.assign(loss)
    g = tape.gradient(loss, w)
    """, "the assign comes after the target, which does not read it"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)
