"""Variants of vectorize-sample-loop: per-sample loops of layer calls in the
shapes people write them, and the loops that must stay loops.

Crossed: how results are collected (``append``, a ``[None] * n`` buffer of
slots, a list comprehension bound to a name or written inside the join, a
``tf.TensorArray``), how the loop runs over the samples (``range`` of
``x.shape[0]`` / ``len(x)`` / ``tf.shape(x)[0]``, ``for row in x``,
``tf.unstack(x)``), the per-sample chain (a batch-of-one slice, a reshape,
``expand_dims``, two layers), the join (``tf.concat`` of batch-of-one
results, ``tf.stack`` of bare ones), where the loop is (a layer's ``call``
inside a subclassed / Sequential / functional model, a model's
``train_step``, a script, a notebook) and the import spelling.

Every program defines ``outputs()``, the numbers the loop computes (for
``train_step``: the loss and predictions after one eager step): an unsafe
fix is checked by comparing the before's and the after's. Programs with a
bug also define ``training_case()``: the before fails under ``fit`` (a
Python loop over a batch whose size is unknown in graph mode) and the after
must train. Near-misses (no label; ``outputs()`` only, they run eagerly):
state carried from one sample to the next, per-sample routing to different
layers, variable-length slices, a ``BatchNormalization`` in the chain, a
loop over features rather than samples, a method of the class per sample.
"""

from __future__ import annotations

import itertools
import textwrap
from typing import Dict, Iterator, List, Tuple

from . import Program, notebook

FAMILY = "vectorize-sample-loop"

# spelling -> (import line, layers, Model, Sequential, Input)
SPELLINGS: Dict[str, Tuple[str, ...]] = {
    "tfkeras": ("", "tf.keras.layers", "tf.keras.Model", "tf.keras.Sequential", "tf.keras.Input"),
    "fromtf": ("from tensorflow import keras\n", "keras.layers", "keras.Model", "keras.Sequential",
               "keras.Input"),
    "keras": ("import keras\n", "keras.layers", "keras.Model", "keras.Sequential", "keras.Input"),
    "tf_keras": ("import tf_keras\n", "tf_keras.layers", "tf_keras.Model", "tf_keras.Sequential",
                 "tf_keras.Input"),
    "fromimports": ("from tensorflow.keras import Input, Model, Sequential, layers\n", "layers", "Model",
                    "Sequential", "Input"),
}
COLLECTS = ("append", "slots", "comprehension", "inline", "tensorarray")
LOOPS = ("shape", "len", "tfshape", "rows", "unstack")
CHAINS = ("slice", "reshape", "expand", "two")
NEAR_MISSES = ("carried", "routing", "varlen", "batchnorm", "features", "method")
CONTEXTS = ("call", "trainstep", "script", "notebook")
STYLES = ("subclassed", "sequential", "functional")
JOINS = ("concat", "stack")
DIMENSIONS = {"collect": COLLECTS, "loop": LOOPS, "chain": CHAINS, "join": JOINS, "context": CONTEXTS,
              "style": STYLES, "spelling": tuple(SPELLINGS), "near_miss": NEAR_MISSES}

LABEL = "  # expect: vectorize-sample-loop unsafe"


def _sample(loop: str) -> Tuple[str, str, str]:
    """(loop header, batch-of-one sample, bare sample) for a loop form."""
    header = {"shape": "for i in range(x.shape[0]):", "len": "for i in range(len(x)):",
              "tfshape": "for i in range(tf.shape(x)[0]):", "rows": "for row in x:",
              "unstack": "for row in tf.unstack(x):"}[loop]
    if loop in ("rows", "unstack"):
        return header, "row[None]", "row"
    return header, "x[i:i + 1]", "x[i]"


def _chain(chain: str, one: str, bare: str, layer) -> str:
    """One sample's layer calls (a batch of one in, a batch of one out)."""
    if chain == "reshape":
        return layer("first", f"tf.reshape({bare}, [1, FEATURES])")
    if chain == "expand":
        return layer("first", f"tf.expand_dims({bare}, 0)")
    if chain == "two":
        return layer("second", layer("first", one))
    return layer("first", one)


