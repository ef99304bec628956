"""Input gradient of a PINN residual where the watched tensor is converted twice.

Idiom mirrored: forum questions "tape.gradient returns None" where the code
is ``tape.watch(tf.convert_to_tensor(x_np))`` and later
``tape.gradient(u, tf.convert_to_tensor(x_np))``: each conversion makes a new
tensor.

Bug: the watched and differentiated tensors are two different objects;
gradient None.
Label: per-step-tape, safe (the general form: hoist
``tf.convert_to_tensor(x_np)`` to one name; ``x_np`` is bound once, above).
"""
import numpy as np
import tensorflow as tf


def build_net():
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(10, activation="tanh", input_shape=(1,)),
        tf.keras.layers.Dense(1),
    ])


def input_slope(net, x_np):
    with tf.GradientTape() as tape:
        tape.watch(tf.convert_to_tensor(x_np))  # expect: per-step-tape safe
        u = net(tf.convert_to_tensor(x_np))
    return tape.gradient(u, tf.convert_to_tensor(x_np))


def attribution_case():
    x_np = np.linspace(0.1, 0.4, 1, dtype=np.float32).reshape(1, 1)
    net = build_net()
    zero = np.zeros((1, 1), np.float32)
    # integrated gradients along the segment from 0 to x (64 trapezoids)
    alphas = np.linspace(0.0, 1.0, 65, dtype=np.float32)
    slopes = [input_slope(net, a * x_np) for a in alphas]
    slopes = tf.stack(slopes)
    avg = tf.reduce_mean((slopes[:-1] + slopes[1:]) / 2.0, axis=0)
    return {"name": "x", "attributions": (x_np * avg).numpy(), "input": x_np,
            "f_input": float(net(x_np)[0, 0]), "f_baseline": float(net(zero)[0, 0])}


if __name__ == "__main__":
    print(attribution_case())
