"""Late fusion: a weighted blend of both branches' predictions.

Idiom mirrored: ensembles / two-branch models that combine
``pred = w_1 * out_1 + w_2 * out_2`` and, for a second head,
``fused_2 = w_2 * out_2 + w_1 * out_1``.

Correct code, no label: several operands of each suffix (a mix on purpose).
"""
import numpy as np
import tensorflow as tf


def fuse(out_1, out_2, w_1=0.3, w_2=0.7):
    fused_1 = w_1 * out_1 + w_2 * out_2
    fused_2 = w_2 * out_2 + w_1 * out_1
    return fused_1, fused_2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    print(fuse(tf.constant(rng.rand(3), tf.float32), tf.constant(rng.rand(3), tf.float32)))
