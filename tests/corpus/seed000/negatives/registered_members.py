"""Ensemble members that register themselves: the unused names are used.

Mirrors ensemble code where each member's `__init__` appends the instance to
a module-level list and the ensemble averages that list. `first = Member(4)`
binds a name nothing reads, but building it is what fills the ensemble:
removing it would leave the ensemble empty. No finding.
"""
import random

import numpy as np
import tensorflow as tf

B, F = 8, 3
MEMBERS = []


class Member(tf.keras.Model):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.hidden = tf.keras.layers.Dense(units, activation="relu")
        self.out = tf.keras.layers.Dense(1)
        MEMBERS.append(self)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


def ensemble_prediction(x):
    del MEMBERS[:]
    first = Member(4)
    second = Member(6)
    return tf.add_n([member(x) for member in MEMBERS]) / len(MEMBERS)


def outputs():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    return {"prediction": ensemble_prediction(np.random.rand(B, F).astype("float32"))}


if __name__ == "__main__":
    print(outputs()["prediction"].shape)
