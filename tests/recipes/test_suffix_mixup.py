"""suffix-mixup: edge cases beyond the fixtures (moved from the seed-named test
files), then VALID / INVALID cases for the failure classes of issue 11 (a
VALID case must give no finding; an INVALID one's findings and fix are a
JSON snapshot under tests/snapshots/suffix-mixup/)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from migrate.prefilter import GAP
from recipes.suffix_mixup import numbered_words

from recipe_cases import check_case, invalid, only, params, run_body, valid

RECIPE = "suffix-mixup"


def test_suffix_mixup_replaces_the_single_odd_operand():
    result = run_body("""
        def f(inputs_1, inputs_2, baseline_1, baseline_2, g):
            avg_gradients_1 = g(1)
            avg_gradients_2 = g(2)
            integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_1
            return integrated_gradients_2
        """, "suffix-mixup")
    assert "integrated_gradients_2 = (inputs_2 - baseline_2) * avg_gradients_2" in result.output
    assert only(result).safety == "unsafe"


@pytest.mark.parametrize("body", [
    # two names of the other suffix: mixed on purpose
    "def f(w_1, w_2, g_1, g_2):\n    blend_2 = w_2 * g_2 + w_1 * g_1\n",
    # no suffix on the target
    "def f(loss_1, loss_2, avg_1):\n    avg_2 = 1\n    total = loss_2 * avg_1\n",
    # a recurrence: the sibling would be the target itself
    "def f(h_1, decay_2):\n    h_2 = h_1 * decay_2\n",
    # the sibling does not exist (yet)
    "def f(x_2, avg_1):\n    y_2 = x_2 * avg_1\n    avg_2 = 0\n",
    # a called name is not an operand
    "def f(layer_1, x_2):\n    layer_2 = 0\n    out_2 = layer_1(x_2)\n",
])
def test_suffix_mixup_leaves_these_alone(body):
    result = run_body(body, "suffix-mixup")
    assert result.output == result.source and not result.diagnostics


def test_suffix_mixup_finds_the_odd_operand_at_any_arithmetic_depth():
    result = run_body("""
        def f(a_1, a_2, b_1, c_2, g):
            b_2 = g(2)
            y_2 = -((a_2 @ c_2) // 2 + b_1[0]) % a_2
            return y_2
        """, "suffix-mixup")
    assert "y_2 = -((a_2 @ c_2) // 2 + b_2[0]) % a_2" in result.output


# The former false positives of the corpus sweep (docs/corpus-findings.md),
# reduced to their shape: numbered names that are no arithmetic operands.
@pytest.mark.parametrize("body", [
    # keras saved_model_test.py:207: both inputs as list items of a call
    "def f(model, convert, read):\n    input_arr_1 = read(1)\n    input_arr_2 = read(2)\n    outputs_1 = model(inputs=[convert(input_arr_1), "
    "convert(input_arr_2)])\n",
    # keras saved_model_test.py:216: two inputs to two keyword parameters
    "def f(g, convert, input_arr_1, inputs_2):\n    input_arr_2 = input_arr_1\n    inputs_1 = inputs_2\n    outputs_2 = g(inputs=convert(input_arr_1), "
    "inputs_1=convert(input_arr_2))\n",
    # tensorflow dynamic_ragged_shape.py:2647: a suffix that is a dimension index, in a call
    "def f(RowPartition, static_a_1, ac_0, half):\n    ac_1 = half(ac_0)\n    c_1 = RowPartition.from_uniform_row_length("
    "static_a_1, nrows=ac_0.dest_nrows())\n",
    # tensorflow dynamic_ragged_shape.py:2654: the same with a method call as first argument
    "def f(RowPartition, b_1, bc_0, half):\n    bc_1 = half(bc_0)\n    c_1 = RowPartition.from_uniform_row_length("
    "b_1.uniform_row_length(), nrows=bc_0.dest_nrows())\n",
    # tensorflow dynamic_ragged_shape.py:2662: the same for a_1 and ac_0
    "def f(RowPartition, a_1, ac_0, half):\n    ac_1 = half(ac_0)\n    c_1 = RowPartition.from_uniform_row_length("
    "a_1.uniform_row_length(), nrows=ac_0.dest_nrows())\n",
    # inside arithmetic, but in a call argument, a subscript or a display
    "def f(x_2, avg_1):\n    avg_2 = avg_1\n    y_2 = x_2 * tf.abs(avg_1)\n",
    "def f(x_2, idx_1):\n    idx_2 = idx_1\n    y_2 = x_2 + x_2[idx_1]\n",
    "def f(x_2, avg_1):\n    avg_2 = avg_1\n    y_2 = x_2 * [avg_1, 0][0]\n",
    "def f(x_2, avg_1):\n    avg_2 = avg_1\n    y_2 = (x_2, avg_1)\n",
])
def test_suffix_mixup_leaves_non_arithmetic_names_alone(body):
    result = run_body(body, "suffix-mixup")
    assert result.output == result.source and not result.diagnostics


CASES = [
    invalid("odd_operand", """
        def blend(inputs_1, inputs_2, baseline_1, baseline_2, grads):
            grads_1, grads_2 = grads
            out_1 = (inputs_1 - baseline_1) * grads_1
            out_2 = (inputs_2 - baseline_2) * grads_1
            return out_1, out_2
        """, "the one operand with another suffix", safety="unsafe"),
    valid("recurrence", """
        def decay(h_1, decay_2):
            h_2 = h_1 * decay_2
            return h_2
        """, "the odd name shares the target's stem: a recurrence"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_cases(case):
    check_case(RECIPE, case)


@pytest.mark.parametrize("twin, line", [
    ("attr_1 = tf.multiply(tf.subtract(x_1, base_1), grads_1)",
     "attr_2 = tf.multiply(tf.subtract(x_2, base_2), grads_1)"),
    ("delta_1 = tf.math.subtract(x_1, base_1)", "delta_2 = tf.math.subtract(x_2, base_1)"),
    ("proj_1 = tf.matmul(x_1, w_1, transpose_b=True)", "proj_2 = tf.matmul(x_2, w_1, transpose_b=True)"),
])
def test_suffix_mixup_counts_tensorflow_arithmetic_arguments_as_operands(twin, line):
    result = run_body(f"""
        def f(x_1, x_2, base_1, base_2, grads_1, grads_2, w_1, w_2):
            {twin}
            {line}
        """, "suffix-mixup")
    finding = only(result)
    assert finding.safety == "unsafe" and "is computed the same way" in finding.message
    assert line.replace("_1)", "_2)").replace("w_1,", "w_2,") in result.output


@pytest.mark.parametrize("body", [
    # a symmetric crossing: each twin reads the other's gate
    "def f(g_1, g_2, x_1, x_2):\n    h_1 = g_2 * x_1\n    h_2 = g_1 * x_2\n",
    # cross-attention written with tf.matmul
    "def f(q_1, q_2, k_1, k_2, s):\n    a_1 = tf.matmul(q_1, k_2) / s\n    a_2 = tf.matmul(q_2, k_1) / s\n",
    # the twin reads a neighbouring layer too: layer k reads layer k - 1 on purpose
    "def f(a_0, w_1, w_2, b_1, b_2):\n    for _ in range(3):\n        z_1 = tf.add(tf.matmul(a_0, w_1), b_1)\n"
    "        a_1 = tf.sigmoid(z_1)\n        z_2 = tf.add(tf.matmul(a_1, w_2), b_2)\n        a_2 = tf.sigmoid(z_2)\n",
    # bare digits without a twin
    "def f(x2, b2, avg1, avg2):\n    ig2 = (x2 - b2) * avg1\n",
])
def test_suffix_mixup_leaves_intentional_crossings_alone(body):
    result = run_body(body, "suffix-mixup")
    assert result.output == result.source and not result.diagnostics


def test_suffix_mixup_takes_bare_digit_suffixes_with_twin_evidence():
    result = run_body("""
        def f(x1, x2, b1, b2, avg1, avg2):
            ig1 = (x1 - b1) * avg1
            ig2 = (x2 - b2) * avg1
            return ig1, ig2
        """, "suffix-mixup")
    assert "ig2 = (x2 - b2) * avg2\n" in result.output
    assert "`ig1` is computed the same way" in only(result).message


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab_Z19.= \n#(é", max_size=40))
def test_numbered_words_are_the_forward_patterns_matches(text):
    """The precheck finds numbered names in the reversed text (a pattern
    starting with a digit is 3.7x faster): the same names, in the same
    order, as the plain forward pattern."""
    forward = re.compile(rf"(?<![\w.])([A-Za-z_]\w*)(?<=\d)(?!\w)({GAP}*=(?!=))?")
    assert numbered_words(text) == [(m.group(1), m.group(2) is not None) for m in forward.finditer(text)]
