"""Report 37: a noisy dense layer creates its weights in call instead of build."""
import tensorflow as tf


class NoisyDense(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def call(self, inputs):
        kernel = tf.Variable(tf.random.normal((inputs.shape[-1], self.units)))  # expect-cause: variable-in-call
        bias = tf.Variable(tf.zeros(self.units))
        return tf.matmul(inputs, kernel) + bias


layer = NoisyDense(3)
x = tf.random.normal((2, 4))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(layer(x))
print(tape.gradient(loss, layer.trainable_variables))
