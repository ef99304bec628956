"""unconnected-source: gradients with respect to a source the target never
reads, and trainable weights nothing reads. VALID cases are connected
sources and the cases the walk cannot prove; INVALID ones' findings and
fixes are JSON snapshots under tests/snapshots/unconnected-source/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, invalid, params, run, valid

RECIPE = "unconnected-source"

GRAD_CAM = """
    import numpy as np
    import tensorflow as tf

    inputs = tf.keras.Input((8, 8, 1))
    conv = tf.keras.layers.Conv2D(4, 3, name="last_conv")(inputs)
    out = tf.keras.layers.Dense(3)(tf.keras.layers.GlobalAveragePooling2D()(conv))
    model = tf.keras.Model(inputs, out)
    grad_model = tf.keras.Model(inputs, [conv, out])
    image = np.random.rand(1, 8, 8, 1).astype("float32")
    """

CASES = [
    invalid("unused_variable_in_the_list", """
    import tensorflow as tf

    a = tf.Variable(2.0)
    b = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = a * a
    grads = tape.gradient(y, [a, b])
    """, "b takes no part in y: zeros offered (unsafe: the weight still never trains)", safety="unsafe"),
    invalid("gradcam_second_call", GRAD_CAM + """
    with tf.GradientTape() as tape:
        conv_out, _ = grad_model(image)
        preds = model(image)
        score = preds[:, 0]
    grads = tape.gradient(score, conv_out)
    """, "the activation comes from a second model call: the real bug, no fix", fixable=False),
    invalid("attribution_of_an_unused_input", """
    import tensorflow as tf

    first = tf.ones((1, 3))
    second = tf.ones((1, 3))
    dense = tf.keras.layers.Dense(1)
    with tf.GradientTape() as tape:
        tape.watch([first, second])
        score = dense(first)
    g_first, g_second = tape.gradient(score, [first, second])
    """, "attribution w.r.t. an input that does not matter: zeros offered (unsafe)", safety="unsafe"),
    invalid("unused_weight", """
    import tensorflow as tf


    class Cell(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(input_shape[-1], 3))
            self.spare = self.add_weight(name="spare", shape=(3,))

        def call(self, inputs):
            return tf.matmul(inputs, self.w)


    layer = Cell()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(tf.ones((2, 4))))
    print(tape.gradient(loss, layer.trainable_variables))
    """, "a weight call never reads: its statement removed (unsafe)", safety="unsafe"),
    invalid("unused_weight_alone_in_build", """
    import tensorflow as tf


    class Shift(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.spare = self.add_weight(name="spare", shape=(3,))

        def call(self, inputs):
            return inputs + 1.0


    layer = Shift()
    layer.compile(loss="mse")
    """, "the only statement of build: removed, a pass left", safety="unsafe"),
    invalid("unused_weight_sharing_its_line", """
    import tensorflow as tf


    class Cell(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(input_shape[-1], 3))
            self.spare = self.add_weight(name="spare", shape=(3,)); self.ready = True

        def call(self, inputs):
            return tf.matmul(inputs, self.w)


    layer = Cell()
    layer.compile(loss="mse")
    """, "another statement on its line: report only", fixable=False),
    valid("weight_read_through_getattr", """
    import tensorflow as tf


    class Cell(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.spare = self.add_weight(name="spare", shape=(3,))

        def call(self, inputs):
            return inputs * getattr(self, "spare")


    layer = Cell()
    layer.compile(loss="mse")
    """, "getattr reads it: no finding, so no removal"),
    valid("weight_read_in_another_method", """
    import tensorflow as tf


    class Cell(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.spare = self.add_weight(name="spare", shape=(3,))

        def call(self, inputs):
            return inputs * 2.0

        def penalty(self):
            return tf.reduce_sum(self.spare)


    layer = Cell()
    layer.compile(loss="mse")
    """, "another method reads it (a regularizer, a callback's hook): no finding"),
    invalid("unused_variable_and_tensor", """
    import tensorflow as tf

    a = tf.Variable(2.0)
    b = tf.Variable(3.0)
    x = tf.ones((2,))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = a * a
    grads = tape.gradient(y, [a, b, x])
    """, "a variable among the unconnected sources: the variable's message, zeros unsafe", safety="unsafe"),
    valid("gradcam_one_call", GRAD_CAM + """
    with tf.GradientTape() as tape:
        conv_out, preds = grad_model(image)
        score = preds[:, 0]
    grads = tape.gradient(score, conv_out)
    """, "one call outputs both"),
    valid("connected_variables", """
    import tensorflow as tf

    a = tf.Variable(2.0)
    b = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = a * b
    grads = tape.gradient(y, [a, b])
    """, "both take part"),
    valid("variable_behind_a_model", """
    import tensorflow as tf

    scale = tf.Variable(2.0)
    model = tf.keras.Sequential([tf.keras.layers.Lambda(lambda t: t * scale)])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(model(tf.ones((1, 2))))
    print(tape.gradient(y, scale))
    """, "a model may read a variable: not provable"),
    valid("unwatched_constant", """
    import tensorflow as tf

    ones = tf.ones([2])
    with tf.GradientTape() as tape:
        y = tf.constant(3.0)
    print(tape.gradient(y, ones))
    """, "nothing differentiable reaches the target: another cause (unwatched-source)"),
    valid("weight_read_in_call", """
    import tensorflow as tf


    class Cell(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(input_shape[-1], 3))
            self.frozen = self.add_weight(name="frozen", shape=(3,), trainable=False)

        def call(self, inputs):
            return tf.matmul(inputs, self.w)


    layer = Cell()
    layer.compile(loss="mse")
    """, "every trainable weight is read; a frozen one needs no gradient"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)




@pytest.mark.parametrize("source, last_line, message", [
    # TensorFlow imported without an alias: the fix spells it the same way
    ("""
    import tensorflow

    a = tensorflow.Variable(2.0)
    b = tensorflow.Variable(3.0)
    with tensorflow.GradientTape() as tape:
        y = a * a
    grads = tape.gradient(y, [a, b])
    """, "grads = tape.gradient(y, [a, b], unconnected_gradients=tensorflow.UnconnectedGradients.ZERO)",
     "if zeros are wanted, pass `unconnected_gradients=tensorflow.UnconnectedGradients.ZERO`"),
    # a variable target, a tensor source: the tensor's message
    ("""
    import tensorflow as tf

    v = tf.Variable(2.0)
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = v * v
    grads = tape.gradient(v, [x])
    """, "grads = tape.gradient(v, [x], unconnected_gradients=tf.UnconnectedGradients.ZERO)",
     "If zeros are the wanted answer (an input that does not matter)"),
    # a regularized weight: its regularizer reads it, so it is not unused
    ("""
    import tensorflow as tf


    class Cell(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(input_shape[-1], 3))
            self.spare = self.add_weight(name="spare", shape=(3,), regularizer="l2")

        def call(self, inputs):
            return tf.matmul(inputs, self.w)


    layer = Cell()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(tf.ones((2, 4))))
    print(tape.gradient(loss, layer.trainable_variables))
    """, None, None),
], ids=["unaliased_tensorflow", "variable_target_tensor_source", "regularized_weight"])
def test_what_the_finding_says_and_fixes_follows_the_sources(source, last_line, message):
    result = run(source, RECIPE)
    if last_line is None:
        assert not result.diagnostics
        return
    [finding] = result.diagnostics
    assert result.output.splitlines()[-1] == last_line and message in finding.message
