# Snippet of report 30 (r30): Grad-CAM whose conv output comes from another model call.
last_conv_output = conv_model(img)
with tf.GradientTape() as tape:
    tape.watch(last_conv_output)
    preds = grad_model(img)
    class_channel = preds[:, 0]
grads = tape.gradient(class_channel, last_conv_output)  # expect-cause: unconnected-source
