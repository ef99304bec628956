"""Report 31: the tape watches a layer's symbolic output instead of a tensor of this call."""
import numpy as np
import tensorflow as tf

inputs = tf.keras.Input((4,))
hidden = tf.keras.layers.Dense(3, name="hidden")(inputs)
model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(hidden))
x = np.random.rand(2, 4).astype("float32")
with tf.GradientTape() as tape:
    tape.watch(model.get_layer("hidden").output)  # expect-cause: unwatched-source
    loss = tf.reduce_sum(model(x))
print(tape.gradient(loss, model.get_layer("hidden").output))
