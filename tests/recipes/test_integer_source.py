"""integer-source (issue 26): gradients asked through integer variables,
weights and watched tensors. The dtype comes from the model's dtype facts
(recipes/_model/dtypes.py); the fix is safe only when every read of the
variable is one a float variable serves the same way. VALID cases give no
finding; INVALID ones' findings and fix are JSON snapshots under
tests/snapshots/integer-source/."""

from __future__ import annotations

import dataclasses

import pytest

from recipe_cases import HEADER, check_case, invalid, params, run_body, valid

RECIPE = "integer-source"

CASES = [
    invalid("int_literal_variable", """
        w = tf.Variable(5)
        with tf.GradientTape() as tape:
            loss = tf.cast(tf.square(w - 2), tf.float32)
        grads = tape.gradient(loss, [w])
        """, "tf.Variable(5) is int32: its gradient is None", safety="safe"),
    invalid("int_dtype_variable", """
        v = tf.Variable([1, 2], dtype=tf.int64)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.cast(v, tf.float32) * 2.0)
        print(tape.gradient(loss, v))
        """, "dtype=tf.int64 becomes tf.float32", safety="safe"),
    invalid("int_list_variable", """
        v = tf.Variable([1, 2, 3])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.cast(v, tf.float32))
        print(tape.gradient(loss, v))
        """, "a list of ints: dtype=tf.float32 is added", safety="safe"),
    invalid("update_with_a_float_step", """
        w = tf.Variable(3)
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.square(tf.cast(w, tf.float32) - 1.0)
            w.assign_sub(0.1 * tape.gradient(loss, w))
        """, "assign_sub of a float product: a float variable serves it", safety="safe"),
    invalid("minimize_var_list", """
        w = tf.Variable(2)
        opt = tf.keras.optimizers.SGD(0.1)
        opt.minimize(lambda: tf.cast(w * w, tf.float32), var_list=[w])
        """, "var_list names it as a source", safety="safe"),
    invalid("indexing_with_it", """
        i = tf.Variable(1)
        table = tf.constant([1.0, 2.0, 3.0])
        with tf.GradientTape() as tape:
            loss = table[i] * tf.cast(i, tf.float32)
        print(tape.gradient(loss, i))
        """, "indexing relies on the integer dtype: unsafe, named", safety="unsafe"),
    invalid("passed_to_a_custom_gradient", """
        @tf.custom_gradient
        def scaled(inputs, var):
            def grad(upstream):
                return upstream * tf.cast(var, tf.float32), tf.reduce_sum(upstream * inputs)
            return inputs * tf.cast(var, tf.float32), grad

        var = tf.Variable([1], dtype=tf.int32)
        x = tf.ones((4, 1))
        with tf.GradientTape() as tape:
            out = tf.reduce_sum(scaled(x, var))
        print(tape.gradient(out, var))
        """, "passed to a function of the module: unsafe", safety="unsafe"),
    invalid("int_add_weight_cast_in_call", """
        class Scale(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.scale = self.add_weight(name="scale", shape=(1,), initializer="ones", dtype="int32")

            def call(self, inputs):
                return inputs * tf.cast(self.scale, tf.float32)
        """, "a weight read only through tf.cast: safe", safety="safe"),
    invalid("int_add_weight_times_inputs", """
        class Scale(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.var = self.add_weight(name="var", shape=(1,), initializer="zeros", dtype=tf.int32)

            def call(self, inputs):
                return inputs * self.var
        """, "call's inputs times the weight: integer wherever the integer weight worked (Keras casts only "
             "floating inputs), so a float weight alone fails with a dtype mismatch: report only", fixable=False),
    invalid("int_variable_attribute_plus_inputs", """
        class Shift(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.offset = tf.Variable(2)

            def call(self, inputs):
                return inputs + self.offset
        """, "the same for a tf.Variable attribute added to call's inputs: report only", fixable=False),
    invalid("int_variable_attribute_of_a_layer", """
        class Counter(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.offset = tf.Variable(2)

            def call(self, inputs):
                return inputs + tf.cast(self.offset, inputs.dtype)
        """, "a trainable integer variable of a layer is a trainable weight", safety="safe"),
    invalid("watched_int_constant", """
        i = tf.constant(1)
        inc = tf.constant(1)
        with tf.GradientTape() as tape:
            tape.watch(i)
            out = tf.while_loop(lambda i, inc: i <= 5, lambda i, inc: [i + inc, inc], [i, inc])
        print(tape.gradient(out[0], i))
        """, "a watched int literal constant, and the one it meets in the loop's variables, become float "
             "(unsafe)", safety="unsafe"),
    invalid("watched_int_constant_loop_vars_by_keyword", """
        i = tf.constant(1)
        inc = tf.constant(1)
        with tf.GradientTape() as tape:
            tape.watch(i)
            out = tf.while_loop(lambda i, inc: i <= 5, lambda i, inc: [i + inc, inc], loop_vars=[i, inc])
        print(tape.gradient(out[0], i))
        """, "the loop's variables given by keyword: the same unsafe fix as given by position", safety="unsafe"),
    invalid("watched_int_constant_every_loop_argument_by_keyword", """
        i = tf.constant(1)
        inc = tf.constant(1)
        with tf.GradientTape() as tape:
            tape.watch(i)
            out = tf.while_loop(cond=lambda i, inc: i <= 5, body=lambda i, inc: [i + inc, inc],
                                loop_vars=(i, inc))
        print(tape.gradient(out[0], i))
        """, "cond, body and loop_vars all by keyword", safety="unsafe"),
    invalid("watched_int_constant_def_loop", """
        i = tf.constant(0)
        step = tf.constant(2, dtype=tf.int32)


        def cond(i, step):
            return i < 10


        def body(i, step):
            return i + step, step


        with tf.GradientTape() as tape:
            tape.watch(i)
            last, _ = tf.while_loop(cond, body, (i, step))
            y = last * 3
        print(tape.gradient(y, i))
        """, "a loop of module functions, results unpacked; a spelled int dtype becomes float32",
        safety="unsafe"),
    invalid("watched_int_constant_positional_dtype", """
        n = tf.constant(4, tf.int64)
        with tf.GradientTape() as tape:
            tape.watch(n)
            y = n * 2 + 1
        print(tape.gradient(y, n))
        """, "tf.constant(4, tf.int64): the positional dtype becomes float32", safety="unsafe"),
    invalid("watched_int_constant_through_an_alias", """
        x = tf.constant([1, 2, 3], dtype=tf.int32)
        same = x
        with tf.GradientTape() as tape:
            tape.watch(same)
            y = tf.reduce_sum(tf.cast(x, tf.float32) * 2.0)
        print(tape.gradient(y, x))
        """, "an alias of the literal constant is watched: the constant becomes float", safety="unsafe"),
    invalid("watched_int_constant_watched_late", """
        x = tf.constant([1, 2, 3])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.cast(x, tf.float32) * 2.0)
            tape.watch(x)
        print(tape.gradient(y, x))
        """, "watched after the tape read it: float alone records nothing, report (unwatched-source moves "
             "the watch)", fixable=False),
    invalid("watched_int_used_as_index_after", """
        i = tf.constant(1)
        inc = tf.constant(1)
        table = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
        with tf.GradientTape() as tape:
            tape.watch(i)
            out = tf.while_loop(lambda i, inc: i <= 5, lambda i, inc: [i + inc, inc], [i, inc])
        print(tape.gradient(out[0], i), table[out[0]])
        """, "the loop's result indexes a tensor: report, naming the index", fixable=False),
    invalid("watched_int_in_tf_range", """
        i = tf.constant(1)
        with tf.GradientTape() as tape:
            tape.watch(i)
            total = tf.reduce_sum(tf.range(i))
        print(tape.gradient(total, i))
        """, "tf.range needs the integer: report, naming it", fixable=False),
    invalid("watched_int_as_a_shape_after", """
        n = tf.constant(3)
        with tf.GradientTape() as tape:
            tape.watch(n)
            y = n * 2
        z = tf.zeros([n, 2])
        print(tape.gradient(y, n))
        """, "a shape needs the integer: report", fixable=False),
    invalid("watched_int_as_gather_indices", """
        params = tf.constant([1.0, 2.0])
        i = tf.constant([0, 1])
        with tf.GradientTape() as tape:
            tape.watch(i)
            y = tf.gather(params, i)
        print(tape.gradient(y, i))
        """, "gather indices need the integer: report", fixable=False),
    invalid("watched_int_meets_a_non_literal_int", """
        x = tf.ones((4, 2))
        i = tf.constant(1)
        n = tf.shape(x)[0]
        with tf.GradientTape() as tape:
            tape.watch(i)
            j = i + n
        print(tape.gradient(j, i))
        """, "meets an int tensor that is no literal: converting i alone is a dtype mismatch, report naming n",
        fixable=False),
    invalid("watched_int_meets_a_non_literal_in_tf_add", """
        i = tf.constant(1)
        n = tf.reduce_sum(tf.constant([1, 2]))
        with tf.GradientTape() as tape:
            tape.watch(i)
            j = tf.add(i, n)
        print(tape.gradient(j, i))
        """, "tf.add combines it with an int tensor that is no literal: report", fixable=False),
    invalid("watched_int_read_in_a_function", """
        i = tf.constant(2)


        def scale(t):
            return t * i


        with tf.GradientTape() as tape:
            tape.watch(i)
            y = scale(3.0)
        print(tape.gradient(y, i))
        """, "a function reads it as a free name with a parameter of unknown dtype: report", fixable=False),
    invalid("watched_int_compared_with_an_int_tensor", """
        x = tf.ones((4, 2))
        i = tf.constant(1)
        with tf.GradientTape() as tape:
            tape.watch(i)
            out = tf.while_loop(lambda i: i < tf.shape(x)[0], lambda i: [i + 1], [i])
        print(tape.gradient(out[0], i))
        """, "compared with an int tensor in the loop's cond: report", fixable=False),
    invalid("watched_int_not_a_literal", """
        i = tf.reduce_sum(tf.constant([1, 2]))
        with tf.GradientTape() as tape:
            tape.watch(i)
            y = i * 2
        print(tape.gradient(y, i))
        """, "an int tensor computed, not a literal: report", fixable=False),
    invalid("int_tensor_source", """
        i = tf.constant(3)
        with tf.GradientTape() as tape:
            y = tf.cast(i, tf.float32) * 2.0
        print(tape.gradient(y, i))
        """, "an integer tensor as a source, not watched: reported", fixable=False),
    valid("float_variable", """
        w = tf.Variable(5.0)
        with tf.GradientTape() as tape:
            loss = tf.square(w)
        print(tape.gradient(loss, w))
        """, "a float variable"),
    valid("step_counter", """
        step = tf.Variable(0, trainable=False)
        counts = tf.Variable(0)
        counts.assign_add(1)
        step.assign_add(1)
        """, "integer counters that are never differentiated"),
    valid("int_weight_not_trainable", """
        class Seen(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.seen = self.add_weight(name="seen", shape=(), dtype=tf.int64, trainable=False)
        """, "a non-trainable integer weight is a counter"),
    valid("int_variable_outside_a_layer_not_differentiated", """
        class Model(tf.Module):
            def __init__(self):
                self.calls = tf.Variable(0)
        """, "not a Keras layer, and never a gradient source"),
    valid("float_add_weight", """
        class Scale(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.scale = self.add_weight(name="scale", shape=(1,), dtype=tf.float32)
        """, "a float weight"),
    valid("watched_float_constant", """
        x = tf.constant(1.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        """, "a float tensor watched"),
]
CASES = [dataclasses.replace(case, source=HEADER + case.source) for case in CASES]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    check_case(RECIPE, case)


