"""np.copy of the input as the buffer, columns replaced by layer outputs.

Mirrors "residual update" code that copies the input and overwrites some
features with learned ones. The copies cut the tape; np.copy is a kind the
issue asks for: safe fix.
"""
import random

import numpy as np
import tensorflow as tf

B, F = 2, 3


class Residual(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.feature = tf.keras.layers.Dense(1)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        mixed = np.copy(x)
        for j in range(F):
            mixed[:, j] = tf.squeeze(self.feature(x[:, j:j + 1]), axis=-1)  # expect: numpy-accumulator safe
        return self.head(mixed)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(B, F).astype("float32")
    y = np.random.rand(B, 1).astype("float32")
    model = Residual()
    model(x)
    return model, x, y
