"""Variants of outside-tape: a forward pass or a target computed where the
gradient does not see it, in every place users put it, crossed with the
model style, the loss spelling and what the code around it does.

Each program is a script that trains a few steps and asserts that the loss
went down (so ``verify`` judges it: the before fails with a None gradient or
"No gradients provided", the after trains). Labels
(``# expect: outside-tape <kind>``) sit where the finding starts:

- before: ``pred = <forward>`` above the ``with`` (the statement);
- after: ``loss = <loss of pred>`` after the ``with`` (the statement);
- call: ``tape.gradient(<loss of pred>, ...)`` (the target, same line);
- lambda: ``loss = lambda: cost`` over ``cost`` computed before (the lambda);
- closure: ``pred = <forward>`` read by a ``def`` given to ``minimize``
  (the statement).

Kinds: safe; unsafe when the moved code draws random numbers (``noisy``);
report when a ``print`` between reads what would move (``printed``, before
and after; elsewhere the name stays bound and the fix copies).

Near-misses (no finding, byte-identical): the block recomputes the forward
pass (``recomputed``); the block calls the model and also reads a value
kept from before on purpose (``kept``); the lambda computes the loss itself
(``inlambda``); a persistent tape re-entered with ``with tape:`` records the
loss in a second block (``reentered``). ``minimize`` runs on a
``tf.compat.v1.train`` optimizer: Keras 3's optimizers have no ``minimize``.
"""

from __future__ import annotations

import itertools
from typing import Dict, Iterator, Optional, Tuple

from . import Program

FAMILY = "outside-tape"

# style -> (setup lines, forward pass of `{inp}`, sources)
STYLES: Dict[str, Tuple[str, str, str]] = {
    "sequential": ("model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])\n",
                   "model({inp})", "model.trainable_variables"),
    "subclass": ("class Regressor(tf.keras.Model):\n"
                 "    def __init__(self):\n"
                 "        super().__init__()\n"
                 "        self.dense = tf.keras.layers.Dense(1)\n"
                 "\n"
                 "    def call(self, inputs):\n"
                 "        return self.dense(inputs)\n"
                 "\n"
                 "\n"
                 "model = Regressor()\n"
                 "model(x)\n", "model({inp})", "model.trainable_variables"),
    "raw": ("w = tf.Variable(tf.random.normal((3, 1), seed=1), name=\"w\")\n"
            "b = tf.Variable(tf.zeros((1,)), name=\"b\")\n", "tf.matmul({inp}, w) + b", "[w, b]"),
}
# loss spelling of a prediction `{p}`
LOSSES = {
    "mse": "tf.reduce_mean(tf.square({p} - y))",
    "huber": "tf.reduce_mean(tf.keras.losses.huber(y, {p}))",
    "negcorr": "-tf.reduce_mean({p} * y)",
}
PLACES = ("before", "after", "call", "lambda", "closure")
EFFECTS = ("pure", "noisy", "printed")
NEAR_MISSES = ("recomputed", "kept", "inlambda", "reentered")
DIMENSIONS = {"place": PLACES + NEAR_MISSES, "style": tuple(STYLES), "loss": tuple(LOSSES), "effects": EFFECTS}

_NOISY = "x + tf.random.normal(tf.shape(x), stddev=0.01)"
_MOVED = {"before", "lambda", "closure"}  # places whose fix moves the forward pass


def _kind(place: str, effect: str) -> Optional[str]:
    if effect == "noisy":
        return "unsafe" if place in _MOVED else "safe"
    if effect == "printed" and place in ("before", "after"):
        return "report"
    return "safe"


