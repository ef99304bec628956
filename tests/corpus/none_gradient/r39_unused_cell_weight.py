"""Report 39: a custom recurrent cell makes a weight that never reaches the output."""
import tensorflow as tf


class MyCell(tf.keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1] + self.units, self.units))
        self.interim = self.add_weight(name="interim", shape=(self.units,))  # expect-cause: unconnected-source

    def call(self, inputs, states):
        h = tf.tanh(tf.matmul(tf.concat([inputs, states[0]], -1), self.w))
        return h, [h]


layer = tf.keras.layers.RNN(MyCell(3))
x = tf.random.normal((2, 5, 4))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(layer(x))
print(tape.gradient(loss, layer.trainable_variables))
