"""Gradient x input for an image/text model, gradients of both inputs from
one ``tape.gradient`` call, names that are words (no suffix at all).

Idiom mirrored: multimodal saliency code (``pixel_saliency`` /
``token_saliency``) that unpacks ``tape.gradient(score, [image, text])``.

Bug: ``text_attribution`` multiplies the text's difference by
``pixel_saliency``, the image's gradient; ``token_saliency`` is in scope.
Label: suffix-mixup, unsafe. The ``contrast`` line multiplies the text's
difference by a statistic of the image: no gradient, no finding.
"""
import numpy as np
import tensorflow as tf

F = 4


def build():
    tf.random.set_seed(0)
    image = tf.keras.layers.Input(shape=(F,))
    text = tf.keras.layers.Input(shape=(F,))
    joined = tf.keras.layers.Concatenate()([image, text])
    return tf.keras.Model([image, text], tf.keras.layers.Dense(1)(tf.keras.layers.Dense(5)(joined)))


def explain(model, image, text):
    blank_image = tf.zeros_like(image)
    blank_text = tf.zeros_like(text)
    with tf.GradientTape() as tape:
        tape.watch([image, text])
        score = model([image, text])[:, 0]
    pixel_saliency, token_saliency = tape.gradient(score, [image, text])
    brightness = tf.reduce_mean(image)
    contrast = (text - blank_text) * brightness
    image_attribution = (image - blank_image) * pixel_saliency
    text_attribution = (text - blank_text) * pixel_saliency  # expect: suffix-mixup unsafe
    return image_attribution, text_attribution, contrast


def attribution_case():
    np.random.seed(0)
    image = tf.constant(np.random.rand(1, F), tf.float32)
    text = tf.constant(np.random.rand(1, F) - 0.5, tf.float32)
    model = build()
    image_attribution, text_attribution, _ = explain(model, image, text)
    zero = tf.zeros((1, F))

    def f(a, b):
        return float(model([a, b])[0, 0])

    return [{"name": "image", "attributions": image_attribution.numpy(), "input": image.numpy(),
             "f_input": f(image, text), "f_baseline": f(zero, text)},
            {"name": "text", "attributions": text_attribution.numpy(), "input": text.numpy(),
             "f_input": f(image, text), "f_baseline": f(image, zero)}]


if __name__ == "__main__":
    for case in attribution_case():
        print(case["name"], case["attributions"].sum(), case["f_input"] - case["f_baseline"])
