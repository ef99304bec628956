"""Integrated-gradients and SmoothGrad programs for per-step-tape, labelled
by construction: case x loop form x model style x naming, the alphas
spelling rotated.

Bugs (the watched step is not the tensor the model reads or the gradient
asks for, or tape.watch raises on it):

- ``stacked``: a path ``tf.stack([... for alpha in alphas])`` indexed in
  the loop (``tape.watch(path[i])``, ``model(path[i])``); safe: rebuilt per
  step (a ``for i in range`` loop) or the slice bound to one name;
- ``stacked_batch``: a path built at once, ``baseline + alphas * (x -
  baseline)``, fed as ``path[i:i + 1]``; safe: the slice bound to a name;
- ``numpy_step``: the step computed in NumPy (``np.asarray(...)``) and
  watched: tape.watch raises; safe: converted once to a tensor by name;
- ``number_scale``: a Python number (a scale on the step, ``scale = 1.0``)
  watched with the step: tape.watch raises; unsafe: converted once, but the
  tape multiplies by it (a tensor does not promote dtypes as NumPy does);
- ``noise_samples``: SmoothGrad's noisy samples drawn at once and indexed
  in the loop; safe: the sample bound to one name;
- ``reevaluated``: the interpolation itself watched, fed and
  differentiated (three tensors); safe: bound to one name.

Near-misses (correct: watched, fed and differentiated as one tensor):
``named`` (the step built before the tape, watched by name), ``bound_slice``
(a pre-stacked path whose slice is bound to a name before the tape),
``list_path`` (a Python list of steps: an item is the same object each
time), ``variable`` (the step is a tf.Variable), ``converted`` (NumPy data
converted once with tf.convert_to_tensor), ``noise_named`` (SmoothGrad, each
noisy sample drawn before its tape).

Each program runs the runner's ``attribution_case()`` check of the other IG
programs (tests/variants/ig_attribution.py): attributions not None and
finite, completeness within 5%; SmoothGrad programs use a linear model and
compare with a float64 NumPy reference.
"""

from __future__ import annotations

import itertools
from typing import Iterator, Tuple

from variants import Program
from variants.ig_attribution import HEADER, REFERENCE, _scalar_check, _scalar_model, notebook

FAMILY = "per-step-tape"

BUGS = ("stacked", "stacked_batch", "numpy_step", "number_scale", "noise_samples", "reevaluated")
MISSES = ("named", "bound_slice", "list_path", "variable", "converted", "noise_named")
LOOPS = ("for_range", "for_alphas", "while", "enumerate")
STYLES = ("sequential", "functional", "subclassed", "two_input")
NAMINGS = ("short", "descriptive")
ALPHAS = ("tf_linspace", "np_linspace", "list")

DIMENSIONS = {
    "case (bug / near-miss)": BUGS + MISSES,
    "loop form": LOOPS,
    "model style": STYLES,
    "naming": NAMINGS,
    "alphas spelling (rotated)": ALPHAS,
    "container (rotated)": ("py", "ipynb"),
}

_NAMES = {  # path, step, alphas, alpha, grads
    "short": ("path", "step", "alphas", "alpha", "grads"),
    "descriptive": ("interpolated", "point", "coefficients", "coefficient", "path_gradients"),
}

_ALPHAS = {
    "tf_linspace": "tf.linspace(0.0, 1.0, STEPS + 1)",
    "np_linspace": "np.linspace(0.0, 1.0, STEPS + 1, dtype=np.float32)",
    "list": "[k / STEPS for k in range(STEPS + 1)]",
}

