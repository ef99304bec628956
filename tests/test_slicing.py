"""migrate/slicing.py: which top-level statements the fissix run sees, and
that the engine's answer on a slice is the whole text's."""

from __future__ import annotations

import ast
import re
import textwrap

from hypothesis import given, settings, strategies as st

from migrate import slicing
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


def _elided_names(text: str, line: int) -> set:
    tree = ast.parse(text)
    places = [node for node in ast.walk(tree) if getattr(node, "lineno", 0) == line]
    part = slicing.cut(text, tree, places)
    kept = ast.parse(part.text) if part else tree
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} - \
        {n.name for n in kept.body if isinstance(n, ast.FunctionDef)}


def test_only_the_pointed_statement_and_what_it_calls_are_kept():
    assert _elided_names(BUGGY, BUFFER_LINE) \
        == {"far_away"}


def test_a_caller_of_a_kept_function_is_kept():
    text = BUGGY + "\n\ndef far_caller(model, x):\n    with tf.GradientTape() as t:\n        return attributions(model, x)\n"
    assert "far_caller" not in _elided_names(text, BUFFER_LINE)


def test_what_module_code_mentions_is_kept():
    """`explain(build(), ...)` at module level: the model types `explain`'s
    parameter from that call, so `build` must stay."""
    text = BUGGY + "\n\ndef build():\n    return tf.keras.layers.Dense(3)\n\n\nattributions(build(), 1)\n"
    assert _elided_names(text, BUFFER_LINE) == {"far_away"}


def test_a_function_reaching_the_whole_module_is_kept():
    text = BUGGY + "\n\ndef dynamic(o):\n    return globals()[o]\n"
    assert _elided_names(text, BUFFER_LINE) == {"far_away"}


def test_placeholders_keep_every_line_where_it_was():
    tree = ast.parse(BUGGY)
    part = slicing.cut(BUGGY, tree, [tree.body[-1]])
    assert len(part.text.splitlines()) == len(BUGGY.splitlines())
    assert part.restore(part.text) == BUGGY
    assert part.restore(part.text.replace("elided 9\n", "elided 9 edited\n")) is None
    moved = part.text.splitlines(keepends=True)
    moved.insert(3, moved.pop(8))
    assert part.restore("".join(moved)) is None


def test_sliced_fix_equals_the_whole_fix():
    for isolated in (True, False):
        sliced = transform(BUGGY, "b.py", Options(RECIPES, unsafe_fixes=True, isolated=isolated))
        whole = transform(BUGGY, "b.py", Options(RECIPES, unsafe_fixes=True, isolated=isolated), sliced=False)
        assert sliced.diagnostics and sliced.diagnostics == whole.diagnostics
        assert (sliced.status, sliced.output) == (whole.status, whole.output)


def test_syntax_fissix_rejects_in_an_elided_function_still_skips_the_file():
    text = BUGGY + "\n\ndef positional(a, /):\n    return a\n"
    result = transform(text, "b.py", Options(RECIPES))
    assert result.status == Status.SKIPPED and "positional-only" in result.reason


def test_a_slice_is_never_made_of_text_holding_the_mark():
    text = BUGGY + f"\n\n{slicing.MARK} 3\n"
    tree = ast.parse(text)
    assert slicing.cut(text, tree, [tree.body[-1]]) is None


# ---------------------------------------------------------------- closure rules
# Each rule: what must stay (the model or a recipe reads it) and what may go.

TAIL_LINE = 3  # the place: `filled`'s body


def _elided(text: str, line: int = TAIL_LINE) -> set:
    """Names of the elided top-level defs and classes, and the first line of
    elided module code, when the place is on ``line``."""
    tree = ast.parse(text)
    places = [node for node in ast.walk(tree) if getattr(node, "lineno", 0) == line]
    part = slicing.cut(text, tree, places)
    if part is None:
        return set()
    lines = text.splitlines()
    return {getattr(node, "name", None) or lines[node.lineno - 1]
            for node in tree.body if node.lineno - 1 in part.elided}


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
    assert _elided(text) == {"Other"}


def test_module_code_stays_only_when_it_binds_what_kept_code_reads():
    text = _case('''
        def use(buf, model):
            return LIMIT + buf


        LIMIT = 3
        REGISTRY = {"a": 1}
        print(REGISTRY)
        ''')
    assert _elided(text) == {'REGISTRY = {"a": 1}', "print(REGISTRY)"}


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
    assert _elided(text) == {"UNUSED = 1"}


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
    assert _elided(_caller_and_wrapper("use")) == {"Wrapper"}


