"""A custom train_step that accumulates per-head losses in np.zeros.

Mirrors multi-head / multi-task models overriding train_step and keeping a
small NumPy array of head losses inside the tape before summing them.
Gradients come back None (Keras: "No gradients provided"). Safe fix.
"""
import random

import numpy as np
import tensorflow as tf

HEADS, F = 3, 4


class MultiHead(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.trunk = tf.keras.layers.Dense(8, activation="relu")
        self.heads = [tf.keras.layers.Dense(1) for _ in range(HEADS)]

    def call(self, x):
        h = self.trunk(x)
        return tf.concat([head(h) for head in self.heads], axis=-1)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            head_losses = np.zeros(HEADS)
            for k in range(HEADS):
                head_losses[k] = tf.reduce_mean(tf.square(pred[:, k] - y[:, 0]))  # expect: numpy-accumulator safe
            loss = tf.reduce_sum(head_losses)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


def training_case():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(4, F).astype("float32")
    y = np.random.rand(4, HEADS).astype("float32")
    model = MultiHead()
    model(x)
    return model, x, y
