"""A Keras Sequential built at module level and never used.

Mirrors tutorial-derived scripts that keep an early `baseline = ...`
model after switching to another one. Nothing reads it, no dynamic
reader exists: removal is a safe fix.
"""
import random

import numpy as np
import tensorflow as tf

F = 3

baseline = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])  # expect: unused-model-instance safe


def build():
    return tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(4, F).astype("float32")
    y = np.random.rand(4, 1).astype("float32")
    model = build()
    model(x)
    return model, x, y
