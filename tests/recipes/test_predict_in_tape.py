"""predict-in-tape: `model.predict(x)` where gradients are recorded becomes
`model(x, training=False)`. VALID cases give no finding; INVALID ones'
findings and fix are JSON snapshots under tests/snapshots/predict-in-tape/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, dedent, invalid, params, run, valid

RECIPE = "predict-in-tape"

HEAD = dedent("""
    import numpy as np
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    x = np.random.rand(4, 3).astype("float32")
    """)


def program(body: str) -> str:
    """HEAD (a model and a NumPy batch), then ``body``."""
    return HEAD + dedent(body)


CASES = [
    invalid("tape_body_arithmetic", program("""
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model.predict(x, verbose=0) - 1.0)
        grads = tape.gradient(loss, model.trainable_variables)
        """), "the result is an operand: safe", safety="safe"),
    invalid("bound_then_tf_ops", program("""
        with tf.GradientTape() as tape:
            probs = model.predict_on_batch(x)
            picked = probs[:, 0]
            loss = -tf.reduce_mean(tf.math.log(tf.nn.softmax(probs)[:, 0]) + picked)
        grads = tape.gradient(loss, model.trainable_variables)
        """), "through a name, integer/slice indexing and tf ops: safe", safety="safe"),
    invalid("self_model_in_train_step", """
        import tensorflow as tf

        class Trainer(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.net = tf.keras.Sequential([tf.keras.layers.Dense(1)])

            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self.net.predict(x) - y))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
        """, "`self.net.predict` in train_step's tape, on a batch of the step's data: safe", safety="safe"),
    invalid("through_helper", program("""
        def forward(net, batch):
            return net.predict(batch, verbose=0)

        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(forward(model, x))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "a helper the tape calls, on a parameter every call passes a model: unsafe", safety="unsafe"),
    invalid("tolist_on_result", program("""
        with tf.GradientTape() as tape:
            values = model.predict(x)
            best = values.tolist()
            loss = tf.reduce_sum(values)
        grads = tape.gradient(loss, model.trainable_variables)
        """), "`.tolist()` needs a NumPy array: unsafe", safety="unsafe"),
    invalid("numpy_on_result", program("""
        with tf.GradientTape() as tape:
            values = model.predict(x)
            loss = tf.reduce_sum(values) + np.max(values)
        grads = tape.gradient(loss, model.trainable_variables)
        """), "`np.max` on it: unsafe", safety="unsafe"),
    invalid("batch_size_given", program("""
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model.predict(x, batch_size=2))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "batch_size changes how the input runs: unsafe", safety="unsafe"),
    invalid("same_model_called_directly", program("""
        with tf.GradientTape() as tape:
            q = model(x)
            target = model.predict(x, verbose=0) * 0.9
            loss = tf.reduce_mean(tf.square(q - target))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "the model is also called directly: predict may be a deliberate stop-gradient", safety="unsafe"),
    invalid("dataset_input", program("""
        data = tf.data.Dataset.from_tensor_slices(x).batch(2)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model.predict(data))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "a dataset cannot be called on: report only", fixable=False),
    invalid("callbacks_given", program("""
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model.predict(x, callbacks=[]))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "callbacks would no longer run: report only", fixable=False),
    invalid("keras_call_of_a_layer", """
        import tensorflow as tf

        class Head(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.inner = tf.keras.Sequential([tf.keras.layers.Dense(2)])

            def call(self, inputs):
                return self.inner.predict(tf.convert_to_tensor(inputs), verbose=0) * 2.0
        """, "in a Keras call, the product returned to Keras, which wants a tensor: safe", safety="safe"),
    valid("predict_outside_any_context", program("""
        preds = model.predict(x, verbose=0)
        print(preds.argmax(axis=1))
        """), "evaluation code: no gradient is recorded there"),
    valid("predict_after_the_tape", program("""
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        preds = model.predict(x, verbose=0)
        """), "after the block closed: evaluation"),
    valid("not_a_keras_model", """
        import tensorflow as tf
        from sklearn.linear_model import LinearRegression

        reg = LinearRegression()
        x = tf.random.normal((4, 3))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = reg.predict(x)
        """, "a receiver the model cannot prove to be Keras"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


def test_the_input_passed_by_keyword_becomes_the_call_argument():
    result = run(program("""
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model.predict(x=x, verbose=0) - 1.0)
        grads = tape.gradient(loss, model.trainable_variables)
        """), RECIPE)
    assert "    loss = tf.reduce_mean(model(x, training=False) - 1.0)\n" in result.output
