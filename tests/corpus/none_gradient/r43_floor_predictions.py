"""Report 43: predictions thresholded with floor before the loss."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(5,))])
x = tf.random.normal((8, 5))
y_true = tf.cast(tf.random.uniform((8, 1), maxval=2, dtype=tf.int32), tf.float32)
with tf.GradientTape() as tape:
    y_pred = tf.floor(tf.sigmoid(model(x)) + 0.5)  # expect-cause: nondifferentiable-op
    loss = tf.reduce_mean(tf.abs(y_true - y_pred))
print(tape.gradient(loss, model.trainable_variables))
