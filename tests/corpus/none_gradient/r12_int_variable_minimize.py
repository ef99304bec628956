"""Report 12: a variable initialised with a Python int is optimised."""
import tensorflow as tf

w = tf.Variable(5)  # expect-cause: integer-source
opt = tf.keras.optimizers.SGD(0.1)
with tf.GradientTape() as tape:
    loss = tf.cast(tf.square(w - 2), tf.float32)
grads = tape.gradient(loss, [w])
print(grads)