def _loop_code(collect: str, loop: str, chain: str, join: str, layer) -> List[str]:
    """Statements that compute ``merged`` from ``x`` one sample at a time;
    the label goes on the loop (or the comprehension)."""
    header, one, bare = _sample(loop)
    value = _chain(chain, one, bare, layer)
    if join == "stack" or collect == "tensorarray":
        value, joined = f"{value}[0]", "tf.stack({}, axis=0)"
    else:
        joined = "tf.concat({}, axis=0)"
    index = "i" if loop not in ("rows", "unstack") else "row"
    bound = header[len(f"for {index} in "):-1]
    if collect == "append":
        return ["outs = []", header + LABEL, f"    outs.append({value})", "merged = " + joined.format("outs")]
    if collect == "slots":
        size = bound[len("range("):-1]
        return [f"outs = [None] * {size}", header + LABEL, f"    outs[i] = {value}",
                "merged = " + joined.format("outs")]
    if collect == "comprehension":
        return [f"outs = [{value} for {index} in {bound}]" + LABEL, "merged = " + joined.format("outs")]
    if collect == "inline":
        return ["merged = " + joined.format(f"[{value} for {index} in {bound}]") + LABEL]
    size = bound[len("range("):-1]
    return [f"outs = tf.TensorArray(tf.float32, size={size})", header + LABEL,
            f"    outs = outs.write(i, {value})", "merged = outs.stack()"]


def _near_miss_code(kind: str, loop: str, layer) -> Tuple[List[str], List[str]]:
    """(statements computing ``merged`` with a loop that must stay, layers it
    needs); ``loop`` is the index loop form over the samples."""
    code, needs = _near_miss_shape(kind, layer)
    header = _sample(loop)[0]
    return [header if line == "for i in range(x.shape[0]):" else line for line in code], needs


def _near_miss_shape(kind: str, layer) -> Tuple[List[str], List[str]]:
    if kind == "carried":
        return (["state = tf.zeros((1, UNITS))", "outs = []", "for i in range(x.shape[0]):",
                 f"    state = {layer('first', 'x[i:i + 1]')} + state", "    outs.append(state)",
                 "merged = tf.concat(outs, axis=0)"], ["first"])
    if kind == "routing":
        return (["outs = []", "for i in range(x.shape[0]):",
                 f"    outs.append({layer('heads', 'x[i:i + 1]', route=True)})",
                 "merged = tf.concat(outs, axis=0)"], ["heads"])
    if kind == "varlen":
        return (["outs = []", "for i in range(x.shape[0]):",
                 "    part = tf.reduce_sum(x[i:i + 1, :LENGTHS[i]], axis=1, keepdims=True)",
                 f"    outs.append({layer('scalar', 'part')})", "merged = tf.concat(outs, axis=0)"], ["scalar"])
    if kind == "batchnorm":
        return (["outs = []", "for i in range(x.shape[0]):",
                 f"    outs.append({layer('norm', layer('first', 'x[i:i + 1]'))})",
                 "merged = tf.concat(outs, axis=0)"], ["first", "norm"])
    if kind == "features":
        return (["outs = []", "for j in range(x.shape[1]):",
                 f"    outs.append({layer('scalar', 'x[:, j:j + 1]')})",
                 "merged = tf.concat(outs, axis=1)"], ["scalar"])
    return (["outs = []", "for i in range(x.shape[0]):", f"    outs.append({layer('step', 'x[i:i + 1]')})",
             "merged = tf.concat(outs, axis=0)"], ["first"])


_LAYER_DEFS = {"first": '{L}.Dense(UNITS, activation="relu")', "second": "{L}.Dense(UNITS)",
               "scalar": "{L}.Dense(UNITS)", "norm": "{L}.BatchNormalization()",
               "heads": "[{L}.Dense(UNITS), {L}.Dense(UNITS)]"}

_HEADER = '''"""{doc}"""
import random

import numpy as np
import tensorflow as tf
{imports}
BATCH, FEATURES, UNITS = 4, 3, 5
LENGTHS = [3, 1, 2, 3]
'''

