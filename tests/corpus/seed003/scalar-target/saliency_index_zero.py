"""Saliency map of a small image classifier with ``from tensorflow import keras``.

Idiom mirrored: vanilla-gradient saliency snippets that take
``tape.gradient(preds, img)[0]`` (the first image of the batch) and forget
to select the predicted class from ``preds``.

Bug: the map is the gradient of the sum of all class scores.
Label: scalar-target, unsafe (the gradient call sits inside a subscript
expression; ``class_index`` is a local in scope and is the right target).
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras

SIDE = 6
CLASSES = 4


def build_cnn():
    tf.random.set_seed(0)
    return keras.Sequential([
        keras.layers.Conv2D(4, 3, activation="relu", input_shape=(SIDE, SIDE, 1)),
        keras.layers.Flatten(),
        keras.layers.Dense(CLASSES),
    ])


def saliency(model, img):
    img = tf.convert_to_tensor(img, dtype=tf.float32)
    class_index = int(tf.argmax(model(img)[0]))
    with tf.GradientTape() as tape:
        tape.watch(img)
        preds = model(img)  # expect: scalar-target unsafe
    grads = tape.gradient(preds, img)[0]
    return tf.reduce_max(tf.abs(grads), axis=-1), class_index


if __name__ == "__main__":
    image = np.random.RandomState(0).rand(1, SIDE, SIDE, 1)
    heat, cls = saliency(build_cnn(), image)
    print(cls, heat.shape)
