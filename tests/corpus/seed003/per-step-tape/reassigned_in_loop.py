"""Per-example saliency in a monitoring loop where the batch is redrawn each round.

Idiom mirrored: RL / monitoring scripts that, every few episodes, sample a
fresh batch of states and compute the saliency of the first state with
``tape.watch(states[0])``.

Bug: ``states[0]`` evaluated three times; gradient None.
Label: per-step-tape, safe. The hoisted name must go just above the ``with``
inside the loop (below ``states = ...``), not above the loop that assigns
``states``: this is the class of fix issue 12 saw go wrong.
"""
import numpy as np
import tensorflow as tf

STATE = 3


def build_value_net():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(
        1, input_shape=(STATE,),
        kernel_initializer=tf.keras.initializers.GlorotUniform(seed=4))])


def monitor(value_net, rounds=3):
    rng = np.random.RandomState(0)
    found = []
    for _ in range(rounds):
        states = tf.constant(rng.rand(4, STATE), dtype=tf.float32)
        with tf.GradientTape() as tape:
            tape.watch(states[0])  # expect: per-step-tape safe
            value = value_net(states[0][None])[0, 0]
        found.append((states[0], tape.gradient(value, states[0]) * states[0]))
    return found


def attribution_case():
    value_net = build_value_net()
    zero = np.zeros((1, STATE), np.float32)
    return [{"name": "round%d" % r, "attributions": attr.numpy(), "input": state.numpy(),
             "f_input": float(value_net(state[None])[0, 0]), "f_baseline": float(value_net(zero)[0, 0])}
            for r, (state, attr) in enumerate(monitor(value_net))]


if __name__ == "__main__":
    print(len(attribution_case()))
