"""Per-step outputs appended to a list, then np.array(list).

Mirrors the very common "outputs = []; outputs.append(...); return
np.array(outputs)" in a subclassed call (the tf.stack version is the
correct one). np.array copies every tensor: None gradients. Safe fix:
tf.stack(outputs).
"""
import random

import numpy as np
import tensorflow as tf

T, F, U = 3, 2, 4


class ListModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.step = tf.keras.layers.Dense(U)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        outputs = []
        for t in range(x.shape[1]):
            outputs.append(self.step(x[:, t, :]))
        stacked = np.array(outputs)  # expect: numpy-accumulator safe
        return self.head(tf.reduce_mean(stacked, axis=0))


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = ListModel()
    model(x)
    return model, x, y
