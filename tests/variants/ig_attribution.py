"""Attribution programs (integrated gradients, SmoothGrad, saliency) for
scalar-target and suffix-mixup, labelled by construction.

scalar-target: model style x output (width 1 / 3 / unknown, rank 2 / 1,
the evidence of classes in the code) x method and loop form. A width-3
output differentiated whole is a bug (unsafe fix), an unknown width with a
softmax, a class index or an argmax in the code too; an unknown width
without them is a report; width 1, rank 1 and an output already selected
are near-misses.

suffix-mixup: naming style x gradient form x case. The bug multiplies input
B's difference from its baseline by input A's gradients; near-misses use
B's own gradients, or multiply B's difference by a statistic or a gate of
input A (no gradient).

Every program follows the runner's ``attribution_case()`` protocol
(completeness within 5%); models whose attributions are exact (linear
models: saliency, SmoothGrad, one-tape gradients) also compare them with a
float64 NumPy reference and raise when they differ. Some programs are
notebooks (``Program.suffix``).
"""

from __future__ import annotations

import itertools
import json
from typing import Dict, Iterator, List, Tuple

from variants import Program

FAMILY = "ig-attribution"

STYLES = ("sequential", "functional", "subclassed", "two_input")
OUTPUTS = ("w1", "w1_rank1", "w3", "w3_selected", "unknown", "unknown_silent", "unknown_rank1")
METHODS = ("ig_range", "ig_linspace", "ig_while", "ig_comprehension", "ig_batched", "smoothgrad", "saliency")
EVIDENCE = ("class_index", "softmax", "argmax")
NAMINGS = ("underscore_digits", "bare_digits", "letters", "modality", "words", "none")
FORMS = ("unpacked", "two_calls", "path_function", "smoothgrad")
CASES = ("crossed", "correct", "statistic", "gate")

DIMENSIONS = {
    "scalar-target: model style": STYLES,
    "scalar-target: output width and rank": OUTPUTS,
    "scalar-target: method and loop form": METHODS,
    "scalar-target: evidence of classes (rotated)": EVIDENCE,
    "suffix-mixup: naming style": NAMINGS,
    "suffix-mixup: gradient form": FORMS,
    "suffix-mixup: case": CASES,
    "container (rotated)": ("py", "ipynb"),
}

HEADER = '''"""{doc}"""
import numpy as np
import tensorflow as tf

FEATURES = 4
STEPS = 32


def init(seed):
    return tf.keras.initializers.GlorotUniform(seed=seed)
'''

REFERENCE = '''

def linear_kernel(model):
    """The float64 product of the kernels of a model without activations."""
    kernel = None
    for layer in model.layers:
        weights = layer.get_weights()
        if weights:
            kernel = weights[0].astype(np.float64) if kernel is None else kernel @ weights[0].astype(np.float64)
    return kernel
'''


# ---------------------------------------------------------------- scalar-target

def _scalar_model(style: str, units: str, activation: str, hidden: str, rank1: bool, unknown: bool) -> str:
    act = f', activation="{activation}"' if activation else ""
    param = "n_out" if unknown else ""
    if style == "sequential":
        reshape = "\n        tf.keras.layers.Reshape(())," if rank1 else ""
        return f'''

def build_model({param}):
    tf.random.set_seed(0)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(8{hidden}, input_shape=(FEATURES,), kernel_initializer=init(1)),
        tf.keras.layers.Dense({units}{act}, kernel_initializer=init(2)),{reshape}
    ])
'''
    if style == "subclassed":
        out = "tf.squeeze(self.head(self.hidden(x)), axis=-1)" if rank1 else "self.head(self.hidden(x))"
        arg = ", n_out" if unknown else ""
        return f'''

class Scorer(tf.keras.Model):
    def __init__(self{arg}):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8{hidden}, kernel_initializer=init(1))
        self.head = tf.keras.layers.Dense({units}{act}, kernel_initializer=init(2))

    def call(self, x):
        return {out}


def build_model({param}):
    tf.random.set_seed(0)
    model = Scorer({param})
    model(tf.zeros((1, FEATURES)))
    return model
'''
    inputs = "first = tf.keras.layers.Input(shape=(FEATURES,))\n"
    joined = "first"
    if style == "two_input":
        inputs += "    second = tf.keras.layers.Input(shape=(FEATURES,))\n"
        joined = "tf.keras.layers.Concatenate()([first, second])"
    squeeze = "\n    score = tf.keras.layers.Reshape(())(score)" if rank1 else ""
    feeds = "[first, second]" if style == "two_input" else "first"
    return f'''

def build_model({param}):
    tf.random.set_seed(0)
    {inputs}    hidden = tf.keras.layers.Dense(8{hidden}, kernel_initializer=init(1))({joined})
    score = tf.keras.layers.Dense({units}{act}, kernel_initializer=init(2))(hidden){squeeze}
    return tf.keras.Model({feeds}, score)
'''


