"""Integrated gradients written the right way: one named step per iteration.

Idiom mirrored: the keras-io integrated-gradients example's per-step
variant: ``step = baseline + alpha * (x - baseline)`` before the tape,
``tape.watch(step)``, ``model(step)``, ``tape.gradient(out, step)``.

Correct code, no label.
"""
import numpy as np
import tensorflow as tf

FEATURES = 4
STEPS = 32


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(6, activation="tanh", input_shape=(FEATURES,)),
        tf.keras.layers.Dense(1),
    ])


def integrated_gradients(model, x, baseline):
    grads = []
    for alpha in np.linspace(0.0, 1.0, STEPS + 1):
        step = baseline + alpha * (x - baseline)
        with tf.GradientTape() as tape:
            tape.watch(step)
            out = model(step)[:, 0]
        grads.append(tape.gradient(out, step))
    grads = tf.stack(grads)
    return (x - baseline) * tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)


def attribution_case():
    x = tf.constant(np.random.RandomState(5).rand(1, FEATURES), dtype=tf.float32)
    baseline = tf.zeros_like(x)
    model = build_model()
    return {"name": "x", "attributions": integrated_gradients(model, x, baseline).numpy(),
            "input": x.numpy(), "f_input": float(model(x)[0, 0]),
            "f_baseline": float(model(baseline)[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
