"""Two-input integrated gradients, each block using its own suffix throughout.

Idiom mirrored: the same two-input IG as real code writes it when the copy
was renamed completely.

Correct code, no label.
"""
import numpy as np
import tensorflow as tf


def finish(inputs_1, inputs_2, avg_grads_1, avg_grads_2):
    baseline_1 = tf.zeros_like(inputs_1)
    baseline_2 = tf.zeros_like(inputs_2)
    integrated_gradients_1 = (inputs_1 - baseline_1) * avg_grads_1
    integrated_gradients_2 = (inputs_2 - baseline_2) * avg_grads_2
    return integrated_gradients_1, integrated_gradients_2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    t = [tf.constant(rng.rand(1, 3), tf.float32) for _ in range(4)]
    print(finish(*t))
