"""Gradient of a loss w.r.t. one layer's kernel, watched explicitly.

Idiom mirrored: fine-tuning / meta-learning snippets that watch a variable
through an attribute (``tape.watch(layer.kernel)``) although variables are
watched anyway, then differentiate w.r.t. ``layer.kernel``.

Correct code, no label: an attribute returns the same Variable object every
time; nothing is re-evaluated into a new tensor.
"""
import numpy as np
import tensorflow as tf


def training_case():
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(16, 3), dtype=tf.float32)
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    return model, x, y


def kernel_gradient(model, x, y):
    layer = model.layers[0]
    with tf.GradientTape() as tape:
        tape.watch(layer.kernel)
        loss = tf.reduce_mean(tf.square(model(x) - y))
    return tape.gradient(loss, layer.kernel)


if __name__ == "__main__":
    print(kernel_gradient(*training_case()))
