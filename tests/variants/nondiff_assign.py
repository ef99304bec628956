"""Programs for nondifferentiable-op and assign-in-forward, labelled by
construction: op spelling x gradient context x whether the op's output
reaches the differentiated target.

nondifferentiable-op: twelve spellings (``tf.round``, ``tf.math.round``,
``tf.floor``, ``tf.math.ceil``, ``K.round``, ``tf.sign``, ``tf.argmax``,
``tf.math.argmax``, ``tf.argsort``, a cast to ``tf.int32``, ``p > 0.0``,
``tf.math.greater``) of the prediction ``p``, in four contexts: a tape
body, a loss handed to ``compile``, a Keras layer's ``call`` (trained with
``compile``), a metric handed to ``compile``. Bugs (the op's output is the
only way from the weights to the target): ``reaches`` (``q = op(p)``, the
loss from ``q``), ``helper`` (the op in a module function the loss path
calls), ``chained`` (the op written inside the loss expression).
Near-misses: ``beside`` (``q`` computed next to a loss made from ``p``: an
accuracy), ``mask`` (``q`` multiplies a loss made from ``p``), and every
metric (Keras never differentiates a metric). Rounding of a call-free
operand gets the unsafe straight-through fix; the others are reports.

assign-in-forward: ``assign``/``assign_add``/``assign_sub`` of the
prediction into a variable, in a tape body or a layer's ``call``. Bugs
with the unsafe functional update: ``reaches`` (the loss reads the variable
after the assign), ``chained`` (read through another name). Bugs reported
without a fix: ``loop`` (the assign in a loop of the body), ``second_write``
(the variable written again after the read), ``helper`` (a function of the
module, or a method of the layer, that reads the variable runs after the
assign). Near-misses: ``beside`` (the loss reads the prediction, the
variable is state nobody reads), ``constant`` (a counter update, read
afterwards, but its value is no function of the weights) and
``read_before`` (the variable read before the assign only).

Every program is runnable with the runner protocol (``training_case()``); a
tape program also takes one step at import, so the runner's dynamic check
sees its None gradients.
"""

from __future__ import annotations

import itertools
from typing import Iterator

from variants import Program

FAMILY = "nondiff-assign"

OPS = {  # name -> (expression of {p} as a float tensor, label kind)
    "tf_round": ("tf.round({p})", "unsafe"),
    "math_round": ("tf.math.round({p})", "unsafe"),
    "floor": ("tf.floor({p})", "unsafe"),
    "math_ceil": ("tf.math.ceil({p})", "unsafe"),
    "backend_round": ("K.round({p})", "unsafe"),
    "sign": ("tf.sign({p})", "report"),
    "argmax": ("tf.cast(tf.argmax({p}, axis=-1), tf.float32)", "report"),
    "math_argmax": ("tf.cast(tf.math.argmax({p}, axis=-1), tf.float32)", "report"),
    "argsort": ("tf.cast(tf.argsort({p}, axis=0), tf.float32)", "report"),
    "int_cast": ("tf.cast(tf.cast({p}, tf.int32), tf.float32)", "report"),
    "comparison": ("tf.cast({p} > 0.0, tf.float32)", "report"),
    "greater": ("tf.cast(tf.math.greater({p}, 0.0), tf.float32)", "report"),
}
CONTEXTS = ("tape", "loss", "call")
REACH = ("reaches", "helper", "chained", "beside", "mask")
BUGS = ("reaches", "helper", "chained")
ASSIGNS = ("assign", "assign_add", "assign_sub")
ASSIGN_CONTEXTS = ("tape", "call")
ASSIGN_REACH = ("reaches", "chained", "beside", "constant", "read_before", "loop", "second_write", "helper")
ASSIGN_KIND = {"reaches": "unsafe", "chained": "unsafe", "loop": "report", "second_write": "report",
               "helper": "report"}  # the bugs; the others are near-misses

DIMENSIONS = {
    "non-differentiable op spelling": tuple(OPS),
    "context": CONTEXTS + ("metric",),
    "reach (bug / near-miss)": REACH,
    "assign method": ASSIGNS,
    "assign context": ASSIGN_CONTEXTS,
    "assign reach (bug / near-miss)": ASSIGN_REACH,
}

HEADER = '''"""{doc}"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K

FEATURES = 3


def data():
    np.random.seed(0)
    x = np.random.rand(8, FEATURES).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")
    return x, y


def build_model():
    tf.random.set_seed(0)
    return tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(FEATURES,))])
'''

_LABEL = "  # expect: {recipe} {kind}"


def _loss_lines(op: str, reach: str, label: str, p: str, y: str):
    """(helper function text, body lines) computing ``loss`` from ``p`` and ``y``."""
    expression = OPS[op][0]
    if reach == "helper":
        helper = f"\n\ndef quantize(t):\n    return {expression.format(p='t')}{label}\n"
        return helper, [f"q = quantize({p})", f"loss = tf.reduce_mean(tf.square(q - {y}))"]
    if reach == "chained":
        return "", [f"loss = tf.nn.l2_loss({expression.format(p=p)} - {y}){label}"]
    first = f"q = {expression.format(p=p)}" + (label if reach == "reaches" else "")
    last = {"reaches": f"loss = tf.reduce_mean(tf.square(q - {y}))",
            "beside": f"loss = tf.reduce_mean(tf.square({p} - {y}))",
            "mask": f"loss = tf.reduce_mean(tf.square({p} - {y}) * (1.0 + q))"}[reach]
    return "", [first, last]


