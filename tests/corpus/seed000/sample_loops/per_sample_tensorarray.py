"""A user-written per-sample TensorArray loop over tf.shape(x)[0].

Mirrors models that reshape each sample to a batch of one and run the
encoder per sample (a habit from NumPy code). Correct but one layer call
per sample; vectorize-sample-loop batches it (unsafe: a batch-dependent
layer would differ).
"""
import random

import numpy as np
import tensorflow as tf

B, F, U = 3, 4, 2


class PerSample(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.units = U
        self.enc = tf.keras.layers.Dense(U)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        batch_size = tf.shape(x)[0]
        codes = tf.TensorArray(tf.float32, size=batch_size)
        for j in range(batch_size):  # expect: vectorize-sample-loop unsafe
            sample = tf.reshape(x[j], [1, F])
            codes = codes.write(j, tf.reshape(self.enc(sample), [self.units]))
        return self.head(codes.stack())


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(B, F).astype("float32")
    y = np.random.rand(B, 1).astype("float32")
    model = PerSample()
    model(x)
    return model, x, y
