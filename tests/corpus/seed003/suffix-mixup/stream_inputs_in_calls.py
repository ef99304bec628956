"""Two-tower model where each tower's call reads both inputs on purpose.

Idiom mirrored: keras-io style two-input models: ``x_1 = dense_1(input_1)``,
``mixed_2 = layers.concatenate([input_2, x_1])``; numbered tensors are
passed as call arguments and list items.

Correct code, no label: call arguments and list items are not arithmetic
operands; the only arithmetic (``score = out_1 + out_2``) has an unsuffixed
target.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers


def build_model():
    tf.random.set_seed(0)
    input_1 = layers.Input(shape=(3,))
    input_2 = layers.Input(shape=(3,))
    x_1 = layers.Dense(4, activation="relu")(input_1)
    mixed_2 = layers.concatenate([input_2, x_1])
    out_1 = layers.Dense(1)(x_1)
    out_2 = layers.Dense(1)(mixed_2)
    score = out_1 + out_2
    return tf.keras.Model([input_1, input_2], score)


def training_case():
    rng = np.random.RandomState(0)
    a = tf.constant(rng.rand(8, 3), tf.float32)
    b = tf.constant(rng.rand(8, 3), tf.float32)
    model = build_model()
    return model, [a, b], tf.reduce_sum(a - b, axis=1, keepdims=True)


if __name__ == "__main__":
    model, x, _ = training_case()
    print(model(x).shape)
