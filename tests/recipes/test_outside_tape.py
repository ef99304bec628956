"""outside-tape: the forward pass or the target computed where the gradient
does not see it (before the `with`, after it, in the gradient call, outside
the function given to `minimize`). VALID cases (near misses) give no
finding; INVALID ones' findings and fix are JSON snapshots under
tests/snapshots/outside-tape/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, dedent, invalid, params, run, valid

RECIPE = "outside-tape"

HEAD = dedent("""
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    x = tf.random.normal((8, 3))
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    """)


def program(body: str) -> str:
    """HEAD (a model and a batch), then ``body``."""
    return HEAD + dedent(body)


CASES = [
    invalid("forward_pass_before_the_tape", program("""
        pred = model(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "(a) moved into the block", safety="safe"),
    invalid("forward_chain_before_the_tape_in_a_loop", program("""
        optimizer = tf.keras.optimizers.SGD(0.1)
        for step in range(3):
            hidden = model(x)
            pred = tf.nn.relu(hidden)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(pred - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print(pred)
        """), "(a) both statements move, in order; `pred` stays bound for the print", safety="safe"),
    invalid("forward_pass_with_a_random_draw", program("""
        pred = model(x + tf.random.normal(tf.shape(x)))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "(a) the moved code draws random numbers: unsafe", safety="unsafe"),
    invalid("forward_pass_outside_the_loop", program("""
        pred = model(x)
        for step in range(3):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(pred - y))
            grads = tape.gradient(loss, model.trainable_variables)
        """), "(a) in another block than the with: report only", fixable=False),
    invalid("input_rebound_in_between", program("""
        pred = model(x)
        x = x * 2.0
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(pred - y)) + tf.reduce_sum(x)
        grads = tape.gradient(loss, model.trainable_variables)
        """), "(a) `x` is rebound between the forward pass and the with: report only", fixable=False),
    invalid("loss_negated_after_the_block", program("""
        with tf.GradientTape() as tape:
            score = tf.reduce_mean(model(x))
        loss = -score
        grads = tape.gradient(loss, model.trainable_variables)
        print(loss)
        """), "(b) moved to the end of the block", safety="safe"),
    invalid("loss_summed_after_the_block_with_a_print_between", program("""
        with tf.GradientTape() as tape:
            pred = model(x)
        loss = tf.reduce_mean(tf.square(pred - y))
        tf.print(loss)
        grads = tape.gradient(loss, model.trainable_variables)
        """), "(b) the print in between reads the loss: it may move too, but then it prints inside; report",
        fixable=False),
    invalid("target_computed_in_the_gradient_call", program("""
        def grad(v):
            with tf.GradientTape() as t:
                t.watch(v)
            return t.gradient(tf.sin(v) * 2.0, v)
        """), "(c) the target is bound inside", safety="safe"),
    invalid("target_computed_by_an_unknown_function", program("""
        from losses import huber

        with tf.GradientTape() as tape:
            pred = model(x)
        grads = tape.gradient(huber(y, pred), model.trainable_variables)
        """), "(c) a function of another module may have effects: unsafe", safety="unsafe"),
    invalid("tensor_item_taken_after_the_block", program("""
        with tf.GradientTape() as tape:
            pred = model(x)
        grads = tape.gradient(pred[0], model.trainable_variables)
        """), "(c) indexing a tensor is an op the tape did not record", safety="safe"),
    invalid("minimize_over_a_lambda_returning_a_precomputed_cost", """
        import tensorflow as tf

        w = tf.Variable([1.0, 2.0])
        cost = tf.reduce_sum(tf.square(w))
        loss = lambda: cost
        tf.keras.optimizers.SGD(0.1).minimize(loss, var_list=[w])
        """, "(d) the lambda becomes a def that computes the cost", safety="safe"),
    invalid("minimize_inline_lambda_in_a_method", """
        import tensorflow as tf


        class AutoEncoder:
            def __init__(self):
                self.net = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(3,))])
                self.optimizer = tf.keras.optimizers.Adam(0.01)

            def train(self, x):
                loss = tf.reduce_mean(tf.square(self.net(x) - x))
                self.optimizer.minimize(lambda: loss, self.net.trainable_variables)
                return loss
        """, "(d) a def above the call; `loss` is returned later, so the statement is copied", safety="safe"),
    invalid("minimize_def_reading_a_precomputed_output", """
        import tensorflow as tf

        layer = tf.keras.layers.Dense(2)
        layer.build((None, 2))
        output = layer(tf.ones([1, 2]))


        def loss_fn():
            \"\"\"Squared distance to one.\"\"\"
            return tf.reduce_mean(tf.square(1.0 - output))


        tf.keras.optimizers.Adam(0.1).minimize(loss_fn, var_list=layer.trainable_variables)
        """, "(d) moved into the def, after its docstring", safety="safe"),
    invalid("minimize_input_rebound_before_the_call", """
        import tensorflow as tf

        w = tf.Variable(1.0)
        scale = 2.0
        cost = w * scale
        scale = 3.0
        tf.keras.optimizers.SGD(0.1).minimize(lambda: cost, var_list=[w])
        """, "(d) `scale` changes before minimize runs the loss: report only", fixable=False),
    invalid("tensor_made_from_a_weight_in_build", """
        import tensorflow as tf


        class Scaled(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight(name="w", shape=(input_shape[-1], 1))
                self.w_scaled = self.w * 2.0

            def call(self, inputs):
                return tf.matmul(inputs, self.w_scaled)
        """, "a tensor computed once from a weight in build(), read by call(): report only", fixable=False),
    valid("shape_of_a_weight_and_frozen_weights_in_build", """
        import tensorflow as tf


        class Masked(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 2))
                self.frozen = self.add_weight(name="frozen", shape=(2,), trainable=False)
                self.mask = tf.ones_like(self.kernel)
                self.rows = self.kernel.shape[0]
                self.offset = self.frozen * 2.0
                self.alias = self.kernel

            def call(self, inputs):
                return tf.matmul(inputs, self.alias * self.mask) * self.rows + self.offset
        """, "read for its shape only, a non-trainable weight, the variable itself"),
    valid("value_recomputed_inside", program("""
        pred = model(x)
        with tf.GradientTape() as tape:
            pred = model(x)
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "the block computes its own forward pass"),
    valid("old_predictions_kept_constant_on_purpose", program("""
        old = model(x)
        with tf.GradientTape() as tape:
            new = model(x)
            loss = tf.reduce_mean(tf.square(new - tf.stop_gradient(old)))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "the block also reads the sources: the outside value is a deliberate constant"),
    valid("lambda_computes_the_loss", """
        import tensorflow as tf

        w = tf.Variable([1.0, 2.0])
        target = tf.constant([0.0, 1.0])
        tf.keras.optimizers.SGD(0.1).minimize(lambda: tf.reduce_sum(tf.square(w - target)), var_list=[w])
        """, "the loss reads the variable inside the lambda"),
    valid("data_prepared_before_the_tape", program("""
        scaled = x / tf.reduce_max(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(scaled) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "the statement before reads no source"),
    valid("gradient_inside_a_persistent_block", program("""
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            doubled = loss * 2.0
            grads = tape.gradient(doubled, model.trainable_variables)
        """), "the gradient is taken inside the block, on what it recorded"),
    valid("display_of_names_and_list_item", """
        import tensorflow as tf

        i = tf.constant(1.0)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(i)
            a = i * 2.0
            b = i * 3.0
            out = tf.while_loop(lambda k: k < 5.0, lambda k: [k + 1.0], [i])
        print(tape.gradient([a, b], i), tape.gradient(out[0], i))
        """, "a display of recorded names and an item of a Python list run no op"),
    valid("the_block_runs_the_model_through_a_helper", program("""
        from losses import loss_of

        pred = model(x)
        with tf.GradientTape() as tape:
            loss = loss_of(model, x) + 0.1 * tf.reduce_mean(tf.square(pred))
        grads = tape.gradient(loss, model.trainable_variables)
        """), "the block hands the model to a function that may call it: it may read the sources itself"),
    valid("unknown_sources", program("""
        pred = model(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, get_variables())
        """), "sources the model cannot resolve: unknown is not evidence"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


def test_a_jacobian_alone_is_checked_like_a_gradient():
    """No ``.gradient(`` in the file: the precheck's ``.jacobian(`` gate lets it through."""
    result = run(program("""
        pred = model(x)
        with tf.GradientTape() as tape:
            loss = tf.square(pred - y)
        jac = tape.jacobian(loss, model.trainable_variables)
        """), RECIPE)
    assert "with tf.GradientTape() as tape:\n    pred = model(x)\n" in result.output
    assert result.diagnostics[0].applied


def test_a_call_on_a_weight_made_by_add_variable_in_build_is_reported():
    """A call of the weight (not ``f(self.w)`` of a bare name), no gradient in
    the file: the precheck's class rule alone lets it through."""
    result = run("""
        import tensorflow as tf


        class Projected(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.v = self.add_variable("v", shape=(input_shape[-1], 1))
                self.t = tf.transpose(self.v)

            def call(self, inputs):
                return inputs * self.t
        """, RECIPE)
    [finding] = result.diagnostics
    assert "`self.t` is computed from the weights `self.v` once" in finding.message


def test_a_weight_read_by_a_bare_shape_call_in_build_is_no_finding():
    result = run("""
        import tensorflow as tf
        from tensorflow import ones_like


        class Masked(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], 2))
                self.mask = ones_like(self.kernel) * 2.0

            def call(self, inputs):
                return tf.matmul(inputs, self.kernel * self.mask)
        """, RECIPE)
    assert not result.diagnostics


def test_a_statement_moved_into_a_def_keeps_its_continuation_lines_indented():
    result = run("""
        import tensorflow as tf

        layer = tf.keras.layers.Dense(2)
        output = layer(
            tf.ones([1, 2]))


        def loss_fn():
            return tf.reduce_mean(tf.square(1.0 - output))


        tf.keras.optimizers.Adam(0.1).minimize(loss_fn, var_list=layer.trainable_variables)
        """, RECIPE)
    assert "def loss_fn():\n    output = layer(\n        tf.ones([1, 2]))\n    return" in result.output


def test_a_lambda_with_parameters_is_reported_with_the_reason():
    result = run("""
        import tensorflow as tf

        w = tf.Variable(1.0)
        cost = w * 2.0
        tf.keras.optimizers.SGD(0.1).minimize(lambda *a: cost, var_list=[w])
        """, RECIPE)
    [finding] = result.diagnostics
    assert not finding.fixable and finding.message.endswith("(the lambda takes parameters)")


def test_a_tuple_assignment_before_the_tape_moves_in():
    result = run(program("""
        pred, target = model(x), y
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(pred - target))
        grads = tape.gradient(loss, model.trainable_variables)
        """), RECIPE)
    assert "with tf.GradientTape() as tape:\n    pred, target = model(x), y\n    loss" in result.output
