"""Clean: NumPy preprocessing fills a buffer from NumPy data before training.

Mirrors data-augmentation helpers that build a noisy copy of the batch in
np.zeros_like and then call fit. Only NumPy values are written. No finding.
"""
import random

import numpy as np
import tensorflow as tf

B, F = 4, 3


def augment(batch, scale=0.1):
    noisy = np.zeros_like(batch)
    for i in range(batch.shape[0]):
        noisy[i] = batch[i] + scale * np.random.randn(*batch[i].shape)
    return noisy


if __name__ == "__main__":
    x = np.random.rand(B, F).astype("float32")
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(augment(x), np.random.rand(B, 1), epochs=1, verbose=0)
