# Snippet of report 5 (r05): model.variables includes BatchNorm's moving statistics.
with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
grads = tape.gradient(loss, model.variables)  # expect-cause: non-trainable-source
optimizer.apply_gradients(zip(grads, model.variables))
