"""nondifferentiable-op: a differentiated target that the trainable values
reach only through ops without a gradient. VALID cases are the legitimate
places such ops live (metrics, accuracy beside the loss, indices, labels,
straight-through forms); INVALID ones' findings are JSON snapshots under
tests/snapshots/nondifferentiable-op/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, invalid, params, run_body, valid

RECIPE = "nondifferentiable-op"

HEAD = """
    import numpy as np
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,))])
    x = tf.random.normal((8, 3))
    y = tf.one_hot(tf.random.uniform((8,), maxval=4, dtype=tf.int32), 4)
    """

CASES = [
    invalid("round_in_tape", HEAD + """
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.round(model(x)) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    """, "rounding the prediction inside the loss: the operand is a call, bound to a fresh name in a statement "
         "before so it runs once (unsafe straight-through)", safety="unsafe", fixable=True),
    invalid("round_of_a_call_in_a_conditional_expression", HEAD + """
    train_hard = True
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.round(model(x)) - y)) if train_hard else tf.constant(0.0)
    grads = tape.gradient(loss, model.trainable_variables)
    """, "near miss of the fix: the operand runs only on one branch, so it cannot be bound before the "
         "statement: report only", fixable=False),
    invalid("math_argmax_then_cast", HEAD + """
    with tf.GradientTape() as tape:
        pred = tf.cast(tf.math.argmax(model(x), axis=1), tf.float32)
        loss = tf.reduce_mean(tf.square(pred - tf.cast(tf.argmax(y, 1), tf.float32)))
    grads = tape.gradient(loss, model.trainable_variables)
    """, "tf.math spelling; the argmax of the labels is data, not reported", fixable=False),
    invalid("integer_cast_then_comparison", HEAD + """
    with tf.GradientTape() as tape:
        score = tf.reduce_sum(model(x), axis=1)
        hit = tf.cast(tf.cast(score, tf.int32) > 0, tf.float32)
        loss = tf.reduce_mean(hit)
    grads = tape.gradient(loss, model.trainable_variables)
    """, "the first cut on the path (the integer cast) is the one reported", fixable=False),
    invalid("backend_round_in_compiled_loss", """
    import tensorflow as tf
    from tensorflow.keras import backend as K


    def rounded(y_true, y_pred):
        return K.mean(K.abs(K.round(y_pred) - y_true))


    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(loss=rounded, optimizer="sgd")
    """, "K.round on y_pred in a loss handed to compile: the straight-through form (unsafe)", safety="unsafe",
        fixable=True),
    invalid("argmax_lambda_layer", """
    import tensorflow as tf

    inputs = tf.keras.Input(shape=(6,))
    probs = tf.keras.layers.Dense(4)(inputs)
    index = tf.keras.layers.Lambda(lambda t: tf.cast(tf.argmax(t, axis=-1), tf.float32))(probs)
    model = tf.keras.Model(inputs, index)
    model.compile(loss="mse", optimizer="sgd")
    """, "a Lambda argmax after a trained layer", fixable=False),
    invalid("floor_through_a_helper", HEAD + """
    def hard(p):
        return tf.floor(tf.sigmoid(p) + 0.5)


    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(hard(model(x)) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    """, "a module helper is followed with its argument; the return's operand is bound before it (unsafe "
         "straight-through)", safety="unsafe", fixable=True),
    valid("accuracy_beside_the_loss", HEAD + """
    with tf.GradientTape() as tape:
        logits = model(x)
        loss = tf.reduce_mean(tf.keras.losses.categorical_crossentropy(y, logits, from_logits=True))
        acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1)), tf.float32))
    grads = tape.gradient(loss, model.trainable_variables)
    """, "accuracy does not reach the target"),
    valid("compiled_metric", """
    import tensorflow as tf
    from tensorflow.keras import backend as K


    def rounded_accuracy(y_true, y_pred):
        return K.mean(K.equal(y_true, K.round(y_pred)))


    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(loss="mse", optimizer="sgd", metrics=[rounded_accuracy])
    """, "Keras never differentiates a metric"),
    valid("labels_only", """
    import tensorflow as tf


    def sparse_loss(y_true, y_pred):
        labels = tf.argmax(y_true, axis=-1)
        return tf.keras.losses.sparse_categorical_crossentropy(labels, y_pred, from_logits=True)


    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,))])
    model.compile(loss=sparse_loss, optimizer="sgd")
    """, "the argmax of y_true is data"),
    valid("gather_by_argmax", HEAD + """
    with tf.GradientTape() as tape:
        logits = model(x)
        best = tf.argmax(logits, axis=1)
        loss = -tf.reduce_mean(tf.gather(logits, best, batch_dims=1))
    grads = tape.gradient(loss, model.trainable_variables)
    """, "indices pick from a differentiable tensor"),
    valid("straight_through", HEAD + """
    with tf.GradientTape() as tape:
        p = model(x)
        hard = p + tf.stop_gradient(tf.round(p) - p)
        loss = tf.reduce_mean(tf.square(hard - y))
    grads = tape.gradient(loss, model.trainable_variables)
    """, "the straight-through estimator keeps a live path"),
    valid("mask_times_prediction", HEAD + """
    with tf.GradientTape() as tape:
        p = model(x)
        mask = tf.cast(p > 0.0, tf.float32)
        loss = tf.reduce_mean(mask * p)
    grads = tape.gradient(loss, model.trainable_variables)
    """, "a mask multiplied with a differentiable value"),
    valid("inference_lambda_not_trained", """
    import tensorflow as tf

    inputs = tf.keras.Input(shape=(6,))
    probs = tf.keras.layers.Dense(4)(inputs)
    index = tf.keras.layers.Lambda(lambda t: tf.argmax(t, axis=-1))(probs)
    model = tf.keras.Model(inputs, index)
    print(model.predict(tf.zeros((1, 6))))
    """, "nothing trains in this module"),
    valid("compile_of_another_library", """
    import re

    import tensorflow as tf

    PATTERN = re.compile("[a-z]+")
    inputs = tf.keras.Input(shape=(6,))
    probs = tf.keras.layers.Dense(4)(inputs)
    index = tf.keras.layers.Lambda(lambda t: tf.argmax(t, axis=-1))(probs)
    """, "re.compile trains nothing: an inference-only Lambda"),
    valid("unknown_function_on_the_way", HEAD + """
    from mylib import custom_loss

    with tf.GradientTape() as tape:
        loss = custom_loss(tf.round(model(x)), y)
    grads = tape.gradient(loss, model.trainable_variables)
    """, "a function the model cannot see may differentiate otherwise"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


@pytest.mark.parametrize("op", ["tf.round", "tf.floor", "tf.math.ceil", "tf.sign", "tf.math.rint"])
def test_every_rounding_spelling_names_and_applies_the_straight_through_form(op):
    result = run_body(f"""
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum({op}(model(tf.ones((2, 3)))))
        g = tape.gradient(loss, model.trainable_variables)
        """, RECIPE)
    assert [d.line for d in result.diagnostics] == [8], result.diagnostics
    if op == "tf.sign":  # a threshold, not a rounding: report only
        assert result.output == result.source
        return
    assert "tf.stop_gradient(tf.round(x) - x)" in result.diagnostics[0].message
    # the operand reads a call: bound once to a fresh name, then the straight-through form
    assert "unrounded = model(tf.ones((2, 3)))\n" in result.output
    assert f"(unrounded + tf.stop_gradient({op}(unrounded) - unrounded))" in result.output


def test_a_padding_mask_layer_is_left_alone_and_an_argmax_over_its_own_weights_is_not():
    result = run_body("""
        class PaddingMask(tf.keras.layers.Layer):
            def call(self, token_ids):
                return tf.cast(tf.not_equal(token_ids, 0), tf.float32)


        class Argmaxed(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(3)

            def call(self, x):
                return tf.cast(tf.argmax(self.dense(x), axis=-1), tf.float32)


        ids = tf.keras.Input((5,), dtype="int32")
        model = tf.keras.Model(ids, PaddingMask()(ids))
        model.compile(loss="mse")
        """, RECIPE)
    assert [(d.line, d.message.split("`")[1]) for d in result.diagnostics] == \
        [(17, "tf.argmax(self.dense(x), axis=-1)")]


@pytest.mark.parametrize("rounding, fixed", [
    # a keyword the straight-through form would not carry: report only
    ('tf.round(model(tf.ones((2, 3))), name="r")', None),
    # in parentheses: the operand is still bound before the statement
    ("(tf.round(model(tf.ones((2, 3)))))",
     "loss = tf.reduce_sum(((unrounded + tf.stop_gradient(tf.round(unrounded) - unrounded))))"),
])
def test_the_straight_through_form_only_where_it_keeps_the_call(rounding, fixed):
    result = run_body(f"""
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum({rounding})
        g = tape.gradient(loss, model.trainable_variables)
        """, RECIPE)
    [finding] = result.diagnostics
    assert finding.fixable == bool(fixed)
    assert result.output == result.source if fixed is None else \
        f"    unrounded = model(tf.ones((2, 3)))\n    {fixed}\n" in result.output
