"""Vanilla-gradient saliency for each example of a batch, one tape per row.

Idiom mirrored: saliency ports that loop over a batch tensor and write
``tape.watch(x_batch[j])``, ``model(x_batch[j][tf.newaxis])`` and
``tape.gradient(score, x_batch[j])``.

Bug: the row slice is re-evaluated each time; gradient None.
Label: per-step-tape, safe (hoist ``x_batch[j]`` to one name above the
``with``; ``x_batch`` and ``j`` are not assigned after that point).
"""
import numpy as np
import tensorflow as tf

FEATURES = 4


def build_scorer():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(
        1, input_shape=(FEATURES,),
        kernel_initializer=tf.keras.initializers.GlorotUniform(seed=3),
        bias_initializer=tf.keras.initializers.Constant(0.2))])


def gradient_times_input(scorer, x_batch):
    maps = []
    for j in range(x_batch.shape[0]):
        with tf.GradientTape() as tape:
            tape.watch(x_batch[j])  # expect: per-step-tape safe
            score = scorer(x_batch[j][tf.newaxis])[0, 0]
        maps.append(tape.gradient(score, x_batch[j]) * x_batch[j])
    return tf.stack(maps)


def attribution_case():
    rng = np.random.RandomState(0)
    x_batch = tf.constant(rng.rand(3, FEATURES), dtype=tf.float32)
    scorer = build_scorer()
    maps = gradient_times_input(scorer, x_batch)
    zero = np.zeros((1, FEATURES), np.float32)
    return [{"name": "row%d" % j, "attributions": maps[j].numpy(), "input": x_batch[j].numpy(),
             "f_input": float(scorer(x_batch[j][None])[0, 0]),
             "f_baseline": float(scorer(zero)[0, 0])} for j in range(3)]


if __name__ == "__main__":
    print([case["attributions"].sum() for case in attribution_case()])
