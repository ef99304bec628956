"""typed-convert variants: convert then cast, in every spelling, over the value
kinds and target dtypes of the measured table (docs/typed-convert-matrix.md).

A bug program converts ``data`` and casts the result to a target dtype, nested
on one line, as a statement pair on the same name, or into another name, in
one of six call spellings (rotated over the other dimensions so every form
meets every spelling). Its label follows by construction from what the code
proves about ``data`` (the table's row, or a family of rows for pandas
``.values``) and the table's cells on both runtimes: ``safe`` where the fold
gives what the cast gives on both runtimes, ``report`` where it always raises
(and for a tensor, which the fold would refuse), ``unsafe`` otherwise (and for
a parameter, which could be a tensor). Near-misses are correct code that must
stay byte-identical: the unconverted tensor is read again, the conversion is
already typed, ``cast`` is a local function, or the cast reads another tensor.

Every program checks itself when run: ``outputs()`` compares the converted
tensor with a float64 NumPy reference (truncated for integers, nonzero for
bool) and its dtype with the target; a float32 program with a Keras model also
defines ``training_case()``, which verify trains (gradients not None).
"""

from __future__ import annotations

import itertools
import textwrap
from typing import Dict, FrozenSet, Iterator, List, Tuple

from recipes._typed_convert_matrix import CELLS

from . import Program

FAMILY = "typed-convert"

# kind -> (the expression bound to `data`, the rows of the table the code proves it is)
_ARRAYS = frozenset(f"ndarray-{d}" for d in ("int32", "int64", "float16", "float32", "float64", "bool", "object"))
KINDS: Dict[str, Tuple[str, FrozenSet[str]]] = {
    "int-list": ("[1, -2, 3, 4]", frozenset({"py-list-int"})),
    "float-list": ("[0.1, -2.7, 1.5, 3.25]", frozenset({"py-list-float"})),
    "bool-list": ("[True, False, True, True]", frozenset({"py-list-bool"})),
    "nested-floats": ("[[0.1, -2.7], [1.5, 3.25]]", frozenset({"py-nested-float"})),
    "float-scalar": ("-2.7", frozenset({"py-scalar-float"})),
    "float64-array": ("np.random.rand(4, 3)", frozenset({"ndarray-float64"})),
    "float32-array": ("np.random.rand(4, 3).astype(np.float32)", frozenset({"ndarray-float32"})),
    "int64-array": ("np.array([[1, -2, 3], [4, 5, 6]], dtype=np.int64)", frozenset({"ndarray-int64"})),
    "frame-values": ("pd.DataFrame(np.random.rand(4, 3)).values",
                     _ARRAYS | {"pandas-values-float64", "pandas-values-int64", "pandas-values-mixed"}),
    "tensor": ("tf.constant(np.random.rand(4, 3))", frozenset()),  # a tensor: the fold would raise
    "parameter": ("", frozenset()),  # passed in: could be a tensor
}
TARGETS = ("float16", "float32", "float64", "int32", "bool")
FORMS = ("nested", "pair", "renamed")
SPELLINGS = ("tf", "keywords", "dtypes", "imported", "alias", "compat")
MODELS = ("none", "keras")
NEAR_MISSES = ("read-again", "typed", "local-cast", "other-tensor")
DIMENSIONS = {"form": FORMS, "spelling": SPELLINGS, "kind": tuple(KINDS), "target": TARGETS,
              "model": MODELS, "near_miss": NEAR_MISSES}

_TOLERANCE = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-6, "int32": 0.0, "bool": 0.0}


def expected(kind: str, target: str) -> str:
    """The label: safe where the fold equals the cast on both runtimes for every
    row the code allows, report where it always raises, else unsafe."""
    rows = KINDS[kind][1]
    if kind == "tensor":
        return "report"
    if not rows:
        return "unsafe"
    cells = {run[row][target] for run in CELLS.values() for row in rows}
    working = cells & {"equal", "differs", "fold-raises"}
    if working and working <= {"equal"}:
        return "safe"
    return "report" if cells <= {"fold-raises", "both-raise"} else "unsafe"


class _Spelling:
    """How the program names tf.convert_to_tensor, tf.cast and dtypes."""

    def __init__(self, name: str):
        self.name = name
        module = {"alias": "tfx", "compat": "tf2"}.get(name, "tf")
        self.imports = {"imported": "from tensorflow import cast, convert_to_tensor\n",
                        "alias": "import tensorflow as tfx\n",
                        "compat": "import tensorflow.compat.v2 as tf2\n"}.get(name, "")
        self.module = module

    def convert(self, value: str, extra: str = "") -> str:
        if self.name == "keywords":
            return f"tf.convert_to_tensor(value={value}{extra})"
        callee = "convert_to_tensor" if self.name == "imported" else f"{self.module}.convert_to_tensor"
        return f"{callee}({value}{extra})"

    def cast(self, value: str, target: str) -> str:
        if self.name == "keywords":
            return f"tf.cast(x={value}, dtype=tf.{target})"
        if self.name == "dtypes":
            return f"tf.dtypes.cast({value}, tf.dtypes.{target})"
        if self.name == "imported":
            return f'cast({value}, "{target}")'
        return f"{self.module}.cast({value}, {self.module}.{target})"


