"""Gradient w.r.t. the first of two inputs unpacked from a tuple.

Idiom mirrored: two-input models (image + metadata) whose inputs travel as a
tuple ``inputs = (image, meta)``; the code watches ``inputs[0]`` and feeds
``model([inputs[0], inputs[1]])``.

Correct code, no label: a tuple subscript returns the same tensor object.
"""
import numpy as np
import tensorflow as tf


def build_model():
    tf.random.set_seed(0)
    image = tf.keras.layers.Input(shape=(4,))
    meta = tf.keras.layers.Input(shape=(2,))
    joined = tf.keras.layers.Concatenate()([image, meta])
    return tf.keras.Model([image, meta], tf.keras.layers.Dense(1)(joined))


def image_gradient(model, inputs):
    with tf.GradientTape() as tape:
        tape.watch(inputs[0])
        score = model([inputs[0], inputs[1]])[:, 0]
    return tape.gradient(score, inputs[0])


def attribution_case():
    rng = np.random.RandomState(0)
    image = tf.constant(rng.rand(1, 4), dtype=tf.float32)
    meta = tf.constant(rng.rand(1, 2), dtype=tf.float32)
    model = build_model()
    attributions = image_gradient(model, (image, meta)) * image
    zeros = tf.zeros_like(image)
    return {"name": "image", "attributions": attributions.numpy(), "input": image.numpy(),
            "f_input": float(model([image, meta])[0, 0]),
            "f_baseline": float(model([zeros, meta])[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
