"""buf[i, cols] writes: a learned block into selected columns of each row.

Mirrors feature-assembly code that writes layer outputs into a column
slice (cols = slice(0, k)) of a wider NumPy matrix. The tape is cut; the
issue lists buf[i, cols] among the write shapes: safe fix.
"""
import random

import numpy as np
import tensorflow as tf

N, F, K = 2, 3, 4


class Assembler(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.block = tf.keras.layers.Dense(K)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        cols = slice(0, K)
        table = np.zeros((N, K + 1))
        for i in range(N):
            table[i, cols] = tf.reshape(self.block(x[i:i + 1]), [K])  # expect: numpy-accumulator safe
        return self.head(table)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(N, F).astype("float32")
    y = np.random.rand(N, 1).astype("float32")
    model = Assembler()
    model(x)
    return model, x, y
