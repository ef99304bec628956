"""Two nested loops writing grid[i, j] (pairwise scores).

Mirrors relation networks / pairwise-distance heads that fill an (n, n)
matrix of learned scores entry by entry. The writes cut the tape; the
right answer is a TensorArray over the flattened pairs (safe fix).
"""
import random

import numpy as np
import tensorflow as tf

N, F = 3, 2


class PairScorer(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.pair = tf.keras.layers.Dense(1)

    def call(self, x):
        grid = np.zeros((N, N))
        for i in range(N):
            for j in range(N):
                grid[i, j] = tf.reduce_sum(self.pair(tf.concat([x[:, i], x[:, j]], axis=-1)))  # expect: numpy-accumulator safe
        return tf.reshape(tf.reduce_mean(grid), [1, 1]) + 0.0 * x[:, 0, :1]


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(1, N, F).astype("float32")
    y = np.random.rand(1, 1).astype("float32")
    model = PairScorer()
    model(x)
    return model, x, y
