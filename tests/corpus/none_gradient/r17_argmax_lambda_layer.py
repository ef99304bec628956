"""Report 17: an argmax Lambda layer inside the model, then cast back to float."""
import numpy as np
import tensorflow as tf

inputs = tf.keras.Input(shape=(6,))
probs = tf.keras.layers.Dense(4, activation="softmax")(inputs)
index = tf.keras.layers.Lambda(lambda t: tf.cast(tf.argmax(t, axis=-1), tf.float32))(probs)  # expect-cause: nondifferentiable-op
out = tf.keras.layers.Dense(1)(tf.keras.layers.Reshape((1,))(index))
model = tf.keras.Model(inputs, out)
model.compile(loss="mse", optimizer="sgd")
model.fit(np.random.rand(16, 6), np.random.rand(16, 1), epochs=1, verbose=0)
