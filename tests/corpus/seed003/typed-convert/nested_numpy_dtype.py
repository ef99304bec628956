"""Saliency input prepared in one nested call with a NumPy dtype object.

Idiom mirrored: saliency/tf-explain style helpers that flatten a list of
feature rows with ``np.array(rows).flatten()`` and write
``tf.cast(tf.convert_to_tensor(...), np.float32)`` in one line; TF accepts
NumPy dtypes wherever a ``tf.DType`` goes.

Label: typed-convert, safe (the argument is a NumPy method chain; the dtype
``np.float32`` is a float).
"""
import numpy as np
import tensorflow as tf

FEATURES = 6


def as_input(rows):
    flat = tf.cast(tf.convert_to_tensor(np.array(rows).flatten()), np.float32)  # expect: typed-convert safe
    return tf.reshape(flat, (-1, FEATURES))


def training_case():
    rng = np.random.RandomState(1)
    rows = [list(rng.rand(FEATURES)) for _ in range(16)]
    x = as_input(rows)
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh", input_shape=(FEATURES,)),
                                 tf.keras.layers.Dense(1)])
    return model, x, y


if __name__ == "__main__":
    print(training_case()[1].dtype)
