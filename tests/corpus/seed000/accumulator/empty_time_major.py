"""np.empty time-major buffer, one row per step, batch size from x.shape[0].

Mirrors seq2seq decoders that collect per-step outputs in a (time, batch,
units) np.empty array. Under fit x.shape[0] is None; eagerly the tape is
cut. A safe TensorArray rewrite exists (size from the static time axis).
"""
import random

import numpy as np
import tensorflow as tf

T, F, U = 3, 4, 6


class Decoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.cell = tf.keras.layers.Dense(U, activation="relu")
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        seq_len = x.shape[1]
        outs = np.empty((seq_len, x.shape[0], U))
        for t in range(seq_len):
            outs[t] = self.cell(x[:, t])  # expect: numpy-accumulator safe
        summary = tf.reduce_max(outs, axis=0)
        return self.head(summary)


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(2, T, F).astype("float32")
    y = np.random.rand(2, 1).astype("float32")
    model = Decoder()
    model(x)
    return model, x, y
