"""Report 48: a loss for a two-output model reads .numpy(): under fit it is symbolic and raises."""
import numpy as np
import tensorflow as tf


def masked_loss(y_true, y_pred):
    mask = (y_pred.numpy() > 0.5).astype("float32")  # expect-cause: numpy-on-loss-path
    return tf.reduce_mean(tf.square(y_true - y_pred) * mask)


inputs = tf.keras.Input((3,))
model = tf.keras.Model(inputs, [tf.keras.layers.Dense(2)(inputs), tf.keras.layers.Dense(2)(inputs)])
model.compile(loss=[masked_loss, masked_loss], optimizer="adam")
model.fit(np.random.rand(8, 3), [np.random.rand(8, 2), np.random.rand(8, 2)], epochs=1, verbose=0)
