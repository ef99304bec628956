"""A hand-written lookup table through ``tensorflow.compat.v2``.

Idiom mirrored: libraries that import ``tensorflow.compat.v2 as tf`` and
build small constant tables from Python lists with convert-then-cast.

Label: typed-convert, safe (a list display of numbers; float32).
"""
import numpy as np
import tensorflow.compat.v2 as tf


def class_weights():
    weights = tf.convert_to_tensor([[1, 2], [3, 5], [8, 13]])  # expect: typed-convert safe
    weights = tf.cast(weights, tf.float32)
    return weights


def training_case():
    table = class_weights()
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(12, 3), dtype=tf.float32)
    y = tf.matmul(x, table)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    return model, x, y


if __name__ == "__main__":
    print(class_weights())
