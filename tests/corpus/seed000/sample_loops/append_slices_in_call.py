"""Per-sample slices appended to a list inside a Keras `call`.

Mirrors the loop written in public attention / set-encoder code:
`for i in range(x.shape[0]): outs.append(self.dense(x[i:i+1]))` and then
`tf.concat(outs, 0)`. One layer call per sample; vectorize-sample-loop
calls the layers once on the whole batch (unsafe: a batch-dependent layer
would differ).
"""
import random

import numpy as np
import tensorflow as tf

B, F, U = 4, 3, 5


class SetEncoder(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embed = tf.keras.layers.Dense(U, activation="relu")
        self.project = tf.keras.layers.Dense(U)

    def call(self, x):
        outs = []
        for i in range(x.shape[0]):  # expect: vectorize-sample-loop unsafe
            h = self.embed(x[i:i + 1])
            outs.append(self.project(h))
        return tf.concat(outs, 0)


def outputs():
    random.seed(0)
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(B, F).astype("float32")
    return {"codes": SetEncoder()(x)}


if __name__ == "__main__":
    print(outputs()["codes"].shape)
