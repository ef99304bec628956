"""Report 9: a layer's weight is made with an integer dtype."""
import numpy as np
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.var = self.add_weight(name="var", shape=(1,), initializer="zeros", dtype=tf.int32)  # expect-cause: integer-source

    def call(self, inputs):
        return inputs * self.var


inputs = tf.keras.Input((1,), dtype=tf.int32)
model = tf.keras.Model(inputs, Scale()(inputs))
model.compile(loss="mse", optimizer="rmsprop")
values = np.arange(32).reshape(-1, 1)
model.fit(values, values, epochs=1, verbose=0)
