"""assign-in-forward: an assign of a differentiable value in the forward
pass whose variable is then read on the way to the target. VALID cases are
legitimate state updates; INVALID ones' findings are JSON snapshots under
tests/snapshots/assign-in-forward/: the unsafe functional update where every
later read is explicit, else a report saying why (a read through the
owner's call, a loop, a second write, a read outside the assign's block)."""

from __future__ import annotations

import pytest

from migrate.engine import Options, transform
from migrate.registry import all_recipes

from recipe_cases import check_case, fixed, invalid, params, run, valid

RECIPE = "assign-in-forward"

CASES = [
    invalid("input_stored_in_a_weight", """
    import tensorflow as tf


    class Energy(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(), initializer="ones")

        def call(self, x):
            self.w.assign(x)
            return -0.5 * self.w ** 2
    """, "the call's output reads the weight the input was copied into", safety="unsafe", fixable=True),
    invalid("assign_add_in_tape", """
    import tensorflow as tf

    v = tf.Variable(1.0)
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        v.assign_add(x)
        loss = v * v
    print(t.gradient(loss, x))
    """, "an inner step with assign_add, then the variable read by the target", safety="unsafe", fixable=True),
    invalid("memory_read_by_a_sublayer", """
    import tensorflow as tf


    class Memory(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.controller = tf.keras.layers.Dense(4)
            self.head = tf.keras.layers.Dense(1)

        def build(self, input_shape):
            self.memory = self.add_weight(name="memory", shape=(1, 4), trainable=False)

        def call(self, inputs):
            write = tf.reduce_mean(self.controller(inputs), axis=0, keepdims=True)
            self.memory.assign(write)  # the state
            return self.head(inputs[:, :4] * self.memory) + tf.reduce_sum(self.memory.shape)
    """, "a sublayer called after the assign cannot read the layer's own weight", safety="unsafe", fixable=True),
    invalid("assign_sub_of_a_difference", """
    import tensorflow as tf

    v = tf.Variable(tf.zeros((3,)))
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        v.assign_sub(x - 1.0)
        loss = tf.reduce_sum(tf.square(v))
    print(tape.gradient(loss, x))
    """, "assign_sub: the new value is v - (value), parenthesised", safety="unsafe", fixable=True),
    invalid("read_in_the_same_branch", """
    import tensorflow as tf


    class Norm(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.mean = self.add_weight(name="m", shape=input_shape[-1:], trainable=False)

        def call(self, x, training=False):
            if training:
                self.mean.assign(value=tf.reduce_mean(x, axis=0))
                return x - self.mean
            return x
    """, "an assign in a branch whose reads are in that branch; the value passed by keyword",
            safety="unsafe", fixable=True),
    invalid("fast_weights_copied_into_a_model", """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    copy = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    x = tf.ones((4, 1))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner_loss = tf.reduce_mean(model(x))
        grads = inner.gradient(inner_loss, model.trainable_variables)
        for fast, w, g in zip(copy.trainable_variables, model.trainable_variables, grads):
            fast.assign(w - 0.1 * g)
        outer_loss = tf.reduce_mean(copy(x))
    print(outer.gradient(outer_loss, model.trainable_variables))
    """, "MAML: the copy's weights assigned, then the copy called", fixable=False),
    invalid("owner_called_after", """
    import tensorflow as tf


    class Scale(tf.keras.Model):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(), initializer="ones")

        def call(self, x):
            return x * self.w

        def step(self, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                self.w.assign(x * 3.0)
                loss = self.w + self(x)
            return tape.gradient(loss, x)
    """, "the model holding the variable is called after the assign: it reads the variable implicitly",
            fixable=False),
    invalid("method_of_self_after", """
    import tensorflow as tf


    class Energy(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(), initializer="ones")

        def scaled(self, x):
            return x * self.w

        def call(self, x):
            self.w.assign(x)
            return self.w + self.scaled(x)
    """, "a method of the layer runs after the assign and may read the weight", fixable=False),
    invalid("module_sublayer_after", """
    import tensorflow as tf


    class Reader(tf.keras.layers.Layer):
        def __init__(self, owner):
            super().__init__()
            self.owner = owner

        def call(self, x):
            return x * self.owner.w


    class Energy(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.reader = Reader(self)

        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(), initializer="ones")

        def call(self, x):
            self.w.assign(x)
            return self.w + self.reader(x)
    """, "a sublayer of this module's class runs after the assign: it was given the owner", fixable=False),
    invalid("assign_in_a_loop", """
    import tensorflow as tf

    v = tf.Variable(0.0)
    x = tf.constant(2.0)
    loss = 0.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        for i in range(3):
            v.assign(x * float(i))
            loss += v
    print(tape.gradient(loss, x))
    """, "the assign is in a loop of the body: the next round reads the old value through the variable",
            fixable=False),
    invalid("written_again", """
    import tensorflow as tf

    v = tf.Variable(1.0)
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        v.assign(x)
        y = v * 2.0
        v.assign(y)
        loss = v + y
    print(tape.gradient(loss, x))
    """, "two writes: the first is a report (written again), the second, read last, gets the fix"),
    invalid("read_after_the_branch", """
    import tensorflow as tf

    v = tf.Variable(1.0)
    x = tf.constant(2.0)
    flag = bool(tf.random.uniform(()) > 0.5)
    with tf.GradientTape() as tape:
        tape.watch(x)
        if flag:
            v.assign(x)
        loss = v * v
    print(tape.gradient(loss, x))
    """, "the read after the if may run without the assign", fixable=False),
    invalid("passed_to_a_helper", """
    import tensorflow as tf

    v = tf.Variable(1.0)
    x = tf.constant(2.0)


    def energy(var):
        return var * var


    with tf.GradientTape() as tape:
        tape.watch(x)
        v.assign(x)
        loss = energy(v)
    print(tape.gradient(loss, x))
    """, "the variable handed to a module function, which may need the variable itself", fixable=False),
    valid("moving_average", """
    import tensorflow as tf


    class Norm(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.moving_mean = self.add_weight(name="m", shape=input_shape[-1:], trainable=False)

        def call(self, x, training=False):
            if training:
                mean = tf.reduce_mean(x, axis=0)
                self.moving_mean.assign(0.9 * self.moving_mean + 0.1 * mean)
                return x - mean
            return x - self.moving_mean
    """, "BatchNorm-like: the moving average is read only where no assign reaches"),
    valid("counter", """
    import tensorflow as tf


    class Counting(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.calls = self.add_weight(name="calls", shape=(), trainable=False)

        def call(self, x):
            self.calls.assign_add(1.0)
            return x * self.calls
    """, "the assigned value is not differentiable"),
    valid("optimizer_step_after_gradient", """
    import tensorflow as tf

    w = tf.Variable(1.0)
    for step in range(3):
        with tf.GradientTape() as tape:
            loss = (w * 3.0 - 1.0) ** 2
        g = tape.gradient(loss, w)
        w.assign_sub(0.1 * g)
    """, "a manual SGD step after the gradient, outside the tape"),
    valid("state_after_the_target", """
    import tensorflow as tf

    w = tf.Variable(1.0)
    last = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        loss = w * 2.0
        last.assign(loss)
    g = tape.gradient(loss, w)
    """, "the assign comes after the target, which does not read it"),
    valid("read_before_the_assign_only", """
    import tensorflow as tf


    class Energy(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(name="w", shape=(), initializer="ones")

        def call(self, x):
            out = x * self.w
            self.w.assign(x)
            return out
    """, "the weight is read before the assign only: the output does not go through the assign"),
    valid("assigned_variable_not_read_after", """
    import tensorflow as tf

    w = tf.Variable(1.0)
    last = tf.Variable(0.0)
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        last.assign(x * w)
        loss = x * w
    print(tape.gradient(loss, [x, w]))
    """, "the assigned variable is read by nothing after the assign"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


@pytest.mark.parametrize("case", [c for c in CASES if not c.valid], ids=lambda c: c.name)
def test_the_functional_update_is_a_fixpoint_that_keeps_the_assign(case):
    """Fixed output reaches a fixpoint (``run`` checks), and every assign
    of the input is still there: the state stays updated."""
    output = fixed(case.source, RECIPE)
    assert output.count(".assign") == case.source.count(".assign")
    compile(output, "case.py", "exec")


def test_a_recipe_deciding_after_the_fix_sees_the_rewritten_body():
    """Every recipe, fixes applied (as `check` runs them): unconnected-source
    decides on `t.gradient(loss, x)` after the rewrite of the tape's body in
    the same pass, and must see `x` reach `loss` through the new name, not a
    model of the input with the rewritten reads unknown."""
    case = next(c for c in CASES if c.name == "assign_add_in_tape")
    result = transform(case.source, "case.py", Options(tuple(all_recipes().values()), unsafe_fixes=True,
                                                       isolated=True))
    assert [d.recipe for d in result.diagnostics] == [RECIPE], result.diagnostics


_JACOBIAN = """
    import tensorflow as tf

    v = tf.Variable(1.0)
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        v.assign_add(x)
        loss = v * v
        print(float(v))
    print(t.jacobian(loss, x))
    """


def test_a_jacobian_target_and_a_builtin_reading_the_value_get_the_functional_update():
    """No ``.gradient(`` in the file; ``float(v)`` takes the value, so it reads
    the new tensor as well."""
    out = fixed(_JACOBIAN, RECIPE)
    assert "    v_value = v + x\n    v.assign(v_value)\n    loss = v_value * v_value\n" in out
    assert "    print(float(v_value))\n" in out


def test_an_assign_with_more_than_its_value_and_options_is_not_fixed_and_says_why():
    [finding] = run(_JACOBIAN.replace("v.assign_add(x)", "v.assign_add(x, True)"), RECIPE).diagnostics
    assert not finding.fixable
    assert finding.message.endswith("Not fixed: the assign's arguments are not the value and its options")
