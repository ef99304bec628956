"""Report 15: model.predict inside the tape returns a NumPy array."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
x = tf.random.normal((10, 2))
y = x[:, :1] * 3.0 + 2.0
opt = tf.keras.optimizers.SGD(0.01)
with tf.GradientTape() as tape:
    error = model.predict(x, verbose=0) - y  # expect-cause: predict-in-tape
    loss = tf.reduce_mean(tf.square(error))
grads = tape.gradient(loss, model.trainable_variables)
print(grads)
