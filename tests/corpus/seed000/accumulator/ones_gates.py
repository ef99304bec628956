"""np.ones gate buffer filled with sigmoid scores per step.

Mirrors attention-like gating code that starts from an all-ones vector and
overwrites each entry with a learned gate. Gradients to the scorer are
None. np.ones is a supported buffer kind: safe fix.
"""
import random

import numpy as np
import tensorflow as tf

T, F = 4, 3


class Gated(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.score = tf.keras.layers.Dense(1, activation="sigmoid")

    def call(self, x):
        seq_len = x.shape[1]
        gates = np.ones((seq_len,))
        for t in range(seq_len):
            gates[t] = tf.reduce_mean(self.score(x[:, t, :]))  # expect: numpy-accumulator safe
        return tf.reduce_sum(x, axis=[1, 2])[:, None] * tf.reduce_mean(gates)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = Gated()
    model(x)
    return model, x, y
