"""PINN for the 1-D heat equation: collocation points from a NumPy meshgrid.

Idiom mirrored: physics-informed network scripts build their collocation
points with ``np.meshgrid`` + ``np.stack(...).reshape(-1, 2)``, hand them to
``tf.convert_to_tensor`` (which infers float64) and cast to float32 on the
next line, because the network is float32.

Label: typed-convert, safe. ``grid`` is bound to a NumPy method chain in the
same scope and the dtype is a float, so converting once with ``dtype=`` is
exactly equivalent.
"""
import numpy as np
import tensorflow as tf


def collocation_points(n_x=12, n_t=8):
    xs = np.linspace(-1.0, 1.0, n_x)
    ts = np.linspace(0.0, 1.0, n_t)
    grid = np.stack(np.meshgrid(xs, ts), axis=-1).reshape(-1, 2)
    points = tf.convert_to_tensor(grid)  # expect: typed-convert safe
    points = tf.cast(points, tf.float32)
    return points


def build_net():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="tanh", input_shape=(2,)),
        tf.keras.layers.Dense(16, activation="tanh"),
        tf.keras.layers.Dense(1),
    ])


def training_case():
    points = collocation_points()
    target = tf.sin(np.pi * points[:, :1]) * tf.exp(-points[:, 1:])
    return build_net(), points, target


if __name__ == "__main__":
    net, x, y = training_case()
    print(x.dtype, net(x).shape)
