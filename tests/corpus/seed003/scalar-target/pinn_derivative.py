"""PINN: du/dx of a scalar field network for an ODE residual.

Idiom mirrored: physics-informed code ``u = model(x)`` then
``u_x = tape.gradient(u, x)`` where the network predicts one field value per
point (final ``Dense(1)``): the per-point derivative is what the sum gives.

Correct code, no label.
"""
import numpy as np
import tensorflow as tf


def build_net():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="tanh", input_shape=(1,)),
        tf.keras.layers.Dense(16, activation="tanh"),
        tf.keras.layers.Dense(1),
    ])


def ode_residual(model, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        u = model(x)
    u_x = tape.gradient(u, x)
    return u_x + u


def training_case():
    x = tf.constant(np.linspace(0.0, 1.0, 16).reshape(-1, 1), dtype=tf.float32)
    return build_net(), x, tf.exp(-x)


if __name__ == "__main__":
    model, x, _ = training_case()
    print(float(tf.reduce_mean(tf.square(ode_residual(model, x)))))
