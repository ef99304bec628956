"""unwatched-source (issue 26): tape.gradient with respect to a tensor the
tape never watched before the computation that reads it. Decided from the
model's kinds (tensor, variable, NumPy, symbolic Keras tensor), the tensor
dtypes and the tape's watches; unknown kinds are never findings. VALID cases
give no finding; INVALID ones' findings and fix are JSON snapshots under
tests/snapshots/unwatched-source/."""

from __future__ import annotations

import dataclasses

import pytest

from recipe_cases import HEADER, check_case, fixed, invalid, params, run_body, valid

RECIPE = "unwatched-source"

_SYMBOLIC = """
        inputs = tf.keras.Input((4,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
        images = tf.constant(np.random.rand(3, 4), dtype=tf.float32)
        """

CASES = [
    invalid("constant_source", """
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(x * x)
        g = tape.gradient(y, x)
        """, "a float constant bound before the tape, never watched: watch it first", safety="safe"),
    invalid("zeros_source", """
        x = tf.zeros(())
        with tf.GradientTape() as tape:
            y = 2 * x + 3
        print(tape.gradient(y, x))
        """, "tf.zeros is float32 by default", safety="safe"),
    invalid("sum_before_tape", """
        x0 = tf.Variable(1.0)
        x = x0 + tf.constant(3.0)
        with tf.GradientTape() as tape:
            z = x * 2.0
        print(tape.gradient(z, x))
        """, "a tensor computed from a variable before the tape is not recorded", safety="safe"),
    invalid("source_in_a_list", """
        a = tf.constant(1.0)
        b = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = a * b
        ga, gb = tape.gradient(y, [a, b])
        """, "one source of a list is a constant; the variable is watched by itself", safety="safe"),
    invalid("persistent_tape", """
        x = tf.ones((2, 2))
        with tf.GradientTape(persistent=True) as tape:
            y = tf.reduce_sum(tf.square(x))
        print(tape.gradient(y, x))
        """, "a persistent tape watches no more than another", safety="safe"),
    invalid("variable_with_watch_accessed_variables_off", """
        w = tf.Variable(1.5)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            y = w * w
        print(tape.gradient(y, w))
        """, "watch_accessed_variables=False: a variable must be watched too", safety="safe"),
    invalid("late_watch_without_variables", """
        x = tf.constant(2.0)
        with tf.GradientTape() as tape:
            y = x ** 3
            tape.watch(x)
        print(tape.gradient(y, x))
        """, "the watch after the only computation records nothing", safety="safe"),
    invalid("converted_float64_unknown_dtype", """
        x = tf.convert_to_tensor(np.random.rand(3))
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(x * x)
        print(tape.gradient(y, x))
        """, "float64 from NumPy is floating: still safe", safety="safe"),
    invalid("dtype_not_known", """
        x = tf.identity(load())
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(x * x)
        print(tape.gradient(y, x))
        """, "a tensor of unknown dtype: the watch is unsafe", safety="unsafe"),
    invalid("numpy_source_float32", """
        x = np.ones((2, 3), dtype=np.float32)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.constant(2.0) * x)
        print(tape.gradient(y, x))
        """, "NumPy float32 data read only in the tape: convert before the tape and watch", safety="safe"),
    invalid("numpy_source_read_after", """
        x = np.random.rand(2, 3)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.constant(2.0, tf.float64) * x)
        g = tape.gradient(y, x)
        x[0, 0] = 1.0
        """, "float64 NumPy data written after the tape: the conversion is unsafe", safety="unsafe"),
    invalid("unconnected_target", """
        ones = tf.ones([1, 8, 8, 1], tf.float32)
        with tf.GradientTape() as tape:
            class_channel = tf.constant([4.4], dtype=tf.float32)
        grads = tape.gradient(class_channel, ones)
        """, "the target never reads the source: reported, no fix", fixable=False),
    invalid("symbolic_layer_output_watched", """
        inputs = tf.keras.Input((4,))
        hidden = tf.keras.layers.Dense(3, name="hidden")(inputs)
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(hidden))
        x = np.random.rand(2, 4).astype("float32")
        with tf.GradientTape() as tape:
            tape.watch(model.get_layer("hidden").output)
            loss = tf.reduce_sum(model(x))
        print(tape.gradient(loss, model.get_layer("hidden").output))
        """, "a symbolic Keras tensor watched: reported at the watch, with the way out", fixable=False),
    invalid("symbolic_model_inputs", """
        inputs = tf.keras.Input((4,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
        images = tf.constant(np.random.rand(3, 4), dtype=tf.float32)
        with tf.GradientTape() as tape:
            predictions = model(images)
            tape.watch(model.inputs)
            loss = tf.reduce_sum(predictions)
        print(tape.gradient(loss, model.inputs))
        """, "model.inputs watched after the one call of the model on `images`: watch images before the call, "
             "differentiate with respect to it", safety="unsafe"),
    invalid("model_input_never_watched", _SYMBOLIC + """
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(images, training=False))
        grads = tape.gradient(loss, model.input)
        """, "model.input, no watch: the fed tensor is watched and differentiated", safety="unsafe"),
    invalid("model_inputs_indexed", _SYMBOLIC + """
        with tf.GradientTape() as tape:
            tape.watch(model.inputs)
            loss = tf.reduce_sum(model(images))
        grads = tape.gradient(loss, model.inputs)
        print(grads[0].shape)
        """, "the result of model.inputs (a list) is indexed: [images] keeps it a list", safety="unsafe"),
    invalid("two_input_model", """
        a_in, b_in = tf.keras.Input((2,)), tf.keras.Input((3,))
        model = tf.keras.Model([a_in, b_in], tf.keras.layers.Dense(1)(tf.keras.layers.Concatenate()([a_in, b_in])))
        a = tf.ones((4, 2))
        b = tf.ones((4, 3))
        with tf.GradientTape() as tape:
            out = tf.reduce_sum(model([a, b]))
        ga, gb = tape.gradient(out, model.inputs)
        """, "a model called on a list of tensor names: watch and differentiate that list", safety="unsafe"),
    invalid("model_called_twice", _SYMBOLIC + """
        with tf.GradientTape() as tape:
            tape.watch(model.inputs)
            loss = tf.reduce_sum(model(images)) + tf.reduce_sum(model(2.0 * images))
        print(tape.gradient(loss, model.inputs))
        """, "near miss: two calls, which input is meant is not known: reported", fixable=False),
    invalid("model_called_on_an_expression", _SYMBOLIC + """
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(images / 255.0))
        print(tape.gradient(loss, model.inputs))
        """, "near miss: the tensor fed is an expression, no name to watch: reported", fixable=False),
    invalid("model_called_on_numpy", """
        inputs = tf.keras.Input((4,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
        images = np.random.rand(3, 4).astype("float32")
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(images))
        print(tape.gradient(loss, model.inputs))
        """, "near miss: NumPy data cannot be watched: reported", fixable=False),
    invalid("fed_tensor_rebound", _SYMBOLIC + """
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_sum(model(images))
        images = tf.zeros((3, 4))
        print(tape.gradient(loss, model.inputs))
        """, "near miss: the gradient call sees another `images`: reported", fixable=False),
    valid("variable_source", """
        w = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            y = w * w
        print(tape.gradient(y, w))
        """, "a trainable variable is watched by the tape"),
    valid("watched_first", """
        x = tf.constant(1.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        print(tape.gradient(y, x))
        """, "already watched before the computation"),
    valid("watched_under_an_alias", """
        x = tf.constant(1.0)
        same = x
        with tf.GradientTape() as tape:
            tape.watch(same)
            y = x * x
        print(tape.gradient(y, x))
        """, "an alias names the same tensor object: it is watched"),
    valid("late_watch_with_a_model", """
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        x = tf.constant(np.random.rand(2, 3), dtype=tf.float32)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(model(x))
            tape.watch(x)
        print(tape.gradient(y, x))
        """, "an op with a watched variable input is recorded: the late watch works"),
    valid("parameter_source", """
        def saliency(model, x):
            with tf.GradientTape() as tape:
                y = model(x)
            return tape.gradient(y, x)
        """, "a parameter's kind is unknown: unknown is not evidence"),
    valid("intermediate_source", """
        w = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            h = w * 3.0
            y = h * h
        print(tape.gradient(y, h))
        """, "a tensor computed in the tape is recorded"),
    valid("integer_source_is_not_ours", """
        i = tf.constant(3)
        with tf.GradientTape() as tape:
            y = tf.cast(i, tf.float32) * 2.0
        print(tape.gradient(y, i))
        """, "an integer source is integer-source's"),
    valid("only_through_numpy", """
        x = tf.constant([1.0, 2.0])
        w = tf.Variable(1.0)
        with tf.GradientTape() as g:
            y = w * float(np.sum(x.numpy()))
        print(g.gradient(y, x))
        """, "x reaches the target only through .numpy(): numpy-on-loss-path's"),
    valid("target_computed_outside", """
        x = tf.constant(1.0)
        y = x * x
        with tf.GradientTape() as tape:
            z = tf.constant(0.0)
        print(tape.gradient(y, x))
        """, "the target is computed outside the tape: outside-tape's"),
    valid("watched_list", """
        x = tf.constant(1.0)
        xs = make_list(x)
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = x * x
        print(tape.gradient(y, x))
        """, "a watched value the model cannot relate to x may hold it"),
    valid("list_of_variables", """
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        trainable = model.trainable_variables
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(model(tf.ones((1, 3))))
        print(tape.gradient(y, trainable))
        """, "a list of variables is not NumPy data"),
]


