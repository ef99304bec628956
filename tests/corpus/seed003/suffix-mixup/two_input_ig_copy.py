"""Integrated gradients for a two-input model, the second block copied from the first.

Idiom mirrored: two-input IG code (static features + sequence, image +
text) where a per-input block is copy-pasted and renamed ``_1`` -> ``_2``,
one name left behind.

Bug: ``integrated_gradients_2`` uses ``avg_grads_1``.
Label: suffix-mixup, unsafe (the twin statement for ``_1`` uses only ``_1``
names, and ``avg_grads_2`` exists).
"""
import numpy as np
import tensorflow as tf

F = 3
STEPS = 24


def build_model():
    tf.random.set_seed(0)
    a = tf.keras.layers.Input(shape=(F,))
    b = tf.keras.layers.Input(shape=(F,))
    h = tf.keras.layers.Dense(8, activation="tanh")(tf.keras.layers.Concatenate()([a, b]))
    return tf.keras.Model([a, b], tf.keras.layers.Dense(1)(h))


def avg_path_gradient(model, inputs, baselines, which):
    grads = []
    for alpha in np.linspace(0.0, 1.0, STEPS + 1):
        feed = list(inputs)
        step = baselines[which] + alpha * (inputs[which] - baselines[which])
        feed[which] = step
        with tf.GradientTape() as tape:
            tape.watch(step)
            out = model(feed)[:, 0]
        grads.append(tape.gradient(out, step))
    grads = tf.stack(grads)
    return tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)


def explain(model, inputs_1, inputs_2):
    baseline_1 = tf.zeros_like(inputs_1)
    baseline_2 = tf.zeros_like(inputs_2)
    avg_grads_1 = avg_path_gradient(model, [inputs_1, inputs_2], [baseline_1, baseline_2], 0)
    avg_grads_2 = avg_path_gradient(model, [inputs_1, inputs_2], [baseline_1, baseline_2], 1)
    integrated_gradients_1 = (inputs_1 - baseline_1) * avg_grads_1
    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_grads_1  # expect: suffix-mixup unsafe
    return integrated_gradients_1, integrated_gradients_2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    x1 = tf.constant(rng.rand(1, F), dtype=tf.float32)
    x2 = tf.constant(rng.rand(1, F), dtype=tf.float32)
    print(explain(build_model(), x1, x2))
