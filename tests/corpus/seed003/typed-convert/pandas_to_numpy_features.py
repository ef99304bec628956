"""Tabular regression: a pandas frame's columns become the model input.

Idiom mirrored: tutorials that load a CSV into pandas and write
``tf.convert_to_tensor(df[cols].to_numpy())`` followed by
``tf.cast(..., dtype=tf.float32)`` because pandas gives float64.

Label: typed-convert, safe (``.to_numpy()`` is NumPy data; float32 target
dtype given as the ``dtype=`` keyword of the cast).
"""
import numpy as np
import pandas as pd
import tensorflow as tf

COLUMNS = ["rooms", "age", "distance"]


def load_frame(rows=32):
    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.rand(rows, 3), columns=COLUMNS)
    frame["price"] = 2.0 * frame["rooms"] - frame["age"] + 0.5 * frame["distance"]
    return frame


def training_case():
    frame = load_frame()
    features = tf.convert_to_tensor(frame[COLUMNS].to_numpy())  # expect: typed-convert safe
    features = tf.cast(features, dtype=tf.float32)
    labels = tf.constant(frame[["price"]].to_numpy(), dtype=tf.float32)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(1)])
    return model, features, labels


if __name__ == "__main__":
    model, x, y = training_case()
    print(x.dtype, model(x).shape)
