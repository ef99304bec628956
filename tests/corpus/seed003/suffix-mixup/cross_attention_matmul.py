"""Bidirectional cross-attention between two sequences with ``tf.matmul``.

Idiom mirrored: co-attention layers (VQA, sentence-pair models): stream 1's
queries attend over stream 2's keys/values and vice versa:
``scores_1 = tf.matmul(q_1, k_2, transpose_b=True)`` ...

Correct code, no label: symmetric crossings, each twin reads the other
stream on purpose.
"""
import numpy as np
import tensorflow as tf


def co_attention(seq_1, seq_2, dim=4):
    q_1, k_1, v_1 = seq_1, seq_1, seq_1
    q_2, k_2, v_2 = seq_2, seq_2, seq_2
    scale = tf.math.sqrt(tf.cast(dim, tf.float32))
    scores_1 = tf.matmul(q_1, k_2, transpose_b=True) / scale
    scores_2 = tf.matmul(q_2, k_1, transpose_b=True) / scale
    attended_1 = tf.matmul(tf.nn.softmax(scores_1, axis=-1), v_2)
    attended_2 = tf.matmul(tf.nn.softmax(scores_2, axis=-1), v_1)
    return attended_1, attended_2


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    a = tf.constant(rng.rand(1, 3, 4), tf.float32)
    b = tf.constant(rng.rand(1, 5, 4), tf.float32)
    print([t.shape for t in co_attention(a, b)])
