"""Report 2: the generator loss is negated after the tape closed."""
import tensorflow as tf

tf.random.set_seed(0)
generator = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(2,))])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
noise = tf.random.normal((16, 2))

with tf.GradientTape() as gen_tape:
    z = critic(generator(noise))
    score = tf.reduce_mean(z)
gen_loss = -1.0 * score  # expect-cause: outside-tape
grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
print(grads)
