"""Prechecks cannot lose a finding: every fixture, every corpus program
(notebooks too) and a fixed sample of every generated variant family gives
the same findings, fixes and output with every recipe's text tokens and
precheck switched off, as
scripts/precheck_soundness.py does on library code."""

from __future__ import annotations

import dataclasses

import pytest

from migrate.engine import Options, transform
from migrate.notebook import transform_notebook
from migrate.registry import all_recipes

from fixture_cases import ROOT, all_cases
from variants import all_programs, families, sample

SHIPPED = tuple(all_recipes().values())
UNGATED = tuple(dataclasses.replace(r, tokens=(), precheck=None) for r in SHIPPED)
VARIANTS_PER_FAMILY = 12  # a fixed sample: the whole space is for scripts/corpus_score.py

_FILES = sorted({p for case in all_cases() for p in (case.before, case.after) if p}
                | set((ROOT / "tests" / "corpus").rglob("*.py"))
                | set((ROOT / "tests" / "corpus").rglob("*.ipynb")))
PROGRAMS = [(str(path.relative_to(ROOT)), str(path), path.read_text(encoding="utf-8")) for path in _FILES] \
    + [(f"variants/{name}/{program.name}", f"{program.name}.py", program.source)
       for name, family in sorted(families().items())
       for program in sample(list(all_programs(family)), VARIANTS_PER_FAMILY)]


def _answer(source: str, path: str, recipes, isolated: bool) -> tuple:
    options = Options(recipes, unsafe_fixes=True, isolated=isolated)
    run = transform_notebook if path.endswith(".ipynb") else transform
    result = run(source, path, options)
    return (result.output,
            [(d.recipe, d.line, d.column, d.end_line, d.end_column, d.message, d.applied, d.fix,
              d.after) for d in result.diagnostics])


@pytest.mark.parametrize("path,source", [(path, source) for _, path, source in PROGRAMS],
                         ids=[name for name, _, _ in PROGRAMS])
def test_findings_do_not_depend_on_prechecks(path, source):
    for isolated in (True, False):  # `check` (each recipe alone) and `fix` (chained)
        assert _answer(source, path, SHIPPED, isolated) == _answer(source, path, UNGATED, isolated)


