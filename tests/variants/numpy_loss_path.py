"""Losses that take a tensor to NumPy, for numpy-on-loss-path, labelled by
construction: conversion spelling x gradient context x use of the result x
framework.

Bugs (the loss is computed from a NumPy copy of ``y_pred``: every gradient
is None, and graph mode raises on ``.numpy()``):

- spellings: ``numpy`` (``pred = y_pred.numpy()``), ``astype`` (a mask
  ``(y_pred.numpy() > 0.5).astype("float32")``), ``np_math`` (NumPy math on
  the copy, ``np.square(y_pred.numpy() - y_true)``);
- uses: ``math`` (tensor arithmetic, then a tf/ops reduction), ``reduction``
  (an ndarray method ``.mean()`` wrapped in ``tf.constant`` / ``convert_to_tensor``);
- contexts: ``compiled`` (the loss handed to ``compile``), ``tape`` (a helper
  called in a ``GradientTape``), ``tf_function`` (that tape in a ``tf.function``).

Near-misses (the copy leaves TensorFlow on purpose): ``print`` (the copy is
printed in the loss), ``after_gradient`` (the loss's NumPy value logged after
``tape.gradient``).

Frameworks: ``tf_keras`` (``tf.keras``), ``tf_keras_pkg`` (``import tf_keras``
beside ``tensorflow``), ``keras3`` (``import keras`` and ``keras.ops`` only:
the fix is written in ``ops``).
"""

from __future__ import annotations

import itertools
from typing import Iterator

from variants import Program

FAMILY = "numpy-on-loss-path"

SPELLINGS = ("numpy", "astype", "np_math")
CONTEXTS = ("compiled", "tape", "tf_function")
USES = ("math", "reduction")
MISSES = ("print", "after_gradient")
FRAMEWORKS = ("tf_keras", "tf_keras_pkg", "keras3")

DIMENSIONS = {
    "conversion spelling": SPELLINGS,
    "context": CONTEXTS,
    "use of the result (bug / near-miss)": USES + MISSES,
    "framework": FRAMEWORKS,
}

LABEL = "  # expect: numpy-on-loss-path safe"

_IMPORTS = {
    "tf_keras": "import numpy as np\nimport tensorflow as tf\n",
    "tf_keras_pkg": "import numpy as np\nimport tensorflow as tf\nimport tf_keras as keras\n",
    "keras3": "import keras\nimport numpy as np\nfrom keras import ops\n",
}


def _loss(spelling: str, use: str, framework: str) -> str:
    """The loss function's body lines."""
    mean, square = ("ops.mean", "ops.square") if framework == "keras3" else ("tf.reduce_mean", "tf.square")
    wrap = "ops.convert_to_tensor" if framework == "keras3" else "tf.constant"
    if use == "print":
        return f'    print("pred", y_pred.numpy())\n    return {mean}({square}(y_true - y_pred))\n'
    if use == "after_gradient":
        return f"    return {mean}({square}(y_true - y_pred))\n"
    if spelling == "numpy":
        head = f"    pred = y_pred.numpy(){LABEL}\n"
        error = f"{square}(y_true - pred)" if use == "math" else "np.square(pred - y_true)"
    elif spelling == "astype":
        head = (f"    pred = y_pred.numpy(){LABEL}\n"
                f'    weight = 1.0 + (pred > 0.5).astype("float32")\n')
        error = f"{square}(y_true - pred) * weight" if use == "math" else "np.square(pred - y_true) * weight"
    else:
        head = f"    error = np.square(y_pred.numpy() - y_true){LABEL}\n"
        error = "error"
    if use == "math":
        return head + f"    return {mean}({error} * 1.0)\n"
    return head + f"    return {wrap}(({error}).mean())\n"


def _program(spelling: str, context: str, use: str, framework: str):
    near_miss = use in MISSES
    name = "_".join((spelling, context, use, framework))
    keras3 = framework == "keras3"
    why = ("correct: the NumPy copy leaves TensorFlow on purpose" if near_miss
           else "bug: the loss is computed from a NumPy copy of y_pred")
    lines = [f'"""numpy-on-loss-path variant {name} ({why})."""\n', _IMPORTS[framework], "\n\n"]
    lines.append("def loss_fn(y_true, y_pred):\n" + _loss(spelling, use, framework) + "\n\n")
    lines.append(
        "def build():\n"
        "    model = keras.Sequential([keras.layers.Dense(4, activation=\"tanh\"), keras.layers.Dense(1)])\n"
        + ("    model.compile(optimizer=\"adam\", loss=loss_fn)\n" if context == "compiled" else "")
        + "    return model\n\n\n")
    seed = "keras.utils.set_random_seed(0)" if keras3 else "tf.random.set_seed(0)"
    lines.append(
        "def training_case():\n"
        f"    np.random.seed(0)\n    {seed}\n"
        "    x = np.random.rand(8, 3).astype(\"float32\")\n"
        "    y = np.random.rand(8, 1).astype(\"float32\")\n"
        "    model = build()\n    model(x)\n    return model, x, y, loss_fn\n\n\n")
    if context != "compiled" and not keras3:
        decorator = "@tf.function\n" if context == "tf_function" else ""
        log = "    history.append(float(loss.numpy()))\n" if use == "after_gradient" and not decorator else ""
        lines.append(
            f"{decorator}def step(model, optimizer, x, y):\n"
            "    with tf.GradientTape() as tape:\n"
            "        loss = loss_fn(y, model(x))\n"
            "    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
            "    return loss\n\n\n"
            "def train(steps=3):\n"
            "    model, x, y, _ = training_case()\n"
            "    optimizer = keras.optimizers.SGD(0.1)\n    history = []\n"
            "    for _ in range(steps):\n"
            "        with tf.GradientTape() as tape:\n"
            "            loss = loss_fn(y, model(x))\n"
            "        grads = tape.gradient(loss, model.trainable_variables)\n"
            "        optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
            + log + "    step(model, optimizer, x, y)\n    return history\n\n\n"
            "if __name__ == \"__main__\":\n    print(train())\n")
    else:
        lines.append("if __name__ == \"__main__\":\n"
                     "    model, x, y, _ = training_case()\n"
                     + ("    model.compile(optimizer=\"adam\", loss=loss_fn)\n" if context != "compiled" else "")
                     + "    model.fit(x, y, epochs=1, verbose=0)\n")
    source = "".join(lines)
    if framework == "tf_keras":
        source = source.replace(" keras.", " tf.keras.").replace("[keras.", "[tf.keras.")
    return name, source, near_miss


def generate() -> Iterator[Program]:
    """Every program: spelling x context x use x framework (a Keras 3 program
    has no tape of its own: its loss is compiled, or a near-miss)."""
    for spelling, context, use, framework in itertools.product(SPELLINGS, CONTEXTS, USES + MISSES, FRAMEWORKS):
        if framework == "keras3" and context != "compiled":
            continue
        name, source, near_miss = _program(spelling, context, use, framework)
        yield Program(name, source, near_miss)
