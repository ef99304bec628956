"""A preprocessing helper whose argument may be anything.

Idiom mirrored: ``def to_tensor(x): x = tf.convert_to_tensor(x); x =
tf.cast(x, tf.float32)`` helpers in research code, called with NumPy arrays in
one place and tensors in another.

Label: typed-convert, unsafe. ``batch`` is a parameter: nothing proves it is
not a tensor of another dtype (where ``convert_to_tensor(t, dtype=...)``
raises), so the merge is offered only under --unsafe-fixes.
"""
import numpy as np
import tensorflow as tf


def to_model_input(batch):
    batch = tf.convert_to_tensor(batch)  # expect: typed-convert unsafe
    batch = tf.cast(batch, tf.float32)
    return batch / tf.reduce_max(tf.abs(batch))


def training_case():
    rng = np.random.RandomState(0)
    x = to_model_input(rng.rand(20, 4))
    y = tf.reduce_sum(x * [1.0, -1.0, 0.5, 2.0], axis=1, keepdims=True)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    return model, x, y


if __name__ == "__main__":
    print(training_case()[1].shape)