_DOCS = {
    "stacked": "the path is stacked before the loop and indexed in it: the tape watches one slice, the model "
               "reads another and the gradient is asked for a third, so it is None",
    "stacked_batch": "the path is built at once and indexed in the loop (fed as a batch of one): each slice is "
                     "a new tensor, so the gradient is None",
    "numpy_step": "the step is a NumPy array: tape.watch raises ValueError on it",
    "number_scale": "the scale watched with the step is a Python number: tape.watch raises ValueError on it",
    "noise_samples": "the noisy samples are drawn at once and indexed in the loop: each slice is a new tensor, "
                     "so the gradient is None",
    "reevaluated": "the interpolation is watched, fed and differentiated as three evaluations: three tensors, "
                   "so the gradient is None",
    "named": "the step is built before the tape and watched, fed and differentiated by name",
    "bound_slice": "the stacked path's slice is bound to a name before the tape and used by name",
    "list_path": "the path is a Python list: an item is the same tensor each time it is read",
    "variable": "the step is a tf.Variable: the same object watched, fed and differentiated",
    "converted": "the NumPy step is converted once with tf.convert_to_tensor and used by name",
    "noise_named": "each noisy sample is drawn before its tape and used by name",
}


def _loop(form: str, seq: str, var: str) -> Tuple[str, str, str]:
    """(header lines, first body line binding ``var`` or "", last body line)
    of a loop over ``seq`` that also counts ``i``."""
    return {
        "for_range": (f"for i in range(len({seq})):", f"{var} = {seq}[i]", ""),
        "for_alphas": (f"i = 0\n    for {var} in {seq}:", "", "i += 1"),
        "while": (f"i = 0\n    while i < len({seq}):", f"{var} = {seq}[i]", "i += 1"),
        "enumerate": (f"for i, {var} in enumerate({seq}):", "", ""),
    }[form]


def _feed(style: str, point: str) -> str:
    return f"model([{point}, other])" if style == "two_input" else f"model({point})"


def _ig(case: str, loop: str, style: str, naming: str, alphas_kind: str, label: str) -> str:
    path, step, alphas, alpha, grads = _NAMES[naming]
    other = ", other" if style == "two_input" else ""
    point = f"baseline + {alpha} * (x - baseline)"
    setup = [f"{alphas} = {_ALPHAS[alphas_kind]}"]
    before, after, watched, fed, asked = [], [], step, step, step
    collect = ""  # the statement after the tape: the gradient asked for the step
    if case == "stacked":
        setup.append(f"{path} = tf.stack([baseline + {alpha} * (x - baseline) for {alpha} in {alphas}])")
        watched = fed = asked = f"{path}[i]"
    elif case == "stacked_batch":
        setup.append(f"{path} = baseline + tf.reshape({alphas}, (-1, 1)) * (x - baseline)")
        watched = asked = f"{path}[i]"
        fed = f"{path}[i:i + 1]"
    elif case == "reevaluated":
        watched = fed = asked = point
    elif case == "numpy_step":
        setup += ["x_host = x.numpy()", "baseline_host = np.zeros_like(x_host)"]
        before.append(f"{step} = np.asarray(baseline_host + {alpha} * (x_host - baseline_host), dtype=np.float32)")
    elif case == "number_scale":
        setup += ["scale = 1.0", "sensitivity = []"]
        before.append(f"{step} = {point}")
        watched, fed = f"[{step}, scale]", f"{step} * scale"
        collect = (f"step_grad, scale_grad = tape.gradient(out, [{step}, scale])\n"
                   f"        {grads}.append(step_grad)\n        sensitivity.append(scale_grad)")
        after.append("print('scale sensitivity', float(tf.add_n(sensitivity)))")
    elif case == "converted":
        setup += ["x_host = x.numpy()", "baseline_host = np.zeros_like(x_host)"]
        before.append(f"{step} = tf.convert_to_tensor(np.asarray(baseline_host + {alpha} * (x_host - "
                      "baseline_host), dtype=np.float32))")
    elif case == "named":
        before.append(f"{step} = {point}")
    elif case == "variable":
        before.append(f"{step} = tf.Variable({point})")
    elif case == "bound_slice":
        setup.append(f"{path} = tf.stack([baseline + {alpha} * (x - baseline) for {alpha} in {alphas}])")
        before.append(f"{step} = {path}[i]")
    elif case == "list_path":
        setup.append(f"{path} = [baseline + {alpha} * (x - baseline) for {alpha} in {alphas}]")
        watched = fed = asked = f"{path}[i]"
    collect = collect or f"{grads}.append(tape.gradient(out, {asked}))"
    header, bind, count = _loop(loop, alphas, alpha)
    uses_alpha = case not in ("stacked", "stacked_batch", "bound_slice", "list_path")
    body = ([bind] if bind and uses_alpha else []) + before
    lines = "".join(f"        {line}\n" for line in body)
    count = f"\n        {count}" if count else ""
    return f'''

def explain(model, x{other}):
    baseline = tf.zeros_like(x)
{"".join(f"    {line}{chr(10)}" for line in setup)}    {grads} = []
    {header}
{lines}        with tf.GradientTape() as tape:
            tape.watch({watched}){label}
            out = {_feed(style, fed)}
        {collect}{count}
{"".join(f"    {line}{chr(10)}" for line in after)}    {grads} = tf.stack({grads})
    avg = tf.reduce_mean(({grads}[:-1] + {grads}[1:]) / 2.0, axis=0)
    return (x - baseline) * tf.reshape(avg, tf.shape(x))
'''


