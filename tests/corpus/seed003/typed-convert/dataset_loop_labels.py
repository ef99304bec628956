"""Custom training loop over a tf.data pipeline with integer labels.

Idiom mirrored: Keras custom-loop tutorials iterating ``for xb, yb in
dataset`` and writing ``yb = tf.convert_to_tensor(yb)`` / ``yb = tf.cast(yb,
tf.float32)`` for a regression loss.

Correct code. Label: typed-convert, report only: a ``tf.data`` loop variable
is a tensor (int64 here), so ``convert_to_tensor(yb, dtype=tf.float32)``
would raise ValueError.
"""
import numpy as np
import tensorflow as tf


def make_dataset():
    rng = np.random.RandomState(0)
    x = rng.rand(32, 3).astype("float32")
    y = (x.sum(axis=1, keepdims=True) * 3).astype("int64")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(8)


def train(model, dataset, epochs=2):
    optimizer = tf.keras.optimizers.SGD(0.05)
    for _ in range(epochs):
        for xb, yb in dataset:
            yb = tf.convert_to_tensor(yb)  # expect: typed-convert report
            yb = tf.cast(yb, tf.float32)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(xb) - yb))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return float(loss)


def training_case():
    x = tf.constant(np.random.RandomState(1).rand(8, 3), dtype=tf.float32)
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))]), x, y


if __name__ == "__main__":
    model = training_case()[0]
    print(train(model, make_dataset()))
