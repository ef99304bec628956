"""Two-input attribution with bare digit suffixes (``x1``, ``avg1``).

Idiom mirrored: notebook-style code that names things ``x1``/``x2``,
``b1``/``b2``, ``avg1``/``avg2``, with a copied line.

Bug: ``ig2`` uses ``avg1``.
Label (issue 24): none. ``avg1``/``avg2`` are parameters that every call
here feeds with constants: nothing proves they are gradients, and unknown
is not evidence (bare_digit_gradients.py is the same idiom with real
gradients).
"""
import numpy as np
import tensorflow as tf


def combine(x1, x2, avg1, avg2):
    b1 = tf.zeros_like(x1)
    b2 = tf.zeros_like(x2)
    ig1 = (x1 - b1) * avg1
    ig2 = (x2 - b2) * avg1
    return ig1, ig2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    t = [tf.constant(rng.rand(1, 3), tf.float32) for _ in range(4)]
    print(combine(*t))