CASES = [dataclasses.replace(case, source=HEADER + case.source) for case in CASES]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    check_case(RECIPE, case)


def test_the_watch_is_the_tapes_first_statement():
    out = fixed("""
        import tensorflow as tf
        x = tf.zeros(())
        with tf.GradientTape() as tape:
            # the forward pass
            y = 2 * x + 3
        print(tape.gradient(y, x))
        """, RECIPE)
    # the comments above the first statement stay above the pair (edits.insert_before)
    assert "with tf.GradientTape() as tape:\n    # the forward pass\n    tape.watch(x)\n    y = 2 * x + 3\n" in out


def test_a_numpy_source_is_converted_before_the_tape_with_the_modules_spelling():
    result = run_body("""
        x = np.ones((2, 3), dtype=np.float32)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.constant(2.0) * x)
        print(tape.gradient(y, x))
        """, RECIPE)
    assert "x = tf.convert_to_tensor(x, dtype=tf.float32)\nwith tf.GradientTape() as tape:\n    tape.watch(x)\n" \
        in result.output



def test_a_gradient_call_on_a_parameter_named_like_a_tape_is_left_alone():
    """``g``'s ``tape`` is no ``with`` tape the model sees: no decision."""
    result = run_body("""
        def f(x):
            x = tf.constant(x)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x * x
            return tape.gradient(y, x)


        def g(tape, x):
            return tape.gradient(x * 2.0, x)
        """, RECIPE)
    assert result.output == result.source and not result.diagnostics
