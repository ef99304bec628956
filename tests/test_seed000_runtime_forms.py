"""The seed-000 rewrites in the forms that run under every runtime: loops over
a tensor bound become tf.while_loop (numpy-accumulator), which
vectorize-sample-loop reads back; one-row slices and flattening reshapes
batch correctly; unused-model-instance leaves dynamically read names alone
and reports removals that would rename auto-named layers. Also the buffer
kinds (np.full, _like, np.array/np.copy of data), a conversion after the
loop, and the buffers left alone (integer ones, writes after the tape)."""

from __future__ import annotations

from textwrap import dedent

from migrate.engine import Options, transform
from migrate.registry import resolve

NA, VS, UM = "numpy-accumulator", "vectorize-sample-loop", "unused-model-instance"


def _run(source: str, *recipes: str):
    result = transform(dedent(source), "t.py", Options(tuple(resolve(list(recipes))), unsafe_fixes=True))
    assert not result.errors
    return result


def test_a_loop_over_the_batch_size_becomes_a_while_loop_and_x_shape_0_a_tf_shape():
    out = _run("""\
        import numpy as np
        import tensorflow as tf

        def call(self, x):
            rows = np.zeros((x.shape[0], 4))
            for i in range(x.shape[0]):  # one row
                rows[i] = self.enc(x[i:i + 1])
            return rows
        """, NA).output
    assert out == dedent("""\
        import numpy as np
        import tensorflow as tf

        def call(self, x):
            rows = tf.TensorArray(tf.float32, size=tf.shape(x)[0])
            def fill_rows(i, rows):  # one row
                rows = rows.write(i, tf.reshape(self.enc(x[i:i + 1]), [4]))
                return i + 1, rows
            _, rows = tf.while_loop(lambda i, *_: i < tf.shape(x)[0], fill_rows, [0, rows])
            rows = rows.stack()
            return rows
        """)


def test_a_static_bound_stays_a_python_loop():
    out = _run("""\
        import numpy as np
        import tensorflow as tf

        def call(self, x):
            steps = x.shape[1]
            codes = np.zeros((steps, 4))
            for t in range(steps):
                codes[t] = tf.reduce_sum(self.enc(x[:, t]), axis=0)
            return codes
        """, NA).output
    assert "for t in range(steps):" in out and "while_loop" not in out


def test_a_state_carried_across_a_tensor_bound_loop_keeps_its_state_under_the_scatter_fix():
    # the loop stays (autograph makes it a while_loop under fit, `h` a loop variable); only the
    # buffer becomes a tensor written by scatter: checked by hand to train eagerly and under fit
    source = """\
        import numpy as np
        import tensorflow as tf

        def call(self, x):
            n = tf.shape(x)[0]
            h = tf.zeros([4])
            out = np.zeros((n, 4))
            for i in range(n):
                h = self.cell(x[i], h)
                out[i] = h
            return out
        """
    result = _run(source, NA)
    [finding] = result.diagnostics
    assert finding.fixable and finding.safety == "safe"
    assert "out = tf.zeros([n, 4], tf.float32)" in result.output
    assert "h = self.cell(x[i], h)" in result.output and "for i in range(n):" in result.output
    assert "out = tf.tensor_scatter_nd_update(out, [[i]]" in result.output


def test_vectorize_reads_the_while_loop_form_with_slices_and_flattening():
    out = _run("""\
        import tensorflow as tf

        def call(self, x):
            n = tf.shape(x)[0]
            flat = tf.TensorArray(tf.float32, size=n)
            def fill_flat(j, flat):
                sample = tf.reshape(x[j], [1, -1])
                flat = flat.write(j, tf.reshape(self.enc(sample), [4]))
                return j + 1, flat
            _, flat = tf.while_loop(lambda j, *_: j < n, fill_flat, [0, flat])
            rows = tf.TensorArray(tf.float32, size=n)
            def fill_rows(j, rows):
                rows = rows.write(j, tf.reshape(self.enc(x[j:j + 1]), [4]))
                return j + 1, rows
            _, rows = tf.while_loop(lambda j, *_: j < n, fill_rows, [0, rows])
            return flat.stack() + rows.stack()
        """, VS).output
    assert out == dedent("""\
        import tensorflow as tf

        def call(self, x):
            n = tf.shape(x)[0]
            sample = tf.reshape(x, [tf.shape(x)[0], -1])
            flat = tf.reshape(self.enc(sample), [-1, 4])
            rows = tf.reshape(self.enc(x), [-1, 4])
            return flat + rows
        """)


