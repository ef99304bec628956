"""Report 49: a custom-gradient op reads .numpy() of its arguments."""
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def squared(param, x):
    def grad(dy):
        return dy * x ** 2, dy * 2 * param * x
    return tf.constant(param.numpy() * x.numpy() ** 2), grad  # expect-cause: numpy-on-loss-path


p = tf.Variable(1.5)
x = tf.constant(2.0)
with tf.GradientTape() as tape:
    y = squared(p, x)
print(tape.gradient(y, p))
