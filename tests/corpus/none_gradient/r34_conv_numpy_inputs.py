"""Report 34: conv2d gradients w.r.t. tensors converted from NumPy, not watched."""
import numpy as np
import tensorflow as tf

x = tf.constant(np.random.randint(10, size=(1, 4, 4, 1)), dtype=tf.float32)
w = tf.constant(np.random.randint(10, size=(3, 3, 1, 1)), dtype=tf.float32)
with tf.GradientTape() as g:
    y = tf.nn.conv2d(x, w, strides=1, padding="VALID")
print(g.gradient(y, w))  # expect-cause: unwatched-source
