"""Gradients asked with respect to a source the tape does not record, for
unwatched-source and integer-source, labelled by construction: source
constructor x watch placement x tape form x dtype.

Each program binds a source ``x`` before the tape, computes a scalar from it
in the tape (through ``tf.cast`` to float32 for integer sources) and prints
the sum of ``tape.gradient(y, x)``, so a None gradient fails the run.

- constructors: ``tf_constant``, ``convert_to_tensor`` (of a NumPy array),
  ``zeros``, ``ones`` (tensors); ``np_array``, ``py_list`` (host data:
  tape.gradient raises on them); ``variable`` (a tf.Variable, watched by
  the tape itself); ``model_input`` (``model.inputs``, a symbolic Keras
  tensor: the tape's one call of the model is given ``data``, so the fix
  watches ``data`` and differentiates with respect to it, unsafe);
  ``layer_output`` (``model.get_layer("hidden").output``: reported, the
  way out needs a model with two outputs);
- watch placement: ``none``, ``before`` the computation, ``after`` it (too
  late: nothing on the path has a watched input), ``alias`` (an alias bound
  before the tape is watched: the same tensor object);
- tape form: ``with_as``, ``persistent``, ``nested`` (inside an outer tape
  that does not watch it), ``no_auto_watch`` (``watch_accessed_variables=False``:
  a variable must be watched too);
- dtype: int32, int64, float16, float32, float64.

Labels: a floating tensor not watched (or watched late) is unwatched-source
safe at the gradient call; host float32 data is safe (converted), float64
unsafe; an integer tensor is integer-source report (at the watch when there
is one, else at the gradient call), but a ``tf.constant`` of an integer
literal watched before the computation (or through an alias) is
integer-source unsafe (made float); an integer tf.Variable is integer-source
safe at its constructor; ``model.inputs`` is unwatched-source unsafe, a
layer's ``output`` unwatched-source report.
Near-misses (a third): floating tensors watched before the computation or
through an alias, float variables on a tape that watches variables (any
placement), and watched early under ``watch_accessed_variables=False``.
Combinations that are not one bug (host data watched: per-step-tape's; an
integer variable on a tape that does not watch variables; integer host data;
a watched layer output, which unconnected-source reports too) are not
generated.
"""

from __future__ import annotations

import itertools
from typing import Iterator, Optional, Tuple

from variants import Program

FAMILY = "gradient-sources"

CONSTRUCTORS = ("tf_constant", "convert_to_tensor", "zeros", "ones", "np_array", "py_list", "variable", "model_input",
                "layer_output")
WATCHES = ("none", "before", "after", "alias")
FORMS = ("with_as", "persistent", "nested", "no_auto_watch")
DTYPES = ("int32", "int64", "float16", "float32", "float64")

DIMENSIONS = {
    "source constructor": CONSTRUCTORS,
    "watch placement": WATCHES,
    "tape form": FORMS,
    "dtype": DTYPES,
}

_TENSORS = ("tf_constant", "convert_to_tensor", "zeros", "ones")
_TAPES = {"with_as": "tf.GradientTape()", "persistent": "tf.GradientTape(persistent=True)",
          "nested": "tf.GradientTape()", "no_auto_watch": "tf.GradientTape(watch_accessed_variables=False)"}


def _source(constructor: str, dtype: str) -> Optional[str]:
    """The statement binding ``x``; None when the pair is not generated."""
    floating = dtype.startswith("float")
    values = "[0.5, 1.0, 2.0]" if floating else "[1, 2, 3]"
    if constructor == "tf_constant":
        return f"x = tf.constant({values}, dtype=tf.{dtype})"
    if constructor == "convert_to_tensor":
        return f"x = tf.convert_to_tensor(np.array({values}), dtype=tf.{dtype})"
    if constructor in ("zeros", "ones"):
        return f"x = tf.{constructor}((3,), dtype=tf.{dtype})"
    if constructor == "np_array":
        return f"x = np.array({values}, dtype=np.{dtype})" if dtype in ("float32", "float64") else None
    if constructor == "py_list":
        return f"x = {values}" if dtype == "float32" else None
    if constructor == "variable":
        if dtype in ("int32", "float32"):
            return f"x = tf.Variable({values})"
        return f"x = tf.Variable({values}, dtype=tf.{dtype})"
    if constructor == "layer_output":
        return 'x = model.get_layer("hidden").output' if dtype == "float32" else None
    return "x = model.inputs" if dtype == "float32" else None


