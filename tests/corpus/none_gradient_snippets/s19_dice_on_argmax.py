# Snippet of report 19 (r19): a dice loss computed on the argmax of the logits.
with tf.GradientTape() as tape:
    pred = tf.cast(tf.argmax(model(x), axis=-1), tf.float32)  # expect-cause: nondifferentiable-op
    inter = tf.reduce_sum(pred * y_true)
    loss = 1.0 - 2.0 * inter / (tf.reduce_sum(pred) + tf.reduce_sum(y_true) + 1e-6)
grads = tape.gradient(loss, model.trainable_variables)
