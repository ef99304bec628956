"""Boundary-condition data: converted, logged, then cast a few lines later.

Idiom mirrored: PINN and regression scripts that convert their NumPy arrays
at the top, print a shape, and only then cast to ``"float32"`` (string
dtype) before training.

Label: typed-convert, safe. The cast of the same name comes on a later line
(not the next statement), with nothing in between reading or writing
``x_bc``; the argument is ``np.random`` data.
"""
import numpy as np
import tensorflow as tf


def boundary_data(n=24):
    rng = np.random.RandomState(3)
    raw = rng.uniform(-1.0, 1.0, size=(n, 2))
    x_bc = tf.convert_to_tensor(raw)  # expect: typed-convert safe
    n_points = raw.shape[0]
    print("boundary points:", n_points)
    x_bc = tf.cast(x_bc, dtype="float32")
    return x_bc


def training_case():
    x = boundary_data()
    y = tf.reduce_prod(x, axis=1, keepdims=True)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh", input_shape=(2,)),
                                 tf.keras.layers.Dense(1)])
    return model, x, y


if __name__ == "__main__":
    print(training_case()[1].dtype)
