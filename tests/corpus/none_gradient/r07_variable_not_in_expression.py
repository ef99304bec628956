"""Report 7: one variable takes no part in the loss; its gradient is None, the author wants zeros."""
import tensorflow as tf

a = tf.Variable(2.0)
b = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = a * a
grads = tape.gradient(y, [a, b])  # expect-cause: unconnected-source
print(grads)
