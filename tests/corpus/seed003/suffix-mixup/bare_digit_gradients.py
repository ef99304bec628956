"""Two-input integrated gradients with bare digit names (``x1``/``x2``,
``avg1``/``avg2``) and a per-input path function.

Idiom mirrored: notebook-style IG for a two-input model where each input's
path gradients come from one helper called with the input's position, and the
second attribution line was copied from the first.

Bug: ``ig2`` multiplies ``x2``'s difference by ``avg1``, the gradients along
``x1``'s path, while ``avg2`` exists: completeness fails for ``x2``.
Label: suffix-mixup, unsafe (the data flow proves the crossing; the names do
not matter).
"""
import numpy as np
import tensorflow as tf

F = 3
STEPS = 32


def build():
    tf.random.set_seed(0)
    a = tf.keras.layers.Input(shape=(F,))
    b = tf.keras.layers.Input(shape=(F,))
    h = tf.keras.layers.Dense(6, activation="tanh")(tf.keras.layers.Concatenate()([a, b]))
    return tf.keras.Model([a, b], tf.keras.layers.Dense(1)(h))


def path_grads(model, xs, bs, k):
    out = []
    for t in np.linspace(0.0, 1.0, STEPS + 1):
        p = bs[k] + t * (xs[k] - bs[k])
        feed = list(xs)
        feed[k] = p
        with tf.GradientTape() as tape:
            tape.watch(p)
            y = model(feed)[:, 0]
        out.append(tape.gradient(y, p))
    out = tf.stack(out)
    return tf.reduce_mean((out[1:] + out[:-1]) / 2.0, axis=0)


def ig(model, x1, x2):
    b1 = tf.zeros_like(x1)
    b2 = tf.zeros_like(x2)
    avg1 = path_grads(model, [x1, x2], [b1, b2], 0)
    avg2 = path_grads(model, [x1, x2], [b1, b2], 1)
    ig1 = (x1 - b1) * avg1
    ig2 = (x2 - b2) * avg1  # expect: suffix-mixup unsafe
    return ig1, ig2


def attribution_case():
    np.random.seed(0)
    x1 = tf.constant(np.random.rand(1, F), tf.float32)
    x2 = tf.constant(np.random.rand(1, F) - 0.5, tf.float32)
    model = build()
    ig1, ig2 = ig(model, x1, x2)
    zero = tf.zeros((1, F))

    def f(a, b):
        return float(model([a, b])[0, 0])

    return [{"name": "x1", "attributions": ig1.numpy(), "input": x1.numpy(),
             "f_input": f(x1, x2), "f_baseline": f(zero, x2)},
            {"name": "x2", "attributions": ig2.numpy(), "input": x2.numpy(),
             "f_input": f(x1, x2), "f_baseline": f(x1, zero)}]


if __name__ == "__main__":
    for case in attribution_case():
        print(case["name"], case["attributions"].sum(), case["f_input"] - case["f_baseline"])
