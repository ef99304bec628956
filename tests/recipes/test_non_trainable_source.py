"""non-trainable-source (issue 26): tape.gradient over model.variables /
model.weights, which include non-trainable weights whose gradients are None.
Safe when the gradients are only paired back with the same list by
apply_gradients (both rewritten); unsafe, saying why, where the gradients
are indexed, counted, passed on or returned, or the list is read again. VALID cases give no finding; INVALID ones' findings and
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
    """, "near miss: a model passed in may have layers frozen elsewhere, which tf.keras trains through "
        "model.variables: unsafe", safety="unsafe"),
    invalid("keras_train_step", """
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.norm = tf.keras.layers.BatchNormalization()
            self.out = tf.keras.layers.Dense(1)

        def call(self, x, training=False):
            return self.out(self.norm(x, training=training))

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.compiled_loss(y, self(x, training=True))
            grads = tape.gradient(loss, self.variables)
            self.optimizer.apply_gradients(zip(grads, self.variables))
            return {"loss": loss}
    """, "near miss: self's layers may be frozen by the code that builds the model: unsafe", safety="unsafe"),
    invalid("a_layer_frozen_here", _MODEL + """
    model.layers[0].trainable = False
    grads = tape.gradient(loss, model.variables)
    opt.apply_gradients(zip(grads, model.variables))
    """, "near miss: under tf.keras the frozen layer was trained through model.variables; the fix stops "
        "that: unsafe", safety="unsafe"),
    invalid("list_bound_to_a_name", _MODEL + """
    params = model.variables
    grads = tape.gradient(loss, params)
    opt.apply_gradients(zip(grads, params))
    """, "the list bound first: rewritten at its assignment", safety="safe"),
    invalid("list_bound_and_read_again", _MODEL + """
    params = model.variables
    grads = tape.gradient(loss, params)
    opt.apply_gradients(zip(grads, params))
    print(len(params))
    """, "near miss: the bound list is read elsewhere too", safety="unsafe"),
    invalid("gradients_read_otherwise", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    norms = [tf.norm(g) for g in grads]
    """, "the gradients are read by other code: unsafe", safety="unsafe"),
    invalid("none_is_counted", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    print(sum(g is None for g in grads))
    """, "the code counts the None gradients: the count changes, so unsafe", safety="unsafe"),
    invalid("inline_zip", _MODEL + """
    opt.apply_gradients(zip(tape.gradient(loss, model.variables), model.variables))
    """, "the gradient call inside the zip it is paired in", safety="safe"),
    invalid("in_a_training_loop", """
    model = tf.keras.Sequential([tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.Adam()
    for step in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(tf.ones((4, 2)), training=True))
        grads = tape.gradient(loss, model.variables)
        opt.apply_gradients(zip(grads, model.variables))
    """, "rebound each step, applied each step: the loop's reads see this binding", safety="safe"),
    invalid("mixed_lists", _MODEL + """
    grads = tape.gradient(loss, model.trainable_variables + model.non_trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables + model.non_trainable_variables))
    """, "trainable + non_trainable of one model: both sums become the trainable list", safety="safe"),
    invalid("layer_variables", """
    layer = tf.keras.layers.BatchNormalization()
    opt = tf.keras.optimizers.SGD()
    x = tf.random.normal((8, 3))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x, training=True))
    grads = tape.gradient(loss, layer.variables)
    opt.apply_gradients(zip(grads, layer.variables))
    """, "a layer's variables, applied", safety="safe"),
    invalid("gradients_indexed", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    opt.apply_gradients(zip(grads, model.variables))
    print(grads[0])
    """, "near miss: grads[0] depends on the positions", safety="unsafe"),
    invalid("gradients_returned", """
    def gradients(model, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x, training=True))
        return tape.gradient(loss, model.variables)

    gradients(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.ones((2, 3)))
    """, "near miss: returned, the caller may pair them with model.variables", safety="unsafe"),
    invalid("gradients_passed_on", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    grads = clip_all(grads)
    opt.apply_gradients(zip(grads, model.variables))
    """, "near miss: passed to unknown code (and the zip then pairs its result)", safety="unsafe"),
    invalid("variables_read_again", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    opt.apply_gradients(zip(grads, model.variables))
    names = [v.name for v in model.variables]
    """, "near miss: the list is read elsewhere, it may be lined up with the gradients", safety="unsafe"),
    invalid("zip_in_a_loop", _MODEL + """
    grads = tape.gradient(loss, model.variables)
    for g, v in zip(grads, model.variables):
        v.assign_sub(0.1 * g)
    """, "near miss: the pairs go to a loop, not to an optimizer", safety="unsafe"),
    invalid("zip_with_another_model", _MODEL + """
    other = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    grads = tape.gradient(loss, model.variables)
    opt.apply_gradients(zip(grads, other.variables))
    """, "near miss: zipped with another model's list", safety="unsafe"),
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
    valid("two_owners_mixed", _MODEL + """
    other = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    grads = tape.gradient(loss, model.trainable_variables + other.non_trainable_variables)
    """, "trainable of one, non-trainable of another: not one model's full list"),
    valid("name_of_something_else", _MODEL + """
    params = make_params(model)
    grads = tape.gradient(loss, params)
    """, "a name bound to an unknown call: unknown is not evidence"),
    valid("variables_read_elsewhere", _MODEL + """
    grads = tape.gradient(loss, model.trainable_variables)
    saved = [v.numpy() for v in model.variables]
    """, "model.variables read, not differentiated"),
]
CASES = [dataclasses.replace(case, source=HEADER + case.source) for case in CASES]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    check_case(RECIPE, case)
