"""The checks run on a protocol-following program (see migrate/runner/__init__.py).

Each check returns a dict ``{"name", "passed", "summary", "numbers",
"details", "error"}``; a check whose code raised is failed with the error's
type, first message line and the user-file line it came from.

Runs in the child: Python 3.8 and TF 2.3 compatible (no newer syntax or APIs).
"""

from __future__ import annotations

import os
import re
import traceback

import numpy as np

STEPS = 10  # optimizer steps of the training and graph checks
LEARNING_RATE = 0.01
COMPLETENESS_RELATIVE = 0.05
COMPLETENESS_ABSOLUTE = 1e-4


def result(name, passed, summary, numbers=None, details=None, error=None):
    return {"name": name, "passed": bool(passed), "summary": summary,
            "numbers": numbers or {}, "details": details or {}, "error": error}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RAISED = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit)): (.*)$")
# where autograph says the user's code was: TF >= 2.4 `File "f.py", line 3`, TF 2.3 `f.py:3 fn`
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)|^\s*(\S+\.py):(\d+) ', re.MULTILINE)


def describe_error(err, program_path):
    """'Type: message line (at file:line)', the line being the deepest one in
    the program; the wrapping of autograph ("in user code:") and of Keras
    ("Exception encountered when calling ...") is looked through."""
    text = _ANSI.sub("", str(err)).strip()
    lines = text.splitlines()
    message = "%s: %s" % (type(err).__name__, lines[0] if lines else "")
    for index, line in enumerate(lines):
        match = _RAISED.match(line)
        if not match:
            continue
        detail = match.group(2).strip()
        if detail.startswith("Exception encountered"):
            rest = [l.strip() for l in lines[index + 1:] if l.strip()]
            detail = rest[0] if rest else detail
        message = "%s: %s" % (match.group(1), detail)
    where = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == program_path:
            where = "%s:%d" % (frame.filename, frame.lineno)
    for quoted, line, bare, bare_line in _FILE_LINE.findall(text):
        if os.path.normpath(quoted or bare) == program_path:
            where = "%s:%s" % (program_path, line or bare_line)
    return message + (" (at %s)" % where if where else "")


class TrainingCase(object):
    """A fresh (model, x, y, loss) from the program's training_case()."""

    def __init__(self, tf, factory):
        self.tf = tf
        case = factory()
        if not isinstance(case, (tuple, list)) or len(case) not in (3, 4):
            raise TypeError("training_case() must return (model, x, y) or (model, x, y, loss_fn)")
        self.model, self.x, self.y = case[0], case[1], case[2]
        self.loss_fn = case[3] if len(case) == 4 and case[3] is not None else None

    def call(self, training):
        if isinstance(self.model, self.tf.keras.layers.Layer):
            return self.model(self.x, training=training)
        return self.model(self.x)

    def loss(self, training=True):
        tf = self.tf
        prediction = self.call(training)
        if self.loss_fn is None:
            target = tf.cast(self.y, prediction.dtype)
            return tf.reduce_mean(tf.square(target - prediction))
        return tf.reduce_mean(self.loss_fn(self.y, prediction))

    def variables(self):
        if not getattr(self.model, "built", True) or not self.model.trainable_variables:
            self.call(False)  # build a Keras model that has not seen data yet
        return list(self.model.trainable_variables)

    def optimizer(self, variables):
        optimizer = self.tf.keras.optimizers.Adam(learning_rate=LEARNING_RATE)
        if hasattr(optimizer, "build"):  # Keras 3 / new tf-keras optimizers build first
            optimizer.build(variables)
        return optimizer

    def is_keras_model(self):
        return isinstance(self.model, self.tf.keras.Model)


def variable_name(variable):
    return getattr(variable, "path", None) or variable.name


def check_gradients(tf, case):
    variables = case.variables()
    with tf.GradientTape() as tape:
        loss = case.loss()
    grads = tape.gradient(loss, variables)
    none = [variable_name(v) for v, g in zip(variables, grads) if g is None]
    non_finite = [variable_name(v) for v, g in zip(variables, grads)
                  if g is not None and not np.all(np.isfinite(tf.convert_to_tensor(g).numpy()))]
    good = len(variables) - len(none) - len(non_finite)
    summary = "%d/%d trainable variables got a finite gradient" % (good, len(variables))
    if none:
        summary += "; None for: " + ", ".join(none[:5]) + (" ..." if len(none) > 5 else "")
    if non_finite:
        summary += "; not finite: " + ", ".join(non_finite[:5])
    return result("gradients", variables and not none and not non_finite, summary,
                  {"variables": len(variables), "none": len(none), "non_finite": len(non_finite),
                   "loss": float(loss)},
                  {"none_variables": none, "non_finite_variables": non_finite})


