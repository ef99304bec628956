"""Saliency compiled with ``tf.function`` for a classifier subclassing ``tf.keras.Model``.

Idiom mirrored: subclassed models (``class Net(tf.keras.Model)``) with a
``@tf.function`` gradient helper that feeds a batch and differentiates the
whole output.

Bug: gradient of the sum over all 5 classes.
Label: scalar-target, unsafe (``target_idx`` parameter in scope).
"""
import numpy as np
import tensorflow as tf


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8, activation="relu")
        self.head = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.head(self.hidden(x))


@tf.function
def input_gradients(net, x, target_idx):
    with tf.GradientTape() as tape:
        tape.watch(x)
        scores = net(x)  # expect: scalar-target unsafe
    return tape.gradient(scores, x)


if __name__ == "__main__":
    tf.random.set_seed(0)
    net = Net()
    x = tf.constant(np.random.RandomState(0).rand(3, 6), dtype=tf.float32)
    print(input_gradients(net, x, 1))