_DATA = '''random.seed(0)
tf.random.set_seed(0)
np.random.seed(0)
x = np.random.rand(BATCH, FEATURES).astype("float32")
y = np.random.rand(BATCH, 1).astype("float32")'''


def _names(spelling: str) -> Dict[str, str]:
    imports, layers, model, sequential, inputs = SPELLINGS[spelling]
    return {"imports": imports, "L": layers, "M": model, "S": sequential, "I": inputs}


def _call_program(code: List[str], needs: List[str], style: str, names, bug: bool) -> str:
    """The loop in a layer's ``call``, the layer inside a model."""
    inits = [f"self.{n} = {_LAYER_DEFS[n].format(**names)}" for n in needs]
    method = "\n    def step(self, sample):\n        return self.first(sample)\n" if "first" in needs else ""
    layer = (f"\n\nclass PerSample({names['L']}.Layer):\n    def __init__(self, **kwargs):\n"
             f"        super().__init__(**kwargs)\n" + "".join(f"        {i}\n" for i in inits) + method +
             "\n    def call(self, x):\n" + "".join(f"        {line}\n" for line in code) +
             "        return merged\n")
    if style == "subclassed":
        model = (f"\n\nclass Net({names['M']}):\n    def __init__(self, **kwargs):\n"
                 f"        super().__init__(**kwargs)\n        self.samples = PerSample()\n"
                 f"        self.out = {names['L']}.Dense(1)\n\n    def call(self, inputs):\n"
                 f"        return self.out(self.samples(inputs))\n\n\ndef build_model():\n    return Net()\n")
    elif style == "sequential":
        model = (f"\n\ndef build_model():\n    return {names['S']}([PerSample(), {names['L']}.Dense(1)])\n")
    else:
        model = (f"\n\ndef build_model():\n    inputs = {names['I']}((FEATURES,), batch_size=BATCH)\n"
                 f"    return {names['M']}(inputs, {names['L']}.Dense(1)(PerSample()(inputs)))\n")
    protocol = _protocol(bug, "return {\"prediction\": model(x)}")
    return layer + model + protocol


def _trainstep_program(code: List[str], needs: List[str], names, bug: bool) -> str:
    """The loop in a model's ``train_step``: predictions one sample at a time."""
    inits = [f"self.{n} = {_LAYER_DEFS[n].format(**names)}" for n in needs if n != "first"]
    method = "\n    def step(self, sample):\n        return self(sample)\n"
    model = (f"\n\nclass Net({names['M']}):\n    def __init__(self, **kwargs):\n"
             f"        super().__init__(**kwargs)\n        self.first = {names['L']}.Dense(UNITS, activation=\"relu\")\n"
             + "".join(f"        {i}\n" for i in inits) +
             f"        self.out = {names['L']}.Dense(1)\n" + method +
             "\n    def call(self, inputs):\n        return self.out(self.first(inputs))\n"
             "\n    def train_step(self, data):\n        x, y = data\n"
             "        with tf.GradientTape() as tape:\n" +
             "".join(f"            {line}\n" for line in code) +
             "            loss = tf.reduce_mean(tf.square(y - merged))\n"
             "        grads = tape.gradient(loss, self.trainable_variables)\n"
             "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
             "        return {\"loss\": loss}\n\n\ndef build_model():\n    return Net()\n")
    protocol = _protocol(bug, "model.compile(optimizer=\"sgd\", loss=\"mse\")\n"
                              "    loss = model.train_step((tf.constant(x), tf.constant(y)))[\"loss\"]\n"
                              "    return {\"loss\": loss, \"prediction\": model(x)}")
    return model + protocol


def _protocol(bug: bool, returns: str) -> str:
    data = textwrap.indent(_DATA, "    ")
    text = ""
    if bug:
        text += f"\n\ndef training_case():\n{data}\n    return build_model(), x, y\n"
    text += f"\n\ndef outputs():\n{data}\n    model = build_model()\n    {returns}\n"
    return text


def _script_cells(code: List[str], needs: List[str], names) -> List[str]:
    defs = [f"{n} = {_LAYER_DEFS[n].format(**names)}" for n in needs]
    step = "\n\ndef step(sample):\n    return first(sample)\n" if "first" in needs else ""
    return [_DATA + "\n" + "\n".join(defs) + "\n" + step, "\n".join(code) + "\n",
            "\n\ndef outputs():\n    return {\"merged\": merged}\n"]


