"""Meta-learning inner step: gradients w.r.t. a list of variables, watched by index.

Idiom mirrored: MAML-style code that keeps ``weights =
model.trainable_variables`` and writes ``tape.watch(weights[0])`` for the
first kernel before computing the inner loss.

Correct code, no label: a Python list of variables returns the same object
for every ``weights[0]``.
"""
import numpy as np
import tensorflow as tf


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])


def first_kernel_gradient(model, x, y):
    weights = model.trainable_variables
    with tf.GradientTape() as tape:
        tape.watch(weights[0])
        loss = tf.reduce_mean(tf.square(model(x) - y))
    return tape.gradient(loss, weights[0])


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(8, 3), tf.float32)
    print(first_kernel_gradient(build_model(), x, tf.reduce_sum(x, axis=1, keepdims=True)))
