"""Report 36: tape.watch(model.inputs) instead of the images of this step."""
import numpy as np
import tensorflow as tf

inputs = tf.keras.Input((4,))
model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
images = tf.constant(np.random.rand(3, 4), dtype=tf.float32)
labels = tf.constant([0, 1, 1])
with tf.GradientTape() as tape:
    predictions = model(images)
    tape.watch(model.inputs)
    loss = loss_object(labels, predictions)
print(tape.gradient(loss, model.inputs))  # expect-cause: unwatched-source