def _caller(context: str):
    """How the chain calls a layer: ``self.first(...)`` in a class,
    ``first(...)`` in a script; ``self(...)`` is the model in train_step."""
    def layer(name: str, arg: str, route: bool = False) -> str:
        if context == "trainstep" and name == "first":
            return f"self({arg})"
        callee = f"{name}[i % 2]" if route else name
        return f"self.{callee}({arg})" if context in ("call", "trainstep") else f"{callee}({arg})"
    return layer


def _program(context: str, style: str, spelling: str, code: List[str], needs: List[str], bug: bool,
             doc: str) -> str:
    names = _names(spelling)
    header = _HEADER.format(doc=doc, imports=names["imports"])
    if context == "call":
        return header + _call_program(code, needs, style, names, bug)
    if context == "trainstep":
        return header + _trainstep_program(code, needs, names, bug)
    cells = [header] + _script_cells(code, needs, names)
    if context == "script":
        return cells[0] + "\n" + "\n".join(cells[1:])
    return notebook(cells)


def _runs(context: str, style: str, spelling: str, loop: str, collect: str) -> bool:
    """Can the before run eagerly? A functional model calls the layer on a
    symbolic batch: a static batch size makes ``range(x.shape[0])`` and
    ``tf.unstack`` work, iterating it does not, nor TensorFlow ops on
    Keras 3's symbolic tensors."""
    if loop == "tfshape" and (collect == "slots" or style == "functional"):
        return False  # `[None] * tensor` is no list; range() of a symbolic size fails
    if context != "call" or style == "subclassed":
        return True
    # Keras 3 builds a Sequential by calling it on a symbolic batch of unknown size
    return spelling != "keras" and (style == "sequential" or loop != "rows")


def _placements():
    """(context, style, spelling): styles cross the call context; spellings
    rotate through the contexts; a notebook keeps one spelling."""
    spellings = tuple(SPELLINGS)
    for context in CONTEXTS:
        for style in (STYLES if context == "call" else ("-",)):
            for spelling in (spellings if context != "notebook" else ("tfkeras",)):
                yield context, style, spelling


def generate() -> Iterator[Program]:
    suffix = {"notebook": ".ipynb"}
    for number, (collect, loop, chain) in enumerate(itertools.product(COLLECTS, LOOPS, CHAINS)):
        if collect in ("slots", "tensorarray") and loop in ("rows", "unstack"):
            continue  # an index buffer needs the index
        join = JOINS[number % 2] if collect != "tensorarray" else "stack"
        for context, style, spelling in _placements():
            if (number + len(context) + len(spelling)) % 3 and context != "notebook":
                continue  # a third of the spellings and styles per form keeps the space in hundreds
            if not _runs(context, style, spelling, loop, collect) or (context == "trainstep" and chain == "two"):
                continue
            code = _loop_code(collect, loop, chain, join, _caller(context))
            needs = ["first", "second"] if chain == "two" else ["first"]
            name = f"{collect}_{loop}_{chain}_{join}_{context}_{style}_{spelling}".replace("-", "x")
            doc = f"vectorize-sample-loop variant: {name.replace('_', ' ')}."
            yield Program(name, _program(context, style, spelling, code, needs, True, doc), False,
                          suffix.get(context, ".py"))
    for kind, loop in itertools.product(NEAR_MISSES, ("shape", "len", "tfshape")):
        if kind == "features" and loop != "shape":
            continue  # its loop runs over x.shape[1]
        for context, style, spelling in _placements():
            if not _runs(context, style, spelling, loop, "append"):
                continue
            code, needs = _near_miss_code(kind, loop, _caller(context))
            name = f"near_{kind}_{loop}_{context}_{style}_{spelling}".replace("-", "x")
            doc = f"Near-miss for vectorize-sample-loop ({kind}): the loop must stay a loop."
            yield Program(name, _program(context, style, spelling, code, needs, False, doc), True,
                          suffix.get(context, ".py"))
