"""Sensitivity of a functional-API risk score (one sigmoid unit).

Idiom mirrored: functional models ``out = layers.Dense(1,
activation="sigmoid")(h)``; ``model = Model(inp, out)``; then input
gradients of ``model(x)``.

Correct code, no label: the model's output width is 1.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers


def build_model():
    tf.random.set_seed(0)
    inp = layers.Input(shape=(6,))
    h = layers.Dense(8, activation="relu")(inp)
    out = layers.Dense(1, activation="sigmoid")(h)
    return tf.keras.Model(inp, out)


def risk_sensitivity(model, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        risk = model(x)
    return tape.gradient(risk, x)


if __name__ == "__main__":
    x = tf.constant(np.random.RandomState(0).rand(3, 6), dtype=tf.float32)
    print(risk_sensitivity(build_model(), x))