def _call(style: str, point: str) -> str:
    return f"model([{point}, other])" if style == "two_input" else f"model({point})"


def _explain(style: str, method: str, select: str, label: str, index_param: bool, argmax: bool) -> str:
    """The attribution function: ``explain(model, x[, other][, target_class_idx])``."""
    other = ", other" if style == "two_input" else ""
    params = f"model, x{other}" + (", target_class_idx" if index_param else "")
    call = lambda point: _call(style, point) + select  # noqa: E731
    pre = f"    top = int(np.argmax({_call(style, 'x')}.numpy()[0]))\n    print('explaining class', top)\n" \
        if argmax else ""
    if method == "saliency":
        return f'''

def explain({params}):
{pre}    with tf.GradientTape() as tape:
        tape.watch(x)
        out = {call("x")}{label}
    grads = tape.gradient(out, x)
    return x * grads
'''
    if method == "smoothgrad":
        return f'''

def explain({params}, samples=8, sigma=0.1):
{pre}    tf.random.set_seed(1)
    total = tf.zeros_like(x)
    for _ in range(samples):
        noisy = x + tf.random.normal(tf.shape(x), stddev=sigma)
        with tf.GradientTape() as tape:
            tape.watch(noisy)
            out = {call("noisy")}{label}
        total += tape.gradient(out, noisy)
    return x * (total / samples)
'''
    if method == "ig_batched":
        batch_other = ", tf.repeat(other, STEPS + 1, axis=0)" if style == "two_input" else ""
        fed = f"model([path{batch_other}])" if style == "two_input" else "model(path)"
        return f'''

def explain({params}):
{pre}    baseline = tf.zeros_like(x)
    alphas = tf.reshape(tf.linspace(0.0, 1.0, STEPS + 1), (-1, 1))
    path = baseline + alphas * (x - baseline)
    with tf.GradientTape() as tape:
        tape.watch(path)
        out = {fed}{select}{label}
    grads = tape.gradient(out, path)
    avg = tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0, keepdims=True)
    return (x - baseline) * avg
'''
    if method == "ig_comprehension":
        index_arg = ", target_class_idx" if index_param else ""
        return f'''

def gradient_at(model, point{other}{index_arg}):
    with tf.GradientTape() as tape:
        tape.watch(point)
        out = {call("point")}{label}
    return tape.gradient(out, point)


def explain({params}):
{pre}    baseline = tf.zeros_like(x)
    alphas = np.linspace(0.0, 1.0, STEPS + 1)
    grads = [gradient_at(model, baseline + alpha * (x - baseline){other}{index_arg}) for alpha in alphas]
    grads = tf.stack(grads)
    avg = tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)
    return (x - baseline) * avg
'''
    loop, alpha, step_end = {
        "ig_range": ("for i in range(STEPS + 1):", "i / STEPS", ""),
        "ig_linspace": ("for alpha in tf.linspace(0.0, 1.0, STEPS + 1):", "alpha", ""),
        "ig_while": ("i = 0\n    while i <= STEPS:", "i / STEPS", "\n        i += 1"),
    }[method]
    return f'''

def explain({params}):
{pre}    baseline = tf.zeros_like(x)
    grads = []
    {loop}
        step = baseline + {alpha} * (x - baseline)
        with tf.GradientTape() as tape:
            tape.watch(step)
            out = {call("step")}{label}
        grads.append(tape.gradient(out, step)){step_end}
    grads = tf.stack(grads)
    avg = tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)
    return (x - baseline) * avg
'''


