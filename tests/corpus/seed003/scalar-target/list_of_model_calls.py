"""Saliency of an ensemble: the outputs of several model calls collected in a
list and differentiated together.

Idiom mirrored: test-time augmentation / ensemble saliency that builds
``outputs = [model(x), model(flipped)]`` and calls ``tape.gradient(outputs, x)``.

Bug: the classifier has 4 outputs per example (built in this module), so the
gradient sums every class of every call.
Label: scalar-target, unsafe (the list is seen: each call gets ``[:, t]``).
"""
import numpy as np
import tensorflow as tf


def build_classifier():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
        tf.keras.layers.Dense(4),
    ])


def ensemble_saliency(model, x, target_class_idx):
    with tf.GradientTape() as tape:
        tape.watch(x)
        outputs = [model(x), model(tf.reverse(x, axis=[1]))]  # expect: scalar-target unsafe
    return tape.gradient(outputs, x)


if __name__ == "__main__":
    np.random.seed(0)
    x = tf.constant(np.random.rand(2, 6), tf.float32)
    print(ensemble_saliency(build_classifier(), x, 1).shape)