# Programs at the edges of the gradient-context gates (recipes/_pyast.py
# gradient_calls and the prechecks around it): each reaches its recipe only
# the way its comment says, so a gate that is too sharp loses its finding.
GATE_EDGES = {
    "assign_in_call_nested": ("assign-in-forward", """\
import tensorflow as tf


class Memory(tf.keras.layers.Layer):
    def build(self, shape):
        self.state = self.add_weight(shape=shape[1:], initializer="zeros")

    def call(self, x):
        self.state.assign(x[0] * 2.0)
        return self.state * 3.0


model = tf.keras.Sequential([Memory()])
model.compile(optimizer="sgd", loss="mse")
"""),  # an assign in a Keras call whose receiver the call reads again
    "integer_var_list": ("integer-source", """\
import tensorflow as tf

w = tf.Variable(3)
opt = tf.keras.optimizers.SGD(0.1)
loss = lambda: tf.cast(w, tf.float32) ** 2
opt.minimize(loss, var_list=[w])
"""),  # an integer variable named only in `var_list=`
    "nacc_compiled_unknown_receiver": ("numpy-accumulator", """\
import numpy as np
import tensorflow as tf


def hinge(y_true, y_pred):
    return tf.reduce_mean(tf.maximum(0.0, 1.0 - y_true * y_pred))


def features(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = tf.reduce_sum(x[i])
    return out


trainer = make_trainer()
trainer.compile(loss=hinge)
"""),  # `compile` on what the model does not know for a Keras model: no context, every buffer counts
    "nacc_custom_gradient_only": ("numpy-accumulator", """\
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def clip_gradient(x):
    return x, lambda dy: tf.clip_by_norm(dy, 1.0)


def features(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = tf.reduce_sum(x[i])
    return out
"""),  # a custom_gradient function is a precheck root, never a context of the model's
    "nacc_tape_on_attribute": ("numpy-accumulator", """\
import numpy as np
import tensorflow as tf


@tf.function
def scale(x):
    return x * 2.0


class Trainer:
    def step(self, x, layer):
        with tf.GradientTape() as self.tape:
            out = np.zeros(3)
            for i in range(3):
                out[i] = tf.reduce_sum(layer(x[i]))
            loss = tf.reduce_sum(out)
        return self.tape.gradient(loss, layer.trainable_variables)
"""),  # a tape bound to an attribute (no name), in a module with another context
    "nolp_aliased_function": ("numpy-on-loss-path", """\
from tensorflow import function as compiled
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


@compiled(jit_compile=False)
def step(x):
    y = model(x)
    return float(tf.reduce_sum(y)) * x
"""),  # `float(t)` in a function decorated with an alias of tf.function, called
    "nolp_compiled_helper": ("numpy-on-loss-path", """\
import tensorflow as tf


def _scaled(y_pred):
    return y_pred.numpy() * 2.0


def scaled_loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - _scaled(y_pred)))


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=scaled_loss)
"""),  # `.numpy()` in a helper of a loss given to compile
    "nondiff_minimize_lambda": ("nondifferentiable-op", """\
import tensorflow as tf

w = tf.Variable([1.0, 2.0])
opt = tf.keras.optimizers.SGD(0.1)
opt.minimize(lambda: tf.reduce_sum(tf.round(w * 3.0)), [w])
"""),  # a rounding in a lambda given to minimize, no tape
    "outside_built_subscript": ("outside-tape", """\
import tensorflow as tf


class Scaled(tf.keras.layers.Layer):
    def build(self, shape):
        self.kernel = self.add_weight(shape=(shape[-1], 2))
        self.doubled = self.kernel[0] * 2.0

    def call(self, x):
        return x * self.doubled
"""),  # a build() tensor from an item of a weight
    "predict_layer_method": ("predict-in-tape", """\
import tensorflow as tf


class Base(tf.keras.layers.Layer):
    pass


class Teacher(Base):
    def __init__(self):
        super().__init__()
        self.net = tf.keras.Sequential([tf.keras.layers.Dense(1)])

    def call(self, x):
        return self.score(x)

    def score(self, x):
        return self.net.predict(x) + x
"""),  # predict in a method that `call` runs, the class a Layer through a base of the file
    "predict_wrapped_function": ("predict-in-tape", """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


def forward(x):
    return model.predict(x)


def train(x, y):
    return tf.reduce_mean(forward(x) - y)


step = tf.function(train)
"""),  # predict in a helper of a function wrapped by tf.function(...)
    "unconnected_unused_weight": ("unconnected-source", """\
import tensorflow as tf


class Extra(tf.keras.layers.Layer):
    def build(self, shape):
        self.kernel = self.add_weight(shape=(shape[-1], 1))
        self.unused = self.add_weight(shape=(1,))

    def call(self, x):
        return tf.matmul(x, self.kernel)


model = tf.keras.Sequential([Extra()])
model.compile(optimizer="sgd", loss="mse")
"""),  # a weight call never reads, in a module that compiles
    "variable_in_while_tape": ("variable-in-call", """\
import tensorflow as tf

x = tf.constant([1.0])
step = 0
while step < 3:
    try:
        with tf.GradientTape() as tape:
            w = tf.Variable([2.0])
            y = w * x
    finally:
        step += 1
    print(tape.gradient(y, w))
"""),  # a variable made in a tape body in a while loop, inside try
}


@pytest.mark.parametrize("name", sorted(GATE_EDGES))
def test_gates_let_each_context_through(name):
    recipe, source = GATE_EDGES[name]
    output, findings = _answer(source, f"{name}.py", SHIPPED, True)
    assert recipe in {finding[0] for finding in findings}
    assert (output, findings) == _answer(source, f"{name}.py", UNGATED, True)


# Functions a gradient context names without calling them: numpy-accumulator's
# precheck once joined every function named anywhere in a context's text, the
# model (Contexts._callees, functions_called) and _pyast.gradient_scopes follow
# calls only. Each module has a tape, so the precheck drops what no call reaches.
REFERENCED_ONLY = {
    "map_fn": """\
import numpy as np
import tensorflow as tf


def per_row(row):
    out = np.zeros(3)
    for i in range(3):
        out[i] = tf.reduce_sum(row[i])
    return out


def step(x, layer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.map_fn(per_row, layer(x)))
    return tape.gradient(loss, layer.trainable_variables)
""",
    "while_loop_body": """\
import numpy as np
import tensorflow as tf


def body(i, x):
    out = np.zeros(3)
    for j in range(3):
        out[j] = tf.reduce_sum(x[j])
    return i + 1, x * out


def step(x, w):
    with tf.GradientTape() as tape:
        _, y = tf.while_loop(lambda i, _: i < 3, body, (0, x * w))
        loss = tf.reduce_sum(y)
    return tape.gradient(loss, w)
""",
    "alias": """\
import numpy as np
import tensorflow as tf


def features(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = tf.reduce_sum(x[i])
    return out


def step(x, w):
    extract = features
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(extract(x * w))
    return tape.gradient(loss, w)
""",
}


@pytest.mark.parametrize("name", sorted(REFERENCED_ONLY))
def test_functions_named_but_not_called_give_the_same_findings(name):
    source = REFERENCED_ONLY[name]
    assert _answer(source, f"{name}.py", SHIPPED, True) == _answer(source, f"{name}.py", UNGATED, True)
