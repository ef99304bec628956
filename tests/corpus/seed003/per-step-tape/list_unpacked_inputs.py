"""Node-feature saliency for a two-input graph model; inputs travel as a list.

Idiom mirrored: graph-classification saliency helpers (stellargraph-style)
that unpack ``features, adjacency = inputs`` and then write
``tape.watch(inputs[0])`` / ``tape.gradient(pred, inputs[0])``.

Correct code, no label: the function unpacks ``inputs`` into two names, so
it is a Python sequence and ``inputs[0]`` is the same tensor every time.
"""
import numpy as np
import tensorflow as tf

NODES, FEATURES = 4, 3


def build_model():
    tf.random.set_seed(0)
    features = tf.keras.layers.Input(shape=(NODES, FEATURES))
    adjacency = tf.keras.layers.Input(shape=(NODES, NODES))
    mixed = tf.keras.layers.Lambda(lambda t: tf.matmul(t[1], t[0]))([features, adjacency])
    pooled = tf.keras.layers.GlobalAveragePooling1D()(mixed)
    return tf.keras.Model([features, adjacency], tf.keras.layers.Dense(1)(pooled))


def node_saliency(model, inputs):
    features, adjacency = inputs
    with tf.GradientTape() as tape:
        tape.watch(inputs[0])
        pred = model([features, adjacency])
    return tape.gradient(pred, inputs[0])


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    feats = tf.constant(rng.rand(1, NODES, FEATURES), tf.float32)
    adj = tf.constant((rng.rand(1, NODES, NODES) > 0.5).astype("float32"))
    print(node_saliency(build_model(), [feats, adj]))
