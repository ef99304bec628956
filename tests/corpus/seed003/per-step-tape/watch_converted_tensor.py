"""Activation maximisation: the image is converted once, then "converted" again in the watch.

Idiom mirrored: gradient-ascent / feature-visualisation code (seen in real
code collected for issue 12) that writes ``img = tf.convert_to_tensor(img)``
and then, defensively, ``tape.watch(tf.convert_to_tensor(img))``, and
differentiates w.r.t. ``img``.

Correct code, no label: ``tf.convert_to_tensor`` of a tensor returns that
same tensor, and the gradient is taken w.r.t. ``img`` (no second
conversion), so the watched, fed and differentiated tensor is one object.
"""
import numpy as np
import tensorflow as tf


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(6,))])


def ascent_step(model, img, unit, learning_rate=0.1):
    img = tf.convert_to_tensor(img)
    with tf.GradientTape() as tape:
        tape.watch(tf.convert_to_tensor(img))
        activation = tf.reduce_mean(model(img)[:, unit])
    grads = tape.gradient(activation, img)
    return img + learning_rate * tf.math.l2_normalize(grads)


if __name__ == "__main__":
    start = np.random.RandomState(0).rand(1, 6).astype("float32")
    print(ascent_step(build_model(), start, unit=2))
