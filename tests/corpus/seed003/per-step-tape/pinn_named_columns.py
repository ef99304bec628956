"""Burgers-equation PINN residual: the input columns are named before the tape.

Idiom mirrored: PINN code that splits the collocation tensor into
``x = X[:, 0:1]`` and ``t = X[:, 1:2]`` *before* the tape, watches both
names and feeds ``tf.concat([x, t], axis=1)``; second derivatives come from
a nested tape.

Correct code, no label: the watched tensors are names, used as names.
"""
import numpy as np
import tensorflow as tf

NU = 0.01 / np.pi


def build_net():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(12, activation="tanh", input_shape=(2,)),
        tf.keras.layers.Dense(12, activation="tanh"),
        tf.keras.layers.Dense(1),
    ])


def residual(net, X):
    x = X[:, 0:1]
    t = X[:, 1:2]
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        outer.watch(t)
        with tf.GradientTape(persistent=True) as inner:
            inner.watch(x)
            inner.watch(t)
            u = net(tf.concat([x, t], axis=1))
        u_x = inner.gradient(u, x)
        u_t = inner.gradient(u, t)
    u_xx = outer.gradient(u_x, x)
    del inner, outer
    return u_t + u * u_x - NU * u_xx


def training_case():
    rng = np.random.RandomState(0)
    X = tf.constant(np.column_stack([rng.uniform(-1, 1, 20), rng.uniform(0, 1, 20)]), dtype=tf.float32)
    y = -tf.sin(np.pi * X[:, :1])
    return build_net(), X, y


if __name__ == "__main__":
    net, X, _ = training_case()
    print(float(tf.reduce_mean(tf.square(residual(net, X)))))
