"""numpy-on-loss-path (issue 26 item 5): ``.numpy()`` / ``float(t)`` of a
tensor on the loss path in a gradient context keeps the tensor; what the code
does with the NumPy copy takes its tf/keras.ops form from the one table
(recipes/_numpy_calls.py). VALID cases give no finding; INVALID ones' findings
and fix are JSON snapshots under tests/snapshots/numpy-on-loss-path/."""

from __future__ import annotations

import pytest

from migrate.engine import Options, transform
from migrate.registry import all_recipes, resolve
from recipe_cases import check_case, dedent, invalid, params, valid

RECIPE = "numpy-on-loss-path"
IMPORTS = "import numpy as np\nimport tensorflow as tf\n\n\n"

CASES = [
    invalid("tape_body_numpy_math", IMPORTS + dedent("""
        def step(model, x, y):
            with tf.GradientTape() as tape:
                pred = model(x).numpy()
                loss = tf.constant(np.mean(np.square(pred - y)))
            return tape.gradient(loss, model.trainable_variables)
        """), "a tape body computes the loss in NumPy on the prediction's copy", safety="safe"),
    invalid("compiled_loss_astype_mask", IMPORTS + dedent("""
        def masked_loss(y_true, y_pred):
            mask = (y_pred.numpy() > 0.5).astype("float32")
            return tf.reduce_mean(tf.square(y_true - y_pred) * mask)


        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        model.compile(loss=masked_loss, optimizer="adam")
        """), "a loss given to compile: fit traces it, .numpy() raises", safety="safe"),
    invalid("float_per_sample_list", IMPORTS + dedent("""
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


        def step(x, y):
            with tf.GradientTape() as tape:
                logits = model(x)
                losses = []
                for i in range(4):
                    losses.append(float(loss_object(y[i:i + 1], logits[i:i + 1])))
                loss = tf.convert_to_tensor(np.mean(losses), dtype=tf.float32)
            return tape.gradient(loss, model.trainable_variables)
        """), "float() per sample, collected in a list NumPy reduces", safety="safe"),
    invalid("keras_call_numpy", IMPORTS + dedent("""
        class Squash(tf.keras.layers.Layer):
            def build(self, shape):
                self.dense = tf.keras.layers.Dense(4)

            def call(self, x):
                h = self.dense(x).numpy()
                return tf.convert_to_tensor(np.tanh(h).sum(axis=1))
        """), "a Keras call leaves TensorFlow through .numpy()", safety="safe"),
    invalid("custom_gradient_numpy", IMPORTS + dedent("""
        @tf.custom_gradient
        def squared(param, x):
            def grad(dy):
                return dy * x ** 2, dy * 2 * param * x
            return tf.constant(param.numpy() * x.numpy() ** 2), grad
        """), "a custom-gradient function computes its value from NumPy copies", safety="safe"),
    invalid("external_numpy_function", IMPORTS + dedent("""
        def external_score(samples):
            return float(np.mean(np.abs(samples)))


        def loss_with_score(y_true, y_pred):
            return tf.reduce_mean(tf.square(y_pred - y_true)) + external_score(y_pred.numpy())


        def step(model, x, y):
            with tf.GradientTape() as tape:
                loss = loss_with_score(y, model(x))
            return tape.gradient(loss, model.trainable_variables)
        """), "outside code needs NumPy: report the way out", fixable=False),
    invalid("python_branch_on_the_copy", IMPORTS + dedent("""
        def step(model, x, y):
            with tf.GradientTape() as tape:
                pred = model(x).numpy()
                if pred.mean() > 0:
                    pred = pred * 2.0
                loss = tf.reduce_mean(tf.square(tf.constant(pred) - y))
            return tape.gradient(loss, model.trainable_variables)
        """), "a Python `if` on the value: a tensor may not do there", safety="unsafe"),
    invalid("keras3_ops", dedent("""
        import keras
        import numpy as np
        from keras import ops


        def scaled_mse(y_true, y_pred):
            pred = y_pred.numpy()
            return ops.convert_to_tensor(2.0 * np.mean(np.square(pred - y_true)))


        model = keras.Sequential([keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss=scaled_mse)
        """), "Keras 3 code gets keras.ops, never a new import tensorflow", safety="safe"),
    invalid("methods_without_a_tf_form", IMPORTS + dedent("""
        def loss_fn(y_true, y_pred):
            p = y_pred.numpy()
            w = p.astype(some_dtype)
            m = p.mean(dtype=np.float64)
            print(y_pred.numpy().item())
            return tf.reduce_mean(tf.square(y_true - y_pred) * w * m)


        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(loss=loss_fn, optimizer="adam")
        """), "a dtype the recipe cannot name, a keyword tf has not: unsafe; the printed .item() is no finding",
            safety="unsafe"),
    valid("printed_in_the_tape", IMPORTS + dedent("""
        def step(model, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
                print("loss", loss.numpy())
            return tape.gradient(loss, model.trainable_variables)
        """), "printing a NumPy copy leaves TensorFlow on purpose"),
    valid("logged_after_the_gradient", IMPORTS + dedent("""
        def step(model, x, y, history):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            history.append(float(loss.numpy()))
            return grads
        """), "after tape.gradient: the loss is done"),
    valid("evaluation_outside_contexts", IMPORTS + dedent("""
        def evaluate(model, x, y):
            pred = model(x).numpy()
            return np.mean(np.square(pred - y))
        """), "no gradient context: NumPy is what the code wants"),
    valid("float_of_a_count", IMPORTS + dedent("""
        def loss_fn(y_true, y_pred, boxes):
            num_boxes = tf.cast(tf.shape(boxes)[0], tf.float32)
            with tf.GradientTape() as tape:
                total = tf.reduce_sum(tf.square(y_true - y_pred)) / float(3 * num_boxes)
            return total
        """), "float() of a count divides the loss: no gradient to lose"),
    valid("never_read", IMPORTS + dedent("""
        def step(model, x, y):
            with tf.GradientTape() as tape:
                pred = model(x)
                snapshot = pred.numpy()
                loss = tf.reduce_mean(tf.square(pred - y))
            return tape.gradient(loss, model.trainable_variables)
        """), "a copy nobody reads is not on the loss path"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_cases(case):
    check_case(RECIPE, case)


def test_numpy_calls_on_a_tensor_get_one_finding_from_one_recipe():
    """np.mean(t) on a tensor is numpy-accumulator's; a .numpy() copy is this
    recipe's: with both on, each line gets exactly one finding."""
    source = IMPORTS + dedent("""
        def step(model, x, y):
            with tf.GradientTape() as tape:
                out = tf.nn.relu(model(x))
                pooled = np.mean(np.asarray(out), axis=1)
                copy = out.numpy()
                loss = tf.reduce_mean(tf.square(pooled - y)) + tf.constant(np.mean(copy))
            return tape.gradient(loss, model.trainable_variables)
        """)
    result = transform(source, "case.py", Options(tuple(resolve(["numpy-accumulator", RECIPE])), unsafe_fixes=True))
    lines = [(d.line, d.recipe) for d in result.diagnostics]
    assert lines == [(8, "numpy-accumulator"), (9, RECIPE)], lines
    assert "pooled = tf.reduce_mean(out, axis=1)" in result.output
    assert "copy = out\n" in result.output and "tf.reduce_mean(copy)" in result.output


def test_a_numpy_call_on_a_tensor_in_a_compiled_loss_is_numpy_accumulators_with_prechecks_on():
    """Its owner must answer whether or not prechecks run: a loss handed to
    `compile` in a file with no tape, tf.function or Keras call (its
    precheck's text gate did not know `compile`). The `tf.constant` around
    the call goes with it: of a tensor it raises in graph mode."""
    source = IMPORTS + dedent("""
        def loss_fn(y_true, y_pred):
            return tf.constant(np.mean(np.square(y_pred - y_true)))


        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss=loss_fn)
        """)
    result = transform(source, "case.py", Options(tuple(resolve(["numpy-accumulator", RECIPE])), unsafe_fixes=True))
    assert {d.recipe for d in result.diagnostics} == {"numpy-accumulator"}, result.diagnostics
    assert "    return tf.reduce_mean(tf.square(y_pred - y_true))\n" in result.output


def test_a_rewritten_return_leaves_no_recipe_reading_a_stale_node():
    """The copy's NumPy call in a `return` is rewritten in the pass every recipe
    runs in; recipes that ask the model about that return afterwards
    (unconnected-source) saw an emptied power node and crashed."""
    source = dedent('''
        import numpy as np
        import tensorflow as tf


        def loss_fn(y_true, y_pred):
            return tf.reduce_mean(tf.square(y_true - y_pred))


        class Head(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.hidden = tf.keras.layers.Dense(4, activation="tanh")
                self.out = tf.keras.layers.Dense(1)

            def call(self, x):
                y_pred = self.out(self.hidden(x))
                pred = y_pred.numpy()
                return tf.constant(np.tanh(pred))


        def build():
            return Head()


        def training_case():
            np.random.seed(0)
            tf.random.set_seed(0)
            x = np.random.rand(8, 3).astype("float32")
            y = np.random.rand(8, 1).astype("float32")
            model = build()
            model(x)
            return model, x, y, loss_fn


        def step(model, optimizer, x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss


        def train(steps=3):
            model, x, y, _ = training_case()
            optimizer = tf.keras.optimizers.SGD(0.1)
            history = []
            for _ in range(steps):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            step(model, optimizer, x, y)
            return history


        if __name__ == "__main__":
            print(train())
    ''')
    result = transform(source, "head.py", Options(tuple(all_recipes().values())))
    assert result.errors == []
    assert [d.recipe for d in result.diagnostics] == ["numpy-on-loss-path"]


def test_a_value_copied_into_a_numpy_slot_in_a_tape_is_a_log_not_a_finding():
    """``log[i] = pred.numpy()``: recorded into a NumPy buffer on purpose,
    while the loss itself stays a tensor."""
    source = IMPORTS + dedent("""
        def step(model, x, y, i):
            log = np.zeros((4, 2))
            with tf.GradientTape() as tape:
                pred = model(x)
                log[i] = pred.numpy()
                loss = tf.reduce_mean(tf.square(pred - y))
            return tape.gradient(loss, model.trainable_variables)
        """)
    result = transform(source, "case.py", Options(tuple(resolve([RECIPE]))))
    assert not result.errors and not result.diagnostics


@pytest.mark.parametrize("line, recipe, fixed", [
    # a positional axis becomes TensorFlow's axis keyword
    ("pooled = np.mean(out, 1)", "numpy-accumulator", "pooled = tf.reduce_mean(out, axis=1)"),
    # a dtype after the axis: TensorFlow's reduction has none, no fix
    ("pooled = np.mean(out, 1, np.float64)", "numpy-accumulator", None),
    # a .numpy() copy written in the call: this recipe's, once
    ("pooled = np.mean(out.numpy(), axis=1)", RECIPE, "pooled = tf.reduce_mean(out, axis=1)"),
    # a name bound to a copy mixed with the tensor: still this recipe's alone
    ("c = out.numpy() + out\n                pooled = np.mean(c, axis=1)", RECIPE,
     "pooled = tf.reduce_mean(c, axis=1)"),
])
def test_a_numpy_reduction_of_a_tensor_gets_one_finding_and_its_tensorflow_form(line, recipe, fixed):
    source = IMPORTS + dedent(f"""
        def step(model, x, y):
            with tf.GradientTape() as tape:
                out = tf.nn.relu(model(x))
                {line}
                loss = tf.reduce_mean(tf.square(pooled - y))
            return tape.gradient(loss, model.trainable_variables)
        """)
    result = transform(source, "case.py", Options(tuple(resolve(["numpy-accumulator", RECIPE])), unsafe_fixes=True))
    assert [(d.line, d.recipe) for d in result.diagnostics] == [(8, recipe)] and not result.errors
    assert f"        {fixed or line}\n" in result.output
