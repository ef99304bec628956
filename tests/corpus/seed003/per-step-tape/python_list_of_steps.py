"""Integrated gradients with the interpolated inputs kept in a Python list.

Idiom mirrored: IG code that builds ``steps = [baseline + a * (x - baseline)
for a in alphas]`` (a list, not ``tf.stack``) and indexes it inside the
tape: ``tape.watch(steps[i])``, ``model(steps[i])``.

Correct code, no label: indexing a Python list returns the same tensor
object each time, so watch, feed and gradient agree.
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
    alphas = np.linspace(0.0, 1.0, STEPS + 1)
    steps = [baseline + a * (x - baseline) for a in alphas]
    grads = []
    for i in range(len(steps)):
        with tf.GradientTape() as tape:
            tape.watch(steps[i])
            out = model(steps[i])[:, 0]
        grads.append(tape.gradient(out, steps[i]))
    grads = tf.stack(grads)
    return (x - baseline) * tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)


def attribution_case():
    x = tf.constant(np.random.RandomState(0).rand(1, FEATURES), dtype=tf.float32)
    baseline = tf.zeros_like(x)
    model = build_model()
    return {"name": "x", "attributions": integrated_gradients(model, x, baseline).numpy(),
            "input": x.numpy(), "f_input": float(model(x)[0, 0]),
            "f_baseline": float(model(baseline)[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
