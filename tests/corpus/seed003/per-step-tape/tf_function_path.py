"""Integrated gradients compiled with ``tf.function``, stacked path indexed per step.

Idiom mirrored: users who wrap the IG helper in ``@tf.function`` for speed,
keeping the stacked interpolation and a Python loop over its rows.

Bug: ``interpolated[s]`` is a new tensor at each use; gradient None (in the
graph too).
Label: per-step-tape, safe.
"""
import numpy as np
import tensorflow as tf

FEATURES = 3
STEPS = 32


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(6, activation="tanh", input_shape=(FEATURES,)),
        tf.keras.layers.Dense(1),
    ])


@tf.function
def path_gradients(model, x, baseline):
    alphas = tf.linspace(0.0, 1.0, STEPS + 1)
    interpolated = baseline + alphas[:, tf.newaxis, tf.newaxis] * (x - baseline)
    rows = []
    for s in range(STEPS + 1):
        with tf.GradientTape() as tape:
            tape.watch(interpolated[s])  # expect: per-step-tape safe
            pred = model(interpolated[s])[:, 0]
        rows.append(tape.gradient(pred, interpolated[s]))
    return tf.stack(rows)


def attribution_case():
    x = tf.constant(np.random.RandomState(2).rand(1, FEATURES), dtype=tf.float32)
    baseline = tf.zeros_like(x)
    model = build_model()
    grads = path_gradients(model, x, baseline)
    avg = tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)
    return {"name": "x", "attributions": ((x - baseline) * avg).numpy(), "input": x.numpy(),
            "f_input": float(model(x)[0, 0]), "f_baseline": float(model(baseline)[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
