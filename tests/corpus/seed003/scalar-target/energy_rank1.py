"""Forces as the gradient of a learned energy: a per-sample score of rank 1.

Idiom mirrored: molecular/physics code whose model returns one energy per
sample (``tf.reduce_sum(..., axis=-1)`` in ``call``) and takes
``-tape.gradient(energy, positions)``.

Correct code, no label: the output is of rank 1, so summing it is the sum of
independent per-sample energies and the gradient is exactly each sample's
force; ``[:, 0]`` would raise.
"""
import numpy as np
import tensorflow as tf


class Energy(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8, activation="tanh")
        self.site = tf.keras.layers.Dense(3)

    def call(self, positions):
        return tf.reduce_sum(self.site(self.hidden(positions)), axis=-1)


def forces(model, positions):
    with tf.GradientTape() as tape:
        tape.watch(positions)
        energy = model(positions)
    return -tape.gradient(energy, positions)


if __name__ == "__main__":
    tf.random.set_seed(0)
    np.random.seed(0)
    print(forces(Energy(), tf.constant(np.random.rand(5, 3), tf.float32)).shape)
