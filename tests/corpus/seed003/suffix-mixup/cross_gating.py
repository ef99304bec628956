"""Cross-gating between two modalities: each stream is gated by the other.

Idiom mirrored: cross-gating modules (video/text retrieval, multimodal
fusion): ``g_1 = sigmoid(W1 x_1)``; ``h_2 = g_1 * x_2``; ``g_2 =
sigmoid(W2 x_2)``; ``h_1 = g_2 * x_1``.

Correct code, no label: the crossing is symmetric (each twin uses the
other's gate), which is the point of the module.
"""
import numpy as np
import tensorflow as tf


class CrossGate(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.proj_1 = tf.keras.layers.Dense(units)
        self.proj_2 = tf.keras.layers.Dense(units)

    def call(self, x_1, x_2):
        g_1 = tf.sigmoid(self.proj_1(x_1))
        g_2 = tf.sigmoid(self.proj_2(x_2))
        h_1 = g_2 * x_1
        h_2 = g_1 * x_2
        return tf.concat([h_1, h_2], axis=-1)


if __name__ == "__main__":
    tf.random.set_seed(0)
    rng = np.random.RandomState(0)
    gate = CrossGate(4)
    print(gate(tf.constant(rng.rand(2, 4), tf.float32), tf.constant(rng.rand(2, 4), tf.float32)))