def test_names_a_dynamic_reader_reaches_stay():
    source = """\
        import tensorflow as tf

        LAYER = tf.keras.layers.Dense(1)

        def lookup(name):
            return globals()[name]

        def build():
            spare = tf.keras.layers.Dense(2)
            return dict(locals())
        """
    result = _run(source, UM)
    assert result.output == dedent(source) and not result.diagnostics


def test_a_removal_that_renames_auto_named_layers_is_an_unsafe_fix_naming_the_lookups():
    source = """\
        import tensorflow as tf

        def build():
            probe = tf.keras.layers.Dense(2)
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            return model.get_layer("dense_1")
        """
    result = _run(source, UM)
    [finding] = result.diagnostics
    assert finding.fixable and finding.safety == "unsafe" and '"dense_1" (line 6)' in finding.message
    assert "probe" not in result.output


_LOOP = """\
    import numpy as np
    import tensorflow as tf

    def call(self, x):
        buf = {creation}
        for t in range(3):
            buf[t] = self.enc(x[:, t])
        {after}
        return buf
    """


def _buffer_rewrite(creation: str, after: str = "") -> str:
    out = _run(_LOOP.format(creation=creation, after=after), NA).output
    return "\n".join(line.strip() for line in out.splitlines()[4:-1] if line.strip())


def test_np_full_takes_its_dtype_from_the_third_argument():
    assert _buffer_rewrite("np.full((3, 2), -1.0, np.float64)").splitlines()[0] == \
        "buf = tf.TensorArray(tf.float64, size=3)"


def test_data_and_like_buffers_have_an_unknown_size():
    for creation in ("np.empty_like(x)", "np.copy(x)", "np.array(x, 'float32')", "np.ones_like(x)"):
        assert _buffer_rewrite(creation).splitlines()[0] == \
            "buf = tf.TensorArray(tf.float32, size=0, dynamic_size=True)", creation


def test_a_conversion_after_the_loop_sets_the_dtype_and_goes():
    rewrite = _buffer_rewrite("np.zeros((3, 2))", "buf = tf.convert_to_tensor(buf, dtype=tf.float64)")
    assert rewrite == "\n".join([
        "buf = tf.TensorArray(tf.float64, size=3)",
        "for t in range(3):",
        "buf = buf.write(t, tf.cast(self.enc(x[:, t]), tf.float64))",
        "buf = buf.stack()",
    ])


def test_a_conversion_to_another_dtype_than_the_buffers_becomes_a_cast():
    assert _buffer_rewrite("np.zeros((3, 2), np.float32)", "buf = tf.constant(buf, dtype=tf.float16)") \
        .splitlines()[-1] == "buf = tf.cast(buf, tf.float16)"


def test_integer_buffers_and_writes_after_the_tape_are_left_alone():
    tokens = _LOOP.format(creation="np.zeros((3, 2), dtype=np.int32)", after="")
    logged = """\
        import numpy as np
        import tensorflow as tf

        def fit(model, x, y, opt):
            history = np.zeros(3)
            for step in range(3):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                opt.minimize(loss, model.trainable_variables, tape=tape)
                history[step] = loss
            return history
        """
    for source in (tokens, logged):
        result = _run(source, NA)
        assert result.output == dedent(source) and not result.diagnostics


