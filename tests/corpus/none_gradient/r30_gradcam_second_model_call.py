"""Report 30: Grad-CAM differentiates predictions of one call w.r.t. conv outputs of another call."""
import numpy as np
import tensorflow as tf

inputs = tf.keras.Input((8, 8, 1))
conv = tf.keras.layers.Conv2D(4, 3, name="last_conv")(inputs)
out = tf.keras.layers.Dense(3)(tf.keras.layers.GlobalAveragePooling2D()(conv))
model = tf.keras.Model(inputs, out)
grad_model = tf.keras.Model(inputs, [model.get_layer("last_conv").output, model.output])
image = np.random.rand(1, 8, 8, 1).astype("float32")

with tf.GradientTape() as tape:
    last_conv_output, _ = grad_model(image)
    preds = model(image)
    top = int(tf.argmax(preds[0]))
    class_channel = preds[:, top]
grads = tape.gradient(class_channel, last_conv_output)  # expect-cause: unconnected-source
print(grads)
