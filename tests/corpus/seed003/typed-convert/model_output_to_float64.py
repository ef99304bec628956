"""Evaluating a regressor in float64 for a precise error report.

Idiom mirrored: evaluation code that "makes sure" a model output is a tensor
with ``tf.convert_to_tensor(model(x))`` and then casts it to float64 for
metrics.

Correct code (no gradient involved). Label: typed-convert, report only: a
model output is a tensor; folding the cast into ``convert_to_tensor`` would
raise ValueError.
"""
import numpy as np
import tensorflow as tf


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                tf.keras.layers.Dense(1)])


def precise_error(model, x, y):
    pred = tf.convert_to_tensor(model(x))  # expect: typed-convert report
    pred = tf.cast(pred, tf.float64)
    return tf.reduce_mean(tf.abs(pred - y))


def training_case():
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(10, 3), dtype=tf.float32)
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    return build_model(), x, y


if __name__ == "__main__":
    model, x, y = training_case()
    print(float(precise_error(model, x, tf.cast(y, tf.float64))))
