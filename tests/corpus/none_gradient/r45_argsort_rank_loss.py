"""Report 45: a ranking loss made of argsort ranks."""
import numpy as np
import tensorflow as tf


def rank_loss(y_true, y_pred):
    actual = tf.argsort(tf.argsort(y_true, axis=0), axis=0)
    predicted = tf.argsort(tf.argsort(y_pred, axis=0), axis=0)  # expect-cause: nondifferentiable-op
    return tf.cast(tf.reduce_sum(tf.abs(actual - predicted)), tf.float32)


model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
model.compile(loss=rank_loss, optimizer="adam")
model.fit(np.random.rand(16, 4), np.random.rand(16, 1), epochs=1, verbose=0)