def test_a_write_inside_the_tape_is_still_fixed():
    out = _run("""\
        import numpy as np
        import tensorflow as tf

        def step(model, x):
            with tf.GradientTape() as tape:
                parts = np.zeros(3)
                for k in range(3):
                    parts[k] = tf.reduce_sum(model(x[k:k + 1]))
                loss = tf.reduce_mean(parts)
            return tape.gradient(loss, model.trainable_variables)
        """, NA).output
    assert "parts = parts.write(k, tf.reduce_sum(model(x[k:k + 1])))" in out


def test_lists_of_tensors_turned_into_numpy_become_tf_stack_and_tf_concat():
    out = _run("""\
        import numpy as np
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def call(self, x):
                steps = []
                for t in range(3):
                    steps.append(self.enc(x[:, t]))
                parts = []
                for layer in self.branches:
                    parts.append(layer(x))
                codes = [self.enc(x[:, t]) for t in range(3)]
                return np.array(steps), np.stack(codes, axis=1), np.concatenate(parts, axis=-1)
        """, NA).output
    assert out.splitlines()[-1].strip() == \
        "return tf.stack(steps), tf.stack(codes, axis=1), tf.concat(parts, axis=-1)"


def test_lists_of_numpy_values_or_converted_outside_a_gradient_context_stay():
    source = """\
        import numpy as np
        import tensorflow as tf

        def log(model, xs, opt):
            rows = []
            norms = []
            for x in xs:
                rows.append(np.ones(3))
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(model(x))
                norms.append(tf.norm(loss))
            return np.array(rows), np.stack(norms)

        def test_concatenate(self):
            x = tf.ones((2, 3))
            x_np = convert_to_numpy(x)
            self.assertAllClose(tf.concat([x, x], 0), np.concatenate([x_np, x_np], axis=0))
        """
    result = _run(source, NA)
    assert result.output == dedent(source) and not result.diagnostics


def test_numpy_on_a_tensor_in_a_gradient_context_becomes_tf_or_is_reported():
    result = _run("""\
        import numpy as np
        import tensorflow as tf

        class M(tf.keras.Model):
            def call(self, x):
                h = self.enc(x)
                pooled = np.mean(np.asarray(h), axis=1)
                top = np.argmax(h, axis=-1)
                return np.array(self.head(pooled), dtype=np.float64), top

        def step(model, x):
            with tf.GradientTape() as tape:
                pred = np.array(model(x))
            return tape.gradient(pred, model.trainable_variables)

        def evaluate(model, x):
            return np.mean(model(x) > 0.5)
        """, NA)
    out = result.output
    assert "pooled = tf.reduce_mean(h, axis=1)" in out
    assert "return tf.cast(self.head(pooled), tf.float64), top" in out
    assert "pred = model(x)" in out and "return np.mean(model(x) > 0.5)" in out
    [argmax] = [d for d in result.diagnostics if not d.fixable]
    assert "`np.argmax` has no tf.* equivalent" in argmax.message


def test_nested_keras_constructors_keep_a_removal_safe():
    result = transform(dedent("""\
        import tensorflow as tf

        baseline = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
        """), "t.py", Options(tuple(resolve([UM]))))
    [finding] = result.diagnostics
    assert finding.safety == "safe" and finding.applied


def test_a_pair_of_loops_writing_buf_i_j_fills_one_flat_tensor_array():
    out = _run("""\
        import numpy as np
        import tensorflow as tf

        def call(self, x):
            grid = np.zeros((n, m + 1, 2))
            for i in range(n):
                for j in range(m + 1):
                    grid[i, j] = self.pair(x[i:i + 1, j])
            return grid
        """, NA).output
    assert out.splitlines()[4:10] == [
        "    grid = tf.TensorArray(tf.float32, size=n * (m + 1))",
        "    for i in range(n):",
        "        for j in range(m + 1):",
        "            grid = grid.write(i * (m + 1) + j, tf.reshape(self.pair(x[i:i + 1, j]), [2]))",
        "    grid = tf.reshape(grid.stack(), [n, m + 1, 2])",
        "    return grid",
    ]
