"""Per-modality deltas for IG written with ``tf.math.subtract``.

Idiom mirrored: multimodal explainers (``image_1``/``image_2`` for two
camera views) that write ``tf.math.subtract(image_2, baseline_1)`` after
copying the first view's line.

Bug: the second view's delta subtracts the first view's baseline.
Label (issue 24): none. A wrong baseline is a real bug, but suffix-mixup is
stated over gradient data flow: this line multiplies by no gradient, so it
is not a suffix-mixup finding (the former label came from the name rule).
"""
import numpy as np
import tensorflow as tf


def deltas(image_1, image_2):
    baseline_1 = tf.fill(tf.shape(image_1), 0.5)
    baseline_2 = tf.zeros_like(image_2)
    delta_1 = tf.math.subtract(image_1, baseline_1)
    delta_2 = tf.math.subtract(image_2, baseline_1)
    return delta_1, delta_2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    print(deltas(tf.constant(rng.rand(2, 2), tf.float32), tf.constant(rng.rand(2, 2), tf.float32)))
