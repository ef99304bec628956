"""The buffer is rebound after the loop: buf = tf.convert_to_tensor(buf, dtype=...).

Mirrors code that "fixes" the NumPy buffer by converting it back to a
tensor after the loop, which does not reconnect the tape. The rewrite
covers the conversion too: safe fix.
"""
import random

import numpy as np
import tensorflow as tf

T, F, U = 3, 2, 4


class Converted(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(U)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        steps = x.shape[1]
        codes = np.zeros((steps, 2, U))
        for t in range(steps):
            codes[t] = self.enc(x[:, t])  # expect: numpy-accumulator safe
        codes = tf.convert_to_tensor(codes, dtype=tf.float32)
        return self.head(tf.reduce_mean(codes, axis=0))


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = Converted()
    model(x)
    return model, x, y
