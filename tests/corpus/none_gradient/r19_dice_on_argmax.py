"""Report 19: a dice loss computed on the argmax of the logits."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(8,))])
x = tf.random.normal((16, 8))
labels = tf.cast(tf.random.uniform((16,), maxval=2, dtype=tf.int32), tf.float32)
with tf.GradientTape() as tape:
    pred = tf.cast(tf.argmax(model(x), axis=-1), tf.float32)  # expect-cause: nondifferentiable-op
    dice = 2.0 * tf.reduce_sum(pred * labels) / (tf.reduce_sum(pred) + tf.reduce_sum(labels) + 1e-6)
    loss = 1.0 - dice
print(tape.gradient(loss, model.trainable_variables))
