"""Integrated gradients with the interpolation path stacked up front.

Idiom mirrored: the TF integrated-gradients tutorial builds all interpolated
inputs with one broadcast; users porting it to "one step at a time" keep the
stacked tensor and index it inside a per-step tape (``tape.watch(path[i])``,
``model(path[i])``, ``tape.gradient(out, path[i])``).

Bug: each ``path[i]`` is a new tensor, the gradient is None.
Label: per-step-tape, safe (the stacked path, the watch, the feed and the
gradient all use ``path[i]``; nothing the step expression reads is assigned
in the loop).
"""
import numpy as np
import tensorflow as tf

FEATURES = 5
STEPS = 32


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="tanh", input_shape=(FEATURES,)),
        tf.keras.layers.Dense(1),
    ])


def integrated_gradients(model, x, baseline, steps=STEPS):
    alphas = np.linspace(0.0, 1.0, steps + 1)
    path = tf.stack([baseline + a * (x - baseline) for a in alphas])
    grads = []
    for i in range(steps + 1):
        with tf.GradientTape() as tape:
            tape.watch(path[i])  # expect: per-step-tape safe
            out = model(path[i])[:, 0]
        grads.append(tape.gradient(out, path[i]))
    grads = tf.stack(grads)
    avg = tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)
    return (x - baseline) * avg


def attribution_case():
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(1, FEATURES), dtype=tf.float32)
    baseline = tf.zeros_like(x)
    model = build_model()
    attributions = integrated_gradients(model, x, baseline)
    return {"name": "x", "attributions": attributions.numpy(), "input": x.numpy(),
            "f_input": float(model(x)[0, 0]), "f_baseline": float(model(baseline)[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
