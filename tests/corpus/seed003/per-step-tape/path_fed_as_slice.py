"""Per-step IG on a stacked path, fed to the model as a one-row slice.

Idiom mirrored: IG ports that keep the batch axis by feeding
``path[k:k + 1]`` (instead of ``path[k][None]``) while watching ``path[k]``
and differentiating w.r.t. ``path[k]``.

Bug: the watched row and the fed slice are different tensors; gradient None.
Label: per-step-tape, safe: the watched, fed and differentiated uses of
``path`` at ``k`` must all become one name (fed with a new leading axis).
"""
import numpy as np
import tensorflow as tf

FEATURES = 4
STEPS = 32


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(6, activation="tanh", input_shape=(FEATURES,)),
        tf.keras.layers.Dense(1),
    ])


def integrated_gradients(model, x, baseline):
    alphas = np.linspace(0.0, 1.0, STEPS + 1)
    path = tf.stack([baseline + a * (x - baseline) for a in alphas])
    grads = []
    for k in range(STEPS + 1):
        with tf.GradientTape() as tape:
            tape.watch(path[k])  # expect: per-step-tape safe
            score = model(path[k:k + 1])[0, 0]
        grads.append(tape.gradient(score, path[k]))
    grads = tf.stack(grads)
    return (x - baseline) * tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)


def attribution_case():
    x = tf.constant(np.random.RandomState(3).rand(FEATURES), dtype=tf.float32)
    baseline = tf.zeros_like(x)
    model = build_model()
    return {"name": "x", "attributions": integrated_gradients(model, x, baseline).numpy(),
            "input": x.numpy(), "f_input": float(model(x[None])[0, 0]),
            "f_baseline": float(model(baseline[None])[0, 0])}


if __name__ == "__main__":
    print(attribution_case()["attributions"])
