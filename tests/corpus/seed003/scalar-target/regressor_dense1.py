"""Gradient x input for a regression model whose last layer is ``Dense(1)``.

Idiom mirrored: attribution code for price/temperature regressors that
writes ``tape.gradient(model(x), x)``: with a single output the sum over
outputs *is* the output.

Correct code, no label: the output width is provably 1 (Sequential built in
this module ending in ``Dense(1)``). The model is linear, so gradient x input
is exact (completeness holds).
"""
import numpy as np
import tensorflow as tf

FEATURES = 5


def build_regressor():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(1, input_shape=(FEATURES,),
                              bias_initializer=tf.keras.initializers.Constant(0.3)),
    ])


def gradient_times_input(model, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        prediction = model(x)
    return tape.gradient(prediction, x) * x


def attribution_case():
    x = tf.constant(np.random.RandomState(0).rand(1, FEATURES), dtype=tf.float32)
    model = build_regressor()
    return {"name": "x", "attributions": gradient_times_input(model, x).numpy(), "input": x.numpy(),
            "f_input": float(model(x)[0, 0]), "f_baseline": float(model(tf.zeros_like(x))[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
