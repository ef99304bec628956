"""Two-stream projection with ``tf.matmul``; the second stream uses the first's weights.

Idiom mirrored: hand-written two-stream layers (``w_1``/``w_2`` kernels,
``proj_1``/``proj_2`` outputs) where the second matmul line was copied.

Bug: ``proj_2`` multiplies ``feat_2`` by ``w_1`` while ``w_2`` exists.
Label (issue 24): none. A real mix-up of weights, but no gradient is
involved: suffix-mixup is stated over gradient data flow (the former label
came from the name rule).
"""
import numpy as np
import tensorflow as tf


class TwoStream(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.w_1 = self.add_weight(name="w_1", shape=(3, 2), initializer="glorot_uniform")
        self.w_2 = self.add_weight(name="w_2", shape=(3, 2), initializer="glorot_uniform")

    def call(self, inputs):
        feat_1, feat_2 = inputs
        w_1 = self.w_1
        w_2 = self.w_2
        proj_1 = tf.matmul(feat_1, w_1)
        proj_2 = tf.matmul(feat_2, w_1)
        return proj_1 + proj_2


if __name__ == "__main__":
    tf.random.set_seed(0)
    rng = np.random.RandomState(0)
    layer = TwoStream()
    print(layer([tf.constant(rng.rand(2, 3), tf.float32), tf.constant(rng.rand(2, 3), tf.float32)]))
