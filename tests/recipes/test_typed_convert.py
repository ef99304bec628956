"""typed-convert: edge cases beyond the fixtures (moved from the seed-named test
files), then VALID / INVALID cases for the failure classes of issue 11 (a
VALID case must give no finding; an INVALID one's findings and fix are a
JSON snapshot under tests/snapshots/typed-convert/)."""

from __future__ import annotations

import textwrap

import pytest

from recipe_cases import body_of, check_case, invalid, only, params, run, run_body, valid

RECIPE = "typed-convert"


@pytest.mark.parametrize("value", [
    "frame.iloc[:1, :].values",
    "frame.to_numpy()",
    "np.random.rand(2, 3)",
    "raw.astype(np.float64)",
    "[[1, 2], [3, 4]]",
    "(0.5, -1.5)",
])
def test_typed_convert_is_safe_for_provable_numpy(value):
    result = run_body(f"""
        def f(frame, raw):
            x = tf.convert_to_tensor({value})
            x = tf.cast(x, tf.float32)
            return x
        """, "typed-convert", unsafe=False)
    assert only(result).safety == "safe" and only(result).applied
    assert f"x = tf.convert_to_tensor({value}, dtype=tf.float32)\n    return x" in result.output


def test_typed_convert_follows_unpacking_of_a_list_display():
    result = run_body("""
        def f(frame):
            inputs = [frame.values, np.zeros((1, 3))]
            first, second = inputs
            second = tf.convert_to_tensor(second)
            second = tf.cast(second, "float32")
            return first, second
        """, "typed-convert", unsafe=False)
    assert only(result).safety == "safe"
    assert 'second = tf.convert_to_tensor(second, dtype="float32")' in result.output


@pytest.mark.parametrize("body", [
    # a parameter: could be a tensor
    "def f(a):\n    x = tf.convert_to_tensor(a)\n    x = tf.cast(x, tf.float32)\n",
    # bound in one branch only
    "def f(a, c):\n    if c:\n        a = np.ones(3)\n    x = tf.convert_to_tensor(a)\n"
    "    x = tf.cast(x, tf.float32)\n",
    # rebound inside the loop that reads it
    "def f(a):\n    for _ in range(2):\n        x = tf.convert_to_tensor(a)\n"
    "        x = tf.cast(x, tf.float32)\n        a = x\n",
    # float64 NumPy data into float16: measured to differ (double rounding through float32)
    "def f():\n    x = tf.convert_to_tensor(np.ones(3))\n    x = tf.cast(x, tf.float16)\n",
    # a Python float list into float64: the cast keeps the float32 intermediate's rounding
    "def f():\n    x = tf.convert_to_tensor([0.1, 2.7])\n    x = tf.cast(x, tf.float64)\n",
    # a dtype held in a variable
    "def f(d):\n    x = tf.convert_to_tensor(np.ones(3))\n    x = tf.cast(x, d)\n",
])
def test_typed_convert_is_unsafe_when_it_cannot_prove_it(body):
    result = run_body(body, "typed-convert", unsafe=False)
    finding = only(result)
    assert finding.safety == "unsafe" and not finding.applied and finding.fixable
    assert result.output == result.source
    assert run_body(body, "typed-convert", unsafe=True).output != result.source


def test_typed_convert_only_reports_a_tensor_argument():
    body = """
        def f():
            t = tf.constant([1.0], tf.float64)
            x = tf.convert_to_tensor(t)
            x = tf.cast(x, tf.float32)
            y = tf.cast(tf.convert_to_tensor(t * 2.0), tf.float32)
            return x, y
        """
    result = run_body(body, "typed-convert", unsafe=True)
    assert result.output == result.source
    assert [d.fixable for d in result.diagnostics] == [False, False]
    assert all("ValueError" in d.message for d in result.diagnostics)


@pytest.mark.parametrize("body", [
    # the unconverted tensor is read between convert and cast
    "def f():\n    x = tf.convert_to_tensor(np.ones(3))\n    print(x.dtype)\n"
    "    x = tf.cast(x, tf.float32)\n",
    # cast into another name: the intermediate stays
    "def f():\n    raw = tf.convert_to_tensor(np.ones(3))\n    x = tf.cast(raw, tf.float32)\n"
    "    return x, raw\n",
    # already typed
    "def f():\n    x = tf.cast(tf.convert_to_tensor(np.ones(3), dtype=tf.float64), tf.float32)\n",
])
def test_typed_convert_leaves_these_alone(body):
    result = run_body(body, "typed-convert")
    assert result.output == result.source and not result.diagnostics


def test_typed_convert_keeps_statements_between_and_the_comment():
    result = run_body("""
        def f(frame):
            x = tf.convert_to_tensor(frame.values)
            y = 3
            x = tf.cast(x, dtype=tf.float64)  # double precision
            return x, y
        """, "typed-convert")
    assert body_of(result) == textwrap.dedent("""\
        def f(frame):
            x = tf.convert_to_tensor(frame.values, dtype=tf.float64)  # double precision
            y = 3
            return x, y
        """)


