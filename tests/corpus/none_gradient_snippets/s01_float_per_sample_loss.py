# Snippet of report 1 (r01): per-sample losses turned into Python floats, then re-converted.
with tf.GradientTape() as tape:
    logits = model(x, training=True)
    losses = []
    for i in range(len(x)):
        losses.append(float(loss_object(y[i:i + 1], logits[i:i + 1])))  # expect-cause: numpy-on-loss-path
    loss = tf.reduce_mean(tf.convert_to_tensor(losses))
grads = tape.gradient(loss, model.trainable_variables)
