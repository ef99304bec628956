"""Subclassed Model, loop index on axis 1 of an np.zeros buffer.

Mirrors the common hand-rolled "time-distributed" encoder in a subclassed
model's call: a (batch, time, units) NumPy buffer filled column by column
with a Dense on inputs[:, t, :]. Each write copies the tensor into NumPy,
so the Dense gets None gradients (fit raises). A safe TensorArray rewrite
exists (written along t, transposed back).
"""
import random

import numpy as np
import tensorflow as tf

T, F, U = 4, 3, 5


class TimeEncoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.units = U
        self.step = tf.keras.layers.Dense(U, activation="tanh")
        self.out = tf.keras.layers.Dense(1)

    def call(self, inputs):
        steps = inputs.shape[1]
        feats = np.zeros((tf.shape(inputs)[0], steps, self.units), dtype=np.float32)
        for t in range(steps):
            feats[:, t, :] = self.step(inputs[:, t, :])  # expect: numpy-accumulator safe
        return self.out(tf.reduce_mean(feats, axis=1))


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = TimeEncoder()
    model(x)
    return model, x, y
