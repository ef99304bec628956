"""np.array(tensor) inside a GradientTape in a tf.function-free training step.

Mirrors training loops that convert the prediction to NumPy "to be safe"
before computing a custom loss. The loss is then constant: gradients are
None. Safe fix: drop the conversion (the tensor itself).
"""
import random

import numpy as np
import tensorflow as tf

F = 3


def step(model, opt, x, y):
    with tf.GradientTape() as tape:
        pred = np.array(model(x))  # expect: numpy-accumulator safe
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients([(g, v) for g, v in zip(grads, model.trainable_variables) if g is not None])
    return loss


if __name__ == "__main__":
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    x = np.random.rand(4, F).astype("float32")
    y = np.random.rand(4, 1).astype("float32")
    model(x)
    step(model, tf.keras.optimizers.SGD(0.1), x, y)
