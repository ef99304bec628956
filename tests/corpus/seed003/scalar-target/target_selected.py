"""Integrated gradients with the target class selected, as the tutorial does.

Idiom mirrored: the TF IG tutorial's ``probs = tf.nn.softmax(logits,
axis=-1)[:, target_class_idx]`` before ``tape.gradient(probs, images)``.

Correct code, no label.
"""
import numpy as np
import tensorflow as tf

FEATURES = 5
STEPS = 24


def build_classifier():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(12, activation="tanh", input_shape=(FEATURES,)),
        tf.keras.layers.Dense(3),
    ])


def compute_gradients(model, images, target_class_idx):
    with tf.GradientTape() as tape:
        tape.watch(images)
        logits = model(images)
        probs = tf.nn.softmax(logits, axis=-1)[:, target_class_idx]
    return tape.gradient(probs, images)


def attribution_case():
    x = tf.constant(np.random.RandomState(0).rand(1, FEATURES), dtype=tf.float32)
    baseline = tf.zeros_like(x)
    model = build_classifier()
    alphas = tf.linspace(0.0, 1.0, STEPS + 1)[:, tf.newaxis]
    path = baseline + alphas * (x - baseline)
    grads = compute_gradients(model, path, 1)
    avg = tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0, keepdims=True)

    def prob(v):
        return float(tf.nn.softmax(model(v), axis=-1)[0, 1])

    return {"name": "x", "attributions": ((x - baseline) * avg).numpy(), "input": x.numpy(),
            "f_input": prob(x), "f_baseline": prob(baseline)}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
