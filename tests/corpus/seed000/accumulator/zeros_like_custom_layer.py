"""Custom layer, np.zeros_like(inputs) buffer written per step on axis 1.

Mirrors custom "step-wise projection" layers that preallocate with
zeros_like of the input. The copy cuts the tape. A correct rewrite exists
(the rank is the input's), so the label is a safe fix.
"""
import random

import numpy as np
import tensorflow as tf

T, F = 4, 3


class StepProjection(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = tf.keras.layers.Dense(F)

    def call(self, inputs):
        projected = np.zeros_like(inputs)
        for t in range(inputs.shape[1]):
            projected[:, t, :] = self.proj(inputs[:, t, :])  # expect: numpy-accumulator safe
        return projected


class Model(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.steps = StepProjection()
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.head(tf.reduce_mean(self.steps(x), axis=1))


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = Model()
    model(x)
    return model, x, y
