"""Saliency where the normalised batch is computed inside the tape.

Idiom mirrored: image code that normalises pixels inside the ``with``
(``scaled = batch / 255.0``) and then watches one image ``scaled[0]``.

Bug: ``scaled[0]`` is sliced again for the model and the gradient; None.
Label: per-step-tape, report. ``scaled`` is assigned inside the tape, so
the slice cannot be hoisted above the ``with`` (it would read ``scaled``
before it exists), and moving the watch changes what is recorded: only a
finding.
"""
import numpy as np
import tensorflow as tf


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(6,))])


def first_image_saliency(model, batch):
    with tf.GradientTape() as tape:
        scaled = batch / 255.0
        tape.watch(scaled[0])  # expect: per-step-tape report
        score = model(scaled[0][None])[0, 0]
    return tape.gradient(score, scaled[0])


if __name__ == "__main__":
    batch = tf.constant(np.random.RandomState(0).randint(0, 255, size=(2, 6)), dtype=tf.float32)
    print(first_image_saliency(build_model(), batch))
