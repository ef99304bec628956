# Snippet of report 43 (r43): tf.floor of a sigmoid as the predictions in the loss.
with tf.GradientTape() as tape:
    y_pred = tf.floor(tf.sigmoid(model(x)) + 0.5)  # expect-cause: nondifferentiable-op
    loss = tf.reduce_mean(tf.square(y_pred - y))
grads = tape.gradient(loss, model.trainable_variables)