def test_call_sites_agree_between_the_slice_and_the_whole_file():
    """`Wrapper` is left out; it spells `use` only as an attribute
    (`self.inner.use`), which is not the module function `use`: the sliced
    run and the whole file both see its two calls (`filled`, `caller`)."""
    from migrate.engine import parse
    from recipes._model import model_of
    from recipes._fissix import nodes_of_type, syms

    text = _caller_and_wrapper("run")
    tree = ast.parse(text)
    part = slicing.cut(text, tree, [n for n in ast.walk(tree) if getattr(n, "lineno", 0) == TAIL_LINE])
    assert "Wrapper" in {n.name for n in tree.body if hasattr(n, "name") and n.lineno - 1 in part.elided}

    def sites(text):
        root = parse(text)
        use = next(f for f in nodes_of_type(root, syms.funcdef) if f.children[1].value == "use")
        return model_of(root).call_sites(use)

    assert len(sites(text)) == 2
    with part.running():
        assert len(sites(part.text)) == 2


def test_a_fresh_name_avoids_the_names_of_elided_statements():
    """numpy-accumulator names the loop function it writes `fill_<buffer>`,
    unless the module spells that name anywhere: in a statement the slice
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
    assert "unrelated" in _elided(text, 12)
    recipe = (all_recipes()["numpy-accumulator"],)
    sliced = transform(text, "t.py", Options(recipe, unsafe_fixes=True))
    whole = transform(text, "t.py", Options(recipe, unsafe_fixes=True), sliced=False)
    assert "def fill_rows_2(" in whole.output
    assert (sliced.output, sliced.diagnostics) == (whole.output, whole.diagnostics)


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
    assert _elided(text) == {"lazy_os"}


def test_a_conventional_alias_stays_unless_the_header_imports_it():
    rest = '''
        def use(buf, model):
            return buf


        def build(layers):
            return layers
        '''
    assert "build" not in _elided(_case(rest))  # `layers` bound here: not presumed elsewhere
    assert "build" in _elided("from tensorflow.keras import layers\n" + _case(rest), TAIL_LINE + 1)


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
    assert _elided(text) == {"other"}


def test_an_attribute_read_by_a_constant_name_stays():
    text = _case('''
        def use(buf, model):
            return model.scale * buf


        def reader(o):
            return getattr(o, "scale")


        def computed(o, name):
            return getattr(o, name)
        ''')
    assert _elided(text) == {"computed"}
    tree = ast.parse(text)
    part = slicing.cut(text, tree, [n for n in ast.walk(tree) if getattr(n, "lineno", 0) == TAIL_LINE])
    assert part.unseen.reads_attributes  # questions about attribute paths stay careful


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
    assert _elided(text) == {"early", "unrelated"}


def test_exports_stay():
    text = _case('''
        def use(buf, model):
            return buf


        def exports():
            __all__ = ["use"]
            return __all__
        ''')
    assert _elided(text) == set()


def test_a_place_outside_any_function_parses_the_whole_module():
    """`_twins` of suffix-mixup, `name_leaves` of per-step-tape... scan a
    module-level place's scope, the module: every statement of it."""
    text = "import tensorflow as tf\nx_1 = tf.ones(3)\nb_2 = x_1 + 1\n\n\ndef other():\n    b_1 = 2\n    return b_1\n"
    tree = ast.parse(text)
    assert slicing.cut(text, tree, [tree.body[2]]) is None
    assert slicing.cut(text, tree, [tree.body[3].body[0]]) is not None


_PIECES = st.lists(st.sampled_from(["with", "(", " ", "\t", "\f", "_", "a", "1", "\n", "\r", "\r\n", "é"]),
                   max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(_PIECES)
def test_the_fast_line_and_with_scans_find_what_the_plain_patterns_find(text):
    """lines_of splits with str.split when it can, and _PAREN_WITH asks its
    word boundary after the literal (both faster): the same answers as the
    plain patterns."""
    assert slicing.lines_of(text) == re.findall(r"[^\r\n]*(?:\r\n|\r|\n|$)", text)
    assert [m.span() for m in slicing._PAREN_WITH.finditer(text)] == \
        [m.span() for m in re.finditer(r"\bwith[ \t\f]*\(", text)]
