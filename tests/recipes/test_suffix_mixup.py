"""suffix-mixup, decided from gradient data flow (issue 24): a product of
input B's difference from its baseline and gradients taken along input A's
path, while B's gradients are in scope. Names never decide: every naming
style gives the same answer, and a crossing whose factor is not a gradient
is never a finding. VALID cases give no finding; INVALID ones' findings and
fix are JSON snapshots under tests/snapshots/suffix-mixup/."""

from __future__ import annotations

import pytest

from recipe_cases import check_case, invalid, only, params, run_body, valid

RECIPE = "suffix-mixup"

# one program, renamed: {a}/{b} name the two inputs, {ga}/{gb} their gradients
CROSSED = """
    def explain(model, {a}, {b}):
        base_{a} = tf.zeros_like({a})
        base_{b} = tf.zeros_like({b})
        with tf.GradientTape() as tape:
            tape.watch([{a}, {b}])
            score = model([{a}, {b}])
        {ga}, {gb} = tape.gradient(score, [{a}, {b}])
        attr_{a} = ({a} - base_{a}) * {ga}
        attr_{b} = ({b} - base_{b}) * {ga}
        return attr_{a}, attr_{b}
    """

STYLES = [  # (a, b, ga, gb)
    ("inputs_1", "inputs_2", "grads_1", "grads_2"),
    ("x1", "x2", "g1", "g2"),
    ("x_a", "x_b", "g_a", "g_b"),
    ("x_img", "x_txt", "g_img", "g_txt"),
    ("image", "text", "pixel_saliency", "token_saliency"),
    ("left", "right", "first", "second"),
    ("p", "q", "r", "s"),
]


@pytest.mark.parametrize("a, b, ga, gb", STYLES)
def test_the_crossing_is_found_whatever_the_names(a, b, ga, gb):
    result = run_body(CROSSED.format(a=a, b=b, ga=ga, gb=gb), RECIPE)
    finding = only(result)
    assert finding.safety == "unsafe" and f"`{ga}` is a gradient taken along another input's path" in finding.message
    assert f"attr_{b} = ({b} - base_{b}) * {gb}\n" in result.output
    assert f"attr_{a} = ({a} - base_{a}) * {ga}\n" in result.output


@pytest.mark.parametrize("a, b, ga, gb", STYLES)
def test_the_same_program_without_the_crossing_is_left_alone(a, b, ga, gb):
    body = CROSSED.format(a=a, b=b, ga=ga, gb=gb).replace(f"* {ga}\n        return", f"* {gb}\n        return")
    result = run_body(body, RECIPE)
    assert result.output == result.source and not result.diagnostics


def test_gradients_through_a_path_function_averaged_and_stacked():
    result = run_body("""
        def path_gradients(model, inputs, baselines, which, steps=8):
            grads = []
            for alpha in np.linspace(0.0, 1.0, steps + 1):
                step = baselines[which] + alpha * (inputs[which] - baselines[which])
                feed = list(inputs)
                feed[which] = step
                with tf.GradientTape() as tape:
                    tape.watch(step)
                    out = model(feed)[:, 0]
                grads.append(tape.gradient(out, step))
            grads = tf.stack(grads)
            return tf.reduce_mean((grads[:-1] + grads[1:]) / 2.0, axis=0)


        def explain(model, first, second):
            zero_first = tf.zeros_like(first)
            zero_second = tf.zeros_like(second)
            mean_first = path_gradients(model, [first, second], [zero_first, zero_second], 0)
            mean_second = path_gradients(model, [first, second], [zero_first, zero_second], 1)
            return (first - zero_first) * mean_first, (second - zero_second) * mean_first
        """, RECIPE)
    assert "(second - zero_second) * mean_second\n" in result.output
    assert "(first - zero_first) * mean_first, " in result.output


def test_smoothgrad_accumulators_and_a_named_difference():
    result = run_body("""
        def smooth(model, x_img, x_txt, n=4):
            total_img = tf.zeros_like(x_img)
            total_txt = tf.zeros_like(x_txt)
            for _ in range(n):
                noisy_img = x_img + tf.random.normal(tf.shape(x_img))
                noisy_txt = x_txt + tf.random.normal(tf.shape(x_txt))
                with tf.GradientTape() as tape:
                    tape.watch([noisy_img, noisy_txt])
                    y = model([noisy_img, noisy_txt])
                g_img, g_txt = tape.gradient(y, [noisy_img, noisy_txt])
                total_img += g_img
                total_txt += g_txt
            delta_txt = x_txt - tf.zeros_like(x_txt)
            return delta_txt * (total_img / n), tf.multiply(x_img - 0.0, total_img / n)
        """, RECIPE)
    assert not result.diagnostics  # a factor that is an expression, not a name: nothing to rename


