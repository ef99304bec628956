"""Clean: tensors written into NumPy history arrays AFTER the tape closed.

Mirrors custom training loops that log the loss and the gradient norm of
each step into preallocated np.zeros arrays for plotting. Nothing after
the write needs a gradient, so this is not a bug (no finding).
"""
import random

import numpy as np
import tensorflow as tf

STEPS, F = 3, 2


def fit(model, x, y):
    opt = tf.keras.optimizers.Adam(0.01)
    loss_history = np.zeros(STEPS)
    grad_norms = np.zeros(STEPS)
    for step in range(STEPS):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        loss_history[step] = loss
        grad_norms[step] = tf.linalg.global_norm(grads)
    return loss_history, grad_norms


if __name__ == "__main__":
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    fit(model, np.random.rand(4, F).astype("float32"), np.random.rand(4, 1).astype("float32"))
