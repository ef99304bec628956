"""DQN update: gradient of the TD loss w.r.t. the Q-network's weights.

Idiom mirrored: DQN/Keras RL code that computes ``q_values = model(states)``,
masks the taken action with ``tf.one_hot``, and differentiates a scalar loss
w.r.t. ``model.trainable_variables``.

Correct code, no label: the target is a scalar loss, the sources are
variables (a training step, not an attribution).
"""
import numpy as np
import tensorflow as tf

STATE, ACTIONS = 4, 2


def build_q_network():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(STATE,)),
        tf.keras.layers.Dense(ACTIONS),
    ])


def dqn_step(model, target_model, optimizer, batch, gamma=0.99):
    states, actions, rewards, next_states, dones = batch
    next_q = tf.reduce_max(target_model(next_states), axis=1)
    targets = rewards + gamma * (1.0 - dones) * next_q
    with tf.GradientTape() as tape:
        q_values = model(states)
        taken = tf.reduce_sum(q_values * tf.one_hot(actions, ACTIONS), axis=1)
        loss = tf.reduce_mean(tf.square(targets - taken))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def training_case():
    rng = np.random.RandomState(0)
    states = tf.constant(rng.rand(16, STATE), dtype=tf.float32)
    q_targets = tf.constant(rng.rand(16, ACTIONS), dtype=tf.float32)
    return build_q_network(), states, q_targets


if __name__ == "__main__":
    rng = np.random.RandomState(1)
    batch = (tf.constant(rng.rand(8, STATE), tf.float32), tf.constant(rng.randint(0, ACTIONS, 8)),
             tf.constant(rng.rand(8), tf.float32), tf.constant(rng.rand(8, STATE), tf.float32),
             tf.zeros(8))
    model, target = build_q_network(), build_q_network()
    print(float(dqn_step(model, target, tf.keras.optimizers.Adam(1e-3), batch)))
