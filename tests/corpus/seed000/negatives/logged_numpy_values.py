"""Clean: `.numpy()` values logged into a buffer inside a train step.

Mirrors eager training loops that record per-batch metrics with
`.numpy()` while the tape is still open. The values are meant to be
NumPy; the loss itself stays a tensor. No finding.
"""
import random

import numpy as np
import tensorflow as tf

BATCHES, F = 3, 2


def train_epoch(model, opt, batches):
    batch_losses = np.zeros(len(batches))
    for i in range(len(batches)):
        x, y = batches[i]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            batch_losses[i] = loss.numpy()
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    return batch_losses.mean()


if __name__ == "__main__":
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    data = [(np.random.rand(2, F).astype("float32"), np.random.rand(2, 1).astype("float32"))
            for _ in range(BATCHES)]
    print(train_epoch(model, tf.keras.optimizers.SGD(0.1), data))
