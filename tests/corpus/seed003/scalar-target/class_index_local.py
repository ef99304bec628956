"""Explaining the predicted class of a tabular model: the index is computed, not used.

Idiom mirrored: alibi/tf-explain style wrappers that compute
``pred_class = np.argmax(model.predict(x), axis=1)`` and then call the
model inside a tape without selecting it.

Bug: all classes summed.
Label: scalar-target, unsafe (``pred_class`` is a local in scope).
"""
import numpy as np
import tensorflow as tf


def build_classifier():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(10, activation="relu", input_shape=(4,)),
        tf.keras.layers.Dense(3, activation="softmax"),
    ])


def explain(model, x):
    pred_class = int(np.argmax(model.predict(x, verbose=0), axis=1)[0])
    x = tf.convert_to_tensor(x, dtype=tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        output = model(x)  # expect: scalar-target unsafe
    return tape.gradient(output, x), pred_class


if __name__ == "__main__":
    print(explain(build_classifier(), np.random.RandomState(0).rand(1, 4)))
