"""Branch outputs collected in a list and joined with np.concatenate.

Mirrors multi-branch (inception-like) custom layers that concatenate
branch features with NumPy. Safe fix: tf.concat(branches, axis=-1).
"""
import random

import numpy as np
import tensorflow as tf

F = 4


class Branches(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.branches = [tf.keras.layers.Dense(2) for _ in range(3)]
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        parts = []
        for branch in self.branches:
            parts.append(branch(x))
        joined = np.concatenate(parts, axis=-1)  # expect: numpy-accumulator safe
        return self.head(joined)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(3, F).astype("float32")
    y = np.random.rand(3, 1).astype("float32")
    model = Branches()
    model(x)
    return model, x, y