def _scalar_case(style: str, output: str, method: str, evidence: str) -> Tuple[str, str, str, bool]:
    """(name, source, doc, near_miss) of one scalar-target program."""
    exact = method in ("saliency", "smoothgrad")  # linear models: attributions are exact
    multi = output in ("w3", "w3_selected", "unknown", "unknown_silent")
    if output in ("w3", "unknown") and exact and evidence == "softmax":
        evidence = "class_index"  # a softmax is not linear: these methods rotate to the other evidence
    shows = evidence if output in ("w3", "unknown") else "none"
    units = {"w1": "1", "w1_rank1": "1", "w3": "3", "w3_selected": "3"}.get(output, "n_out")
    width = 1 if output in ("w1", "w1_rank1", "unknown_rank1") else 3
    rank1 = output.endswith("rank1")
    activation = "softmax" if shows == "softmax" else ""
    hidden = "" if exact else ', activation="tanh"'
    index_param = shows == "class_index"
    target = 2 if index_param else 0
    if output == "w3_selected":
        select, label, kind = "[:, target_class_idx]", "", None
        index_param, target = True, 2
    elif output in ("w3", "unknown"):
        select, label, kind = "", "  # expect: scalar-target unsafe", "unsafe"
    elif output == "unknown_silent":
        select, label, kind = "", "  # expect: scalar-target report", "report"
    else:
        select, label, kind = "", "", None
    if kind is None:
        doc = {"w1": "one output unit (Dense(1)): the sum is the output",
               "w1_rank1": "a rank-1 output (per-sample score): nothing to select",
               "unknown_rank1": "a rank-1 output of unknown width: nothing to select",
               "w3_selected": "the target output is already selected"}[output]
    elif kind == "report":
        doc = "the width is not known here and nothing in the code shows classes: a question, not a fix"
    else:
        doc = (f"a multi-class output ({'width 3' if output == 'w3' else 'unknown width'}"
               f"{'' if shows == 'none' else ', evidence: ' + shows}) differentiated whole: every class "
               "mixed; the fix selects the target")
    built = f"build_model({width})" if units == "n_out" else "build_model()"
    source = HEADER.format(doc=f"scalar-target {style}/{output}/{method}: {doc}.")
    source += REFERENCE if exact else ""
    source += _scalar_model(style, units, activation, hidden, rank1, units == "n_out")
    source += _explain(style, method, select, label, index_param, shows == "argmax")
    source += _scalar_check(style, built, exact, rank1, kind, target, index_param)
    name = f"scalar_{style}_{output}_{method}" + (f"_{shows}" if shows != "none" else "")
    return name, source, doc, kind is None


def _scalar_check(style, built, exact, rank1, kind, target, index_param) -> str:
    other = ", other" if style == "two_input" else ""
    target_arg = f", {target}" if index_param else ""
    feed = "[v, other]" if style == "two_input" else "v"
    if rank1:
        pick = "out[0]"
    elif kind == "report":
        pick = "tf.reduce_sum(out[0])"  # the program's own question: the sum of its outputs
    else:
        pick = f"out[0, {target}]"
    column = "kernel.sum(axis=1)" if kind == "report" else f"kernel[:, {0 if rank1 else target}]"
    reference = f'''
    kernel = linear_kernel(model)
    expected = x.numpy().astype(np.float64) * {column}[:FEATURES]
    if not np.allclose(attributions.numpy(), expected, rtol=1e-3, atol=1e-5):
        raise AssertionError("attributions differ from the float64 reference")''' if exact else ""
    return f'''

def attribution_case():
    np.random.seed(0)
    x = tf.constant(np.random.rand(1, FEATURES) * 2 - 1, dtype=tf.float32)
    other = tf.constant(np.random.rand(1, FEATURES), dtype=tf.float32)
    model = {built}
    attributions = explain(model, x{other}{target_arg})
    if attributions is None or not np.all(np.isfinite(attributions.numpy())):
        raise AssertionError("no attributions")

    def score(v):
        out = model({feed})
        return float({pick})
{reference}
    return [{{"name": "x", "attributions": attributions.numpy(), "input": x.numpy(),
             "f_input": score(x), "f_baseline": score(tf.zeros_like(x))}}]


if __name__ == "__main__":
    for case in attribution_case():
        print(case["name"], case["attributions"].sum(), case["f_input"] - case["f_baseline"])
'''


def _scalar_programs() -> Iterator[Tuple[str, str, bool]]:
    turn = itertools.cycle(EVIDENCE)
    for style, output, method in itertools.product(STYLES, OUTPUTS, METHODS):
        name, source, _, near_miss = _scalar_case(style, output, method, next(turn))
        yield name, source, near_miss


# ---------------------------------------------------------------- suffix-mixup

