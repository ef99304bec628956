"""Sensitivity of a multi-output regressor built with standalone ``keras``.

Idiom mirrored: Keras 3 era code (``import keras``) computing
``tape.gradient(model(x), x)`` in one line for a model predicting several
quantities at once.

Bug: the gradient sums the sensitivities of all four outputs.
Label: scalar-target, unsafe, default index (no target name in scope).
"""
import numpy as np
import tensorflow as tf
import keras


def build_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([
        keras.Input(shape=(3,)),
        keras.layers.Dense(8, activation="tanh"),
        keras.layers.Dense(4),
    ])


def sensitivity(model, x):
    x = tf.constant(x, dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        grads = tape.gradient(model(x), x)  # expect: scalar-target unsafe
    return grads


if __name__ == "__main__":
    print(sensitivity(build_model(), np.random.RandomState(0).rand(2, 3)))
