"""Gradient data flow (recipes/_model/gradients.py): which values are
gradients, with respect to which inputs, through the forms attribution code
uses; and which value is an input's difference from its baseline."""

import pytest

from recipes._model.gradients import _BUDGET, _NESTING

HEADER = """
import numpy as np
import tensorflow as tf
"""


def _wrt(snippet, code: str, value: str, *inputs: str):
    """Is the flow of ``value`` a gradient whose sources derive from exactly
    the ``inputs`` (names of parameters) among the function's parameters?"""
    s = snippet(HEADER, code)
    flow = s.model.gradient_flow.of(s.node(value))
    params = {name: s.model.gradient_flow.of(s.node(name, 0)).origins for name in ("a", "b")}
    return flow.is_gradient and {n for n, o in params.items() if o & flow.wrt} == set(inputs)


@pytest.mark.parametrize("code, value, inputs", [
    # unpacked from one call with a list of sources
    ("def f(a, b, tape, y):\n    ga, gb = tape.gradient(y, [a, b])\n    return gb\n", "gb", ("b",)),
    # indexed from a list of gradients
    ("def f(a, b, tape, y):\n    g = tape.gradient(y, [a, b])\n    return g[0]\n", "g[0]", ("a",)),
    # averaged, stacked, accumulated in a loop through a path built from the input
    ("def f(a, b, model):\n    grads = []\n    for t in np.linspace(0, 1, 5):\n        p = t * a\n"
     "        with tf.GradientTape() as tape:\n            tape.watch(p)\n            y = model([p, b])\n"
     "        grads.append(tape.gradient(y, p))\n    avg = tf.reduce_mean(tf.stack(grads), axis=0)\n"
     "    return avg\n", "avg", ("a",)),
    # an augmented accumulator
    ("def f(a, b, model):\n    total = tf.zeros_like(b)\n    for _ in range(3):\n        n = b + tf.random.normal((1,))\n"
     "        with tf.GradientTape() as tape:\n            tape.watch(n)\n            y = model(n)\n"
     "        total += tape.gradient(y, n)\n    return total / 3\n", "total / 3", ("b",)),
    # a function of the module, inlined with its arguments (a list and a position)
    ("def g(model, xs, k):\n    with tf.GradientTape() as tape:\n        tape.watch(xs[k])\n"
     "        y = model(xs)\n    return tape.gradient(y, xs[k])\n\n\n"
     "def f(a, b, model):\n    return g(model, [a, b], 1)\n", "g(model, [a, b], 1)", ("b",)),
    # a power of one element: the chain (``g[1]``), then the exponent
    ("def f(a, b, tape, y):\n    g = tape.gradient(y, [a, b])\n    return g[1] ** 2\n", "g[1] ** 2", ("b",)),
    # tf.gradients and jacobian count
    ("def f(a, b, y):\n    return tf.gradients(y, b)\n", "tf.gradients(y, b)", ("b",)),
])
def test_gradients_know_their_sources(snippet, code, value, inputs):
    assert _wrt(snippet, code, value, *inputs)


@pytest.mark.parametrize("code, value", [
    ("def f(a, b, model):\n    return model(a)\n", "model(a)"),  # a model output is no gradient
    ("def f(a, b):\n    s = tf.reduce_mean(a)\n    return s\n", "s"),
    ("def f(a, b, g):\n    return g\n", "g"),  # a parameter: unknown is not a gradient
])
def test_values_that_are_not_gradients(snippet, code, value):
    s = snippet(HEADER, code)
    assert not s.model.gradient_flow.of(s.node(value)).is_gradient


def test_the_difference_from_a_baseline_names_its_input(snippet):
    s = snippet(HEADER, "def f(a, b):\n    base = tf.zeros_like(a)\n    d = a - base\n"
                        "    return d, tf.subtract(b, 0.0), a + b\n")
    flows = s.model.gradient_flow
    a = flows.of(s.node("a", 0)).origins
    assert flows.difference_input(s.node("d")).origins == a
    assert flows.difference_input(s.node("tf.subtract(b, 0.0)")).origins == flows.of(s.node("b", 0)).origins
    assert flows.difference_input(s.node("a + b")) is None


@pytest.mark.parametrize("step, links", [
    ("v{i} + 1.0", _NESTING + 1),  # a chain deeper than the nesting allowed
    (" + ".join(["v{i}"] * 60), _BUDGET // 60 + 1),  # wider than the budget
])
def test_a_question_beyond_the_budget_knows_nothing(snippet, step, links):
    """A partial answer could name a gradient with only some of its sources."""
    chain = "".join(f"    v{i + 1} = {step.format(i=i)}\n" for i in range(links))
    s = snippet(HEADER, f"def f(a, tape, y):\n    v0 = tape.gradient(y, a)\n{chain}    return v{links}\n")
    assert not s.model.gradient_flow.of(s.node(f"v{links}")).is_gradient
    assert s.model.gradient_flow.of(s.node("v1", 1)).is_gradient  # one link is known
