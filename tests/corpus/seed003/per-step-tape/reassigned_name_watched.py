"""Deep-dream style input optimisation: the image is reassigned each step.

Idiom mirrored: deep-dream / adversarial-example loops that watch the current
image, step it along the gradient and reassign it (``img = img + lr *
grads``) at the end of each iteration.

Correct code, no label: the watched expression is a plain name and every
use inside the step reads the same binding; a hoist has nothing to do (and
would be wrong above the loop that reassigns ``img``).
"""
import numpy as np
import tensorflow as tf


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(3, activation="tanh", input_shape=(5,))])


def dream(model, img, steps=5, lr=0.1):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            tape.watch(img)
            activation = tf.reduce_mean(model(img))
        grads = tape.gradient(activation, img)
        grads /= tf.math.reduce_std(grads) + 1e-8
        img = img + lr * grads
    return img


if __name__ == "__main__":
    start = tf.constant(np.random.RandomState(0).rand(1, 5), dtype=tf.float32)
    print(dream(build_model(), start))
