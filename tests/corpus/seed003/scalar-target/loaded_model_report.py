"""Saliency of a model restored from disk: its width is not in the code.

Idiom mirrored: scripts that ``tf.keras.models.load_model(path)`` and take
``tape.gradient(model(x), x)`` (here the model is saved first to a temporary
folder, so the program runs without downloads).

Label: scalar-target, report: the tool cannot know whether the loaded model
has one output or several; it may only ask.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf


def saliency(path, x):
    model = tf.keras.models.load_model(path)
    with tf.GradientTape() as tape:
        tape.watch(x)
        preds = model(x)  # expect: scalar-target report
    return tape.gradient(preds, x)


if __name__ == "__main__":
    tf.random.set_seed(0)
    net = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])
    folder = os.path.join(tempfile.mkdtemp(), "net.h5")
    net.save(folder)
    print(saliency(folder, tf.constant(np.random.rand(2, 4), tf.float32)).shape)
