"""Mean of a per-example loss by dividing by the batch size as a float.

Idiom mirrored: custom training loops that write
``n = tf.convert_to_tensor(tf.shape(x)[0])`` then ``n = tf.cast(n, tf.float32)``
(defensive conversion of something that is already a tensor).

Correct code. Label: typed-convert, report only: ``tf.shape(...)[0]`` is an
int32 tensor, ``convert_to_tensor(t, dtype=tf.float32)`` would raise, so the
tool may only say "use tf.cast directly"; no fix.
"""
import numpy as np
import tensorflow as tf


def mean_squared(pred, target):
    count = tf.convert_to_tensor(tf.shape(pred)[0])  # expect: typed-convert report
    count = tf.cast(count, tf.float32)
    return tf.reduce_sum(tf.square(pred - target)) / count


def training_case():
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(16, 3), dtype=tf.float32)
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    return model, x, y, mean_squared


if __name__ == "__main__":
    model, x, y, loss = training_case()
    print(float(loss(model(x), y)))
