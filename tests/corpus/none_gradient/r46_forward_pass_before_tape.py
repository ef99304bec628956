"""Report 46: actor-critic: the forward pass was moved above the tape."""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
inputs = tf.keras.Input((4,))
common = tf.keras.layers.Dense(8, activation="relu")(inputs)
model = tf.keras.Model(inputs, [tf.keras.layers.Dense(2, activation="softmax")(common),
                                tf.keras.layers.Dense(1)(common)])
state = tf.constant(np.random.rand(1, 4), dtype=tf.float32)
action_probs, critic_value = model(state)  # expect-cause: outside-tape
with tf.GradientTape() as tape:
    actor_loss = -tf.math.log(action_probs[0, 0]) * 0.5
    critic_loss = tf.square(critic_value[0, 0] - 1.0)
    loss = actor_loss + critic_loss
print(tape.gradient(loss, model.trainable_variables))
