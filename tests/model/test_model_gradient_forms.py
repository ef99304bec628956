"""Gradient data flow through forms a random sample of ``gradients.py``'s
mutants found unasserted (docs/mutation.md): host-side methods of a
gradient, a position past the end of a list of gradients."""

import pytest

from test_model_gradients import _wrt

GRADS = "def f(a, b, tape, y):\n    g = tape.gradient(y, [a, b])\n"


@pytest.mark.parametrize("use", ["g[1].numpy().astype(np.float64)", "g[1].numpy().reshape(-1)",
                                 "np.abs(g[1].numpy()).sum()", "-g[1]"])
def test_a_gradient_s_host_copies_keep_its_source(snippet, use):
    assert _wrt(snippet, GRADS + f"    return {use}\n", use, "b")


def test_a_position_past_the_end_of_the_gradients_is_the_whole_list_s_flow(snippet):
    """``g[2]`` of two gradients: no element to pick, so whatever the list is
    a gradient of (a and b), not an error."""
    assert _wrt(snippet, GRADS + "    return g[2]\n", "g[2]", "a", "b")
