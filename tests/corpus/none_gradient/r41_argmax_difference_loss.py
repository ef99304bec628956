"""Report 41: the loss is the cast difference of two argmaxes."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(6,))])
x = tf.random.normal((8, 6))
labels = tf.one_hot(tf.random.uniform((8,), maxval=4, dtype=tf.int32), 4)
with tf.GradientTape() as tape:
    diff = tf.cast(tf.argmax(model(x), 1) - tf.argmax(labels, 1), tf.float32)  # expect-cause: nondifferentiable-op
    loss = tf.nn.l2_loss(diff)
print(tape.gradient(loss, model.trainable_variables))
