"""Class-selective input gradient through ``output_gradients``.

Idiom mirrored: saliency code that selects the class by passing a one-hot
mask as ``output_gradients`` instead of slicing the output.

Correct code, no label: the one-hot ``output_gradients`` weights the
outputs, so the result is the gradient of the chosen class only.
"""
import numpy as np
import tensorflow as tf


def build_classifier():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
        tf.keras.layers.Dense(3),
    ])


def class_gradient(model, x, class_idx):
    with tf.GradientTape() as tape:
        tape.watch(x)
        logits = model(x)
    mask = tf.one_hot([class_idx] * x.shape[0], 3)
    return tape.gradient(logits, x, output_gradients=mask)


if __name__ == "__main__":
    x = tf.constant(np.random.RandomState(0).rand(2, 4), tf.float32)
    print(class_gradient(build_classifier(), x, 1))
