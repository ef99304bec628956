"""A plain training function: per-sample energies in an np.zeros float64
buffer inside the GradientTape.

Mirrors physics-style (PINN / energy model) loops that evaluate the model
per collocation point and accumulate scalars in NumPy before averaging.
The copies cut the tape: the gradient list is all None. Safe fix: a
float64 TensorArray (values cast), stacked after the loop.
"""
import random

import numpy as np
import tensorflow as tf

N, F = 5, 2


def make_model():
    return tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"),
                                tf.keras.layers.Dense(1)])


def energy_loss(model, points):
    energies = np.zeros(N, dtype=np.float64)
    for k in range(N):
        energies[k] = tf.reduce_sum(tf.square(model(points[k:k + 1])))  # expect: numpy-accumulator safe
    return tf.reduce_mean(tf.cast(energies, tf.float32))


def train(steps=2):
    model = make_model()
    points = tf.random.uniform((N, F))
    opt = tf.keras.optimizers.Adam(0.01)
    model(points)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = energy_loss(model, points)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients([(g, v) for g, v in zip(grads, model.trainable_variables) if g is not None])
    return model


if __name__ == "__main__":
    train()
