"""np.full buffer (padding value -1) overwritten by per-step Dense outputs.

Mirrors code that pre-fills a score matrix with a sentinel before the
loop. The tape is cut at each write; np.full is a buffer kind the issue
asks for: a safe TensorArray fix is the right answer.
"""
import random

import numpy as np
import tensorflow as tf

T, F, U = 3, 4, 2


class Scorer(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(U)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        steps = x.shape[1]
        scores = np.full((steps, 2, U), -1.0)
        for t in range(steps):
            scores[t] = self.dense(x[:, t, :])  # expect: numpy-accumulator safe
        return self.head(tf.reduce_mean(scores, axis=0))


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = Scorer()
    model(x)
    return model, x, y