_NAMES = {  # x_a, x_b, base_a, base_b, g_a, g_b, attr_a, attr_b, factor_a
    "underscore_digits": ("inputs_1", "inputs_2", "baseline_1", "baseline_2", "grads_1", "grads_2",
                          "ig_1", "ig_2", "other_1"),
    "bare_digits": ("x1", "x2", "b1", "b2", "g1", "g2", "ig1", "ig2", "f1"),
    "letters": ("x_a", "x_b", "base_a", "base_b", "grads_a", "grads_b", "attr_a", "attr_b", "factor_a"),
    "modality": ("x_img", "x_txt", "base_img", "base_txt", "g_img", "g_txt", "attr_img", "attr_txt", "f_img"),
    "words": ("image", "text", "image_baseline", "text_baseline", "pixel_grads", "token_grads",
              "pixel_attr", "token_attr", "image_factor"),
    "none": ("static", "sequence", "reference", "neutral", "slope", "trend", "credit", "share", "scale"),
}


def _gradients(form: str, n) -> str:
    """Statements binding n['ga'] and n['gb'], gradients along each input's path."""
    xa, xb, ga, gb = n["xa"], n["xb"], n["ga"], n["gb"]
    if form == "unpacked":
        return f'''    with tf.GradientTape() as tape:
        tape.watch([{xa}, {xb}])
        score = model([{xa}, {xb}])[:, 0]
    {ga}, {gb} = tape.gradient(score, [{xa}, {xb}])
'''
    if form == "two_calls":
        return f'''    with tf.GradientTape(persistent=True) as tape:
        tape.watch({xa})
        tape.watch({xb})
        score = model([{xa}, {xb}])[:, 0]
    {ga} = tape.gradient(score, {xa})
    {gb} = tape.gradient(score, {xb})
    del tape
'''
    if form == "smoothgrad":
        return f'''    tf.random.set_seed(1)
    {ga} = tf.zeros_like({xa})
    {gb} = tf.zeros_like({xb})
    for _ in range(8):
        noisy_a = {xa} + tf.random.normal(tf.shape({xa}), stddev=0.1)
        noisy_b = {xb} + tf.random.normal(tf.shape({xb}), stddev=0.1)
        with tf.GradientTape() as tape:
            tape.watch([noisy_a, noisy_b])
            score = model([noisy_a, noisy_b])[:, 0]
        step_a, step_b = tape.gradient(score, [noisy_a, noisy_b])
        {ga} += step_a / 8.0
        {gb} += step_b / 8.0
'''
    return f'''    {ga} = path_gradients(model, [{xa}, {xb}], [{n["ba"]}, {n["bb"]}], 0)
    {gb} = path_gradients(model, [{xa}, {xb}], [{n["ba"]}, {n["bb"]}], 1)
'''


PATH_GRADIENTS = '''

def path_gradients(model, inputs, baselines, which):
    """The average gradient along the straight path of input ``which``."""
    grads = []
    for alpha in np.linspace(0.0, 1.0, STEPS + 1):
        step = baselines[which] + alpha * (inputs[which] - baselines[which])
        feed = list(inputs)
        feed[which] = step
        with tf.GradientTape() as tape:
            tape.watch(step)
            score = model(feed)[:, 0]
        grads.append(tape.gradient(score, step))
    grads = tf.stack(grads)
    return tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)
'''


