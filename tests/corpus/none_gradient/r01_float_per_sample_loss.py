"""Report 1: per-sample losses turned into Python floats, then re-converted."""
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])
x = tf.random.normal((8, 4))
y = tf.random.uniform((8,), maxval=3, dtype=tf.int32)
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

with tf.GradientTape() as tape:
    logits = model(x)
    losses = []
    for i in range(8):
        losses.append(float(loss_object(y[i:i + 1], logits[i:i + 1])))  # expect-cause: numpy-on-loss-path
    loss = tf.convert_to_tensor(np.std(losses), dtype=tf.float32)
grads = tape.gradient(loss, model.trainable_variables)
print([g is None for g in grads])
