"""Report 8: meta-learning: fast weights copied into a model copy with assign, then differentiated."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
model_copy = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
x = tf.random.normal((10, 1))
y = 3.0 * x

with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner_loss = tf.reduce_mean(tf.square(model(x) - y))
    inner_grads = inner.gradient(inner_loss, model.trainable_variables)
    for target, weight, g in zip(model_copy.trainable_variables, model.trainable_variables, inner_grads):
        target.assign(weight - 0.01 * g)  # expect-cause: assign-in-forward
    outer_loss = tf.reduce_mean(tf.square(model_copy(x) - y))
print(outer.gradient(outer_loss, model.trainable_variables))
