"""Integer class ids converted once, used as ints and as floats.

Idiom mirrored: classification scripts that keep ``labels`` as an integer
tensor for ``tf.one_hot``/``tf.gather`` and make a separate float copy
``labels_f = tf.cast(labels, tf.float32)`` for a smoothing term.

Correct code, no label: the cast goes to another name and the integer
tensor is read again, so there is nothing to merge.
"""
import numpy as np
import tensorflow as tf

CLASSES = 3


def targets(ids):
    labels = tf.convert_to_tensor(ids)
    labels_f = tf.cast(labels, tf.float32)
    onehot = tf.one_hot(labels, CLASSES)
    return 0.9 * onehot + 0.1 * tf.expand_dims(labels_f, 1) / CLASSES


def training_case():
    rng = np.random.RandomState(0)
    ids = rng.randint(0, CLASSES, size=12)
    x = tf.constant(rng.rand(12, 4), dtype=tf.float32)
    y = targets(ids)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(CLASSES, input_shape=(4,))])
    return model, x, y


if __name__ == "__main__":
    print(training_case()[2].shape)
