"""Per-frame saliency with the loop inside one persistent tape.

Idiom mirrored: FGSM / saliency scripts (seen in real code collected for
issue 12) that open one ``tf.GradientTape(persistent=True)``, loop over the
examples inside it, take ``frame = frames[i]`` and write
``tape.watch(tf.convert_to_tensor(frame))`` followed by
``tape.gradient(score, tf.convert_to_tensor(frame))``.

Bug: every ``tf.convert_to_tensor(frame)`` of a NumPy row is a new tensor;
the gradient is None.
Label: per-step-tape, safe, provided the name is bound below the last
assignment of ``frame`` (inside the loop, inside the tape). Hoisting it
above the ``with`` would read ``frame`` before the loop assigns it (the bad
fix issue 12 saw).
"""
import numpy as np
import tensorflow as tf

FEATURES = 3


def build_scorer():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(
        1, input_shape=(FEATURES,),
        kernel_initializer=tf.keras.initializers.GlorotUniform(seed=7),
        bias_initializer=tf.keras.initializers.Constant(0.1))])


def frame_saliency(scorer, frames):
    maps = []
    with tf.GradientTape(persistent=True) as tape:
        for i in range(frames.shape[0]):
            frame = frames[i].astype(np.float32)
            tape.watch(tf.convert_to_tensor(frame))  # expect: per-step-tape safe
            score = scorer(tf.convert_to_tensor(frame)[None])[0, 0]
            maps.append(tape.gradient(score, tf.convert_to_tensor(frame)) * frame)
    return maps


def attribution_case():
    frames = np.random.RandomState(0).rand(3, FEATURES)
    scorer = build_scorer()
    zero = np.zeros((1, FEATURES), np.float32)
    return [{"name": "frame%d" % i, "attributions": np.asarray(m), "input": frames[i].astype(np.float32),
             "f_input": float(scorer(frames[i][None].astype(np.float32))[0, 0]),
             "f_baseline": float(scorer(zero)[0, 0])}
            for i, m in enumerate(frame_saliency(scorer, frames))]


if __name__ == "__main__":
    print([case["attributions"] for case in attribution_case()])