def test_a_float_literal_keeps_its_spelling_of_the_module():
    result = run_body("""
        w = tf.compat.v2.Variable(4)
        with tf.GradientTape() as tape:
            loss = tf.cast(w, tf.float32) * 2.0
        print(tape.gradient(loss, w))
        """, RECIPE)
    assert "w = tf.compat.v2.Variable(4.0)\n" in result.output


def test_a_bare_variable_imported_from_tensorflow_is_made_float():
    result = run_body("""
        from tensorflow import Variable

        w = Variable(5)
        with tf.GradientTape() as tape:
            loss = tf.cast(w * w, tf.float32)
        grads = tape.gradient(loss, [w])
        """, RECIPE)
    assert "w = Variable(5.0)\n" in result.output and result.diagnostics[0].safety == "safe"


def test_a_jacobian_source_is_a_gradient_source():
    result = run_body("""
        w = tf.Variable(3)
        with tf.GradientTape() as tape:
            y = tf.cast(w, tf.float32) * 2.0
        print(tape.jacobian(y, w))
        """, RECIPE)
    assert "w = tf.Variable(3.0)\n" in result.output


@pytest.mark.parametrize("body, reason", [
    # an integer tensor operand: the sum's dtype is the integer one's
    ("n = tf.constant(2)\nwith tf.GradientTape() as tape:\n    z = w + n\n    loss = tf.cast(z, tf.float32)\n"
     "print(tape.gradient(loss, w))\n", "unsafe: `w + n` (line 9) may rely on the integer dtype"),
    # a float literal spelled with an exponent: a float variable serves the update
    ("with tf.GradientTape() as tape:\n    loss = tf.cast(w, tf.float32) ** 2\n"
     "w.assign_sub(1e-1 * tape.gradient(loss, w))\n", None),
])
def test_a_read_is_unsafe_only_when_a_float_would_change_it(body, reason):
    result = run_body("w = tf.Variable(3)\n" + body, RECIPE)
    [finding] = result.diagnostics
    assert "w = tf.Variable(3.0)\n" in result.output
    assert finding.safety == ("unsafe" if reason else "safe")
    assert reason is None or finding.message.endswith(reason)


