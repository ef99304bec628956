"""Hand-unrolled two-step recurrence: the second state reads the first.

Idiom mirrored: small unrolled RNN/ODE steps written ``h_1 = ...`` then
``h_2 = h_1 * decay_2 + x_2``, where reading the previous step is the whole
point.

Correct code, no label: the odd operand shares the target's stem (``h``), a
recurrence, and there is no all-``_2`` twin.
"""
import numpy as np
import tensorflow as tf


def unroll(x_1, x_2, decay_1=0.9, decay_2=0.8):
    h_0 = tf.zeros_like(x_1)
    h_1 = h_0 * decay_1 + x_1
    h_2 = h_1 * decay_2 + x_2
    return h_2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    print(unroll(tf.constant(rng.rand(2), tf.float32), tf.constant(rng.rand(2), tf.float32)))
