"""Report 35: a textbook example differentiates w.r.t. tf.zeros without watching it."""
import tensorflow as tf

x = tf.zeros(())
with tf.GradientTape() as tape:
    y = 2 * x + 3
print(tape.gradient(y, x))  # expect-cause: unwatched-source