def _apply(optimizer, grads, variables):
    pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
    if not pairs:
        raise ValueError("no trainable variable got a gradient")
    optimizer.apply_gradients(pairs)


def check_training(tf, case):
    variables = case.variables()
    optimizer = case.optimizer(variables)
    initial = float(case.loss(training=False))
    for _ in range(STEPS):
        with tf.GradientTape() as tape:
            loss = case.loss()
        _apply(optimizer, tape.gradient(loss, variables), variables)
    final = float(case.loss(training=False))
    passed = np.isfinite(final) and final < initial
    return result("training", passed,
                  "eager loss %.6g -> %.6g after %d Adam steps (lr %g); criterion final < initial"
                  % (initial, final, STEPS, LEARNING_RATE),
                  {"initial_loss": initial, "final_loss": final, "steps": STEPS})


def check_graph(tf, case):
    variables = case.variables()
    optimizer = case.optimizer(variables)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = case.loss()
        _apply(optimizer, tape.gradient(loss, variables), variables)
        return loss

    initial = float(case.loss(training=False))
    for _ in range(STEPS):
        step()
    final = float(case.loss(training=False))
    numbers = {"initial_loss": initial, "final_loss": final, "steps": STEPS}
    summary = "tf.function loss %.6g -> %.6g after %d steps" % (initial, final, STEPS)
    if case.is_keras_model():
        case.model.compile(optimizer=case.optimizer(variables),
                           loss=case.loss_fn or "mean_squared_error")
        history = case.model.fit(case.x, case.y, epochs=1, verbose=0)
        numbers["fit_loss"] = float(history.history["loss"][-1])
        summary += "; model.fit 1 epoch loss %.6g" % numbers["fit_loss"]
    passed = np.isfinite(final) and final < initial
    return result("graph", passed, summary + "; criterion: runs, final < initial", numbers)


def _scalar(value, what):
    array = np.asarray(getattr(value, "numpy", lambda: value)(), dtype=np.float64).reshape(-1)
    if array.size != 1:
        raise ValueError("%s must be a scalar, got %d values" % (what, array.size))
    return float(array[0])


def _array(value):
    return np.asarray(getattr(value, "numpy", lambda: value)())


def check_attribution(entries):
    if isinstance(entries, dict):
        entries = [entries]
    rows, failures = [], []
    for index, entry in enumerate(entries):
        name = str(entry.get("name", "entry %d" % index))
        attributions = _array(entry["attributions"]).astype(np.float64)
        inputs = _array(entry["input"])
        delta = _scalar(entry["f_input"], "f_input") - _scalar(entry["f_baseline"], "f_baseline")
        total = float(np.sum(attributions))
        error = abs(total - delta)
        tolerance = COMPLETENESS_RELATIVE * abs(delta) + COMPLETENESS_ABSOLUTE
        row = {"name": name, "finite": bool(np.all(np.isfinite(attributions))),
               "shape": list(attributions.shape), "input_shape": list(inputs.shape),
               "sum": total, "f_input_minus_f_baseline": delta, "error": error,
               "tolerance": tolerance}
        row["complete"] = bool(error <= tolerance)
        problems = [p for p, bad in (("not finite", not row["finite"]),
                                     ("shape %s != input %s" % (row["shape"], row["input_shape"]),
                                      row["shape"] != row["input_shape"]),
                                     ("incomplete: |%.4g - %.4g| = %.3g > %.3g"
                                      % (total, delta, error, tolerance), not row["complete"]))
                    if bad]
        if problems:
            failures.append("%s: %s" % (name, "; ".join(problems)))
        rows.append(row)
    if not rows:
        return result("attribution", False, "attribution_case() returned no entries")
    summary = ("; ".join(failures) if failures else
               "%d attribution(s) finite, input-shaped, complete within 5%% + 1e-4" % len(rows))
    worst = max(r["error"] / r["tolerance"] for r in rows)
    return result("attribution", not failures, summary,
                  {"entries": len(rows), "worst_error_over_tolerance": worst}, {"entries": rows})


def serialize_outputs(values):
    """name -> {"dtype", "shape", "values"} for the parent's equivalence check."""
    if not isinstance(values, dict):
        raise TypeError("outputs() must return a dict of name -> tensor/array")
    out = {}
    for name, value in values.items():
        dtype = getattr(value, "dtype", None)
        array = _array(value)
        dtype_name = getattr(dtype, "name", None) or str(array.dtype)
        out[str(name)] = {"dtype": dtype_name, "shape": list(array.shape),
                          "values": array.reshape(-1).tolist()}
    return out