def _indent(lines, depth: int) -> str:
    return "".join(" " * depth + line + "\n" for line in lines)


def _nondiff(op: str, context: str, reach: str) -> Program:
    bug = reach in BUGS and context != "metric"
    label = _LABEL.format(recipe="nondifferentiable-op", kind=OPS[op][1]) if bug else ""
    doc = (f"{op} of the prediction in a {context}; {reach}: "
           + ("the loss depends on the weights only through the op, so every gradient is None."
              if bug else "the weights reach the differentiated target without the op (or it is a metric)."))
    if context == "tape":
        helper, body = _loss_lines(op, reach, label, "p", "y")
        code = helper + f'''

def step(x, y):
    model = build_model()
    with tf.GradientTape() as tape:
        p = model(x)
{_indent(body, 8)}    return tape.gradient(loss, model.trainable_variables)


def training_case():
    x, y = data()
    return build_model(), x, y


grads = step(*data())
'''
    elif context in ("loss", "metric"):
        helper, body = _loss_lines(op, reach, label, "y_pred", "y_true")
        compiled = "loss=custom" if context == "loss" else 'loss="mse", metrics=[custom]'
        code = helper + f'''

def custom(y_true, y_pred):
{_indent(body, 4)}    return loss


def training_case():
    x, y = data()
    model = build_model()
    model.compile(optimizer="adam", {compiled})
    return (model, x, y, custom) if {context == "loss"} else (model, x, y)
'''
    else:
        helper, body = _loss_lines(op, reach, label, "p", "p")
        body = body[:1] if reach != "chained" else []  # ``q = ...``: the layer's output is made from it
        out = {"reaches": "q", "helper": "q", "beside": "p", "mask": "p * (1.0 + q)",
               "chained": f"{OPS[op][0].format(p='p')} + 0.0{label}"}[reach]
        code = helper + f'''

class Head(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)

    def call(self, inputs):
        p = self.dense(inputs)
{_indent(body, 8)}        return {out}


def training_case():
    x, y = data()
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(FEATURES,)), Head()])
    model.compile(optimizer="adam", loss="mse")
    return model, x, y
'''
    return Program(f"{op}_{context}_{reach}", HEADER.format(doc=doc) + code, near_miss=not bug)


def _assign(method: str, context: str, reach: str) -> Program:
    bug = reach in ASSIGN_KIND
    label = _LABEL.format(recipe="assign-in-forward", kind=ASSIGN_KIND[reach]) if bug else ""
    if context == "tape":
        value = "tf.ones_like(p)" if reach == "constant" else "p"
    else:
        value = "tf.ones((1,))" if reach == "constant" else "tf.reduce_mean(p, axis=0)"
    doc = (f"{method} of the prediction in a {context}; {reach}: "
           + ("the target reads the variable after the assign, so the gradient stops there."
              if bug else "the target does not depend on the weights through the assign."))
    read = {"reaches": "state", "chained": "kept", "beside": "p", "constant": "p + state", "read_before": "kept",
            "loop": "state", "second_write": "kept", "helper": "state * scale(p)"}[reach]
    before = ["kept = p + state"] if reach == "read_before" else []
    alias = ["kept = state * 1.0"] if reach in ("chained", "second_write") else []
    alias += ["state.assign(tf.zeros_like(kept))"] if reach == "second_write" else []
    assign = [f"state.{method}({value}){label}"]
    if reach == "loop":
        assign = ["for _ in range(2):", "    " + assign[0]]
    if context == "tape":
        helper = "\n\ndef scale(t):\n    return 1.0 + 0.0 * tf.reduce_mean(t * state)\n" if reach == "helper" else ""
        code = helper + f'''

state = tf.Variable(tf.zeros((8, 1)))


def step(x, y):
    model = build_model()
    with tf.GradientTape() as tape:
        p = model(x)
{_indent(before + assign + alias, 8)}        loss = tf.reduce_mean(tf.square({read} - y))
    return tape.gradient(loss, model.trainable_variables)


def training_case():
    x, y = data()
    return build_model(), x, y


grads = step(*data())
'''
    else:
        lines = [line.replace("state", "self.state") for line in before + assign + alias]
        out = read.replace("state", "self.state").replace("scale(", "self.scale(")
        if bug:
            out = f"{out} * tf.ones_like(p)"
        code = f'''

class Head(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)

    def build(self, input_shape):
        self.state = self.add_weight(name="state", shape=(1,), initializer="zeros", trainable=False)

    def scale(self, t):
        return 1.0 + 0.0 * tf.reduce_mean(t * self.state)

    def call(self, inputs):
        p = self.dense(inputs)
{_indent(lines, 8)}        return {out}


def training_case():
    x, y = data()
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(FEATURES,)), Head()])
    model.compile(optimizer="adam", loss="mse")
    return model, x, y
'''
    return Program(f"{method}_{context}_{reach}", HEADER.format(doc=doc) + code, near_miss=not bug)


def generate() -> Iterator[Program]:
    for op, context, reach in itertools.product(OPS, CONTEXTS, REACH):
        yield _nondiff(op, context, reach)
    for op in OPS:
        yield _nondiff(op, "metric", "reaches")
    for method, context, reach in itertools.product(ASSIGNS, ASSIGN_CONTEXTS, ASSIGN_REACH):
        yield _assign(method, context, reach)
