"""Siamese embeddings normalised per branch; one norm taken from the other branch.

Idiom mirrored: contrastive/siamese training code with ``emb_1``/``emb_2``
and ``norm_1``/``norm_2`` per branch, written twice by hand.

Bug: ``unit_2`` divides by ``norm_1``; the distance is wrong but finite, so
training "works".
Label (issue 24): none. A statistic, not a gradient: issue 24 says a
crossing whose factor is not a gradient is never a suffix-mixup finding
(the former label came from the name rule).
"""
import numpy as np
import tensorflow as tf


def build_encoder():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(6,))])


def cosine_distance(encoder, a, b):
    emb_1 = encoder(a)
    emb_2 = encoder(b)
    norm_1 = tf.norm(emb_1, axis=1, keepdims=True)
    norm_2 = tf.norm(emb_2, axis=1, keepdims=True)
    unit_1 = emb_1 / norm_1
    unit_2 = emb_2 / norm_1
    return 1.0 - tf.reduce_sum(unit_1 * unit_2, axis=1)


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    print(cosine_distance(build_encoder(), tf.constant(rng.rand(3, 6), tf.float32),
                          tf.constant(rng.rand(3, 6), tf.float32)))
