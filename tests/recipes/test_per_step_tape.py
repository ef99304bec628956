"""per-step-tape: edge cases beyond the fixtures (moved from the seed-named test
files), then VALID / INVALID cases for the failure classes of issue 11 (a
VALID case must give no finding; an INVALID one's findings and fix are a
JSON snapshot under tests/snapshots/per-step-tape/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from migrate.engine import Options, transform
from migrate.registry import resolve

from fixture_cases import FIXTURES
from recipe_cases import body_of, check_case, fixed, invalid, params, run_body, valid

RECIPE = "per-step-tape"


def test_per_step_tape_hoists_a_watched_slice_before_the_tape():
    result = run_body("""
        def f(model, x):
            with tf.GradientTape() as tape:
                tape.watch(x[0])
                y = model(x[0][None])
            return tape.gradient(y, x[0])
        """, "per-step-tape")
    assert body_of(result) == textwrap.dedent("""\
        def f(model, x):
            x_0 = x[0]
            with tf.GradientTape() as tape:
                tape.watch(x_0)
                y = model(x_0[None])
            return tape.gradient(y, x_0)
        """)


def test_per_step_tape_names_an_inline_alphas_iterable_and_never_builds_inside_the_tape():
    result = run_body("""
        def f(model, x, baseline, steps):
            path = tf.stack([baseline + a * (x - baseline) for a in np.linspace(0, 1, steps)], axis=0)  # path
            grads = []
            for k in range(steps):
                with tf.GradientTape() as tape:
                    tape.watch(path[k])
                    out = model(path[k])[:, 0]
                grads.append(tape.gradient(out, path[k]))
            return grads
        """, "per-step-tape")
    assert body_of(result) == textwrap.dedent("""\
        def f(model, x, baseline, steps):
            alphas = np.linspace(0, 1, steps)  # path
            grads = []
            for k in range(steps):
                path_step = baseline + alphas[k] * (x - baseline)
                with tf.GradientTape() as tape:
                    tape.watch(path_step)
                    out = model(path_step)[:, 0]
                grads.append(tape.gradient(out, path_step))
            return grads
        """)


def test_per_step_tape_keeps_a_path_that_is_read_elsewhere():
    result = run_body("""
        def f(model, x, baseline, alphas):
            path = tf.stack([baseline + a * (x - baseline) for a in alphas])
            for i in range(3):
                with tf.GradientTape() as tape:
                    tape.watch(path[i])
                    out = model(path[i])
                g = tape.gradient(out, path[i])
            return path.shape, g
        """, "per-step-tape")
    assert "path = tf.stack(" in result.output
    assert "        path_i = path[i]\n        with tf.GradientTape() as tape:\n" \
           "            tape.watch(path_i)\n" in result.output
    assert "g = tape.gradient(out, path_i)" in result.output


@pytest.mark.parametrize("body", [
    # the watched tensor already has a name
    "def f(m, x):\n    with tf.GradientTape() as t:\n        t.watch(x)\n        y = m(x)\n"
    "    return t.gradient(y, x)\n",
    # watched once, never read again: nothing to connect
    "def f(m, x):\n    with tf.GradientTape() as t:\n        t.watch(x[0])\n        y = m(x)\n"
    "    return y\n",
    # a random expression is not hoisted (hoisting would change how often it is drawn)
    "def f(m):\n    with tf.GradientTape() as t:\n        t.watch(tf.random.normal((2,)) * 1)\n"
    "        y = m(tf.random.normal((2,)) * 1)\n    return y\n",
])
def test_per_step_tape_leaves_these_alone(body):
    result = run_body(body, "per-step-tape")
    assert result.output == result.source and not result.diagnostics


SEED = FIXTURES / "per-step-tape" / "seed003_churn_ig.before.py"


SEED_RECIPES = ["per-step-tape", "scalar-target", "suffix-mixup", "typed-convert"]


def test_seed_program_rewrite_is_a_fixpoint_and_fixes_all_four_bugs():
    source = SEED.read_text()
    options = Options(tuple(resolve(SEED_RECIPES)), unsafe_fixes=True)
    once = transform(source, str(SEED), options)
    assert not once.errors
    assert {d.recipe for d in once.diagnostics} == set(SEED_RECIPES)
    assert transform(once.output, str(SEED), options).output == once.output
    for gone in ("path_1[i]", "tf.cast(", "* avg_gradients_1\n    return"):
        assert gone not in once.output
    assert "pred = model([path_1_step, inputs_2])[:, 0]" in once.output


_CHILD = r"""
import importlib.util, json, sys
import numpy as np


