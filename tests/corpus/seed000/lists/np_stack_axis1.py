"""Functional-style helper: a list of per-step tensors, np.stack(..., axis=1).

Mirrors custom RNN layers that collect step outputs and stack them on the
time axis, written with np.stack instead of tf.stack. Safe fix:
tf.stack(steps, axis=1).
"""
import random

import numpy as np
import tensorflow as tf

T, F, U = 4, 3, 5


class Unrolled(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cell = tf.keras.layers.Dense(U, activation="tanh")

    def call(self, inputs):
        steps = [self.cell(inputs[:, t, :]) for t in range(inputs.shape[1])]
        return np.stack(steps, axis=1)  # expect: numpy-accumulator safe


def build():
    inputs = tf.keras.Input(shape=(T, F))
    seq = Unrolled()(inputs)
    outputs = tf.keras.layers.Dense(1)(tf.keras.layers.GlobalAveragePooling1D()(seq))
    return tf.keras.Model(inputs, outputs)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = build()
    model(x)
    return model, x, y