def _body(place: str, forward: str, clean: str, sources: str, loss, effect: str, label: str) -> str:
    printed = effect == "printed"
    tape_step = ("    grads = tape.gradient(loss, {sources})\n"
                 "    optimizer.apply_gradients(zip(grads, {sources}))\n")
    if place == "before":
        return ("for step in range(STEPS):\n"
                f"    pred = {forward}{label}\n"
                + ("    print(float(tf.reduce_mean(pred)))\n" if printed else "")
                + "    with tf.GradientTape() as tape:\n"
                f"        loss = {loss('pred')}\n"
                + tape_step.format(sources=sources))
    if place == "after":
        return ("for step in range(STEPS):\n"
                "    with tf.GradientTape() as tape:\n"
                f"        pred = {forward}\n"
                f"    loss = {loss('pred')}{label}\n"
                + ("    print(float(loss))\n" if printed else "")
                + tape_step.format(sources=sources))
    if place == "call":
        return ("for step in range(STEPS):\n"
                "    with tf.GradientTape() as tape:\n"
                f"        pred = {forward}\n"
                + ("    print(float(tf.reduce_mean(pred)))\n" if printed else "")
                + f"    grads = tape.gradient({loss('pred')}, {sources}){label}\n"
                f"    optimizer.apply_gradients(zip(grads, {sources}))\n")
    if place == "lambda":
        return (f"cost = {loss(forward)}\n"
                + ("print(float(cost))\n" if printed else "")
                + f"loss = lambda: cost{label}\n"
                "for step in range(STEPS):\n"
                f"    optimizer.minimize(loss, var_list={sources})\n")
    if place == "closure":
        return (f"pred = {forward}{label}\n"
                + ("print(float(tf.reduce_mean(pred)))\n" if printed else "")
                + "\n\ndef loss_of_pred():\n"
                f"    return {loss('pred')}\n"
                "\n\n"
                "for step in range(STEPS):\n"
                f"    optimizer.minimize(loss_of_pred, var_list={sources})\n")
    if place == "recomputed":
        return ("for step in range(STEPS):\n"
                f"    pred = {forward}\n"
                + ("    print(float(tf.reduce_mean(pred)))\n" if printed else "")
                + "    with tf.GradientTape() as tape:\n"
                f"        pred = {forward}\n"
                f"        loss = {loss('pred')}\n"
                + tape_step.format(sources=sources))
    if place == "kept":
        return (f"initial = {clean}\n"
                + ("print(float(tf.reduce_mean(initial)))\n" if printed else "")
                + "for step in range(STEPS):\n"
                "    with tf.GradientTape() as tape:\n"
                f"        pred = {forward}\n"
                f"        loss = {loss('pred')} + 0.1 * tf.reduce_mean(tf.square(pred - initial))\n"
                + tape_step.format(sources=sources))
    if place == "inlambda":
        return (("print(float(tf.reduce_mean(" + clean + ")))\n" if printed else "")
                + f"loss = lambda: {loss(forward)}\n"
                "for step in range(STEPS):\n"
                f"    optimizer.minimize(loss, var_list={sources})\n")
    # reentered
    return ("for step in range(STEPS):\n"
            "    tape = tf.GradientTape(persistent=True)\n"
            "    with tape:\n"
            f"        pred = {forward}\n"
            + ("    print(float(tf.reduce_mean(pred)))\n" if printed else "")
            + "    with tape:\n"
            f"        loss = {loss('pred')}\n"
            + tape_step.format(sources=sources)
            + "    del tape\n")


def _program(place: str, style: str, loss_name: str, effect: str) -> Program:
    setup, forward, sources = STYLES[style]
    near_miss = place in NEAR_MISSES
    kind = None if near_miss else _kind(place, effect)
    label = f"  # expect: outside-tape {kind}" if kind else ""
    inp = _NOISY if effect == "noisy" else "x"
    clean = forward.format(inp="x")
    loss = lambda p: LOSSES[loss_name].format(p=p)  # noqa: E731
    minimizing = place in ("lambda", "closure", "inlambda")
    optimizer = "tf.compat.v1.train.GradientDescentOptimizer(0.05)" if minimizing \
        else "tf.keras.optimizers.SGD(0.05)"
    why = "a near-miss: correct as written" if near_miss else f"outside-tape ({place}): {kind}"
    source = (f'"""outside-tape variant: {place}, {style}, {loss_name}, {effect} ({why})."""\n'
              "import numpy as np\n"
              "import tensorflow as tf\n"
              "\n"
              "tf.random.set_seed(0)\n"
              "np.random.seed(0)\n"
              "STEPS = 3\n"
              "x = tf.constant(np.random.rand(16, 3), dtype=tf.float32)\n"
              "y = tf.reduce_sum(x, axis=1, keepdims=True)\n"
              + setup
              + f"optimizer = {optimizer}\n"
              "\n"
              "\n"
              "def evaluate():\n"
              f"    return float({loss(clean)})\n"
              "\n"
              "\n"
              "start = evaluate()\n"
              + _body(place, forward.format(inp=inp), clean, sources, loss, effect, label)
              + "assert evaluate() < start, (start, evaluate())\n")
    return Program(f"{place}_{style}_{loss_name}_{effect}", source, near_miss)


def generate() -> Iterator[Program]:
    for place, style, loss_name, effect in itertools.product(PLACES + NEAR_MISSES, STYLES, LOSSES, EFFECTS):
        if place in NEAR_MISSES and effect == "noisy":
            continue  # nothing moves, so a draw changes nothing a near-miss shows
        yield _program(place, style, loss_name, effect)
