"""Input-gradient attribution written with keyword arguments to ``gradient``.

Idiom mirrored: code that spells ``tape.gradient(target=logits,
sources=inputs)`` (seen in explainability libraries' helpers) on a
multi-class logits model.

Bug: target is the full logits matrix, all classes summed.
Label: scalar-target, unsafe (keyword-argument form; ``label`` is in scope).
"""
import numpy as np
import tensorflow as tf

FEATURES = 4


def build_model():
    tf.random.set_seed(0)
    inputs = tf.keras.Input(shape=(FEATURES,))
    hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
    logits = tf.keras.layers.Dense(3)(hidden)
    return tf.keras.Model(inputs, logits)


def gradient_x_input(model, inputs, label):
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        logits = model(inputs)  # expect: scalar-target unsafe
    grads = tape.gradient(target=logits, sources=inputs)
    return grads * inputs


if __name__ == "__main__":
    x = tf.constant(np.random.RandomState(0).rand(2, FEATURES), dtype=tf.float32)
    print(gradient_x_input(build_model(), x, label=1))
