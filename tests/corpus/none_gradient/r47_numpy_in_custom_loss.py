"""Report 47: a custom loss takes y_pred to NumPy to score it with outside code."""
import numpy as np
import tensorflow as tf


def external_score(samples):
    return float(np.mean(np.abs(samples)))


def mse_plus_external(y_true, y_pred):
    q1 = tf.reduce_mean(tf.square(y_pred - y_true), axis=-1)
    extra = external_score(y_pred.numpy())  # expect-cause: numpy-on-loss-path
    return q1 + extra


model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
x = tf.random.normal((8, 3))
y = tf.random.normal((8, 1))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(mse_plus_external(y, model(x)))
print(tape.gradient(loss, model.trainable_variables))