def attribution(path):
    spec = importlib.util.spec_from_file_location("program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        cases = module.attribution_case()
    except Exception as err:  # the before is expected to fail here
        return {"error": type(err).__name__ + ": " + str(err)}
    return {"cases": [
        {"name": c["name"], "finite": bool(np.isfinite(np.asarray(c["attributions"])).all()),
         "same_shape": np.asarray(c["attributions"]).shape == np.asarray(c["input"]).shape,
         "total": float(np.sum(c["attributions"])), "delta": c["f_input"] - c["f_baseline"]}
        for c in cases]}


print(json.dumps([attribution(path) for path in sys.argv[1:]]))
"""


def _attributions(*paths) -> list:
    """Each program's attribution_case() summary, from one TF child (one TF import)."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1")
    done = subprocess.run([sys.executable, "-c", _CHILD, *map(str, paths)], capture_output=True, text=True,
                          env=env, timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.tf
def test_seed_program_before_fails_and_its_full_rewrite_passes_completeness(tmp_path):
    rewritten = tmp_path / "seed003_rewritten.py"
    result = transform(SEED.read_text(), str(SEED), Options(tuple(resolve(None)), unsafe_fixes=True))
    assert not result.errors
    rewritten.write_text(result.output)
    before, after = _attributions(SEED, rewritten)
    assert "None" in before["error"]
    cases = after["cases"]
    assert [c["name"] for c in cases] == ["static", "sequence"]
    for case in cases:
        assert case["finite"] and case["same_shape"], case
        assert abs(case["total"] - case["delta"]) <= 0.05 * abs(case["delta"]), case


# --- failure classes of issue 11 ----------------------------------------------

CASES = [
    invalid("watched_slice", """
        import tensorflow as tf


        def saliency(model, images):
            with tf.GradientTape() as tape:
                tape.watch(images[0])
                scores = model(images[0])
            return tape.gradient(scores, images[0])
        """, "each images[0] is a new tensor", safety="safe"),
    valid("list_comprehension_is_one_object", """
        import tensorflow as tf


        def attributions(model, x, baseline, alphas):
            path = [baseline + a * (x - baseline) for a in alphas]
            grads = []
            for i in range(len(alphas)):
                with tf.GradientTape() as tape:
                    tape.watch(path[i])
                    out = model(path[i])
                grads.append(tape.gradient(out, path[i]))
            return grads
        """, "values whose kind is knowable: a list of tensors, indexing returns the same object"),
    valid("watched_name", """
        import tensorflow as tf


        def saliency(model, image):
            with tf.GradientTape() as tape:
                tape.watch(image)
                score = model(image)
            return tape.gradient(score, image)
        """, "a name is one tensor"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


def test_the_stacked_path_is_not_rebuilt_from_names_the_loop_reassigns():
    """data flow: the interpolation hoisted into the loop would read a value
    the loop reassigns (``x`` moves each step); the stacked path is kept."""
    result = run_body("""
        def refine(model, x, baseline, alphas, steps):
            path = tf.stack([baseline + a * (x - baseline) for a in alphas])
            for i in range(steps):
                with tf.GradientTape() as tape:
                    tape.watch(path[i])
                    out = model(path[i])
                g = tape.gradient(out, path[i])
                x = x + 0.1 * g
            return x
        """, RECIPE)
    assert "tf.stack([baseline + a * (x - baseline) for a in alphas])" in body_of(result)


def test_every_use_of_the_step_becomes_one_name_also_a_fed_slice():
    result = run_body("""
        def f(model, images):
            for k in range(3):
                with tf.GradientTape() as tape:
                    tape.watch(images[k])
                    score = model(images[k:k + 1])[0, 0]
                g = tape.gradient(score, images[k])
            return g
        """, RECIPE)
    assert "images_k = images[k]\n" in result.output
    assert "score = model(images_k[None])[0, 0]" in result.output
    assert "g = tape.gradient(score, images_k)" in result.output


def test_a_step_read_in_another_form_is_only_reported():
    result = run_body("""
        def f(model, images, k):
            with tf.GradientTape() as tape:
                tape.watch(images[k])
                score = model(images[k, None])[0, 0]
            return tape.gradient(score, images[k])
        """, RECIPE)
    finding = result.diagnostics[0]
    assert not finding.fixable and "in another form" in finding.message
    assert result.output == result.source


def test_a_watched_step_the_code_never_reads_is_only_reported():
    result = run_body("""
        def f(loss_fn, images, labels):
            with tf.GradientTape() as tape:
                tape.watch(tf.convert_to_tensor(images))
                loss = loss_fn(labels)
            return tape.gradient(loss, tf.convert_to_tensor(images))
        """, RECIPE)
    finding = result.diagnostics[0]
    assert not finding.fixable and "never reads the watched one" in finding.message


def test_inputs_assigned_in_the_loop_inside_the_tape_are_bound_below_their_assignment():
    result = run_body("""
        def f(scorer, frames):
            maps = []
            with tf.GradientTape(persistent=True) as tape:
                for i in range(frames.shape[0]):
                    frame = frames[i].astype(np.float32)
                    tape.watch(tf.convert_to_tensor(frame))
                    score = scorer(tf.convert_to_tensor(frame)[None])
                    maps.append(tape.gradient(score, tf.convert_to_tensor(frame)))
            return maps


        f(None, np.ones((2, 3)))
        """, RECIPE)
    assert body_of(result).count("watched = tf.convert_to_tensor(frame)\n") == 1
    assert "            frame = frames[i].astype(np.float32)\n            watched = tf" in result.output
    assert "tape.gradient(score, watched)" in result.output


def test_a_tensor_computed_inside_the_tape_is_only_reported():
    result = run_body("""
        def f(model, batch):
            with tf.GradientTape() as tape:
                scaled = batch / 255.0
                tape.watch(scaled[0])
                score = model(scaled[0][None])
            return tape.gradient(score, scaled[0])
        """, RECIPE)
    finding = result.diagnostics[0]
    assert not finding.fixable and "cannot be bound to one name here" in finding.message


@pytest.mark.parametrize("setup", [
    "inputs = (tf.ones(3), tf.ones(2))",      # a tuple display
    "inputs = model.trainable_variables",     # a list of variables
    "first, second = inputs",                 # a parameter the function unpacks
])
def test_an_item_of_a_python_sequence_is_one_object(setup):
    result = run_body(f"""
        def f(model, inputs):
            {setup}
            with tf.GradientTape() as tape:
                tape.watch(inputs[0])
                score = model([inputs[0], inputs[1]])
            return tape.gradient(score, inputs[0])
        """, RECIPE)
    assert not result.diagnostics


def test_the_stacked_path_is_known_in_any_import_spelling():
    result = fixed("""
        import tensorflow.compat.v2 as tf2


        def f(model, x, baseline, alphas):
            path = tf2.stack([baseline + a * (x - baseline) for a in alphas])
            for i in range(3):
                with tf2.GradientTape() as tape:
                    tape.watch(path[i])
                    out = model(path[i])
                g = tape.gradient(out, path[i])
            return g
        """, RECIPE)
    assert "path_step = baseline + alphas[i] * (x - baseline)\n" in result


# --- a watched value that is not a tensor (issue 24 item 4) ---------------------

def test_a_watched_numpy_array_is_converted_once_and_watched_fed_and_differentiated_by_name():
    result = run_body("""
        def saliency(model, image):
            x = image.numpy()
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = model(x[None])
            return tape.gradient(y, x) * x
        """, "per-step-tape", unsafe=False)
    assert body_of(result) == textwrap.dedent("""\
        def saliency(model, image):
            x = image.numpy()
            x_tensor = tf.convert_to_tensor(x)
            with tf.GradientTape() as tape:
                tape.watch(x_tensor)
                y = model(x_tensor[None])
            return tape.gradient(y, x_tensor) * x
        """)
    assert "tape.watch raises ValueError" in result.diagnostics[0].message


def test_a_watched_python_number_that_is_an_operand_in_the_tape_is_an_unsafe_fix():
    body = """
        def smooth(model):
            x = np.random.rand(1, 3)
            scale = 0.5
            with tf.GradientTape() as tape:
                tape.watch([x, scale])
                y = model(x * scale)
            return tape.gradient(y, [x, scale])
        """
    result = run_body(body, "per-step-tape", unsafe=False)
    assert [(d.safety, d.applied) for d in result.diagnostics] == [("unsafe", False)] * 2
    assert "does not promote dtypes" in result.diagnostics[0].message
    fixed_body = body_of(run_body(body, "per-step-tape", unsafe=True))
    assert "scale_tensor = tf.convert_to_tensor(scale)" in fixed_body
    assert "return tape.gradient(y, [x_tensor, scale_tensor])" in fixed_body


def test_a_watched_numpy_array_fed_in_a_list_of_model_inputs_is_a_safe_fix():
    """``model([x, other])`` passes the array to a call (a multi-input
    model), it is no arithmetic operand (tests/variants/per_step_tape.py)."""
    result = run_body("""
        def saliency(model, image, other):
            x = image.numpy()
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = model([x[None], other])
            return tape.gradient(y, x) * x
        """, "per-step-tape", unsafe=False)
    assert [(d.safety, d.applied) for d in result.diagnostics] == [("safe", True)]
    assert "y = model([x_tensor[None], other])" in body_of(result)


@pytest.mark.parametrize("body", [
    # an array method a tensor does not have
    "def f(model):\n    x = np.random.rand(1, 3)\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        y = model(x.reshape(1, 3))\n    return tape.gradient(y, x)\n",
    # bound inside the tape, before the watch
    "def f(model):\n    with tf.GradientTape() as tape:\n        x = np.random.rand(1, 3)\n        tape.watch(x)\n"
    "        y = model(x)\n    return tape.gradient(y, x)\n",
])
def test_a_watched_array_that_cannot_be_converted_by_name_is_only_reported(body):
    result = run_body(body, "per-step-tape", unsafe=True)
    assert len(result.diagnostics) == 1 and not result.diagnostics[0].fixable
    assert result.output == result.source


@pytest.mark.parametrize("body", [
    # already a tensor
    "def f(model):\n    x = tf.constant(np.random.rand(1, 3))\n    with tf.GradientTape() as tape:\n"
    "        tape.watch(x)\n        y = model(x)\n    return tape.gradient(y, x)\n",
    # a parameter: nothing proves it is NumPy data
    "def f(model, x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n        y = model(x)\n"
    "    return tape.gradient(y, x)\n",
    # arithmetic of an unknown value with an array: may be a tensor
    "def f(model, x):\n    x = x - np.zeros(3)\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        y = model(x)\n    return tape.gradient(y, x)\n",
])
def test_a_watched_value_not_provably_numpy_is_left_alone(body):
    result = run_body(body, "per-step-tape", unsafe=True)
    assert result.output == result.source and not result.diagnostics


WATCH_NUMPY = '''"""Gradient x input on a NumPy copy of the input (exact for a linear scorer)."""
import numpy as np
import tensorflow as tf


def gradient_times_input(scorer, image):
    x = image.numpy()
    with tf.GradientTape() as tape:
        tape.watch(x)
        score = scorer(x[None, :])[0, 0]
    return tape.gradient(score, x) * x


def attribution_case():
    np.random.seed(0)
    tf.random.set_seed(0)
    image = tf.constant(np.random.rand(5), dtype=tf.float32)
    scorer = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(5,))])
    x = image.numpy()
    return [{"name": "input", "attributions": np.asarray(gradient_times_input(scorer, image)), "input": x,
             "f_input": float(scorer(x[None, :])[0, 0]),
             "f_baseline": float(scorer(np.zeros((1, 5), np.float32))[0, 0])}]
'''


@pytest.mark.tf
def test_a_watched_numpy_array_raises_before_and_attributes_completely_after_on_both_runtimes(tmp_path):
    from migrate.runner import VerifyOptions, verify
    from migrate.runner.runtimes import current
    from tf23_runtime import tf23_runtime

    before, after = tmp_path / "watch_numpy.py", tmp_path / "after" / "watch_numpy.py"
    before.write_text(WATCH_NUMPY)
    after.parent.mkdir()
    after.write_text(fixed(WATCH_NUMPY, RECIPE))
    report = verify([before, after], VerifyOptions(timeout=60, runtimes=(current(), tf23_runtime())))
    by_path = {}
    for program in report.programs:
        by_path.setdefault(program.path, []).append(program)
    assert len(by_path[str(after)]) == 2 and all(p.ok for p in by_path[str(after)])
    for program in by_path[str(before)]:
        failed = [c for c in program.checks if not c.passed]
        assert [c.name for c in failed] == ["attribution"] and "ValueError" in (failed[0].error or "")


def test_a_watched_numpy_array_passed_by_keyword_is_an_argument_not_an_operand():
    result = run_body("""
        def saliency(model, image):
            x = image.numpy()
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = model(inputs=x[None])
            return tape.gradient(y, x) * x
        """, "per-step-tape", unsafe=False)
    assert [(d.safety, d.applied) for d in result.diagnostics] == [("safe", True)]
    assert "y = model(inputs=x_tensor[None])" in body_of(result)


def test_an_item_of_a_path_step_is_bound_once_not_rebuilt_as_the_step():
    """``path[i][0]`` is not the stacked path's step ``path[i]``: rebuilding
    the step would drop the ``[0]``."""
    result = run_body("""
        def ig(model, x, baseline, alphas):
            path = tf.stack([baseline + a * (x - baseline) for a in alphas])
            grads = []
            for i in range(len(alphas)):
                with tf.GradientTape() as tape:
                    tape.watch(path[i][0])
                    out = model(path[i][0])
                grads.append(tape.gradient(out, path[i][0]))
            return grads
        """, "per-step-tape", unsafe=False)
    assert "        watched = path[i][0]\n" in body_of(result) and "path_step" not in body_of(result)


def test_a_watched_negative_number_is_a_python_number():
    result = run_body("""
        def smooth(model):
            x = np.random.rand(1, 3)
            scale = -0.5
            with tf.GradientTape() as tape:
                tape.watch(scale)
                y = model(x) * scale
            return tape.gradient(y, scale)
        """, "per-step-tape", unsafe=False)
    [finding] = result.diagnostics
    assert finding.message.startswith("`scale` is a Python number, not a tensor: tape.watch raises ValueError")
