"""The fixed form: NumPy data converted straight to float32.

Idiom mirrored: the recommended spelling
``tf.convert_to_tensor(arr, dtype=tf.float32)``, followed (as in many DQN
replay buffers) by an integer cast of a *different* array for the actions.

Correct code, no label: no convert-then-cast of the same data.
"""
import numpy as np
import tensorflow as tf


def replay_batch(rng, size=16):
    states = tf.convert_to_tensor(rng.rand(size, 4), dtype=tf.float32)
    actions = tf.cast(rng.randint(0, 2, size=size), tf.int32)
    return states, actions


def training_case():
    rng = np.random.RandomState(0)
    states, actions = replay_batch(rng)
    y = tf.one_hot(actions, 2)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])
    return model, states, y


if __name__ == "__main__":
    print(training_case()[1].dtype)
