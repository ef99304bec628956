"""Losses and calls that take a tensor to NumPy, for numpy-on-loss-path,
labelled by construction: conversion spelling x gradient context x use of
the result x framework.

Bugs (the loss is computed from a NumPy copy of the prediction: every
gradient is None, and graph mode raises on ``.numpy()``):

- spellings: ``numpy`` (``pred = y_pred.numpy()``), ``astype`` (a mask
  ``(pred > 0.5).astype("float32")`` of the copy), ``np_math`` (NumPy math on
  the copy, ``np.square(y_pred.numpy() - y_true)``), ``float`` (per-sample
  losses turned into Python numbers in a tape body, then summed or averaged);
- uses: ``math`` (tensor arithmetic, then a tf/ops reduction), ``reduction``
  (an ndarray method ``.mean()`` or NumPy math wrapped in ``tf.constant`` /
  ``convert_to_tensor``);
- contexts: ``compiled`` (the loss handed to ``compile``), ``tape`` (a helper
  called in a ``GradientTape``), ``tf_function`` (that tape in a
  ``tf.function`` too), ``train_step`` (the helper called in a custom
  ``train_step``), ``call`` (a Keras model's ``call`` converts its output).

Near-misses (the copy leaves TensorFlow on purpose): ``print`` (the copy is
printed), ``after_gradient`` (the loss's NumPy value logged after
``tape.gradient``; in the ``compiled`` and ``train_step`` contexts the
program has no loop of its own, so it is the plain loss).

Frameworks: ``tf_keras`` (``tf.keras``), ``tf_keras_pkg`` (``import tf_keras``
beside ``tensorflow``), ``keras3`` (``import keras`` and ``keras.ops`` only,
compiled losses: the fix is written in ``ops``).
"""

from __future__ import annotations

import itertools
from typing import Iterator

from variants import Program

FAMILY = "numpy-on-loss-path"

SPELLINGS = ("numpy", "astype", "np_math", "float")
CONTEXTS = ("compiled", "tape", "tf_function", "train_step", "call")
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


_LAYERS = ("        self.hidden = keras.layers.Dense(4, activation=\"tanh\")\n"
           "        self.out = keras.layers.Dense(1)\n")


def _call_body(spelling: str, use: str) -> str:
    """A Keras ``call`` that converts its own output."""
    if use in MISSES:
        printed = '        print("pred", y_pred.numpy())\n' if use == "print" else ""
        return printed + "        return y_pred\n"
    if spelling == "np_math":
        head = f"        out = np.tanh(y_pred.numpy()){LABEL}\n"
        return head + ("        return tf.convert_to_tensor(out) * 1.0\n" if use == "math"
                       else "        return tf.constant(out * 1.0)\n")
    head = f"        pred = y_pred.numpy(){LABEL}\n"
    weight = ""
    if spelling == "astype":
        head += '        weight = 1.0 + (pred > 0.5).astype("float32")\n'
        weight = " * weight"
    return head + (f"        return tf.tanh(pred){weight}\n" if use == "math"
                   else f"        return tf.constant(np.tanh(pred){weight})\n")


def _tape_loss(spelling: str, use: str) -> str:
    """The training loop's tape body: the loss, or (``float``) per-sample
    losses turned into Python numbers."""
    if spelling != "float" or use in MISSES:
        return "            loss = loss_fn(y, model(x))\n"
    total = "tf.add_n(losses) / 8.0" if use == "math" else "tf.convert_to_tensor(np.mean(losses), dtype=tf.float32)"
    return ("            out = model(x)\n            losses = []\n            for i in range(8):\n"
            f"                losses.append(float(loss_fn(y[i:i + 1], out[i:i + 1]))){LABEL}\n"
            f"            loss = {total}\n")


def _program(spelling: str, context: str, use: str, framework: str):
    near_miss = use in MISSES
    name = "_".join((spelling, context, use, framework))
    keras3 = framework == "keras3"
    why = ("correct: the NumPy copy leaves TensorFlow on purpose" if near_miss
           else "bug: the loss is computed from a NumPy copy of the prediction")
    lines = [f'"""numpy-on-loss-path variant {name} ({why})."""\n', _IMPORTS[framework], "\n\n"]
    in_loss = context in ("compiled", "tape", "tf_function", "train_step") and spelling != "float"
    lines.append("def loss_fn(y_true, y_pred):\n" + _loss(spelling if in_loss else "", use if in_loss else
                                                            "after_gradient", framework) + "\n\n")
    if context == "train_step":
        lines.append(
            "class Trainer(keras.Model):\n    def __init__(self):\n        super().__init__()\n" + _LAYERS
            + "\n    def call(self, x):\n        return self.out(self.hidden(x))\n\n"
            "    def train_step(self, data):\n        x, y = data\n"
            "        with tf.GradientTape() as tape:\n            loss = loss_fn(y, self(x, training=True))\n"
            "        grads = tape.gradient(loss, self.trainable_variables)\n"
            "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
            "        return {\"loss\": loss}\n\n\n"
            "def build():\n    model = Trainer()\n    model.compile(optimizer=\"adam\")\n    return model\n\n\n")
    elif context == "call":
        lines.append(
            "class Head(keras.Model):\n    def __init__(self):\n        super().__init__()\n" + _LAYERS
            + "\n    def call(self, x):\n        y_pred = self.out(self.hidden(x))\n"
            + _call_body(spelling, use) + "\n\ndef build():\n    return Head()\n\n\n")
    else:
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
    if context in ("tape", "tf_function", "call"):
        decorator = "@tf.function\n" if context == "tf_function" else ""
        log = "        history.append(float(loss.numpy()))\n" if use == "after_gradient" else ""
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
            + _tape_loss(spelling, use)
            + "        grads = tape.gradient(loss, model.trainable_variables)\n"
            "        optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
            + log + "    step(model, optimizer, x, y)\n    return history\n\n\n"
            "if __name__ == \"__main__\":\n    print(train())\n")
    else:
        lines.append("if __name__ == \"__main__\":\n"
                     "    model, x, y, _ = training_case()\n"
                     "    model.fit(x, y, epochs=1, verbose=0)\n")
    source = "".join(lines)
    if framework == "tf_keras":
        for before in (" keras.", "[keras.", "(keras."):
            source = source.replace(before, before[0] + "tf.keras.")
    return name, source, near_miss


def generate() -> Iterator[Program]:
    """Every program: spelling x context x use x framework (a Keras 3 program
    has no tape of its own: its loss is compiled; ``float`` turns per-sample
    losses into numbers in a tape body, where the model's output is seen)."""
    for spelling, context, use, framework in itertools.product(SPELLINGS, CONTEXTS, USES + MISSES, FRAMEWORKS):
        if framework == "keras3" and context != "compiled" or spelling == "float" and context != "tape":
            continue
        name, source, near_miss = _program(spelling, context, use, framework)
        yield Program(name, source, near_miss)
