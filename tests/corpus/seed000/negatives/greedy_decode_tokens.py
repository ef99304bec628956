"""Clean: greedy sampling fills an int32 NumPy token buffer.

Mirrors text-generation loops (char-RNN / seq2seq demos) that write the
argmax token of each step into np.zeros((batch, max_len), int32). This
is inference: no tape, no gradient wanted. No finding.
"""
import random

import numpy as np
import tensorflow as tf

VOCAB, MAX_LEN = 6, 4


def generate(model, start):
    tokens = np.zeros((start.shape[0], MAX_LEN), dtype=np.int32)
    current = start
    for t in range(MAX_LEN):
        logits = model(tf.one_hot(current, VOCAB))
        current = tf.argmax(logits, axis=-1, output_type=tf.int32)
        tokens[:, t] = current
    return tokens


if __name__ == "__main__":
    model = tf.keras.Sequential([tf.keras.layers.Dense(VOCAB)])
    print(generate(model, tf.constant([1, 2])))