def test_typed_convert_keeps_the_comment_above_a_cast_that_ends_the_function():
    result = run_body("""
        def f():
            x = tf.convert_to_tensor(np.ones(3))
            # the model is float32
            x = tf.cast(x, tf.float32)


        def g():
            pass
        """, "typed-convert")
    assert body_of(result).startswith(textwrap.dedent("""\
        def f():
            # the model is float32
            x = tf.convert_to_tensor(np.ones(3), dtype=tf.float32)


        def g():
        """))


def test_typed_convert_respects_suppression():
    result = run_body("""
        def f(frame):
            x = tf.convert_to_tensor(frame.values)  # tf-migrate: ignore[typed-convert]
            x = tf.cast(x, tf.float32)
        """, "typed-convert")
    assert result.output == result.source and not result.diagnostics


# --- failure classes of issue 11 ----------------------------------------------

CASES = [
    invalid("astype_is_numpy", """
        import tensorflow as tf


        def load(frame):
            x = tf.convert_to_tensor(frame.to_numpy().astype("float64"))
            x = tf.cast(x, tf.float32)
            return x
        """, "values whose kind is knowable: .astype() is NumPy, the fold is safe", safety="safe"),
    invalid("reshape_is_numpy", """
        import numpy as np
        import tensorflow as tf


        def load(rows):
            return tf.cast(tf.convert_to_tensor(np.array(rows).reshape(-1, 3)), tf.float32)
        """, "values whose kind is knowable: np.array(...).reshape(...) is NumPy", safety="safe"),
    invalid("flatten_is_numpy", """
        import numpy as np
        import tensorflow as tf


        def load(grid):
            flat = np.asarray(grid).flatten()
            x = tf.convert_to_tensor(flat)
            x = tf.cast(x, tf.float32)
            return x
        """, "values whose kind is knowable: .flatten() is NumPy", safety="safe"),
    invalid("argmax_is_a_tensor", """
        import tensorflow as tf


        def classes(logits):
            idx = tf.argmax(logits, axis=-1)
            return tf.cast(tf.convert_to_tensor(idx), tf.float32)
        """, "values whose kind is knowable: tf.argmax(...) is a tensor: report, no fold",
        fixable=False),
    invalid("shape_is_a_tensor", """
        import tensorflow as tf


        def count(x):
            return tf.cast(tf.convert_to_tensor(tf.shape(x)[0]), tf.float32)
        """, "values whose kind is knowable: tf.shape(x)[0] is a tensor: report, no fold",
        fixable=False),
    invalid("compat_v2_import", """
        import numpy as np
        import tensorflow.compat.v2 as tf


        def load(rows):
            x = tf.convert_to_tensor(np.asarray(rows))
            x = tf.cast(x, tf.float32)
            return x
        """, "import spellings: tensorflow.compat.v2", safety="safe"),
    valid("dtype_given_once", """
        import tensorflow as tf


        def load(rows):
            return tf.convert_to_tensor(rows, dtype=tf.float32)
        """, "nothing to fold"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


def test_typed_convert_reports_a_parameter_every_caller_passes_a_tensor_and_says_why():
    result = run_body("""
        def scale(batch):
            batch = tf.convert_to_tensor(batch)
            batch = tf.cast(batch, tf.float32)
            return batch


        out = scale(tf.ones(3, tf.int32))
        """, "typed-convert")
    finding = only(result)
    assert not finding.fixable and "as every call in this module passes it" in finding.message
    assert result.output == result.source


def test_typed_convert_says_what_could_not_be_proven():
    result = run_body("""
        def scale(batch):
            return tf.cast(tf.convert_to_tensor(batch), tf.float32)
        """, "typed-convert", unsafe=False)
    assert "it is a parameter: callers may pass a tensor" in only(result).message


SPELLINGS = {
    "keywords": "tf.cast(x=tf.convert_to_tensor(value=np.ones(3)), dtype=tf.float32)",
    "keywords_reordered": "tf.cast(dtype=tf.float32, x=tf.convert_to_tensor(np.ones(3)))",
    "dtypes_cast": "tf.dtypes.cast(tf.convert_to_tensor(np.ones(3)), tf.float32)",
    "parenthesized": "tf.cast((tf.convert_to_tensor(np.ones(3))), 'float32')",
    "numpy_dtype": "tf.cast(tf.convert_to_tensor(np.ones(3)), np.float32)",
    "string_dtype": "tf.cast(tf.convert_to_tensor(np.ones(3)), 'bool')",  # not read as 'ool'
}


@pytest.mark.parametrize("call", SPELLINGS.values(), ids=list(SPELLINGS))
def test_typed_convert_sees_every_spelling_of_the_nested_calls(call):
    result = run_body(f"def f():\n    return {call}\n", "typed-convert", unsafe=False)
    assert only(result).safety == "safe" and only(result).applied
    assert "convert_to_tensor(" in result.output and "cast(" not in body_of(result)


def test_typed_convert_sees_names_imported_from_tensorflow_and_aliases():
    source = """
        import numpy as np
        import tensorflow as tfx
        from tensorflow import cast, convert_to_tensor
        from tensorflow.compat import v2 as tf2


        def f():
            a = cast(convert_to_tensor(np.ones(3)), tfx.float32)
            b = tfx.cast(tfx.convert_to_tensor(np.ones(3)), tfx.float32)
            c = tf2.cast(tf2.convert_to_tensor(np.ones(3)), tf2.float32)
            return a, b, c
        """
    result = run(source, "typed-convert", unsafe=False)
    assert [d.safety for d in result.diagnostics] == ["safe"] * 3
    assert "a = convert_to_tensor(np.ones(3), dtype=tfx.float32)" in result.output
    assert "b = tfx.convert_to_tensor(np.ones(3), dtype=tfx.float32)" in result.output
    assert "c = tf2.convert_to_tensor(np.ones(3), dtype=tf2.float32)" in result.output


def test_typed_convert_folds_a_pair_into_another_name_only_when_the_first_is_not_read_again():
    result = run_body("""
        def f():
            raw = tf.convert_to_tensor(value=np.ones(3))  # data
            y = 1
            x = tf.cast(raw, dtype=tf.float32)
            return x, y
        """, "typed-convert")
    assert body_of(result) == textwrap.dedent("""\
        def f():
            x = tf.convert_to_tensor(value=np.ones(3), dtype=tf.float32)  # data
            y = 1
            return x, y
        """)
    for body in ("def f():\n    raw = tf.convert_to_tensor(np.ones(3))\n    x = tf.cast(raw, tf.float32)\n"
                 "    return x + tf.cast(raw, tf.float32)\n",
                 "def f():\n    raw = tf.convert_to_tensor(np.ones(3))\n    x = 1\n"
                 "    x = tf.cast(raw, tf.float32)\n    return x\n"):
        assert not run_body(body, "typed-convert").diagnostics


def test_typed_convert_keeps_identical_lines_at_different_places_apart():
    result = run_body("""
        def f():
            return tf.cast(tf.convert_to_tensor([1.0, 2.0]), tf.float32)


        def g():
            return tf.cast(tf.convert_to_tensor([1.0, 2.0]), tf.float32)
        """, "typed-convert", unsafe=False)
    assert [d.line for d in result.diagnostics] == [7, 11]


@pytest.mark.parametrize("body", [
    # a Python float list into an integer dtype: convert_to_tensor refuses it
    "def f():\n    return tf.cast(tf.convert_to_tensor([0.5, 2.7]), tf.int32)\n",
    # a Python int list into bool
    "def f():\n    return tf.cast(tf.convert_to_tensor([1, 0]), tf.bool)\n",
])
def test_typed_convert_only_reports_where_the_fold_always_raises(body):
    result = run_body(body, "typed-convert", unsafe=True)
    assert not only(result).fixable and "raises" in only(result).message
    assert result.output == result.source


def test_typed_convert_with_a_dtype_hint_is_unsafe_and_drops_the_hint():
    result = run_body("def f():\n    return tf.cast(tf.convert_to_tensor(np.ones(3), dtype_hint=tf.float64), "
                      "tf.float32)\n", "typed-convert", unsafe=True)
    assert only(result).safety == "unsafe" and "hinted dtype" in only(result).message
    assert "return tf.convert_to_tensor(np.ones(3), dtype=tf.float32)" in result.output


def test_a_call_statement_between_the_conversion_and_the_cast_is_kept():
    result = run_body("""
        def f(a):
            a = np.asarray(a, dtype=np.float64)
            x = tf.convert_to_tensor(a)
            print("converted")
            y = tf.cast(x, tf.float32)
            return y
        """, "typed-convert")
    assert "    y = tf.convert_to_tensor(a, dtype=tf.float32)\n    print(\"converted\")\n    return y\n" \
        in body_of(result)
    assert only(result).safety == "safe"


def test_a_dtype_hint_on_the_conversion_makes_the_fold_unsafe_and_says_so():
    result = run_body("""
        def f(a):
            a = np.asarray(a, dtype=np.float64)
            x = tf.convert_to_tensor(a, dtype_hint=tf.float64)
            y = tf.cast(x, tf.float32)
            return y
        """, "typed-convert")
    finding = only(result)
    assert finding.safety == "unsafe" and "the intermediate tensor has the hinted dtype `tf.float64`" in finding.message


@pytest.mark.parametrize("made, dtype", [
    # float64: a fold measured equal for these rows, not for every array (an object array)
    ("a = np.array([1, 2])", "float64"),  # int64, from the literal
    ("a = np.array([True, False])", "float64"),  # bool, from the literal
    ("a, b = [1.5, 2.5], [3, 4]", "float32"),  # an item of an unpacked display
])
def test_an_array_or_list_whose_dtype_the_literal_fixes_is_a_safe_fold(made, dtype):
    result = run_body(f"""
        def f():
            {made}
            x = tf.convert_to_tensor(a)
            y = tf.cast(x, tf.{dtype})
            return y
        """, "typed-convert")
    assert only(result).safety == "safe" and f"    y = tf.convert_to_tensor(a, dtype=tf.{dtype})\n" in body_of(result)
