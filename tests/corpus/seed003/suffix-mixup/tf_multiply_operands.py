"""Gradient x input for two branches written with ``tf.multiply``/``tf.subtract``.

Idiom mirrored: attribution code that spells arithmetic as TF ops
(``tf.multiply(tf.subtract(x, base), grads)``) for each input of a
siamese or two-tower model.

Bug: ``attr_2`` multiplies by ``grads_1``.
Label: suffix-mixup, unsafe (the operands of ``tf.multiply`` and
``tf.subtract`` count like operators; the twin ``attr_1`` uses only ``_1``).
"""
import numpy as np
import tensorflow as tf


def build_tower():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])


def attributions(tower, x_1, x_2):
    base_1 = tf.zeros_like(x_1)
    base_2 = tf.zeros_like(x_2)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x_1, x_2])
        score = tower(x_1) - tower(x_2)
    grads_1 = tape.gradient(score, x_1)
    grads_2 = tape.gradient(score, x_2)
    attr_1 = tf.multiply(tf.subtract(x_1, base_1), grads_1)
    attr_2 = tf.multiply(tf.subtract(x_2, base_2), grads_1)  # expect: suffix-mixup unsafe
    return attr_1, attr_2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    print(attributions(build_tower(), tf.constant(rng.rand(1, 4), tf.float32),
                       tf.constant(rng.rand(1, 4), tf.float32)))
