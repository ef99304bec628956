"""A tiny U-Net decoder: each level adds the skip connection of the level above.

Idiom mirrored: U-Net code with ``conv1``..``conv3`` and ``up2 = up(conv3)
+ conv2``; digits name depth levels, and reading a neighbouring level is
the architecture.

Correct code, no label: bare digit suffixes without twin evidence (no
statement of the same shape for another digit using only its own digit).
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers


def build_unet(side=8):
    tf.random.set_seed(0)
    inp = layers.Input(shape=(side, side, 1))
    conv1 = layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    pool1 = layers.MaxPooling2D()(conv1)
    conv2 = layers.Conv2D(8, 3, padding="same", activation="relu")(pool1)
    up1 = layers.UpSampling2D()(conv2)
    merge1 = layers.Conv2D(4, 1)(up1) + conv1
    out = layers.Conv2D(1, 1)(merge1)
    return tf.keras.Model(inp, out)


def training_case():
    rng = np.random.RandomState(0)
    x = tf.constant(rng.rand(4, 8, 8, 1), tf.float32)
    return build_unet(), x, x * 0.5


if __name__ == "__main__":
    model, x, _ = training_case()
    print(model(x).shape)
