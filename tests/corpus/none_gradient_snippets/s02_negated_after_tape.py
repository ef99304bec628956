# Snippet of report 2 (r02), pasted as in the thread: no imports, the models defined elsewhere.
with tf.GradientTape() as gen_tape:
    fake = generator(noise, training=True)
    score = tf.reduce_mean(critic(fake, training=True))
gen_loss = -1.0 * score  # expect-cause: outside-tape
gradients = gen_tape.gradient(gen_loss, generator.trainable_variables)
gen_optimizer.apply_gradients(zip(gradients, generator.trainable_variables))