def test_a_weight_read_by_floor_division_in_call_is_unsafe_and_named():
    result = run_body("""
        class Halve(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.k = self.add_weight(name="k", shape=(), initializer="ones", dtype="int32")

            def call(self, inputs):
                return inputs * tf.cast(self.k // 2, tf.float32)
        """, RECIPE)
    [finding] = result.diagnostics
    assert finding.safety == "unsafe" and finding.message.endswith("unsafe: `self.k // 2` (line 11) may rely on "
                                                                   "the integer dtype")


_LOOPED = """
    i = tf.constant(1)
    inc = tf.constant(1)
    with tf.GradientTape() as tape:
        tape.watch(i)
        out = tf.while_loop(lambda i, inc: i <= 5, lambda i, inc: [i + inc, inc], [i, inc])
    print(tape.gradient(out[0], i))
    """


@pytest.mark.parametrize("old, new, reason", [
    ("[i, inc])", "[i, 5])", "no fix: `tf.while_loop(lambda i, inc: i <= 5, lambda i, inc: [i + inc, inc], [i, 5])` "
     "(line 10) also carries `5`, which cannot become float with it"),
    ("tf.while_loop(lambda i, inc: i <= 5, lambda i, inc: [i + inc, inc], [i, inc])",
     "tf.while_loop(cond, body, [i, inc])", "its cond is not a function of this module taking the loop variables"),
])
def test_a_loop_the_constants_cannot_cross_is_reported_with_the_reason(old, new, reason):
    body = _LOOPED.replace(old, new)
    if "cond," in new:  # names bound to lambdas, not functions of the module
        body = body.replace("    with", "    cond = lambda i, inc: i <= 5\n    body = lambda i, inc: [i + inc, inc]\n"
                            "    with", 1)
    result = run_body(body, RECIPE)
    [finding] = result.diagnostics
    assert not finding.fixable and finding.message.endswith(reason)

