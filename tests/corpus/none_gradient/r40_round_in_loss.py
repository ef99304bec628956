"""Report 40: the network's output is rounded inside the loss."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
x = tf.random.normal((8, 3))
target = tf.random.normal((8, 1))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(tf.round(model(x)) - target))  # expect-cause: nondifferentiable-op
print(tape.gradient(loss, model.trainable_variables))
