# Snippet of report 15 (r15): model.predict inside the tape returns a NumPy array.
with tf.GradientTape() as tape:
    error = model.predict(x) - y  # expect-cause: predict-in-tape
    loss = tf.reduce_mean(tf.square(error))
grads = tape.gradient(loss, model.trainable_variables)
opt.apply_gradients(zip(grads, model.trainable_variables))