def _suffix_case(naming: str, form: str, case: str) -> Tuple[str, str, bool]:
    xa, xb, ba, bb, ga, gb, attr_a, attr_b, fa = _NAMES[naming]
    n = dict(xa=xa, xb=xb, ba=ba, bb=bb, ga=ga, gb=gb)
    exact = form != "path_function"  # linear model: gradient x difference is exact per input
    hidden = "" if exact else ', activation="tanh"'
    factor = ga if case == "crossed" else gb
    label = "  # expect: suffix-mixup unsafe" if case == "crossed" else ""
    extra = ""
    if case == "statistic":
        extra = (f"    {fa} = tf.reduce_mean({xa})\n"
                 f"    contrast = ({xb} - {bb}) * {fa}\n    print('contrast', float(tf.reduce_sum(contrast)))\n")
    elif case == "gate":
        extra = (f"    {fa} = tf.sigmoid({xa})\n"
                 f"    gated = ({xb} - {bb}) * {fa}\n    print('gated', float(tf.reduce_sum(gated)))\n")
    doc = {"crossed": f"the attributions of `{xb}` multiply its difference by `{ga}`, the gradients along "
                      f"`{xa}`'s path, while `{gb}` exists: completeness fails for `{xb}`",
           "correct": "each input's difference times its own gradients",
           "statistic": f"`{xb}`'s difference times a statistic of `{xa}`: no gradient, on purpose",
           "gate": f"`{xb}`'s difference gated by `{xa}`: no gradient, on purpose"}[case]
    source = HEADER.format(doc=f"suffix-mixup {naming}/{form}/{case}: {doc}.") + REFERENCE * exact
    source += f'''

def build_model():
    tf.random.set_seed(0)
    first = tf.keras.layers.Input(shape=(FEATURES,))
    second = tf.keras.layers.Input(shape=(FEATURES,))
    joined = tf.keras.layers.Concatenate()([first, second])
    hidden = tf.keras.layers.Dense(8{hidden}, kernel_initializer=init(1))(joined)
    return tf.keras.Model([first, second], tf.keras.layers.Dense(1, kernel_initializer=init(2))(hidden))
'''
    source += PATH_GRADIENTS if form == "path_function" else ""
    source += f'''

def explain(model, {xa}, {xb}):
    {ba} = tf.zeros_like({xa})
    {bb} = tf.zeros_like({xb})
{_gradients(form, n)}{extra}    {attr_a} = ({xa} - {ba}) * {ga}
    {attr_b} = ({xb} - {bb}) * {factor}{label}
    return {attr_a}, {attr_b}
'''
    reference = '''
    kernel = linear_kernel(model)[:, 0]
    for found, value, rows in ((first_attr, first, kernel[:FEATURES]), (second_attr, second, kernel[FEATURES:])):
        if not np.allclose(found.numpy(), value.numpy().astype(np.float64) * rows, rtol=1e-3, atol=1e-5):
            raise AssertionError("attributions differ from the float64 reference")''' if exact else ""
    source += f'''

def attribution_case():
    np.random.seed(0)
    first = tf.constant(np.random.rand(1, FEATURES) * 2, dtype=tf.float32)
    second = tf.constant(np.random.rand(1, FEATURES) * 2 - 1, dtype=tf.float32)
    model = build_model()
    first_attr, second_attr = explain(model, first, second)
    zeros = tf.zeros((1, FEATURES))

    def score(a, b):
        return float(model([a, b])[0, 0])
{reference}
    return [
        {{"name": "first", "attributions": first_attr.numpy(), "input": first.numpy(),
         "f_input": score(first, second), "f_baseline": score(zeros, second)}},
        {{"name": "second", "attributions": second_attr.numpy(), "input": second.numpy(),
         "f_input": score(first, second), "f_baseline": score(first, zeros)}},
    ]


if __name__ == "__main__":
    for case in attribution_case():
        print(case["name"], case["attributions"].sum(), case["f_input"] - case["f_baseline"])
'''
    return f"suffix_{naming}_{form}_{case}", source, case != "crossed"


def _suffix_programs() -> Iterator[Tuple[str, str, bool]]:
    for naming, form, case in itertools.product(NAMINGS, FORMS, CASES):
        yield _suffix_case(naming, form, case)


# ---------------------------------------------------------------- notebooks

def notebook(source: str) -> str:
    """The program as a notebook: a markdown cell, then one code cell per
    top-level block (imports, each definition, the main guard)."""
    blocks: List[str] = []
    for chunk in source.split("\n\n\n"):
        if chunk.strip():
            blocks.append(chunk.strip("\n") + "\n")
    cells: List[Dict] = [{"cell_type": "markdown", "id": "cell-0", "metadata": {},
                          "source": ["Attribution walkthrough\n"]}]
    for number, block in enumerate(blocks, start=1):
        lines = block.splitlines(keepends=True)
        lines[-1] = lines[-1].rstrip("\n")
        cells.append({"cell_type": "code", "execution_count": None, "id": f"cell-{number}", "metadata": {},
                      "outputs": [],
                      "source": lines})
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                   "language": "python"}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def generate() -> Iterator[Program]:
    """Every program; every seventh is a notebook."""
    for number, (name, source, near_miss) in enumerate(itertools.chain(_scalar_programs(), _suffix_programs())):
        if number % 7 == 3:
            yield Program(name, notebook(source), near_miss, suffix=".ipynb")
        else:
            yield Program(name, source, near_miss)
