"""vectorize-sample-loop: edge cases beyond the fixtures (moved from the seed-named test
files), then VALID / INVALID cases for the failure classes of issue 11 (a
VALID case must give no finding; an INVALID one's findings and fix are a
JSON snapshot under tests/snapshots/vectorize-sample-loop/)."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, dedent, fixed, invalid, params, run, valid

RECIPE = "vectorize-sample-loop"


VS = RECIPE


LOOP = """
    import tensorflow as tf

    def call(self, x):
        n = tf.shape(x)[0]
        rows = tf.TensorArray(tf.float32, size=n)
        for j in range(n):
            {body}
        return rows.stack()[0], rows.stack()
    """


def loop_source(*lines: str) -> str:
    return LOOP.replace("{body}", "\n            ".join(lines))


def test_expand_dims_and_none_index_chains_are_batched():
    source = loop_source("one = tf.expand_dims(x[j, 0], 0)",
                         "code = self.enc(one[0][None], training=True)",
                         "rows = rows.write(j, tf.squeeze(code, 0))")
    assert fixed(source, VS) == dedent("""
        import tensorflow as tf

        def call(self, x):
            n = tf.shape(x)[0]
            one = x[:, 0]
            code = self.enc(one, training=True)
            rows = code
            return rows[0], rows
        """)


def test_is_unsafe_so_a_safe_run_only_reports():
    source = loop_source("rows = rows.write(j, tf.reshape(self.enc(tf.reshape(x[j], [1, 4])), [2]))")
    result = run(source, VS, unsafe=False)
    assert result.output == dedent(source)
    [diagnostic] = result.diagnostics
    assert diagnostic.safety == "unsafe" and not diagnostic.applied


@pytest.mark.parametrize("lines", [
    ("code = self.enc(tf.reshape(x[j], [1, 4])) * j", "rows = rows.write(j, code[0])"),
    ("code = self.enc(tf.reshape(x[j], [1, 4]))", "rows = rows.write(0, code[0])"),
    ("code = tf.reduce_sum(x[j])", "rows = rows.write(j, code)"),
    ("code = self.enc(x[j])", "rows = rows.write(j, code)"),
    ("if j:", "    rows = rows.write(j, x[j])"),
])
def test_anything_but_a_pure_chain_stays(lines):
    source = loop_source(*lines)
    assert fixed(source, VS) == dedent(source)


def test_a_loop_over_positions_is_not_a_sample_loop():
    source = """
        import tensorflow as tf

        def call(self, x):
            steps = x.shape[1]
            codes = tf.TensorArray(tf.float32, size=steps)
            for t in range(steps):
                codes = codes.write(t, tf.reshape(self.enc(tf.reshape(x[t], [1, 4])), [2]))
            return codes.stack()
        """
    assert fixed(source, VS) == dedent(source)


CASES = [
    invalid("per_sample_chain", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def call(self, inputs):
                batch = tf.shape(inputs)[0]
                codes = tf.TensorArray(tf.float32, size=batch)
                for j in range(batch):
                    patch = tf.reshape(inputs[j], [1, 7, 7, 1])
                    codes = codes.write(j, tf.reshape(self.local(patch), [16]))
                return codes.stack()
        """, "one layer call per sample", safety="unsafe"),
    valid("loop_over_positions", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def call(self, inputs, steps):
                codes = tf.TensorArray(tf.float32, size=steps)
                for t in range(steps):
                    codes = codes.write(t, self.local(inputs[:, t]))
                return codes.stack()
        """, "a loop over positions is not a per-sample loop"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_cases(case):
    check_case(RECIPE, case)
