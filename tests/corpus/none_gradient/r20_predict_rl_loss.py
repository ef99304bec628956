"""Report 20: a policy loss built from model.predict in a reinforcement-learning step."""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
policy = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
states = np.random.rand(8, 4).astype("float32")
advantages = np.random.rand(8).astype("float32")
actions = np.random.randint(0, 2, size=8)
with tf.GradientTape() as tape:
    probs = policy.predict(states, verbose=0)  # expect-cause: predict-in-tape
    chosen = tf.reduce_sum(probs * tf.one_hot(actions, 2), axis=1)
    loss = -tf.reduce_mean(tf.math.log(chosen) * advantages)
print(tape.gradient(loss, policy.trainable_variables))
