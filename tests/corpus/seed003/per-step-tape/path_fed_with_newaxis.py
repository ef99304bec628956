"""Per-step IG where the watched slice is fed with an extra batch axis.

Idiom mirrored: image IG code that interpolates a single image (no batch
axis), stacks the path, watches ``path[k]`` and calls the model on
``path[k][None]`` (or ``tf.expand_dims``), then asks the gradient for
``path[k]``.

Bug: three different slices; gradient None.
Label: per-step-tape, safe: every use of ``path[k]`` in the step (watched,
fed as ``path[k][None]``, differentiated) must become the same name.
"""
import numpy as np
import tensorflow as tf

H, W = 4, 4
STEPS = 32


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(H, W)),
        tf.keras.layers.Dense(6, activation="tanh"),
        tf.keras.layers.Dense(1),
    ])


def integrated_gradients(model, image, baseline, steps=STEPS):
    alphas = tf.linspace(0.0, 1.0, steps + 1)
    path = tf.stack([baseline + alphas[j] * (image - baseline) for j in range(steps + 1)])
    total = tf.zeros_like(image)
    for k in range(steps + 1):
        with tf.GradientTape() as tape:
            tape.watch(path[k])  # expect: per-step-tape safe
            score = model(path[k][None])[0, 0]
        grad = tape.gradient(score, path[k])
        weight = 0.5 if k in (0, steps) else 1.0
        total += weight * grad
    return (image - baseline) * total / steps


def attribution_case():
    rng = np.random.RandomState(1)
    image = tf.constant(rng.rand(H, W), dtype=tf.float32)
    baseline = tf.zeros_like(image)
    model = build_model()
    attributions = integrated_gradients(model, image, baseline)
    return {"name": "image", "attributions": attributions.numpy(), "input": image.numpy(),
            "f_input": float(model(image[None])[0, 0]),
            "f_baseline": float(model(baseline[None])[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"].sum())
