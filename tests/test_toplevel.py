"""migrate/toplevel.py: which top-level statements a pass visiting some of
them needs (the closure migrate/incremental.py restricts a pass to)."""

from __future__ import annotations

import ast
import re
import textwrap

from hypothesis import given, settings, strategies as st

from migrate import toplevel
from migrate.engine import Options, transform
from migrate.registry import all_recipes
from migrate.result import Status

RECIPES = tuple(all_recipes().values())

BUGGY = textwrap.dedent('''\
    import numpy as np
    import tensorflow as tf


    def helper(values):
        return [v * 2 for v in values]


    def far_away(values):
        return sum(values)


    def attributions(model, x):
        grads = np.zeros(x.shape)
        for i in range(3):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = model(x)
            grads[i] = tape.gradient(y, x)
        return helper(grads)
    ''')


BUFFER_LINE = BUGGY.splitlines().index("    grads = np.zeros(x.shape)") + 1


def _left_out(text: str, line: int) -> list:
    """The top-level statements outside the closure of the one holding ``line``."""
    statements = toplevel._statements(ast.parse(text), text, toplevel.lines_of(text))
    kept = toplevel.closure(statements, {toplevel._holder([s.first + 1 for s in statements], line)})
    return [s for index, s in enumerate(statements) if index not in kept]


def _left_out_names(text: str, line: int) -> set:
    return {s.node.name for s in _left_out(text, line) if isinstance(s.node, ast.FunctionDef)}


def test_only_the_pointed_statement_and_what_it_calls_are_kept():
    assert _left_out_names(BUGGY, BUFFER_LINE) \
        == {"far_away"}


def test_a_caller_of_a_kept_function_is_kept():
    text = BUGGY + "\n\ndef far_caller(model, x):\n    with tf.GradientTape() as t:\n        return attributions(model, x)\n"
    assert "far_caller" not in _left_out_names(text, BUFFER_LINE)


def test_what_module_code_mentions_is_kept():
    """`explain(build(), ...)` at module level: the model types `explain`'s
    parameter from that call, so `build` must stay."""
    text = BUGGY + "\n\ndef build():\n    return tf.keras.layers.Dense(3)\n\n\nattributions(build(), 1)\n"
    assert _left_out_names(text, BUFFER_LINE) == {"far_away"}


def test_a_function_reaching_the_whole_module_is_kept():
    text = BUGGY + "\n\ndef dynamic(o):\n    return globals()[o]\n"
    assert _left_out_names(text, BUFFER_LINE) == {"far_away"}


def test_syntax_fissix_rejects_far_from_the_finding_still_skips_the_file():
    text = BUGGY + "\n\ndef positional(a, /):\n    return a\n"
    result = transform(text, "b.py", Options(RECIPES))
    assert result.status == Status.SKIPPED and "positional-only" in result.reason


# ---------------------------------------------------------------- closure rules
# Each rule: what must stay (the model or a recipe reads it) and what may go.

TAIL_LINE = 3  # the place: `filled`'s body


def _outside_closure(text: str, line: int = TAIL_LINE) -> set:
    """Names of the top-level defs and classes left out, and the first line of
    module code left out, when the closure is of the statement on ``line``."""
    lines = text.splitlines()
    return {getattr(s.node, "name", None) or lines[s.node.lineno - 1] for s in _left_out(text, line)}


def _case(rest: str) -> str:
    return "import numpy as np\ndef filled(model, x):\n    buf = np.zeros(3)\n    return use(buf, model)\n\n\n" \
        + textwrap.dedent(rest)


def test_a_method_named_like_what_kept_code_reads_may_go():
    text = _case('''
        def use(buf, model):
            return model.transform(buf)


        class Other:
            def transform(self, buf):
                return buf
        ''')
    assert _outside_closure(text) == {"Other"}


def test_module_code_stays_only_when_it_binds_what_kept_code_reads():
    text = _case('''
        def use(buf, model):
            return LIMIT + buf


        LIMIT = 3
        REGISTRY = {"a": 1}
        print(REGISTRY)
        ''')
    assert _outside_closure(text) == {'REGISTRY = {"a": 1}', "print(REGISTRY)"}


def test_module_code_that_imports_or_may_stop_the_walk_stays():
    text = _case('''
        def use(buf, model):
            return buf


        try:
            import scipy
        except ImportError:
            scipy = None
        if np.__version__ < "1":
            raise ImportError("numpy too old")
        UNUSED = 1
        ''')
    assert _outside_closure(text) == {"UNUSED = 1"}


