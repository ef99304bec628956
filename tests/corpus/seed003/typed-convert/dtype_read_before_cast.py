"""Converted data whose inferred dtype is inspected before the cast.

Idiom mirrored: data-loading code that converts, branches on the inferred
dtype (``if x.dtype == tf.float64: warn``), and only then casts.

Correct code, no label: the converted name is read between the conversion
and the cast, so merging them would change what the check sees.
"""
import warnings

import numpy as np
import tensorflow as tf


def load(values):
    x = tf.convert_to_tensor(np.asarray(values))
    if x.dtype == tf.float64:
        warnings.warn("float64 input; the model runs in float32")
    x = tf.cast(x, tf.float32)
    return x


def training_case():
    x = load(np.random.RandomState(0).rand(10, 2))
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))]), x, y


if __name__ == "__main__":
    print(training_case()[1].dtype)