def _smoothgrad(case: str, loop: str, style: str, naming: str, label: str) -> str:
    samples, noisy = {"short": ("samples", "noisy"), "descriptive": ("perturbed", "sample")}[naming]
    other = ", other" if style == "two_input" else ""
    if case == "noise_samples":
        setup = f"    {samples} = x + tf.random.normal((SAMPLES, FEATURES), stddev=sigma)\n"
        seq, before, watched, fed = samples, "", f"{samples}[i]", f"{samples}[i][None]"
    else:
        setup = "    seeds = list(range(SAMPLES))\n"
        seq, watched, fed = "seeds", noisy, noisy
        before = f"        {noisy} = x + tf.random.normal(tf.shape(x), stddev=sigma)\n"
    header, bind, count = _loop(loop, seq, "drawn")
    bind = f"        {bind}\n" if bind and case != "noise_samples" else ""
    count = f"\n        {count}" if count else ""
    return f'''

def explain(model, x{other}, sigma=0.1):
    tf.random.set_seed(1)
{setup}    total = tf.zeros((FEATURES,))
    {header}
{bind}{before}        with tf.GradientTape() as tape:
            tape.watch({watched}){label}
            out = {_feed(style, fed)}
        total += tf.reshape(tape.gradient(out, {watched}), (FEATURES,)){count}
    return x * (total / SAMPLES)
'''


def _program(case: str, loop: str, style: str, naming: str, alphas_kind: str) -> Tuple[str, str, bool]:
    bug = case in BUGS
    label = f"  # expect: per-step-tape {'unsafe' if case == 'number_scale' else 'safe'}" if bug else ""
    smooth = case.startswith("noise")
    name = f"{case}_{loop}_{style}_{naming}" + ("" if smooth else f"_{alphas_kind}")
    doc = f"per-step-tape {name}: {_DOCS[case]}{'' if bug else ' (correct)'}."
    source = HEADER.format(doc=doc).replace("STEPS = 32\n", "STEPS = 32\nSAMPLES = 8\n")
    source += REFERENCE if smooth else ""
    source += _scalar_model(style, "1", "", "" if smooth else ', activation="tanh"', False, False)
    source += _smoothgrad(case, loop, style, naming, label) if smooth \
        else _ig(case, loop, style, naming, alphas_kind, label)
    source += _scalar_check(style, "build_model()", smooth, False, None, 0, False)
    return name, source, not bug


def generate() -> Iterator[Program]:
    """Every program; the alphas spelling turns with each program, every
    seventh program is a notebook."""
    turn = itertools.cycle(ALPHAS)
    crossed = itertools.product(BUGS + MISSES, LOOPS, STYLES, NAMINGS)
    for number, (case, loop, style, naming) in enumerate(crossed):
        name, source, near_miss = _program(case, loop, style, naming, next(turn))
        if number % 7 == 3:
            yield Program(name, notebook(source), near_miss, suffix=".ipynb")
        else:
            yield Program(name, source, near_miss)
