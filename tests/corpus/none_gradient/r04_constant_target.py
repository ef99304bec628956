"""Report 4: the target is a constant made inside the tape; nothing connects it to the source."""
import tensorflow as tf

ones = tf.ones([1, 8, 8, 1], tf.float32)
with tf.GradientTape() as tape:
    class_channel = tf.constant([4.4], dtype=tf.float32)
grads = tape.gradient(class_channel, ones)  # expect-cause: unwatched-source
print(grads)