CASES = [
    invalid("unpacked_gradients", CROSSED.format(a="inputs_1", b="inputs_2", ga="grads_1", gb="grads_2"),
            "a gradient with respect to the other input, from one tape.gradient call unpacked",
            safety="unsafe"),
    invalid("tf_multiply_separate_calls", """
        def attributions(tower, x_a, x_b):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch([x_a, x_b])
                score = tower(x_a) - tower(x_b)
            grads_a = tape.gradient(score, x_a)
            grads_b = tape.gradient(score, x_b)
            return tf.multiply(tf.subtract(x_b, 0.0), grads_a)
        """, "tf.multiply and tf.subtract, two gradient calls", safety="unsafe"),
    valid("statistics_not_gradients", """
        def normalise(emb_1, emb_2, tape, y):
            g_1, g_2 = tape.gradient(y, [emb_1, emb_2])
            norm_1 = tf.norm(emb_1)
            return (emb_2 - tf.reduce_mean(emb_2)) * norm_1
        """, "the factor is a statistic of the other input, not a gradient"),
    valid("gating_cross_term", """
        def gate(x_1, x_2, tape, y):
            g_1, g_2 = tape.gradient(y, [x_1, x_2])
            h_2 = (x_2 - x_1) * tf.sigmoid(x_1)
            return h_2, g_1, g_2
        """, "a cross term gated by the other input: no gradient factor"),
    valid("hand_written_backprop", """
        def backprop(a_1, a_2, y, w_1, w_2, tape, loss):
            grads = tape.gradient(loss, [w_1, w_2])
            delta_2 = (a_2 - y) * w_1
            return delta_2, grads
        """, "hand-written backprop multiplies by a weight, not a gradient"),
    valid("unknown_gradient_sources", """
        def combine(x1, x2, avg1, avg2):
            b1 = tf.zeros_like(x1)
            b2 = tf.zeros_like(x2)
            return (x1 - b1) * avg1, (x2 - b2) * avg1
        """, "parameters: nothing proves they are gradients (unknown is not evidence)"),
    valid("no_gradient_of_b_in_scope", """
        def only_a(model, x_a, x_b, tape):
            g_a = tape.gradient(model(x_a), x_a)
            return (x_b - 0.0) * g_a
        """, "no gradient with respect to B exists to use instead"),
    valid("shared_origin", """
        def halves(model, data, tape):
            x_1 = data[:, :4]
            x_2 = data[:, 4:]
            g_1 = tape.gradient(model(data), x_1)
            g_2 = tape.gradient(model(data), x_2)
            return (x_2 - 0.0) * g_1
        """, "CAVEATS: inputs of one origin are not told apart (a known miss, never a wrong fix)"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_cases(case):
    check_case(RECIPE, case)


def test_a_difference_spelled_with_a_subtract_imported_from_tensorflow():
    result = run_body("""
        from tensorflow import subtract


        def attributions(tape, score, x_a, x_b):
            grads_a, grads_b = tape.gradient(score, [x_a, x_b])
            return tf.multiply(subtract(x_b, 0.0), grads_a)
        """, RECIPE)
    assert "tf.multiply(subtract(x_b, 0.0), grads_b)" in result.output


def test_two_gradients_of_the_input_that_nothing_tells_apart_are_named_without_a_fix():
    result = run_body("""
        def attribute(model, x_1, x_2, base_1, base_2):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch([x_1, x_2])
                out = model([x_1, x_2])
            g_1 = tape.gradient(out, x_1)
            g_2 = tape.gradient(out, x_2)
            h_2 = tape.gradient(out, x_2)
            ig_2 = (x_2 - base_2) * g_1
            return ig_2
        """, RECIPE)
    finding = only(result)
    assert not finding.fixable and result.output == result.source
    assert "whose own gradients are in scope (`g_2`, `h_2`): use the gradient" in finding.message
