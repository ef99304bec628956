"""Which calls of a module function or method type its parameters
(``likely_kind_of``, ``call_sites``): a method's ``self`` shifts positions,
a ``staticmethod``'s does not, a plain function's never. A random sample of
``_model/__init__.py``'s mutants (docs/mutation.md) found the shift and the
static test unasserted."""

import pytest

from recipes._model import Kind

HEADER = """
import numpy as np
import tensorflow as tf
"""


def _likely(s, text):
    return s.model.likely_kind_of(s.node(text, 0))


def test_a_function_s_parameter_is_typed_from_its_call_sites(snippet):
    s = snippet(HEADER, """
        def double(x, y):
            return x * 2

        double(np.zeros(3), tf.ones(3))
        """)
    assert _likely(s, "x").kind == Kind.NDARRAY and _likely(s, "y").kind == Kind.TENSOR


@pytest.mark.parametrize("decorator, params", [("@staticmethod\n    ", "x, y"), ("", "self, x, y"),
                                               ("@tf.function\n    ", "self, x, y")])
def test_a_static_method_s_arguments_are_not_shifted_by_self(snippet, decorator, params):
    """``self.scale(a, t)``: y is t, for a static ``scale(x, y)`` as for a
    method ``scale(self, x, y)``, decorated or not."""
    s = snippet(HEADER, f"""
class Scaler:
    {decorator}def scale({params}):
        return y

    def run(self):
        return self.scale(np.zeros(3), tf.ones(3))
""")
    assert _likely(s, "y").kind == Kind.TENSOR
    assert _likely(s, "x").kind == Kind.NDARRAY


def test_a_call_site_list_is_none_when_the_function_is_passed_around(snippet):
    s = snippet(HEADER, """
        def double(x):
            return x * 2

        double(np.zeros(3))
        handlers = [double]
        """)
    function = s.node("def double(x):\n    return x * 2", 0)
    assert s.model.call_sites(function) is None
    assert _likely(s, "x").kind == Kind.UNKNOWN


@pytest.mark.parametrize("reader", ["exec('y = 1')", "eval('buffer')"])
def test_exec_or_eval_in_a_function_may_read_a_module_name(snippet, reader):
    s = snippet(HEADER, f"def f():\n    {reader}\nbuffer = np.zeros(3)\nother = 1\n")
    assert s.model.may_be_read_dynamically("buffer", s.node("buffer", 0))


def test_a_module_name_is_not_read_dynamically_without_a_reader(snippet):
    s = snippet(HEADER, "def f():\n    print('y')\nbuffer = np.zeros(3)\n")
    assert not s.model.may_be_read_dynamically("buffer", s.node("buffer", 0))
