"""A subclassed value network (single output unit) and its input gradient.

Idiom mirrored: actor-critic code with ``class Critic(tf.keras.Model)`` whose
``call`` ends in ``self.value = Dense(1)``; the policy-gradient "dQ/da" step
differentiates ``critic(states, actions)`` w.r.t. the watched actions.

Correct code, no label: the critic's output width is 1 (built in this module;
the last layer of ``call`` is ``Dense(1)``).
"""
import numpy as np
import tensorflow as tf


class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(16, activation="relu")
        self.value = tf.keras.layers.Dense(1)

    def call(self, inputs):
        states, actions = inputs
        return self.value(self.hidden(tf.concat([states, actions], axis=-1)))


def action_gradients(critic, states, actions):
    with tf.GradientTape() as tape:
        tape.watch(actions)
        q = critic([states, actions])
    return tape.gradient(q, actions)


if __name__ == "__main__":
    tf.random.set_seed(0)
    rng = np.random.RandomState(0)
    critic = Critic()
    s = tf.constant(rng.rand(4, 3), dtype=tf.float32)
    a = tf.constant(rng.rand(4, 2), dtype=tf.float32)
    print(action_gradients(critic, s, a))
