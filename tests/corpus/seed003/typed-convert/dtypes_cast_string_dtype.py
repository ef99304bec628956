"""Sensor readings stored as float64 NumPy, cast with ``tf.dtypes.cast`` and
a string dtype.

Idiom mirrored: older TF 2.x code spells the cast ``tf.dtypes.cast`` and
passes dtypes as strings (``"float32"``), often after ``.astype`` on the
NumPy side.

Label: typed-convert, safe (``.astype(...)`` result; ``"float32"`` is a
float dtype).
"""
import numpy as np
import tensorflow as tf

WINDOW = 5


def windows(signal):
    stacked = np.stack([signal[i:i + WINDOW] for i in range(len(signal) - WINDOW)])
    return tf.dtypes.cast(tf.convert_to_tensor(stacked.astype("float64")), "float32")  # expect: typed-convert safe


def training_case():
    signal = np.sin(np.linspace(0.0, 6.0, 40))
    x = windows(signal)
    y = tf.reduce_mean(x, axis=1, keepdims=True)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(WINDOW,)),
                                 tf.keras.layers.Dense(1)])
    return model, x, y


if __name__ == "__main__":
    print(training_case()[1].shape)
