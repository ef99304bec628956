"""numpy-accumulator: edge cases beyond the fixtures (moved from the seed-named test
files), then VALID / INVALID cases for the failure classes of issue 11 (a
VALID case must give no finding; an INVALID one's findings and fix are a
JSON snapshot under tests/snapshots/numpy-accumulator/)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from migrate.engine import Options, transform
from migrate.registry import resolve

from fixture_cases import FIXTURES
from recipe_cases import check_case, dedent, fixed, invalid, params, run, valid

RECIPE = "numpy-accumulator"


NA = RECIPE
UM = "unused-model-instance"
VS = "vectorize-sample-loop"


def test_aliased_imports_and_missing_tensorflow_import():
    source = """
        \"\"\"Docstring.\"\"\"
        import numpy
        from numpy import zeros as z
        from tensorflow import keras


        class M(keras.Model):
            def call(self, x):
                a = numpy.zeros((3, 4))
                b = z((3,))
                for i in range(3):
                    a[i] = self.dense(x)
                    b[i] = self.score(x)
                return a, b
        """
    assert fixed(source, NA) == dedent("""
        \"\"\"Docstring.\"\"\"
        import numpy
        from numpy import zeros as z
        from tensorflow import keras
        import tensorflow as tf


        class M(keras.Model):
            def call(self, x):
                a = tf.TensorArray(tf.float32, size=3)
                b = tf.TensorArray(tf.float32, size=3)
                for i in range(3):
                    a = a.write(i, self.dense(x))
                    b = b.write(i, self.score(x))
                a = a.stack()
                b = b.stack()
                return a, b
        """)


def test_suppression_comment_on_the_write_keeps_the_buffer():
    source = """
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            buf = np.zeros((2, 3))
            for i in range(2):
                buf[i] = self.dense(x)  # tf-migrate: ignore[numpy-accumulator]
            return buf
        """
    result = run(source, NA)
    assert result.output == dedent(source)
    assert result.diagnostics == []


@pytest.mark.parametrize("value", ["1.0", "np.random.rand(3)", "self.dense(x).numpy()",
                                   "float(tf.reduce_sum(x))", "[g.numpy() for g in grads]"])
def test_buffers_that_receive_no_tensor_are_left_alone(value):
    source = f"""
        import numpy as np
        import tensorflow as tf

        def f(self, x, grads):
            buf = np.zeros((2, 3))
            for i in range(2):
                buf[i] = {value}
            return buf
        """
    result = run(source, NA)
    assert result.output == dedent(source)
    assert result.diagnostics == []


def test_a_method_of_the_class_is_not_a_layer_call():
    source = """
        import numpy as np
        import tensorflow as tf

        class Augment:
            def transform(self, x):
                return x[::-1]

            def batch(self, xs):
                out = np.zeros((len(xs), 3))
                for i in range(len(xs)):
                    out[i] = self.transform(xs[i])
                return out
        """
    result = run(source, NA)
    assert result.output == dedent(source)
    assert result.diagnostics == []


def test_module_level_buffer_is_left_alone():
    source = """
        import numpy as np
        import tensorflow as tf

        buf = np.zeros(3)
        for i in range(3):
            buf[i] = tf.reduce_sum(tf.ones(i + 1))
        """
    assert fixed(source, NA) == dedent(source)


def test_a_name_bound_to_a_tensor_counts_as_a_tensor_and_comments_stay():
    source = """
        import numpy as np
        import tensorflow as tf

        def f(x):
            # per-step sums
            sums = np.zeros(4)  # one per step
            for t in range(4):
                step = tf.reduce_sum(x[:, t])
                sums[t] = step  # store
            return sums
        """
    assert fixed(source, NA) == dedent("""
        import numpy as np
        import tensorflow as tf

        def f(x):
            # per-step sums
            sums = tf.TensorArray(tf.float32, size=4)  # one per step
            for t in range(4):
                step = tf.reduce_sum(x[:, t])
                sums = sums.write(t, step)  # store
            sums = sums.stack()
            return sums
        """)


def test_dtype_names_are_the_models_and_another_librarys_spelling_counts():
    """``np.half`` is float16 (the model's dtype_name); ``jnp.int32`` still names
    an integer buffer, which is left alone (no gradient flows through ids)."""
    source = """
        import numpy as np
        import tensorflow as tf
        import jax.numpy as jnp

        def f(self, x):
            ids = np.zeros((3,), dtype=jnp.int32)
            buf = np.zeros((3, 4), dtype=np.half)
            for i in range(3):
                ids[i] = tf.argmax(self.dense(x))
                buf[i] = self.dense(x)
            return ids, buf
        """
    out = fixed(source, NA)
    assert "buf = tf.TensorArray(tf.float16, size=3)" in out
    assert "buf = buf.write(i, tf.cast(self.dense(x), tf.float16))" in out
    assert "ids = np.zeros((3,), dtype=jnp.int32)" in out and "ids[i] = tf.argmax(self.dense(x))" in out


def test_float64_dtype_casts_and_unknown_shape_is_dynamic():
    source = """
        import numpy as np
        import tensorflow as tf

        def f(self, x, n):
            buf = np.empty(n, dtype=np.float64)
            for i in range(n):
                buf[i] = self.score(x)
            return buf
        """
    out = fixed(source, NA)
    assert "buf = tf.TensorArray(tf.float64, size=0, dynamic_size=True)" in out
    assert "buf = buf.write(i, tf.cast(self.score(x), tf.float64))" in out


BATCH_OF_ONE_IN_A_LAYER = """
    import numpy as np
    import tensorflow as tf


    class M(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(4)

        def call(self, x):
            out = np.zeros_like(x)
            for i in range(3):
                out[i] = self.dense(x[i][None])
            return out
    """


def test_a_batch_of_one_through_a_layer_of_the_instance_is_squeezed():
    """The model knows ``self.dense`` is a Keras layer: it keeps the batch
    axis, so the write drops it (NumPy's broadcast) without knowing the slot."""
    result = run(BATCH_OF_ONE_IN_A_LAYER, NA, unsafe=False)
    assert "out = out.write(i, tf.squeeze(self.dense(x[i][None]), axis=0))" in result.output
    assert [d.safety for d in result.diagnostics] == ["safe"]


def test_a_batch_of_one_through_an_unknown_callable_squeezes_only_as_an_unsafe_fix():
    """``self.dense`` of a method pasted without its class: the model cannot
    tell whether it keeps the batch axis, and the slot's shape is unknown
    (``zeros_like``), so the squeeze is a guess: unsafe, and the message
    says why (it was a safe fix while ``self.`` was read as a layer)."""
    source = """
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            out = np.zeros_like(x)
            for i in range(3):
                out[i] = self.dense(x[i][None])
            return out
        """
    safe = run(source, NA, unsafe=False)
    assert safe.output == dedent(source)
    assert [d.safety for d in safe.diagnostics] == ["unsafe"]
    assert "whether `self.dense` keeps that axis is not known" in safe.diagnostics[0].message
    out = fixed(source, NA)
    assert "out = tf.TensorArray(tf.float32, size=0, dynamic_size=True)" in out
    assert "out = out.write(i, tf.squeeze(self.dense(x[i][None]), axis=0))" in out


def test_a_batch_of_one_through_an_unknown_callable_into_a_known_slot_is_reshaped():
    """A reshape to the slot's shape holds whether the callable keeps the
    batch axis or not: safe, though the model cannot tell."""
    source = """
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            out = np.zeros((3, 4))
            for i in range(3):
                out[i] = self.helper(x[i][None]) * 2.0
            return out
        """
    result = run(source, NA, unsafe=False)
    assert "out = out.write(i, tf.reshape(self.helper(x[i][None]) * 2.0, [4]))" in result.output
    assert [d.safety for d in result.diagnostics] == ["safe"]


def test_reads_of_one_slot_inside_the_loop_become_read():
    source = """
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            h = np.zeros((4, 8))
            for t in range(4):
                h[t] = self.cell(x[:, t]) + tf.reduce_sum(h[t - 1])
            return h
        """
    assert "h = h.write(t, self.cell(x[:, t]) + tf.reduce_sum(h.read(t - 1)))" in fixed(source, NA)


def test_index_on_axis_two_transposes_back():
    source = """
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            out = np.zeros((2, 3, 5, 4))
            for k in range(5):
                out[:, :, k, :] = self.dense(x)
            return out
        """
    out = fixed(source, NA)
    assert "out = tf.TensorArray(tf.float32, size=5)" in out
    assert "out = tf.transpose(out.stack(), perm=[1, 2, 0, 3])" in out


@pytest.mark.parametrize("body, reason", [
    ("for t in range(2):\n        buf[t, [2, 2]] = self.dense(x)",
     "the index `[2, 2]` may be negative or is not an integer"),
    ("for t in range(2):\n        buf[t] = self.dense(x)\n        y = buf",
     "reads the whole buffer while it is still written"),
    ("for t in range(2):\n        buf[t] = self.dense(x)\n    print(buf.mean())",
     "`buf.mean` expects a NumPy array"),
    ("buf[-1] = self.dense(x)", "the index `-1` may be negative"),
    ("for t in range(-2, 0):\n        buf[t] = self.dense(x)", "the index `t` may be negative"),
    ("k = 0\n    while k < 2:\n        buf[k] = self.dense(x)\n        k -= 1", "the index `k` may be negative"),
    # the slice's upper bound is an index too
    ("for t in range(2):\n        buf[t:2 - t] = self.dense(x)", "the index `2 - t` may be negative"),
    # read below the write, but the outer loop writes again after it
    ("for t in range(2):\n        for j in range(3):\n            buf[t, j] = tf.reduce_sum(self.dense(x))\n"
     "        y = buf", "`y = buf` reads the whole buffer while it is still written"),
])
def test_unsupported_shapes_are_reported_without_a_fix(body, reason):
    source = ("import numpy as np\nimport tensorflow as tf\n\n\ndef f(self, x):\n"
              "    buf = np.zeros((2, 3))\n    " + body + "\n    return buf\n")
    result = run(source, NA)
    assert result.output == source
    [diagnostic] = result.diagnostics
    assert not diagnostic.fixable and not diagnostic.applied
    assert reason in diagnostic.message


# shapes a TensorArray cannot take: the buffer becomes a tensor written by scatters
_SCATTERED = {
    "item": "for t in range(2):\n        buf[t, 0] = tf.reduce_sum(self.dense(x[t:t + 1]))",
    "first_row_columns": "for t in range(3):\n        buf[0, t] = tf.reduce_sum(self.dense(x[t:t + 1]))",
    "guarded": "for t in range(2):\n        if t:\n            buf[t] = self.dense(x[t:t + 1])",
    "shape_read_first": "print(buf.shape)\n    for t in range(2):\n        buf[t] = self.dense(x[t:t + 1])",
    "two_writes": "for t in range(2):\n        buf[t] = self.dense(x[t:t + 1])\n        buf[t] += 1",
    "while_augmented": "t = 0\n    while t < 2:\n        buf[t] -= self.dense(x[t:t + 1])\n        t += 1",
    "enumerate_chained": ("for t, row in enumerate(tf.unstack(x[:2])):\n        h = tf.squeeze(self.dense(row[None]), 0)\n"
                          "        for j in range(3):\n            buf[t][j] = h[j]"),
    "column": "t = 0\n    while t < 3:\n        buf[:, t] = tf.reduce_sum(self.dense(x[:2]), axis=1) * t\n        t += 1",
    "slice": "for t in range(2):\n        buf[t:t + 1] = self.dense(x[t:t + 1])",
    "unrolled": "buf[0] = self.dense(x[0:1])\n    buf[1] *= self.dense(x[1:2])",
}


def test_an_augmented_write_becomes_a_scatter_add_of_the_value():
    """``buf[t] += v`` adds ``v`` at ``t`` (no read of the old slot)."""
    result = run(_scattered("for t in range(2):\n        buf[t] += self.dense(x[t:t + 1])"), NA)
    assert "buf = tf.tensor_scatter_nd_add(buf, [[t]], [tf.reshape(tf.cast(self.dense(x[t:t + 1]), buf.dtype), " \
        "tf.shape(buf[t]))])" in result.output


def _scattered(body: str) -> str:
    return ("import numpy as np\nimport tensorflow as tf\n\n\ndef f(self, x):\n"
            "    buf = np.ones((2, 3))\n    " + body + "\n    return buf\n")


@pytest.mark.parametrize("case", sorted(_SCATTERED))
def test_other_shapes_become_a_tensor_written_by_scatters(case):
    result = run(_scattered(_SCATTERED[case]), NA)
    [diagnostic] = result.diagnostics
    assert diagnostic.fixable and diagnostic.applied, diagnostic.message
    assert "buf = tf.ones([2, 3], tf.float32)" in result.output
    assert "tf.tensor_scatter_nd_" in result.output and "np." not in result.output.split("def f")[1]


class _Holder:
    """``self`` of the functions under test (hashable: tf.function traces it)."""


@pytest.mark.tf
@pytest.mark.parametrize("case", sorted(_SCATTERED))
def test_scatter_rewrites_compute_what_numpy_computes_with_gradients(case):
    import numpy as np
    import tensorflow as tf
    before, after = {}, {}
    exec(_scattered(_SCATTERED[case]), before)
    exec(fixed(_scattered(_SCATTERED[case]), NA), after)
    layer = _Holder()
    layer.dense = dense = tf.keras.layers.Dense(3)
    x = tf.constant(np.random.default_rng(0).random((3, 4), dtype=np.float32))
    expected = before["f"](layer, x)
    with tf.GradientTape() as tape:
        got = after["f"](layer, x)
        loss = tf.reduce_sum(tf.square(got))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)
    assert all(g is not None for g in tape.gradient(loss, dense.trainable_variables))
    graph = tf.function(after["f"])(layer, x)
    np.testing.assert_allclose(graph.numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("columns, selection", [
    ("1:", "tf.range(3)[1:]"), ("cols", "tf.range(3)[cols]"), ("[0, 2]", "tf.constant([0, 2])")])
def test_row_columns_scatter_the_value_into_a_background_row(columns, selection):
    source = f"""
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            cols = slice(1, 3) if x is not None else slice(0, 2)
            buf = np.ones((2, 3))
            for t in range(2):
                buf[t, {columns}] = self.dense(x[t:t + 1])
            return buf
        """
    if columns == "cols":
        source = source.replace(" if x is not None else slice(0, 2)", "")
    out = fixed(source, NA)
    assert (f"buf = buf.write(t, tf.tensor_scatter_nd_update(tf.ones([3], tf.float32), "
            f"tf.reshape({selection}, [-1, 1]), tf.reshape(self.dense(x[t:t + 1]), [-1])))") in out
    assert "buf = buf.stack()" in out


def _in_f(body: str) -> str:
    return ("import numpy as np\nimport tensorflow as tf\n\n\ndef rows():\n    return [0.0, 0.0]\n\n\n"
            "def f(self, x):\n" + textwrap.indent(dedent(body), "    "))


def test_a_conversion_after_the_loop_gives_the_tensor_array_its_dtype():
    result = run(_in_f("""
        buf = np.zeros((2, 3))
        for t in range(2):
            buf[t] = self.dense(x[t:t + 1])
        buf = tf.convert_to_tensor(buf, dtype=tf.float64)
        return buf
        """), NA)
    assert "buf = tf.TensorArray(tf.float64, size=2)" in result.output
    assert "buf = buf.stack()\n    return buf" in result.output and "convert_to_tensor" not in result.output


def test_a_list_made_by_a_helper_is_no_buffer():
    """Only a helper the model knows returns a NumPy array makes a buffer."""
    result = run(_in_f("""
        buf = rows()
        for t in range(2):
            buf[t] = self.dense(x[t:t + 1])
        return buf
        """), NA)
    assert not result.diagnostics


def test_a_fill_value_by_keyword_is_reported_without_a_fix():
    """The scatter path needs ``np.full``'s fill value; given by keyword it is
    not read, so no fix (and no crash on the missing positional)."""
    source = _in_f("""
        buf = np.full((2, 3), fill_value=0.5)
        for t in range(2):
            buf[t, 0] = tf.reduce_sum(self.dense(x[t:t + 1]))
        return buf
        """)
    result = run(source, NA)
    [diagnostic] = result.diagnostics
    assert result.output == source and not diagnostic.fixable


def test_row_columns_of_a_buffer_of_unknown_shape_are_reported_without_a_fix():
    """The background row needs the width: ``np.ones(shape)`` does not say it."""
    source = dedent("""
        import numpy as np
        import tensorflow as tf

        def f(self, x, shape):
            buf = np.ones(shape)
            for t in range(2):
                buf[t, [0, 2]] = self.dense(x[t:t + 1])
            return buf
        """)
    result = run(source, NA)
    [diagnostic] = result.diagnostics
    assert result.output == source and not diagnostic.fixable


@pytest.mark.parametrize("factory, background", [
    ("np.copy(x)", "tf.convert_to_tensor(x)"), ("np.zeros_like(x)", "tf.zeros_like(x)"),
    ("np.empty_like(x, dtype=np.float64)", "tf.zeros_like(x, dtype=tf.float64)"),
    ("np.ones_like(x)", "tf.ones_like(x)")])
def test_later_axis_of_a_like_buffer_is_updated_in_place_without_its_rank(factory, background):
    source = f"""
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            buf = {factory}
            for t in range(x.shape[1]):
                buf[:, t] = tf.squeeze(self.dense(x[:, t:t + 1]), -1)
            return buf
        """
    out = fixed(source, NA)
    assert f"buf = {background}\n" in out
    assert ("buf = tf.concat([buf[:, :t], tf.expand_dims(tf.cast(tf.squeeze(self.dense(x[:, t:t + 1]), -1), "
            "buf.dtype), 1), buf[:, t + 1:]], axis=1)") in out
    assert "stack" not in out


# NumPy runs the before on eager tensors (it copies them); the after must give the same numbers
_SAME_NUMBERS = """
    import numpy as np
    import tensorflow as tf


    def slot_columns(x):
        table = np.full((3, 5), 0.5, dtype=np.float32)
        for i in range(3):
            table[i, [4, 0, 2]] = tf.reduce_sum(x[i:i + 1], axis=0)[:3] * 2.0
        return table


    def tail_columns(x):
        cols = slice(1, None)
        table = np.ones((3, 5), dtype=np.float32)
        for i in range(3):
            table[i, cols] = tf.tanh(x[i])
        return table


    def smooth(x):
        out = np.copy(x)
        for f in range(3):
            out[:, f] = tf.reduce_mean(x[:, f:f + 2], axis=1)
        return out


    def steps(x):
        out = np.zeros_like(x)
        for t in range(1, 3):
            out[:, :, t] = tf.sigmoid(x[:, :, t])
        return out
    """


@pytest.mark.tf
@pytest.mark.parametrize("function, shape", [
    ("slot_columns", (3, 4)), ("tail_columns", (3, 4)), ("smooth", (3, 4)), ("steps", (2, 3, 4))])
def test_column_and_in_place_rewrites_compute_what_numpy_computes(function, shape):
    import numpy as np
    import tensorflow as tf
    before, after = {}, {}
    exec(dedent(_SAME_NUMBERS), before)
    rewritten = fixed(_SAME_NUMBERS, NA)
    assert "np.full" not in rewritten and "np.copy" not in rewritten and "np.zeros_like" not in rewritten
    exec(rewritten, after)
    x = tf.constant(np.random.default_rng(0).random(shape, dtype=np.float32))
    expected, got = before[function](x), after[function](x)
    assert tf.is_tensor(got)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("factory, loop", [
    ("np.full_like(x, 2.0)", "range(3)"), ("np.copy(x)", "range(tf.shape(x)[1])"),
    ("np.zeros_like(x)", "[0, 2]")])
def test_later_axis_of_a_like_buffer_otherwise_is_scattered_without_its_rank(factory, loop):
    source = dedent(f"""
        import numpy as np
        import tensorflow as tf

        def f(self, x):
            buf = {factory}
            for t in range(3):
                buf[:, t] = tf.squeeze(self.dense(x[:, t:t + 1]), -1)
            return buf
        """).replace("range(3)", loop)
    result = run(source, NA)
    [diagnostic] = result.diagnostics
    if loop == "[0, 2]":  # not a counter: the index may be anything
        assert not diagnostic.fixable and "the index `t` may be negative" in diagnostic.message
        return
    assert diagnostic.fixable, diagnostic.message
    assert "tf.transpose(buf, tf.concat([[1, 0], tf.range(2, tf.rank(buf))], 0))" in result.output


def test_reuses_the_files_tensorflow_alias():
    source = """
        import numpy as np
        import tensorflow as tfl

        def f(self, x):
            buf = np.ones((2,))
            for i in range(2):
                buf[i] = tfl.reduce_sum(x)
            return buf
        """
    out = fixed(source, NA)
    assert "buf = tfl.TensorArray(tfl.float32, size=2)" in out
    assert "import tensorflow as tf\n" not in out


def test_the_seed_through_every_seed000_recipe_is_the_seeds_fixed_code():
    before = (FIXTURES / "numpy-accumulator" / "seed_hierarchical.before.py").read_text()
    result = transform(before, "seed.py", Options(tuple(resolve([NA, UM, VS])), unsafe_fixes=True))
    assert not result.errors
    call = result.output[result.output.index("    def call(self, batch_inputs):"):
                         result.output.index("def training_case")]
    assert textwrap.dedent(call) == textwrap.dedent("""\
            def call(self, batch_inputs):
                batch_size = tf.shape(batch_inputs)[0]
                seq_len = batch_inputs.shape[1]
                inputs = batch_inputs
                temp = tf.TensorArray(tf.float32, size=seq_len)
                for i in range(seq_len):  # one 7x7 patch at a time
                    inp = tf.reshape(inputs[:, i], [-1, 7, 7, 1])
                    temp = temp.write(i, tf.reshape(self.local(inp), [-1, self.local_out_dim]))
                temp = tf.transpose(temp.stack(), perm=[1, 0, 2])
                seqinp = tf.reshape(temp, [-1, seq_len, self.local_out_dim])
                batch_output = tf.reshape(self.pred(seqinp), [-1, seq_len, 49])
                return batch_output


        """)


@pytest.mark.tf
def test_seed_rewritten_by_the_safe_recipes_trains(tmp_path):
    """The seed before, fixed by every safe recipe of seed 000, gets a gradient
    for every variable eagerly and trains under model.fit."""
    before = (FIXTURES / "numpy-accumulator" / "seed_hierarchical.before.py").read_text()
    result = transform(before, "seed.py", Options(tuple(resolve([NA, UM]))))
    assert not result.errors
    assert "np.zeros((" not in result.output and "vae = Seq()" not in result.output
    script = tmp_path / "seed.py"
    script.write_text(result.output + textwrap.dedent("""

        def _check():
            model, x, y = training_case()
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            assert grads and all(g is not None for g in grads), grads
            model.compile(optimizer="adam", loss="mse")
            history = model.fit(x, y, batch_size=2, epochs=3, verbose=0)
            assert history.history["loss"][-1] < history.history["loss"][0]
            print("TRAINS")

        _check()
        """))
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert "TRAINS" in done.stdout, done.stderr[-2000:]


# --- failure classes of issue 11 ----------------------------------------------

CASES = [
    invalid("stack_of_a_layer_list_loop", """
        import numpy as np
        import tensorflow as tf


        class Tower(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.blocks = [tf.keras.layers.Dense(4) for _ in range(3)]

            def call(self, x):
                parts = []
                for layer in self.blocks:
                    parts.append(layer(x))
                return np.stack(parts)
        """, "the model's kinds: a step of self.blocks is a Dense layer, its call a tensor",
        safety="safe", fixable=True),
    valid("stack_of_untyped_attribute_loop", """
        import numpy as np
        import tensorflow as tf


        class Scorer:
            def step(self, x):
                with tf.GradientTape() as tape:
                    parts = []
                    for fn in self.fns:
                        parts.append(fn(x))
                    loss = np.stack(parts)
                return tape.gradient(loss, self.w)
        """, "self.fns is nothing the model can type: a loop over an attribute of self is no evidence "
             "that its calls give tensors"),
    invalid("layer_call_in_a_loop", """
        import numpy as np
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def call(self, inputs):
                steps = inputs.shape[1]
                hidden = np.zeros((steps, 8))
                for t in range(steps):
                    hidden[t, :] = self.dense(inputs[:, t])
                return hidden
        """, "a layer's output copied into NumPy inside call()", safety="safe", fixable=True),
    invalid("argmax_is_a_tensor", """
        import numpy as np
        import tensorflow as tf


        def decode(logits, steps):
            picks = np.zeros(steps)
            for i in range(steps):
                picks[i] = tf.argmax(logits[i])
            return picks
        """, "values whose kind is knowable: tf.argmax(...) is a tensor"),
    invalid("compat_v2_import", """
        import numpy as np
        import tensorflow.compat.v2 as tf


        def decode(logits, steps):
            picks = np.zeros(steps)
            for i in range(steps):
                picks[i] = tf.reduce_max(logits[i])
            return picks
        """, "import spellings: tensorflow.compat.v2"),
    invalid("model_call_is_a_tensor", """
        import numpy as np
        import tensorflow as tf


        def encode(model, inputs, steps):
            codes = np.zeros((steps, 4))
            for i in range(steps):
                codes[i] = model(inputs[i:i + 1])
            return codes


        encoder = tf.keras.Sequential([tf.keras.layers.Dense(4)])
        codes = encode(encoder, np.ones((3, 2), "float32"), 3)
        """, "values whose kind is knowable: model(x) is a tensor (the module passes a Keras model)"),
    valid("numeric_jacobian_of_session_values", """
        import numpy as np
        import tensorflow as tf


        def numeric_jacobian(y, x, x_value, delta=1e-3):
            sess = tf.compat.v1.get_default_session()
            rows = x_value.size
            jac = np.zeros((rows, int(np.prod(y.shape))), dtype=np.float32)
            for r in range(rows):
                bumped = x_value.copy()
                bumped.ravel()[r] += delta
                up = sess.run(y, feed_dict={x: bumped})
                bumped.ravel()[r] -= 2 * delta
                down = sess.run(y, feed_dict={x: bumped})
                jac[r, :] = ((up - down) / (2 * delta)).ravel()
            return jac
        """, "values whose kind is knowable: `.ravel()` of Session.run results is NumPy, "
             "whatever TensorFlow call made the session"),
    valid("jacobian_columns_of_host_gradients", """
        import numpy as np
        import tensorflow as tf


        def _host(value):
            return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


        def jacobian_columns(grad_fn, x_value, out_size):
            x = tf.constant(x_value)
            jac = np.zeros((x_value.size, out_size), dtype=x_value.dtype)
            for c in range(out_size):
                grad = _host(grad_fn(x, c))
                jac[:, c] = grad.reshape(-1).view(jac.dtype)
            return jac
        """, "values whose kind is knowable: a module function that returns NumPy, fed a tensor"),
    invalid("annotated_parameter", """
        import numpy as np
        import tensorflow as tf


        def gather(x: tf.Tensor, steps: int):
            out = np.zeros(steps)
            for i in range(steps):
                out[i] = x[i]
            return out
        """, "values whose kind is knowable: a parameter annotated tf.Tensor"),
    invalid("snippet_without_imports", """
        def decode(logits, steps):
            picks = np.zeros(steps)
            for i in range(steps):
                picks[i] = tf.reduce_max(logits[i])
            return picks
        """, "import spellings: a pasted snippet using np./tf. unbound"),
    valid("constant_mask", """
        import numpy as np
        import tensorflow as tf


        def mask(steps):
            keep = np.zeros(steps)
            for i in range(steps):
                keep[i] = 1.0 if i % 2 else 0.0
            return tf.constant(keep)
        """, "a buffer filled with constants is NumPy's business"),
    valid("writes_after_the_tape_closed", """
        import numpy as np
        import tensorflow as tf


        def train_step(model, x, y, optimizer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            norms = np.zeros(len(grads))
            for i in range(len(grads)):
                norms[i] = tf.norm(grads[i])
            return norms
        """, "gradient context: NumPy writes after the tape has closed cut nothing"),
    valid("sampling_code", """
        import numpy as np
        import tensorflow as tf


        def sample(logits, n):
            drawn = np.zeros(n)
            for i in range(n):
                drawn[i] = tf.squeeze(tf.random.categorical(logits, 1))
            return drawn
        """, "gradient context: sampling code is not differentiated"),
    invalid("nested_tf_function", """
        import numpy as np
        import tensorflow as tf


        def make_step(encoder):
            @tf.function
            def step(x):
                return np.mean(encoder(x) + tf.ones(1), axis=0)
            return step
        """, "gradient context: a nested tf.function (the precheck looks inside functions)"),
    invalid("tape_imported_by_name", """
        import numpy as np
        from tensorflow import GradientTape


        def step(model, x):
            with GradientTape() as tape:
                pred = np.array(model(x))
            return tape.gradient(pred, model.trainable_variables)
        """, "gradient context: GradientTape imported by name, a model whose weights are read"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


THREE_FINDINGS = """
    import numpy as np
    import tensorflow as tf


    class M(tf.keras.Model):
        def call(self, x):
            buf = np.zeros((3, 4))
            for i in range(3):
                buf[i] = self.dense(x)
            parts = [self.dense(x), self.dense(x)]
            stacked = np.stack(parts)
            return np.mean(self.dense(x)), buf, stacked
    """


def _root(node):
    while node.parent is not None:
        node = node.parent
    return node


@pytest.fixture
def analyses(monkeypatch):
    """The Analysis objects built, the plans made, and for each analysis the
    two NumPy-call decisions were handed: whether every node it bound was
    still in the tree."""
    from recipes import numpy_accumulator as module

    seen = {"built": [], "plans": [], "used": []}
    build, plan = module.Analysis.__init__, module._Plan.of.__func__

    def counting(self, *args):
        seen["built"].append(self)
        build(self, *args)

    def planning(cls, *args):
        made = plan(cls, *args)
        seen["plans"].append(made)
        return made

    def using(decide):
        def use(analysis):
            root = _root(analysis.function)
            seen["used"].append((analysis, all(_root(value) is root for values in analysis.bound.values()
                                               for value in values)))
            return decide(analysis)
        return use

    monkeypatch.setattr(module.Analysis, "__init__", counting)
    monkeypatch.setattr(module._Plan, "of", classmethod(planning))
    for name in ("list_conversion_fixes", "numpy_on_tensor_fixes"):
        monkeypatch.setattr(module, name, using(getattr(module, name)))
    return seen


def test_a_function_is_analysed_once_when_nothing_is_rewritten(analyses):
    result = transform(dedent(THREE_FINDINGS), "m.py", Options(tuple(resolve([NA])), apply=False))
    assert len(result.diagnostics) == 3 and not any(d.applied for d in result.diagnostics)
    assert len(analyses["built"]) == 1
    assert [analysis for analysis, _ in analyses["used"]] == analyses["built"] * 2


def test_the_modifier_applies_the_plan_and_analyses_nothing(analyses):
    """The buffer, the join and the NumPy call on a tensor are decided once,
    by the filter, and rewritten in one pass; the next pass (the text
    changed) plans the rewritten function and finds nothing left."""
    result = transform(dedent(THREE_FINDINGS), "m.py", Options(tuple(resolve([NA])), unsafe_fixes=True))
    assert [d.applied for d in result.diagnostics] == [True, True, True]
    assert "tf.stack(parts)" in result.output and "tf.reduce_mean(self.dense(x))" in result.output
    assert "buf = buf.write(i, self.dense(x))" in result.output
    assert [plan.analysis for plan in analyses["plans"]] == analyses["built"]  # every analysis is a plan's
    assert len(analyses["plans"]) == 2  # one a pass
    assert all(current for _, current in analyses["used"])  # no analysis outlived its nodes
    assert [analysis for analysis, _ in analyses["used"]] == analyses["built"][:1] * 2


def test_fixes_inside_fixes_compose_in_one_pass():
    """A NumPy call on a slot read in a buffer's write, a join under a
    reduction: the inner fix first, then what holds it is written from its
    text; each finding once, quoting the code as written."""
    source = """
        import numpy as np
        import tensorflow as tf


        class M(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(8)

            def call(self, x):
                h = np.zeros((4, 8))
                for t in range(4):
                    h[t] = self.dense(x)[0] + np.sum(h[t - 1])
                parts = [self.dense(x), self.dense(x)]
                m = np.mean(np.stack(parts))
                return h, m
        """
    result = run(source, NA)
    assert "h = h.write(t, self.dense(x)[0] + tf.reduce_sum(h.read(t - 1)))" in result.output
    assert "m = tf.reduce_mean(tf.stack(parts))" in result.output
    messages = sorted(d.message.split(" ")[0] for d in result.diagnostics)
    assert messages == ["`h[t]", "`np.mean(np.stack(parts))`", "`np.stack(parts)`", "`np.sum(h[t"], messages
    assert all(d.applied for d in result.diagnostics)


def test_a_buffer_written_with_a_numpy_call_on_a_tensor_is_planned_with_the_call():
    """``buf[i] = np.mean(t, axis=0)``: the call's fix makes the value a
    tensor, so the plan takes the buffer too, in the same pass. ``check``
    reports both (it reported only the call while the buffer came in the
    next pass: a later finding on a line already reported is dropped)."""
    source = dedent("""
        import numpy as np
        import tensorflow as tf


        class M(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(8)

            def call(self, x):
                buf = np.zeros((3, 8))
                for i in range(3):
                    buf[i] = np.mean(self.dense(x), axis=0)
                return buf
        """)
    checked = transform(source, "m.py", Options(tuple(resolve([NA])), unsafe_fixes=True, isolated=True))
    assert [d.message.split(" ")[0] for d in checked.diagnostics] == ["`buf[i]", "`np.mean(self.dense(x),"]
    assert "buf = buf.write(i, tf.reduce_mean(self.dense(x), axis=0))" in fixed(source, NA)


@pytest.mark.parametrize("source", [
    # the only TensorFlow name imported from a submodule, under an alias
    """
    import numpy as np
    from tensorflow.keras.models import load_model as lm


    def f(x):
        buf = np.zeros((2, 3))
        net = lm("m.h5")
        for t in range(2):
            buf[t] = net(x[t:t + 1])
        return buf
    """,
    # a tf.function called with options (another context elsewhere: the
    # precheck then keeps only the functions a context reaches)
    """
    import numpy as np
    import tensorflow as tf


    class Other(tf.keras.layers.Layer):
        def call(self, x):
            return x


    @tf.function(jit_compile=True)
    def f(x):
        buf = np.zeros((2, 3))
        for t in range(2):
            buf[t] = tf.reduce_sum(x[t:t + 1], axis=0)
        return buf
    """,
    # a loss function handed to compile
    """
    import numpy as np
    import tensorflow as tf


    class Other(tf.keras.layers.Layer):
        def call(self, x):
            return x


    def my_loss(y_true, y_pred):
        buf = np.zeros((2, 3))
        for t in range(2):
            buf[t] = tf.reduce_sum(y_pred[t:t + 1], axis=0)
        return tf.reduce_mean(buf)


    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    model.compile(loss=my_loss)
    """,
], ids=["submodule_alias", "tf_function_options", "compiled_loss"])
def test_the_precheck_lets_through_each_way_a_buffer_meets_tensors(source):
    result = run(source, NA)
    [diagnostic] = result.diagnostics
    assert diagnostic.applied and "tf.TensorArray" in result.output


@pytest.mark.parametrize("join, fixed_as", [
    ("np.concatenate(parts, axis=1)", "tf.concat(parts, axis=1)"),
    ("np.stack(parts, dtype=np.float32)", None),  # no tf.stack argument for dtype
])
def test_a_join_of_a_tensor_list_becomes_its_tensorflow_join_or_says_why_not(join, fixed_as):
    source = dedent(f"""
        import numpy as np
        import tensorflow as tf


        class M(tf.keras.Model):
            def call(self, x):
                parts = [self.dense(x), self.dense(x)]
                return {join}
        """)
    result = run(source, NA)
    [diagnostic] = result.diagnostics
    if fixed_as:
        assert result.output.endswith(f"return {fixed_as}\n") and diagnostic.applied
    else:
        assert result.output == source
        assert diagnostic.message.endswith("(its arguments have no tf.stack/tf.concat equivalent)")


def test_a_loop_over_a_tensor_bound_becomes_a_while_loop_in_the_module_spelling():
    result = run(_in_f("""
        n = tf.shape(x)[0]
        buf = np.zeros((4, 3))
        for t in range(n):
            buf[t] = self.dense(x[t:t + 1])
        return buf
        """), NA)
    assert "    _, buf = tf.while_loop(lambda t, *_: t < n, fill_buf, [0, buf])\n" in result.output


def test_tf_is_preferred_to_another_spelling_of_tensorflow():
    source = _in_f("""
        buf = np.zeros((2, 3))
        for t in range(2):
            buf[t] = self.dense(x[t:t + 1])
        return buf
        """).replace("import tensorflow as tf\n", "import tensorflow\nimport tensorflow as tf\n")
    result = run(source, NA)
    assert "buf = tf.TensorArray(tf.float32, size=2)" in result.output
