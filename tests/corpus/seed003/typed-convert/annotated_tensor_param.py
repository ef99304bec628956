"""A Keras-style utility with a parameter annotated ``tf.Tensor``.

Idiom mirrored: typed helper functions (``def f(t: tf.Tensor) -> tf.Tensor``)
that defensively call ``tf.convert_to_tensor`` before a cast to float16 for a
mixed-precision branch.

Correct code. Label: typed-convert, report only: the annotation says the
argument is a tensor.
"""
import numpy as np
import tensorflow as tf


def to_half(t: tf.Tensor) -> tf.Tensor:
    return tf.cast(tf.convert_to_tensor(t), tf.float16)  # expect: typed-convert report


def training_case():
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(8, 2), dtype=tf.float32)
    y = tf.cast(to_half(x), tf.float32)[:, :1]
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))]), x, y


if __name__ == "__main__":
    print(to_half(tf.ones((2, 2))).dtype)
