"""Report 44: K.round in a custom Keras loss."""
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K


def rounded_mse(y_true, y_pred):
    return K.mean(K.square(K.round(y_pred) - y_true), axis=-1)  # expect-cause: nondifferentiable-op


model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
model.compile(loss=rounded_mse, optimizer="sgd")
model.fit(np.random.rand(16, 3), np.random.rand(16, 1), epochs=1, verbose=0)