def _expected(constructor: str, watch: str, form: str, dtype: str) -> Optional[Tuple[str, str]]:
    """(where, label) of the finding: where is "gradient", "watch" or
    "source"; None for a near-miss. Raises KeyError for a skipped combination."""
    floating = dtype.startswith("float")
    if constructor in ("np_array", "py_list"):
        if watch != "none":
            raise KeyError("a watched host value is per-step-tape's")
        return "gradient", "unwatched-source " + ("safe" if dtype == "float32" else "unsafe")
    if constructor == "layer_output" and watch != "none":
        raise KeyError("a watched layer output is unconnected-source's too")
    if constructor in ("model_input", "layer_output"):
        kind = "unsafe" if constructor == "model_input" else "report"
        return ("watch" if watch == "before" else "gradient"), f"unwatched-source {kind}"
    if constructor == "variable":
        if not floating:
            if form == "no_auto_watch":
                raise KeyError("an integer variable the tape does not watch is two bugs")
            return "source", "integer-source safe"
        if form != "no_auto_watch" or watch in ("before", "alias"):
            return None
        return "gradient", "unwatched-source safe"
    if not floating:
        if constructor == "tf_constant" and watch in ("before", "alias"):
            return "watch", "integer-source unsafe"  # a literal constant watched in time: made float
        return ("gradient" if watch == "none" else "watch"), "integer-source report"
    return None if watch in ("before", "alias") else ("gradient", "unwatched-source safe")


def _program(constructor: str, watch: str, form: str, dtype: str) -> Optional[Program]:
    source = _source(constructor, dtype)
    try:
        expected = _expected(constructor, watch, form, dtype)
    except KeyError:
        return None
    if source is None:
        return None
    where, label = expected if expected else (None, None)

    def tag(place: str) -> str:
        return f"  # expect: {label}" if where == place else ""

    floating = dtype.startswith("float")
    watched = "same" if watch == "alias" else "x"
    value = "x" if floating else "tf.cast(x, tf.float32)"
    if constructor in ("model_input", "layer_output"):
        computation = ["y = tf.reduce_sum(model(data))"]
    else:
        computation = [f"xf = {value}", "y = tf.reduce_sum(0.5 * tf.square(xf) + tf.multiply(2.0, xf))"]
    body = [f"tape.watch({watched}){tag('watch')}"] if watch in ("before", "alias") else []
    body += computation
    body += [f"tape.watch({watched}){tag('watch')}"] if watch == "after" else []
    total = "print(grad)" if constructor in ("model_input", "layer_output") else 'print("gradient sum", float(tf.reduce_sum(grad)))'
    lines = ['"""{doc}"""'.format(doc=_doc(constructor, watch, form, dtype, expected)),
             "import numpy as np", "import tensorflow as tf", ""]
    if constructor in ("model_input", "layer_output"):
        lines += ["tf.random.set_seed(0)", "inputs = tf.keras.Input((3,))",
                  'hidden = tf.keras.layers.Dense(2, name="hidden")(inputs)',
                  "model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(hidden))",
                  "data = tf.constant(np.random.rand(2, 3), dtype=tf.float32)"]
    lines.append(source + tag("source"))
    if watch == "alias":
        lines.append("same = x")
    indent = ""
    if form == "nested":
        lines.append("with tf.GradientTape() as outer:")
        indent = "    "
    lines.append(f"{indent}with {_TAPES[form]} as tape:")
    lines += [f"{indent}    {line}" for line in body]
    lines.append(f"{indent}grad = tape.gradient(y, x){tag('gradient')}")
    lines.append(total)
    name = f"{constructor}_{watch}_{form}_{dtype}"
    return Program(name, "\n".join(lines) + "\n", near_miss=expected is None)


def _doc(constructor: str, watch: str, form: str, dtype: str, expected) -> str:
    what = f"{constructor} source ({dtype}), watch {watch}, tape {form}"
    if expected is None:
        return f"{what}: correct, the tape records the path from x (watched, or a variable it watches itself)."
    return f"{what}: the gradient with respect to x is None (or tape.gradient raises); {expected[1]}."


def generate() -> Iterator[Program]:
    for constructor, watch, form, dtype in itertools.product(CONSTRUCTORS, WATCHES, FORMS, DTYPES):
        program = _program(constructor, watch, form, dtype)
        if program is not None:
            yield program
