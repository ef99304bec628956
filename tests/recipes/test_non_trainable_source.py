"""non-trainable-source (issue 26): tape.gradient over model.variables /
model.weights, which include non-trainable weights whose gradients are None.
Safe when the gradients are only paired back with the same list by
apply_gradients (both rewritten); reported only where the code compares
gradients with None. VALID cases give no finding; INVALID ones' findings and
fix are JSON snapshots under tests/snapshots/non-trainable-source/."""

from __future__ import annotations

import dataclasses

import pytest

from recipe_cases import HEADER, check_case, invalid, params, valid

RECIPE = "non-trainable-source"

_MODEL = """
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)),
                                 tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.SGD(0.1)
    x = tf.random.normal((8, 3))
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True)))
    """

CASES = [
    invalid("applied_with_zip", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    opt.apply_gradients(zip(grads, model.variables))
    """, "applied by an optimizer with the same list: both become trainable_variables", safety="safe"),
    invalid("weights_applied", _MODEL + """
    grads = tape.gradient(loss, model.weights)
    opt.apply_gradients(zip(grads, model.weights))
    """, "weights -> trainable_weights", safety="safe"),
    invalid("model_passed_to_a_step", """
    def step(model, opt, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x, training=True))
        grads = tape.gradient(loss, model.variables)
        opt.apply_gradients(zip(grads, model.variables))

    step(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.optimizers.SGD(), tf.ones((2, 3)))
    """, "every call passes a Keras model", safety="safe"),
    invalid("gradients_read_otherwise", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    norms = [tf.norm(g) for g in grads]
    """, "the gradients are read by other code: unsafe", safety="unsafe"),
    invalid("none_is_counted", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    print(sum(g is None for g in grads))
    """, "the code compares gradients with None: reported only", fixable=False),
    valid("trainable_variables", _MODEL + """
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    """, "already the trainable list"),
    valid("unknown_owner", """
    def step(thing, loss_fn):
        with tf.GradientTape() as tape:
            loss = loss_fn()
        return tape.gradient(loss, thing.variables)
    """, "an object the model cannot type: unknown is not evidence"),
    valid("variables_read_elsewhere", _MODEL + """
    grads = tape.gradient(loss, model.trainable_variables)
    saved = [v.numpy() for v in model.variables]
    """, "model.variables read, not differentiated"),
]
CASES = [dataclasses.replace(case, source=HEADER + case.source) for case in CASES]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    check_case(RECIPE, case)
