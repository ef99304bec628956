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


def test_a_while_loop_over_the_samples_is_batched():
    out = fixed("""
        import tensorflow as tf


        def call(self, x):
            n = tf.shape(x)[0]
            rows = tf.TensorArray(tf.float32, size=n)

            def step(i, rows):
                code = self.enc(tf.reshape(x[i], [1, 4]))
                rows = rows.write(i, code[0])
                return i + 1, rows
            _, rows = tf.while_loop(lambda i, *_: i < n, step, [0, rows])
            return rows.stack()
        """, VS)
    assert "    code = self.enc(tf.reshape(x, [-1, 4]))\n    rows = code\n    return rows\n" in out
    assert "while_loop" not in out and "def step" not in out


def test_a_layer_built_in_the_function_is_a_per_sample_layer():
    out = fixed("""
        import tensorflow as tf


        def encode(x):
            enc = tf.keras.layers.Dense(2)
            n = tf.shape(x)[0]
            rows = tf.TensorArray(tf.float32, size=n)
            for j in range(n):
                rows = rows.write(j, tf.reshape(enc(tf.reshape(x[j], [1, 4])), [2]))
            return rows.stack()
        """, VS)
    assert "    rows = tf.reshape(enc(tf.reshape(x, [-1, 4])), [-1, 2])\n    return rows\n" in out


def test_the_stack_assigned_to_another_name_stays_an_assignment():
    out = fixed(loop_source("rows = rows.write(j, tf.reshape(self.enc(tf.reshape(x[j], [1, 4])), [2]))")
                .replace("return rows.stack()[0], rows.stack()", "out = rows.stack()\n        return out"), VS)
    assert "    out = rows\n    return out\n" in out


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
    invalid("append_then_concat_in_call", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(4)

            def call(self, x):
                outs = []
                for i in range(x.shape[0]):
                    outs.append(self.dense(x[i:i + 1]))
                return tf.concat(outs, 0)
        """, "the append loop of public code", safety="unsafe"),
    invalid("comprehension_of_rows_stacked", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(4)

            def call(self, x):
                return tf.stack([self.dense(row[None])[0] for row in tf.unstack(x)])
        """, "a comprehension over tf.unstack, stacked", safety="unsafe"),
    invalid("slots_in_a_script", """
        import numpy as np
        import tensorflow as tf

        dense = tf.keras.layers.Dense(4)
        x = np.zeros((3, 2), "float32")
        codes = [None] * len(x)
        for i in range(len(x)):
            codes[i] = dense(tf.expand_dims(x[i], 0))
        merged = tf.concat(codes, axis=0)
        """, "a buffer of slots at module level", safety="unsafe"),
    invalid("model_itself_in_train_step", """
        import tensorflow as tf


        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(1)

            def call(self, inputs):
                return self.dense(inputs)

            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    preds = tf.concat([self(x[i:i + 1]) for i in range(x.shape[0])], axis=0)
                    loss = tf.reduce_mean(tf.square(y - preds))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                return {"loss": loss}
        """, "the model called per sample in its train_step", safety="unsafe"),
    invalid("unstacked_rows_indexed", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def encode(self, x):
                outs = []
                for row in tf.unstack(x):
                    outs.append(self.dense(tf.reshape(row[1], [1, 3])))
                return tf.concat(outs, 0)
        """, "an index into the row indexes the batch: x[:, 1]", safety="unsafe"),
    valid("state_carried_between_samples", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(4)

            def call(self, x):
                state = tf.zeros((1, 4))
                outs = []
                for i in range(x.shape[0]):
                    state = self.dense(x[i:i + 1]) + state
                    outs.append(state)
                return tf.concat(outs, 0)
        """, "each sample's result depends on the previous one"),
    valid("routed_to_a_layer_per_sample", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.heads = [tf.keras.layers.Dense(4), tf.keras.layers.Dense(4)]

            def call(self, x):
                outs = []
                for i in range(x.shape[0]):
                    outs.append(self.heads[i % 2](x[i:i + 1]))
                return tf.concat(outs, 0)
        """, "each sample goes through another layer"),
    valid("batch_normalization_in_the_chain", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.norm = tf.keras.layers.BatchNormalization()

            def call(self, x):
                return tf.concat([self.norm(x[i:i + 1]) for i in range(len(x))], axis=0)
        """, "batch statistics would mix the samples"),
    valid("variable_length_slices", """
        import tensorflow as tf

        LENGTHS = [3, 1, 2]


        class Encoder(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(4)

            def call(self, x):
                outs = []
                for i in range(x.shape[0]):
                    outs.append(self.dense(tf.reduce_sum(x[i:i + 1, :LENGTHS[i]], axis=1, keepdims=True)))
                return tf.concat(outs, 0)
        """, "each sample is cut to its own length"),
    valid("a_method_per_sample", """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(4)

            def step(self, sample):
                return self.dense(sample)

            def call(self, x):
                return tf.concat([self.step(x[i:i + 1]) for i in range(len(x))], axis=0)
        """, "a method may keep state between calls"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_cases(case):
    check_case(RECIPE, case)
