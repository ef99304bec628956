"""Clean: a per-sample loop over variable lengths must stay a loop.

Mirrors models that pool each sample over its own valid length
(x[j, :lengths[j]]) and collect the results in a TensorArray. The body is
not a pure layer chain on inputs[j], so it cannot be batched; the code is
already differentiable. No finding.
"""
import random

import numpy as np
import tensorflow as tf

B, T, F = 3, 4, 2
LENGTHS = [2, 4, 3]


class LengthPool(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(3)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        pooled = tf.TensorArray(tf.float32, size=B)
        for j in range(B):
            valid = self.enc(x[j, :LENGTHS[j]])
            pooled = pooled.write(j, tf.reduce_mean(valid, axis=0))
        return self.head(pooled.stack())


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(B, T, F).astype("float32")
    y = np.random.rand(B, 1).astype("float32")
    model = LengthPool()
    model(x)
    return model, x, y