def _body(form: str, spelling: _Spelling, target: str, label: str, miss: str) -> List[str]:
    """The lines that make ``x`` from ``data``; the label on the finding's line."""
    tag = f"  # expect: typed-convert {label}" if label else ""
    extra = ", dtype=tf.float64" if miss == "typed" else ""
    convert = spelling.convert("data", extra)
    if miss == "local-cast":
        return [f"x = cast(tf.convert_to_tensor(data), tf.{target})"]
    if miss == "other-tensor":
        return [f"x = {spelling.cast(f'tf.identity({convert})', target)}"]
    if form == "nested":
        return [f"x = {spelling.cast(convert, target)}{tag}"]
    if form == "pair":
        between = "count = int(tf.size(x))" if miss == "read-again" else "count = 3"
        return [f"x = {convert}{tag}", between, f"x = {spelling.cast('x', target)}"]
    lines = [f"raw = {convert}{tag}", "count = 3", f"x = {spelling.cast('raw', target)}"]
    if miss == "read-again":
        lines[1] = "count = int(tf.size(raw))"
    return lines


def _program(name: str, kind: str, form: str, spelling: str, target: str, model: str, label: str,
             miss: str, why: str) -> Program:
    spell = _Spelling(spelling)
    expression = KINDS[kind][0]
    parameter = kind == "parameter"
    body = _body(form, spell, target, label, miss)
    local_cast = "\n\ndef cast(t, dtype):\n    return tf.cast(t, dtype)\n" if miss == "local-cast" else ""
    make = "np.random.rand(4, 3)" if parameter else expression
    source = f'''"""typed-convert variant {name}: {why}"""
import numpy as np
import pandas as pd
import tensorflow as tf
{spell.imports}{local_cast}

def make_data():
    np.random.seed(0)
    return {make}


def converted({"data" if parameter else ""}):
    np.random.seed(0)
{"" if parameter else f"    data = {expression}{chr(10)}"}{textwrap.indent(chr(10).join(body), "    ")}
    return x


def reference():
    """The value as float64 NumPy, made into the target dtype by NumPy rules."""
    want = np.asarray(make_data(), dtype=np.float64)
    if "{target}" == "bool":
        return want != 0
    return np.trunc(want) if "{target}".startswith("int") else want


def outputs():
    x = converted({"make_data()" if parameter else ""})
    assert x.dtype == tf.{target}, x.dtype
    got = np.asarray(tf.cast(x, tf.float64))
    assert np.allclose(got, reference(), rtol={_TOLERANCE[target]}, atol={_TOLERANCE[target]}), got
    return {{"x": x}}
'''
    if model == "keras":
        source += f'''

def training_case():
    tf.random.set_seed(0)
    features = tf.reshape(converted({"make_data()" if parameter else ""}), (-1, 1))
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    return model, features, tf.ones_like(features)
'''
    return Program(name, source, near_miss=not label)


def generate() -> Iterator[Program]:
    rotation = itertools.cycle(SPELLINGS)
    for kind, target, form in itertools.product(KINDS, TARGETS, FORMS):
        for model in (MODELS if target == "float32" else ("none",)):
            spelling = next(rotation)
            label = expected(kind, target)
            name = f"{form}-{spelling}-{kind}-{target}" + ("-keras" if model == "keras" else "")
            yield _program(name, kind, form, spelling, target, model, label, "",
                           f"{kind} converted then cast to {target} ({form}, {spelling} spelling): {label}")
    for kind in KINDS:
        for target, form in itertools.product(("float16", "float32", "float64"), ("pair", "renamed")):
            yield _program(f"nm-read-again-{form}-{kind}-{target}", kind, form, next(rotation), target, "none",
                           "", "read-again", "the unconverted tensor is read again: the intermediate stays")
        for form in ("nested", "pair"):
            yield _program(f"nm-typed-{form}-{kind}", kind, form, next(rotation), "float32", "none", "", "typed",
                           "the conversion already names its dtype: nothing to fold")
        yield _program(f"nm-local-cast-{kind}", kind, "nested", "tf", "float32", "none", "", "local-cast",
                       "`cast` is this module's function, not tf.cast")
        yield _program(f"nm-other-tensor-{kind}", kind, "nested", next(rotation), "float32", "none", "",
                       "other-tensor", "the cast reads tf.identity's tensor, not the conversion")
