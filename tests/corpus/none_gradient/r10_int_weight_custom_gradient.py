"""Report 10: an int32 weight with a custom gradient still gets none."""
import tensorflow as tf


@tf.custom_gradient
def scaled(inputs, var):
    def grad(upstream):
        return upstream * tf.cast(var, tf.float32), tf.reduce_sum(upstream * inputs)
    return inputs * tf.cast(var, tf.float32), grad


var = tf.Variable([1], dtype=tf.int32)  # expect-cause: integer-source
x = tf.ones((4, 1))
with tf.GradientTape() as tape:
    out = tf.reduce_sum(scaled(x, var))
print(tape.gradient(out, var))
