"""Clean: an unused-looking layer read through locals().

Mirrors experiment scripts that log every local of the model builder as
hyper-parameters (`config = dict(locals())`). The `spare` layer is read
by that dict, so it must not be removed. No finding.
"""
import random

import numpy as np
import tensorflow as tf

F = 3


def build(units=4):
    hidden = tf.keras.layers.Dense(units, activation="relu")
    spare = tf.keras.layers.Dense(units)
    config = {name: str(value) for name, value in dict(locals()).items()}
    model = tf.keras.Sequential([hidden, tf.keras.layers.Dense(1)])
    model.config_log = config
    return model


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(4, F).astype("float32")
    y = np.random.rand(4, 1).astype("float32")
    model = build()
    model(x)
    return model, x, y