def _caller_and_wrapper(method: str) -> str:
    """``use``, a caller of it by name, and a class whose ``method`` calls
    ``self.inner.use``."""
    return _case(f'''
        def use(buf, model):
            return buf


        def caller(model):
            return use(1, model)


        class Wrapper:
            def {method}(self, buf, model):
                return self.inner.use(buf, model)
        ''')


def test_a_caller_by_name_stays_and_a_method_of_the_same_name_may_go():
    assert _outside_closure(_caller_and_wrapper("use")) == {"Wrapper"}


def test_a_fresh_name_avoids_the_names_of_every_statement():
    """numpy-accumulator names the loop function it writes `fill_<buffer>`,
    unless the module spells that name anywhere: in a statement the closure
    leaves out too."""
    text = textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf


        class RowEncoder(tf.keras.Model):
            def __init__(self, units=5):
                super(RowEncoder, self).__init__()
                self.units = units
                self.encode = tf.keras.layers.Dense(units, activation="relu")

            def call(self, inputs):
                rows = np.zeros((inputs.shape[0], self.units))
                for i in range(inputs.shape[0]):
                    rows[i] = self.encode(inputs[i:i + 1])
                return rows


        def unrelated():
            fill_rows = 1
            return fill_rows
        ''')
    assert "unrelated" in _outside_closure(text, 12)
    recipe = (all_recipes()["numpy-accumulator"],)
    assert "def fill_rows_2(" in transform(text, "t.py", Options(recipe, unsafe_fixes=True)).output


def test_imports_from_numpy_or_tensorflow_anywhere_stay():
    text = _case('''
        def use(buf, model):
            return buf


        def lazy_numpy():
            import numpy.linalg as la
            return la


        def lazy_os():
            import os
            return os
        ''')
    assert _outside_closure(text) == {"lazy_os"}


def test_a_conventional_alias_stays_unless_the_header_imports_it():
    rest = '''
        def use(buf, model):
            return buf


        def build(layers):
            return layers
        '''
    assert "build" not in _outside_closure(_case(rest))  # `layers` bound here: not presumed elsewhere
    assert "build" in _outside_closure("from tensorflow.keras import layers\n" + _case(rest), TAIL_LINE + 1)


def test_a_class_named_in_kept_code_stays_at_any_depth():
    text = _case('''
        def use(buf, model):
            return model.Head(buf)


        def factory():
            class Head:
                pass
            return Head


        def other():
            class Tail:
                pass
            return Tail
        ''')
    assert _outside_closure(text) == {"other"}


def test_an_attribute_read_by_a_constant_name_stays():
    text = _case('''
        def use(buf, model):
            return model.scale * buf


        def reader(o):
            return getattr(o, "scale")


        def computed(o, name):
            return getattr(o, name)
        ''')
    assert _outside_closure(text) == {"computed"}
    assert toplevel.also_unseen(_left_out(text, TAIL_LINE)).reads_attributes  # attribute paths stay careful


def test_a_later_string_spelling_a_keras_auto_name_stays():
    text = _case('''
        def early():
            return "dense_1"


        def use(buf, model):
            probe = tf.keras.layers.Dense(3)
            return buf


        def lookup(model):
            return model.get_layer("dense_1")


        def unrelated():
            return "conv2d_1"
        ''')
    assert _outside_closure(text) == {"early", "unrelated"}


def test_exports_stay():
    text = _case('''
        def use(buf, model):
            return buf


        def exports():
            __all__ = ["use"]
            return __all__
        ''')
    assert _outside_closure(text) == set()


_PIECES = st.lists(st.sampled_from(["with", "(", " ", "\t", "\f", "_", "a", "1", "\n", "\r", "\r\n", "é"]),
                   max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(_PIECES)
def test_the_fast_line_and_with_scans_find_what_the_plain_patterns_find(text):
    """lines_of splits with str.split when it can, and _PAREN_WITH asks its
    word boundary after the literal (both faster): the same answers as the
    plain patterns."""
    assert toplevel.lines_of(text) == re.findall(r"[^\r\n]*(?:\r\n|\r|\n|$)", text)
    assert [m.span() for m in toplevel._PAREN_WITH.finditer(text)] == \
        [m.span() for m in re.finditer(r"\bwith[ \t\f]*\(", text)]
