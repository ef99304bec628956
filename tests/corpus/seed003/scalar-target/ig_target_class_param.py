"""Integrated gradients for a softmax classifier, target index passed in but unused.

Idiom mirrored: the TF IG tutorial's ``compute_gradients(images,
target_class_idx)`` rewritten by a user who dropped the
``[:, target_class_idx]`` selection: ``probs = model(step)`` and
``tape.gradient(probs, step)``.

Bug: the gradient of the sum of all class probabilities (constant 1): ~0.
Label (on the model call that makes the target): scalar-target, unsafe; the
fix should use ``target_class_idx`` (a parameter in scope), not index 0.
"""
import numpy as np
import tensorflow as tf

FEATURES = 5
CLASSES = 3
STEPS = 24


def build_classifier():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(12, activation="tanh", input_shape=(FEATURES,)),
        tf.keras.layers.Dense(CLASSES, activation="softmax"),
    ])


def integrated_gradients(model, x, baseline, target_class_idx, steps=STEPS):
    grads = []
    for alpha in np.linspace(0.0, 1.0, steps + 1):
        step = baseline + alpha * (x - baseline)
        with tf.GradientTape() as tape:
            tape.watch(step)
            probs = model(step)  # expect: scalar-target unsafe
        grads.append(tape.gradient(probs, step))
    grads = tf.stack(grads)
    return (x - baseline) * tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)


def attribution_case():
    x = tf.constant(np.random.RandomState(0).rand(1, FEATURES) * 2, dtype=tf.float32)
    baseline = tf.zeros_like(x)
    model = build_classifier()
    target = 2
    attributions = integrated_gradients(model, x, baseline, target)
    return {"name": "x", "attributions": attributions.numpy(), "input": x.numpy(),
            "f_input": float(model(x)[0, target]), "f_baseline": float(model(baseline)[0, target])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
