"""Report 23: a memory layer writes its state with assign in call; the controller gets no gradient."""
import tensorflow as tf


class MemoryLayer(tf.keras.layers.Layer):
    def __init__(self, slots, dims):
        super().__init__()
        self.controller = tf.keras.layers.Dense(dims)
        self.slots, self.dims = slots, dims

    def build(self, input_shape):
        self.memory = self.add_weight(name="memory", shape=(self.slots, self.dims), trainable=False,
                                      initializer="zeros")

    def call(self, inputs):
        write = tf.reduce_mean(self.controller(inputs), axis=0, keepdims=True)
        self.memory.assign(tf.tile(write, [self.slots, 1]))  # expect-cause: assign-in-forward
        return tf.matmul(inputs[:, :self.dims], self.memory, transpose_b=True)


layer = MemoryLayer(3, 4)
x = tf.random.normal((5, 6))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(layer(x))
print(tape.gradient(loss, layer.controller.trainable_variables))
