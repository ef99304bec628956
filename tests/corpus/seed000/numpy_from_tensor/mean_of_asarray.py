"""NumPy reductions of a tensor inside call: np.mean(np.asarray(h), axis=1).

Mirrors pooling written with NumPy in a subclassed model (often copied
from preprocessing code). The result is a constant to the tape. Safe fix:
tf.reduce_mean(h, axis=1).
"""
import random

import numpy as np
import tensorflow as tf

T, F, U = 3, 2, 4


class MeanPool(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(U)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        h = self.enc(x)
        pooled = np.mean(np.asarray(h), axis=1)  # expect: numpy-accumulator safe
        return self.head(pooled)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = MeanPool()
    model(x)
    return model, x, y
