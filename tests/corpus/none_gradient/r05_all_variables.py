"""Report 5: gradients asked for model.variables: BatchNormalization's moving statistics get None."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)),
                             tf.keras.layers.BatchNormalization(),
                             tf.keras.layers.Dense(1)])
x = tf.random.normal((16, 3))
y = tf.random.normal((16, 1))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
grads = tape.gradient(loss, model.variables)  # expect-cause: non-trainable-source
print(sum(g is None for g in grads))
