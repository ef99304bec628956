# Snippet of report 40 (r40): the network's output is rounded inside the loss.
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(tf.round(model(x)) - target))  # expect-cause: nondifferentiable-op
grads = tape.gradient(loss, model.trainable_variables)
