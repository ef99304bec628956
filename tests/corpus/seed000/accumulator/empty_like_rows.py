"""np.empty_like buffer, rows written from one-row slices.

Mirrors per-row "refinement" loops (x_refined = np.empty_like(x); row i =
layer(x[i:i+1])). Each write cuts the tape; np.empty_like is a kind the
issue asks for: safe fix (the slot shape drops the leading 1).
"""
import random

import numpy as np
import tensorflow as tf

B, F = 3, 4


class RowRefiner(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.refine = tf.keras.layers.Dense(F)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        refined = np.empty_like(x)
        for i in range(B):
            refined[i] = self.refine(x[i:i + 1])  # expect: numpy-accumulator safe
        return self.head(refined)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(B, F).astype("float32")
    y = np.random.rand(B, 1).astype("float32")
    model = RowRefiner()
    model(x)
    return model, x, y
