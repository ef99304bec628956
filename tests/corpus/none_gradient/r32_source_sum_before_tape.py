"""Report 32: the gradient is asked w.r.t. a tensor computed before the tape, never watched."""
import tensorflow as tf

x0 = tf.Variable(1.0)
x = x0 + tf.constant(3.0)
y = tf.constant(4.0)
with tf.GradientTape() as tape:
    z = x + y
print(tape.gradient(z, x))  # expect-cause: unwatched-source
