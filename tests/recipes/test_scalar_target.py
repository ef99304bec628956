"""scalar-target: edge cases beyond the fixtures (moved from the seed-named test
files), then VALID / INVALID cases for the failure classes of issue 11 (a
VALID case must give no finding; an INVALID one's findings and fix are a
JSON snapshot under tests/snapshots/scalar-target/)."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, dedent, invalid, only, params, run_body, valid

RECIPE = "scalar-target"


def test_scalar_target_selects_the_target_index_option():
    body = """
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])


        def f(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
            return tape.gradient(model(x), x)
        """
    result = run_body(body, "scalar-target", target_index=2)
    assert "return tape.gradient(model(x)[:, 2], x)" in result.output
    finding = only(result)
    assert finding.safety == "unsafe" and "sum of all its outputs" in finding.message
    assert run_body(body, "scalar-target", unsafe=False).output == result.source


def test_scalar_target_selects_once_per_gradient_with_two_tapes_of_one_name():
    result = run_body("""
        def f(x):
            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            with tf.GradientTape() as tape:
                tape.watch(x)
                first = model(x)
            g1 = tape.gradient(first, x)
            with tf.GradientTape() as tape:
                tape.watch(x)
                second = model(x * 2)
                g2 = tape.gradient(second, x)
            return g1, g2
        """, "scalar-target")
    assert "first = model(x)[:, 0]\n" in result.output
    assert "second = model(x * 2)[:, 0]\n" in result.output
    assert len(result.diagnostics) == 2


@pytest.mark.parametrize("body", [
    # a training step: the sources are variables, nothing is watched
    "def f(model, x, y):\n    with tf.GradientTape() as tape:\n        p = model(x)\n"
    "        loss = tf.reduce_mean((p - y) ** 2)\n    return tape.gradient(loss, model.trainable_variables)\n",
    # already one target
    "def f(model, x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        p = model(x)[:, 1]\n    return tape.gradient(p, x)\n",
    # a loss function returns a scalar
    "def f(loss_fn, x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        p = loss_fn(x)\n    return tape.gradient(p, x)\n",
    # a TensorFlow reduction is not a model
    "def f(x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        p = tf.reduce_sum(x)\n    return tape.gradient(p, x)\n",
])
def test_scalar_target_leaves_these_alone(body):
    result = run_body(body, "scalar-target")
    assert result.output == result.source and not result.diagnostics


@pytest.mark.parametrize("model, width", [
    # bound in scope to a Keras constructor or loader, under any name
    ("m = tf.keras.Sequential([tf.keras.layers.Dense(2)])", 2),
    ("m = tf.keras.models.load_model(path)", None),
    ("m = tf.keras.Model(inputs, outputs)", None),
    # a class of this file that subclasses Model (through another one)
    ("m = Scorer()", None),
    # an alias of a name spelled like a model
    ("m = base_model", None),
])
def test_scalar_target_knows_a_model_by_its_binding(model, width):
    """A model of known width > 1 gets the fix; one of unknown width (no
    softmax, class index or argmax in sight) a report that asks."""
    result = run_body(f"""
        class Base(tf.keras.Model):
            pass


        class Scorer(Base):
            pass


        def f(x, path, inputs, outputs, base_model):
            {model}
            with tf.GradientTape() as tape:
                tape.watch(x)
                pred = m(x)
            return tape.gradient(pred, x)
        """, "scalar-target")
    finding = only(result)
    if width:
        assert "pred = m(x)[:, 0]\n" in result.output and finding.safety == "unsafe"
    else:
        assert result.output == result.source and not finding.fixable
        assert "output width not known here" in finding.message and "confirm a single output" in finding.message


def test_scalar_target_knows_a_model_attribute_of_self():
    result = run_body("""
        class Explainer:
            def __init__(self):
                self.scorer = tf.keras.Sequential([tf.keras.layers.Dense(2)])

            def saliency(self, x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    pred = self.scorer(x)
                return tape.gradient(pred, x)
        """, "scalar-target")
    assert "pred = self.scorer(x)[:, 0]\n" in result.output


# The former false positives of the corpus sweep (docs/corpus-findings.md),
# each reduced to its shape, and the rules that keep them out.
@pytest.mark.parametrize("body", [
    # keras ops/core_test.py:721: an element-wise function bound in a branch
    "def f(x, layer, fn, use_layer):\n    if use_layer:\n        to_derive = layer\n    else:\n"
    "        to_derive = fn\n    with tf.GradientTape() as tape1:\n        tape1.watch(x)\n"
    "        y = to_derive(x)\n    return tape1.gradient(y, x)\n",
    # keras ops/core_test.py:724: a plain element-wise function
    "def log1pexp_nan(x):\n    return tf.math.log(1 + tf.exp(x))\n\n\n"
    "def f(x):\n    with tf.GradientTape() as tape2:\n        tape2.watch(x)\n"
    "        z = log1pexp_nan(x)\n    return tape2.gradient(z, x)\n",
    # keras quantizers_test.py:515: an element-wise op of another module
    "def f(inputs, quantizers, lo, hi):\n    with tf.GradientTape() as tape:\n        tape.watch(inputs)\n"
    "        result = quantizers.fake_quant_with_min_max_vars(inputs, lo, hi, num_bits=8)\n"
    "    return tape.gradient(result, inputs)\n",
    # tensorflow eager/forwardprop.py:127: output gradients passed positionally
    "def f(model, x, aids):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        outputs = model(x)\n    return tape.gradient(outputs, x, aids)\n",
    # ... and by name
    "def f(model, x, aids):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        outputs = model(x)\n    return tape.gradient(outputs, x, output_gradients=aids)\n",
    # ... or possibly, through **kwargs
    "def f(model, x, **kwargs):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        outputs = model(x)\n    return tape.gradient(outputs, x, **kwargs)\n",
    # tensorflow xent_op_test_base.py:42: a per-example loss vector
    "def f(labels, logits, nn_ops):\n    with tf.GradientTape() as tape:\n        tape.watch(logits)\n"
    "        loss = nn_ops.softmax_cross_entropy_with_logits(labels=labels, logits=logits)\n"
    "    return loss, tape.gradient(loss, logits)\n",
    # tensorflow sparse_xent_op_test_base.py:41: the same, sparse
    "def f(labels, logits, nn_ops):\n    with tf.GradientTape() as tape:\n        tape.watch(logits)\n"
    "        loss = nn_ops.sparse_softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)\n"
    "    return loss, tape.gradient(loss, logits)\n",
    # a target named as a loss, even from a model
    "def f(model, x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        per_example_loss = model(x)\n    return tape.gradient(per_example_loss, x)\n",
    # a name bound to something that is not a model
    "def f(x):\n    scorer = tf.nn.softmax\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
    "        y = scorer(x)\n    return tape.gradient(y, x)\n",
])
def test_scalar_target_leaves_non_model_targets_alone(body):
    result = run_body(body, "scalar-target")
    assert result.output == result.source and not result.diagnostics


# --- failure classes of issue 11 ----------------------------------------------

CASES = [
    invalid("keras_from_tensorflow", """
        import tensorflow as tf
        from tensorflow import keras


        def saliency(x):
            clf = keras.Sequential([keras.layers.Dense(10)])
            with tf.GradientTape() as tape:
                tape.watch(x)
                pred = clf(x)
            return tape.gradient(pred, x)
        """, "import spellings: from tensorflow import keras", safety="unsafe"),
    valid("one_output_unit", """
        import tensorflow as tf


        def saliency(x):
            regressor = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            with tf.GradientTape() as tape:
                tape.watch(x)
                pred = regressor(x)
            return tape.gradient(pred, x)
        """, "model facts: one output unit is already the target"),
    valid("training_step", """
        import tensorflow as tf


        def step(model, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            return tape.gradient(loss, model.trainable_variables)
        """, "a loss is a scalar"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


def test_scalar_target_prefers_a_class_index_in_scope_and_says_what_it_knows():
    result = run_body("""
        def build():
            return tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(3)])


        def explain(model, x, target_class_idx):
            with tf.GradientTape() as tape:
                tape.watch(x)
                probs = model(x)
            return tape.gradient(probs, x)


        explain(build(), np.ones((1, 2)), 2)
        """, "scalar-target")
    assert "probs = model(x)[:, target_class_idx]\n" in result.output
    message = only(result).message
    assert "(3 outputs per example, built at line 7)" in message
    assert "`target_class_idx` is the target index in scope" in message


def test_scalar_target_says_when_it_falls_back_to_the_default_index():
    result = run_body("""
        def explain(x, labels):
            model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(3)])
            with tf.GradientTape() as tape:
                tape.watch(x)
                probs = model(x)
            return tape.gradient(probs, x)
        """, "scalar-target")
    assert "probs = model(x)[:, 0]\n" in result.output
    assert "3 outputs per example" in only(result).message
    assert "no target index in scope, so the default 0" in only(result).message


@pytest.mark.parametrize("evidence, said", [
    ("    cls = tf.argmax(model(x), axis=-1)\n", "an argmax of the output"),
    ("    target_class_idx = 2\n", "`target_class_idx` is the target index in scope"),
])
def test_an_unknown_width_with_classes_in_the_code_gets_the_fix(evidence, said):
    result = run_body("def explain(model, x):\n" + evidence + (
        "    with tf.GradientTape() as tape:\n        tape.watch(x)\n        probs = model(x)\n"
        "    return tape.gradient(probs, x)\n"), "scalar-target")
    finding = only(result)
    assert finding.safety == "unsafe" and said in finding.message


def test_a_softmax_where_the_model_is_built_is_evidence_of_classes():
    result = run_body("""
        class Classifier(tf.keras.Model):
            def __init__(self, n):
                super().__init__()
                self.head = tf.keras.layers.Dense(n, activation="softmax")

            def call(self, x):
                return self.head(x)


        def explain(x, n):
            model = Classifier(n)
            with tf.GradientTape() as tape:
                tape.watch(x)
                probs = model(x)
            return tape.gradient(probs, x)
        """, "scalar-target")
    assert "probs = model(x)[:, 0]\n" in result.output
    assert "a softmax where the model is built" in only(result).message


@pytest.mark.parametrize("model", [
    # a subclass whose call squeezes, reduces or takes a column: per-sample scores
    "class Energy(tf.keras.Model):\n    def __init__(self):\n        super().__init__()\n"
    "        self.d = tf.keras.layers.Dense(1)\n\n    def call(self, x):\n"
    "        return tf.squeeze(self.d(x), axis=-1)\n",
    "class Energy(tf.keras.Model):\n    def call(self, x):\n        return tf.reduce_sum(x * x, axis=-1)\n",
    "class Energy(tf.keras.Model):\n    def call(self, x):\n        h = x * 2.0\n        return h[:, 0]\n",
    # the rank-one value returned through a name bound to it
    "class Energy(tf.keras.Model):\n    def call(self, x):\n        e = tf.reduce_sum(x * x, axis=-1)\n"
    "        return e\n",
    "def Energy():\n    return tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.Dense(1), "
    "tf.keras.layers.Reshape(())])\n",
])
def test_a_rank_one_output_is_never_a_finding(model):
    result = run_body(model + dedent("""


        def grad_energy(x):
            net = Energy()
            with tf.GradientTape() as tape:
                tape.watch(x)
                e = net(x)
            return tape.gradient(e, x)
        """), "scalar-target")
    assert not result.diagnostics


@pytest.mark.parametrize("target, fixed", [
    ("[model(x), model(2 * x)]", "[model(x)[:, 0], model(2 * x)[:, 0]]"),
    ("[model(p) for p in path]", "[model(p)[:, 0] for p in path]"),
])
def test_outputs_collected_in_a_list_are_seen(target, fixed):
    result = run_body(f"""
        def explain(x, path):
            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            with tf.GradientTape() as tape:
                tape.watch(x)
                tape.watch(path)
                outs = {target}
            return tape.gradient(outs, [x, path])
        """, "scalar-target")
    assert f"outs = {fixed}\n" in result.output and only(result).safety == "unsafe"


def test_a_comprehension_of_a_model_attribute_of_self_is_seen():
    """The callee ``self.scorer`` is a model by the class that assigns it a
    subclass of ``Model`` (the spelling rules), inside a comprehension."""
    result = run_body("""
        class Scorer(tf.keras.Model):
            def call(self, x):
                return x


        class Explainer:
            def __init__(self):
                self.scorer = Scorer()

            def explain(self, path):
                with tf.GradientTape() as tape:
                    tape.watch(path)
                    outs = [self.scorer(p) for p in path]
                return tape.gradient(outs, path)
        """, "scalar-target")
    assert "self.scorer(p)" in only(result).message


def test_an_argmax_of_the_same_model_in_another_function_is_evidence_of_classes():
    result = run_body("""
        model = tf.keras.models.load_model("m.h5")


        def predict(batch):
            return tf.argmax(model(batch), axis=-1)


        def explain(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                probs = model(x)
            return tape.gradient(probs, x)
        """, "scalar-target")
    assert "probs = model(x)[:, 0]\n" in result.output
    assert "an argmax of the output at line 10" in only(result).message


@pytest.mark.parametrize("gradient", [
    "tape.gradient(preds, img)[0]",
    "tape.gradient(target=preds, sources=img)",
    "tf.abs(tape.gradient(preds, img))",
])
def test_scalar_target_finds_gradient_calls_in_larger_expressions_and_by_keyword(gradient):
    result = run_body(f"""
        def saliency(img):
            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            with tf.GradientTape() as tape:
                tape.watch(img)
                preds = model(img)
            return {gradient}
        """, "scalar-target")
    assert "preds = model(img)[:, 0]\n" in result.output


@pytest.mark.parametrize("build", [
    # a subclass whose call returns a Dense(1) head
    "class Critic(tf.keras.Model):\n    def __init__(self):\n        super().__init__()\n"
    "        self.head = tf.keras.layers.Dense(1)\n\n    def call(self, x):\n        return self.head(x)\n\n\n"
    "model = Critic()\n",
    # a functional model whose output is a Dense(1) layer's
    "inputs = tf.keras.Input((3,))\nmodel = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))\n",
])
def test_scalar_target_leaves_a_model_of_width_one_alone(build):
    result = run_body(build + """
        def f(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = model(x)
            return tape.gradient(y, x)
        """, "scalar-target")
    assert not result.diagnostics


def test_scalar_target_knows_a_model_like_name_bound_to_a_function_is_no_model():
    result = run_body("""
        def f(x):
            net = tf.nn.relu
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = net(x)
            return tape.gradient(y, x)
        """, "scalar-target")
    assert not result.diagnostics


def test_precheck_names_each_place_once_however_many_tapes_share_a_name():
    """Fifty tapes all called `tape`: the precheck points at each
    two-argument `tape.gradient` call once (it used to list every file's
    calls again for each tape: 50 + 50 * 50 places); a tape in a function
    is no place of its own (the calls its name reaches are)."""
    import ast

    from migrate.recipe import SourceFacts
    from recipes.scalar_target import RECIPE

    block = ("def f{n}(model, x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
             "        y = model(x)\n    return tape.gradient(y, x)\n\n")
    facts = SourceFacts("import tensorflow as tf\n\n" + "".join(block.format(n=n) for n in range(50)))
    places = RECIPE.precheck(facts)
    assert len(places) == len({id(p) for p in places}) == 50
    assert all(isinstance(p, ast.Call) for p in places)


def test_precheck_leaves_out_gradients_of_a_loss_and_keeps_a_module_level_tape():
    """`tape.gradient(loss, x)` is never a finding (_target_value takes no
    name spelling loss): a function whose only call is that is no place. A
    tape outside every function is a place: the functions may read it."""
    import ast

    from migrate.recipe import SourceFacts
    from recipes.scalar_target import RECIPE

    scalar = ("def f(model, x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
              "        loss = tf.reduce_sum(model(x))\n    return tape.gradient(loss, x)\n")
    assert RECIPE.precheck(SourceFacts("import tensorflow as tf\n\n" + scalar)) == []
    keyword = scalar.replace("tape.gradient(loss, x)", "tape.gradient(target=total_loss, sources=x)")
    assert RECIPE.precheck(SourceFacts("import tensorflow as tf\n\n" + keyword)) == []
    module = ("import tensorflow as tf\nx = tf.ones((1, 3))\nwith tf.GradientTape() as tape:\n"
              "    tape.watch(x)\n    y = model(x)\n\n\ndef g():\n    return tape.gradient(y, x)\n")
    places = RECIPE.precheck(SourceFacts(module))
    assert [type(p) for p in places] == [ast.With, ast.Call]
