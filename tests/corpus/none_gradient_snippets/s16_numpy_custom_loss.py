# Snippet of report 16 (r16): a custom loss turns the predictions into NumPy.
def my_loss(pred):
    probs = pred.numpy()  # expect-cause: numpy-on-loss-path
    return tf.constant(-np.log(probs.max() ** 2 + 1.0))


with tf.GradientTape() as tape:
    tape.watch(image)
    loss = my_loss(model(image))
grads = tape.gradient(loss, image)
