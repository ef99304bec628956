"""The prefilter (text tokens, then the recipe's precheck on the stdlib ast)
never hides a true finding: on every fixture it selects the file for its
recipe, the engine's answer with the prefilter equals its answer without
one, also on variants of the fixtures with a statement dropped."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
from hypothesis import given, strategies as st

from migrate.engine import Options, transform, wants
from migrate.prefilter import matcher, pieces
from migrate.registry import all_recipes

from fixture_cases import all_cases, top_level_chunks

CASES = all_cases()
RECIPES = all_recipes()


def _answer(source: str, path: str, recipe) -> tuple:
    result = transform(source, path, Options((recipe,), unsafe_fixes=True))
    return (result.status, result.output, result.reason,
            [(d.line, d.column, d.message, d.applied) for d in result.diagnostics])


@pytest.mark.parametrize("case", [c for c in CASES if c.after], ids=lambda c: c.id)
def test_prefilter_selects_every_positive_fixture(case):
    assert wants(RECIPES[case.recipe], case.before.read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_prefilter_changes_no_answer(case):
    recipe = RECIPES[case.recipe]
    unfiltered = dataclasses.replace(recipe, tokens=(), precheck=None)
    for path in filter(None, (case.before, case.after)):
        source = path.read_text()
        assert _answer(source, str(path), recipe) == _answer(source, str(path), unfiltered)


GAPS = st.lists(st.sampled_from([" ", "\t", "\n", "\\\n", "  # note\n", "\n\n    "]),
                min_size=0, max_size=3).map("".join)


@pytest.mark.parametrize("token", sorted({t for r in RECIPES.values() for t in r.tokens}
                                         | {"tape.watch(", "np.zeros", "import numpy"}))
@given(gaps=st.lists(GAPS, min_size=8, max_size=8), before=st.text(max_size=20),
       after=st.text(max_size=20))
def test_token_found_whatever_separates_its_pieces(token, gaps, before, after):
    """`tape . watch (x)` and `np.\\` + newline + `zeros` are the same tokens
    to Python, so they must be to the prefilter."""
    parts = pieces(token)
    text = parts[0]
    for part, gap in zip(parts[1:], gaps):
        word_pair = (text[-1].isalnum() or text[-1] == "_") and (part[0].isalnum() or part[0] == "_")
        text += (gap or " ") if word_pair else gap
        text += part
    assert matcher((token,))(before + " " + text + " " + after)


def test_prefilter_rejects_text_without_tokens():
    match = matcher(("tape.watch(", "np.zeros"))
    assert not match("tape.watcher(x)\nnp.ones(3)\n# np zeros\n")
    assert match("tape.watch(x)")
    assert matcher(())("anything at all")


def test_no_catastrophic_backtracking_on_hostile_text():
    match = matcher(("np.zeros", "a.b.c.d"))
    assert not match("np " + "# x " * 50_000 + "\n" + "a . b . c . " * 10_000)



def _without_one_statement(case):
    chunks = top_level_chunks(case.before)
    for i in range(len(chunks)):
        yield "".join(chunks[:i] + chunks[i + 1:])


@pytest.mark.parametrize("case", [c for c in CASES if c.after], ids=lambda c: c.id)
def test_prefilter_changes_no_answer_on_fixture_variants(case):
    """Each positive fixture with one top-level statement dropped: a buffer
    bound elsewhere, a model never built, a conversion gone..."""
    recipe = RECIPES[case.recipe]
    unfiltered = dataclasses.replace(recipe, tokens=(), precheck=None)
    for source in _without_one_statement(case):
        assert _answer(source, "variant.py", recipe) == _answer(source, "variant.py", unfiltered)


# -- the prechecks' import gates: the text and the ast see at least every
# import the recipes see on the fissix tree, however it is spelled

MODULES = ("numpy", "tensorflow", "tensorflow.keras", "keras", "tf_keras", "keras.layers",
           "tensorflow.keras.models", "tensorflow.compat.v2", "numpy.random", "os")
DOT_GAPS = st.sampled_from(["", " ", "\t", "\f", " \\\n  "])


@st.composite
def import_statements(draw) -> str:
    module = draw(st.sampled_from(MODULES))
    gaps = draw(st.lists(DOT_GAPS, min_size=3, max_size=3))
    spelled = "".join(part + (f"{gaps[i]}.{gaps[i]}" if i < module.count(".") else "")
                      for i, part in enumerate(module.split(".")))
    alias = draw(st.sampled_from(["", " as m", " \\\n as m"]))
    if draw(st.booleans()):
        before = draw(st.sampled_from(["", "os, ", "os as o, "]))
        statement = f"import {before}{spelled}{alias}"
    else:
        names = draw(st.sampled_from(["zeros", "keras", "Dense as D", "(\n    layers,\n    Model,\n)", "*"]))
        statement = f"from {spelled} import {names}"
    context = draw(st.sampled_from(["{}", "if True: {}", "x = 1; {}", "def f():\n    {}",
                                    "try:\n    {}\nexcept ImportError:\n    pass"]))
    return context.format(statement) + "\n"


@given(st.lists(import_statements(), min_size=1, max_size=3).map("".join))
def test_import_gates_see_every_import_the_recipes_see(source):
    """The ast walk gives the prechecks the very records the model's fissix
    walk gives it (one table, one builder), and the text gate lets the file
    through for each of their modules."""
    from migrate.engine import parse
    from migrate.recipe import SourceFacts
    from recipes._model import model_of
    from recipes._pyast import import_table, may_import

    model, facts = model_of(parse(source)).imports, SourceFacts(source)
    found = import_table(facts)
    assert sorted(model.records, key=repr) == sorted(found.records, key=repr)  # fields may be None
    for module in MODULES:
        if model.module_aliases(module) or model.imported_names(module):
            assert may_import(facts, [module]), module
        for local in ("m", "o", "os", "zeros", "keras", "D", "layers", "Model", "tensorflow", "numpy"):
            assert {model.module_of(local)} - {None} <= found.qualified(local)


def test_import_gates_tell_a_module_from_its_submodules():
    from migrate.recipe import SourceFacts
    from recipes._pyast import may_import

    def gate(source, module):
        return may_import(SourceFacts(source), [module])

    assert not gate("import tensorflow.compat.v2 as tf\n", "tensorflow")
    # `tf.` read where an import binds `tf` to something else: no presumed alias (tf_keras' files)
    assert not gate("import tensorflow.compat.v2 as tf\nx = tf.zeros(3)\n", "tensorflow")
    assert gate("x = tf.zeros(3)\n", "tensorflow")  # pasted without imports: presumed
    assert not gate("from tf_keras.src.engine import training\n", "tf_keras")
    assert not gate("# see https://www.tensorflow.org\n", "tensorflow")
    assert gate("import tensorflow \\\n  as tf\n", "tensorflow")
    assert gate("import os, tensorflow.keras as k\n", "tensorflow.keras")
    assert gate("x = 1; from numpy import zeros\n", "numpy")


RESPELLINGS = [
    (r"^import (\w+) as (\w+)$", r"import os, \1 \\\n    as \2"),
    (r"^import (\w+) as (\w+)$", r"try:\n    import \1 as \2\nexcept ImportError:\n    raise"),
    (r"^import (\w+) as (\w+)$", r"import os; import \1 as \2"),
]


@pytest.mark.parametrize("respelling", RESPELLINGS, ids=["continued", "in-try", "after-semicolon"])
@pytest.mark.parametrize("case", [c for c in CASES if c.after], ids=lambda c: c.id)
def test_prefilter_changes_no_answer_whatever_the_import_spelling(case, respelling):
    import re

    recipe = RECIPES[case.recipe]
    unfiltered = dataclasses.replace(recipe, tokens=(), precheck=None)
    source = re.sub(respelling[0], respelling[1], case.before.read_text(), flags=re.M)
    assert _answer(source, "respelled.py", recipe) == _answer(source, "respelled.py", unfiltered)
    assert wants(recipe, source)


def test_benchmark_candidate_tail_is_every_recipes_candidate_and_no_finding():
    """The benchmark's parse-bound copy appends this tail to every file: if a
    sharper precheck rejected it, the copy would silently stop being parse-bound."""
    import ast

    from fixture_cases import ROOT

    module = ast.parse((ROOT / "benchmarks" / "bench_check.py").read_text())
    source = next(ast.literal_eval(node.value) for node in module.body if isinstance(node, ast.Assign)
                  and [t.id for t in node.targets] == ["CANDIDATE_TAIL"])
    assert [r.id for r in RECIPES.values() if not wants(r, source)] == []
    result = transform(source, "tail.py", Options(tuple(RECIPES.values()), unsafe_fixes=True))
    assert (result.status.value, result.diagnostics) == ("unchanged", [])


# -- the text gates and sharper prechecks: each spelling the semantic model
# follows still reaches the recipe (with its finding), and each near miss
# (the pattern in a docstring or comment, a base the model knows for no
# Keras class, a context it does not count) stops before the parse


def _case(case_id, recipe, source, wanted, finding):
    return pytest.param(recipe, textwrap.dedent(source), wanted, finding, id=case_id)


_LAYER_CALL = textwrap.dedent("""\
    import numpy as np
    import tensorflow as tf
    {imports}

    class Block({base}):
        def call(self, x):
            h = tf.nn.relu(x)
            return np.mean(h, axis=1)
""")
_UNUSED_SUBCLASS = textwrap.dedent("""\
    {imports}

    class Block({base}):
        pass

    def build():
        block = Block()
        return 1
""")
_BUFFER = textwrap.dedent("""\
    {imports}

    def f(model, x):
        out = {factory}
        for i in range(4):
            out[i] = {value}
        return out
""")
_TAPE = textwrap.dedent("""\
    import numpy as np
    import tensorflow as tf
    from tensorflow import GradientTape as Recorder

    def step(x):
        with {tape} as tape:
            h = tf.nn.relu(x)
            m = np.mean(h, axis=1)
        return tape.gradient(m, x)
""")
GATE_CASES = [
    _case("keras-compat-v2", "unused-model-instance", """\
        import tensorflow.compat.v2 as tf

        def build():
            dense = tf.keras.layers.Dense(3)
            return 1
    """, True, True),
    _case("keras-from-tensorflow", "unused-model-instance", """\
        from tensorflow import keras

        def build():
            dense = keras.layers.Dense(3)
            return 1
    """, True, True),
    _case("keras-module-alias", "unused-model-instance", """\
        import tensorflow.keras as K

        def build():
            dense = K.layers.Dense(3)
            return 1
    """, True, True),
    _case("keras-class-imported-lowercase", "unused-model-instance", """\
        from keras.layers import Dense as dense

        def build():
            layer = dense(3)
            return 1
    """, True, True),
    _case("keras-presumed-layers", "unused-model-instance", """\
        def build():
            dense = layers.Dense(3)
            return 1
    """, True, True),
    _case("keras3-layer-base", "unused-model-instance",
          _UNUSED_SUBCLASS.format(imports="import keras", base="keras.Layer"), True, True),
    _case("keras-engine-base", "unused-model-instance",
          _UNUSED_SUBCLASS.format(imports="from keras.engine import base_layer", base="base_layer.Layer"),
          True, True),
    _case("keras-from-layers-import-layer", "unused-model-instance",
          _UNUSED_SUBCLASS.format(imports="from keras.layers import Layer", base="Layer"), True, True),
    _case("keras-factory-of-a-subclass", "unused-model-instance", """\
        import tensorflow as tf

        class Net(tf.keras.Model):
            pass

        def make():
            return Net()

        def build():
            net = make()
            return 1
    """, True, True),
    _case("keras-src-base", "unused-model-instance",
          _UNUSED_SUBCLASS.format(imports="from tf_keras.src.engine import base_layer",
                                  base="base_layer.Layer"), False, False),
    _case("keras-in-docstring-and-comment-only", "unused-model-instance", '''\
        def build():
            """Like `dense = tf.keras.layers.Dense(3)`."""
            dense = make(3)  # keras.layers.Dense
            return 1
    ''', False, False),
    _case("numpy-presumed-np", "numpy-accumulator",
          _BUFFER.format(imports="", factory="np.zeros((4, 3))", value="tf.reshape(model(x[i]), [3])"),
          True, True),
    _case("numpy-alias", "numpy-accumulator",
          _BUFFER.format(imports="import numpy as onp\nimport tensorflow as tf", factory="onp.zeros((4, 3))",
                         value="tf.reshape(model(x[i]), [3])"), True, True),
    _case("numpy-from-import", "numpy-accumulator",
          _BUFFER.format(imports="from numpy import zeros as z\nimport tensorflow as tf", factory="z((4, 3))",
                         value="tf.reshape(model(x[i]), [3])"), True, True),
    _case("numpy-np-in-docstring-only", "numpy-accumulator", '''\
        import tensorflow as tf

        def f(x):
            """Returns np.zeros((4, 3)) filled: `out[i] = x`."""
            out = tf.zeros((4, 3))
            return out
    ''', False, False),
    _case("numpy-integer-buffer", "numpy-accumulator",
          _BUFFER.format(imports="import numpy as np\nimport tensorflow as tf",
                         factory="np.zeros(4, dtype=np.int32)", value="tf.argmax(model(x[i]))"),
          False, False),
    _case("numpy-number-written", "numpy-accumulator",
          _BUFFER.format(imports="import numpy as np\nimport tensorflow as tf", factory="np.zeros(4)",
                         value="-1.0"), False, False),
    _case("numpy-buffer-rebound", "numpy-accumulator",
          _BUFFER.format(imports="import numpy as np\nimport tensorflow as tf", factory="np.ones(4)\n"
                         "    out = np.delete(out, 0)", value="tf.reduce_sum(model(x[i]))"), False, False),
    _case("numpy-buffer-in-a-nested-function", "numpy-accumulator", """\
        import numpy as np
        import tensorflow as tf

        def outer(model, x):
            def fill():
                out = np.zeros((4, 3))
                for i in range(4):
                    out[i] = tf.reshape(model(x[i]), [3])
                return out
            return fill()
    """, True, True),
    _case("numpy-aliased-tape", "numpy-accumulator", _TAPE.format(tape="Recorder()"), True, True),
    _case("numpy-forward-tape", "numpy-accumulator",
          _TAPE.format(tape="tf.autodiff.ForwardGradientTape()"), True, True),
    _case("numpy-keras-call", "numpy-accumulator",
          _LAYER_CALL.format(imports="", base="tf.keras.layers.Layer"), True, True),
    _case("numpy-tf-function", "numpy-accumulator", """\
        import numpy as np
        import tensorflow as tf

        @tf.function
        def step(x):
            h = tf.nn.relu(x)
            return np.mean(h, axis=1)
    """, True, True),
    _case("numpy-in-an-f-string", "numpy-accumulator", """\
        import numpy as np
        import tensorflow as tf

        @tf.function
        def step(x):
            h = tf.nn.relu(x)
            return f"{np.mean(h, axis=1)}"
    """, True, None),
    _case("numpy-call-of-a-non-keras-layer", "numpy-accumulator",
          _LAYER_CALL.format(imports="from tf_keras.src.engine import base_layer", base="base_layer.Layer"),
          False, False),
    _case("numpy-in-a-property", "numpy-accumulator", """\
        import numpy as np
        import tensorflow as tf

        class Block:
            @property
            def scale(self):
                h = tf.ones(3)
                return np.mean(h)
    """, False, False),
    _case("suffix-crossed-gradient", "suffix-mixup", """\
        def f(tape, score, inputs_1, inputs_2, baseline_1, baseline_2):
            grads_1, grads_2 = tape.gradient(score, [inputs_1, inputs_2])
            x_1 = (inputs_1 - baseline_1) * grads_1
            x_2 = (inputs_2 - baseline_2) * grads_1
            return x_1, x_2
    """, True, True),
    _case("suffix-no-gradient", "suffix-mixup", """\
        def f(inputs_1, inputs_2, baseline_1, baseline_2, avg_grads_1, avg_grads_2):
            x_1 = (inputs_1 - baseline_1) * avg_grads_1
            x_2 = (inputs_2 - baseline_2) * avg_grads_1
            return x_1, x_2
    """, False, False),
    _case("suffix-no-difference", "suffix-mixup", """\
        def f(tape, y, x_1, x_2):
            g_1, g_2 = tape.gradient(y, [x_1, x_2])
            return x_2 * g_1
    """, False, False),
    _case("suffix-in-a-comment-only", "suffix-mixup", """\
        def f(a, b, tape):
            # g_1, g_2 = tape.gradient(y, [x_1, x_2]); x_2 = (x_2 - b_2) * g_1
            return (a - b) * b
    """, False, False),
    _case("typed-convert", "typed-convert", """\
        import tensorflow as tf

        def f():
            return tf.cast(tf.convert_to_tensor([[1, 2], [3, 4]]), tf.float64)
    """, True, True),
    _case("typed-convert-pair", "typed-convert", """\
        import tensorflow.compat.v2 as tf

        def f(values):
            t = tf.convert_to_tensor(values)
            # one step later
            t = tf.cast(t, tf.float16)
            return t
    """, True, True),
    _case("typed-convert-pair-read-between", "typed-convert", """\
        import tensorflow as tf

        def f(values):
            t = tf.convert_to_tensor(values)
            print(t)
            t = tf.cast(t, tf.float16)
            return t
    """, False, False),
    _case("typed-convert-not-tensorflow", "typed-convert", """\
        import tensorflow as tf
        from tf_keras.src import backend

        def f(values):
            return backend.cast(tf.convert_to_tensor(values), "float32")
    """, False, False),
    _case("typed-convert-in-a-docstring-only", "typed-convert", '''\
        import tensorflow as tf

        def f(a):
            """Not `tf.cast(tf.convert_to_tensor(a), tf.float32)`."""
            return tf.cast(a, tf.float32)
    ''', False, False),
]


@pytest.mark.parametrize("recipe_id, source, wanted, finding", GATE_CASES)
def test_text_gates_pass_every_spelling_and_stop_near_misses(recipe_id, source, wanted, finding):
    recipe = RECIPES[recipe_id]
    unfiltered = dataclasses.replace(recipe, tokens=(), precheck=None)
    answer = _answer(source, "gate.py", recipe)
    assert answer == _answer(source, "gate.py", unfiltered)
    assert wants(recipe, source) is wanted
    if finding is not None:
        assert bool(answer[3]) is finding


def test_code_text_blanks_comments_and_strings_but_keeps_f_strings_and_lines():
    from migrate.recipe import SourceFacts
    from recipes._pyast import code_text

    source = ('x = 1  # keras.layers\n"""doc\ntf.keras \\""" still"""\n'
              "y = 'a#b' + \"c\\\"d\" + rb'e' + f\"{np.mean(t)}\"\nz = r\"\\\" \" + keras\n")
    text = code_text(SourceFacts(source))
    assert text.splitlines() == ["x = 1   ", "", "", 'y =   +   +   + f"{np.mean(t)}"', "z =   + keras"]



def _tokenized_code_text(source: str) -> str:
    """What code_text must be, from the tokenizer: each comment and each
    string token but f-strings blanked, its line breaks kept."""
    import io
    import tokenize
    from itertools import accumulate

    starts = [0, *accumulate(len(line) for line in source.splitlines(keepends=True))]
    out, done = [], 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        prefix = token.string[:2].lower()
        if token.type == tokenize.COMMENT or token.type == tokenize.STRING and "f" not in prefix.split("'")[0].split('"')[0]:
            begin = starts[token.start[0] - 1] + token.start[1]
            out += [source[done:begin], "\n" * token.string.count("\n") or " "]
            done = starts[token.end[0] - 1] + token.end[1]
    return "".join(out) + source[done:]


_LITERAL_TEXT = st.text(alphabet="abfr #'\"\\\n{}", max_size=8)


@st.composite
def _literals(draw) -> str:
    """A string literal of any prefix and quoting, holding quotes,
    backslashes, ``#`` and (in triple quotes) line breaks."""
    prefix = draw(st.sampled_from(["", "r", "b", "rb", "Br", "u", "f", "F", "rf", "fR", "U"]))
    quote = draw(st.sampled_from(["'", '"', "'''", '"""']))
    body = draw(_LITERAL_TEXT)
    if len(quote) == 1:
        body = body.replace("\n", "")
    if "f" in prefix.lower():
        body = body.replace("{", "{{").replace("}", "}}")
    body = body.replace("\\", "\\\\").replace(quote[0], "\\" + quote[0])
    if "r" in prefix.lower():  # a raw string keeps its backslashes: no escaped quote may end it
        body = body.replace("\\", "").replace(quote[0], "")
    return prefix + quote + body + quote


_COMMENTS = st.builds(lambda text: "  # " + text + "\n", st.text(alphabet="ab'\"#\\", max_size=6))


# a word may touch the literal after it (``if"a"``, ``or'b'``: a keyword, then a string)
@given(st.lists(st.one_of(_literals().map(lambda literal: literal + " "), _COMMENTS,
                          st.tuples(st.sampled_from(["x", "keras", "if", "or", "in", "+", "[]"]),
                                    st.sampled_from(["", " "])).map("".join)),
                max_size=12))
def test_code_text_blanks_what_the_tokenizer_calls_comments_and_strings(parts):
    from migrate.recipe import SourceFacts
    from recipes._pyast import code_text

    source = "y = (" + "".join(parts) + "\n)\n"
    assert code_text(SourceFacts(source)) == _tokenized_code_text(source)



@pytest.mark.parametrize("case_id, parsed", [("suffix-crossed-gradient", True), ("suffix-no-gradient", False)])
def test_suffix_mixup_text_gate_needs_a_gradient_before_the_ast(case_id, parsed):
    """The stdlib ``ast`` is built only when the code (comments and strings
    blanked) takes a gradient."""
    from migrate.recipe import SourceFacts

    [(recipe_id, source)] = [(c.values[0], c.values[1]) for c in GATE_CASES if c.id == case_id]
    facts = SourceFacts(source)
    RECIPES[recipe_id].precheck(facts)
    assert (facts.parsed() is not None) is parsed



@given(text=st.text(alphabet=" a.np_(\n", max_size=30))
def test_standalone_matches_where_a_lookbehind_first_pattern_does(text):
    """``standalone`` writes the check for what goes before a word after
    it (so the regex engine can search for the word): the same matches."""
    import re

    from recipes._pyast import standalone

    for word, before in (("np", r"[\w.]"), ("a_", r"\w")):
        written_after = re.compile(standalone(word, after_dot=before == r"\w") + r"(?!\w)")
        written_before = re.compile(rf"(?<!{before}){word}(?!\w)")
        assert [m.span() for m in written_after.finditer(text)] == [m.span() for m in written_before.finditer(text)]



@given(text=st.text(alphabet=" a.tf_(\né", max_size=30))
def test_spelled_alone_finds_what_the_standalone_pattern_finds(text):
    import re

    from recipes._pyast import spelled_alone, standalone

    for word in ("tf", "a.tf", "a_"):
        pattern = re.compile(standalone(re.escape(word)) + r"(?!\w)")
        assert spelled_alone(text, word) is (pattern.search(text) is not None)


# -- the prechecks are asked before CPython's verdict, so that the stdlib
# ast is built only for the files a precheck reads it of (migrate/engine.py)

def _precheck_recipe(precheck):
    from toy_recipes import RENAME

    return dataclasses.replace(RENAME, precheck=precheck)


def _crashing_precheck(facts):
    raise RuntimeError("precheck bug")


def test_a_failing_precheck_on_a_file_python_rejects_leaves_it_skipped():
    """The verdict comes first in the answer: a file CPython cannot compile
    is skipped with the parser's reason, whatever a precheck did on it."""
    result = transform("old_api(\n", "bad.py", Options((_precheck_recipe(_crashing_precheck),)))
    assert result.status.value == "skipped" and result.reason.startswith("syntax error at line 1"), result.reason


def test_a_failing_precheck_on_a_compiling_file_is_its_internal_error():
    result = transform("old_api()\n", "ok.py", Options((_precheck_recipe(_crashing_precheck),)))
    assert (result.status.value, result.reason) == ("failed", "internal error: RuntimeError: precheck bug")


@pytest.mark.parametrize("reads_the_ast", [False, True])
def test_the_ast_is_built_only_when_a_precheck_reads_it_and_then_it_is_what_is_compiled(
        monkeypatch, reads_the_ast):
    import ast

    from migrate import engine

    compiled = []
    real_compile = engine._compile
    monkeypatch.setattr(engine, "_compile", lambda source, filename: (compiled.append(type(source)),
                                                                      real_compile(source, filename)))
    parses = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *args, **kwargs: (parses.append(args[0]),
                                                               real_parse(*args, **kwargs))[1])
    text_only = _precheck_recipe(lambda facts: "old_api(" in facts.text)
    reading = _precheck_recipe(lambda facts: [node for node in ast.walk(facts.tree) if isinstance(node, ast.Call)])
    source = "x = 1\nold_api()\n"
    result = transform(source, "f.py", Options((reading if reads_the_ast else text_only,), apply=False))
    assert [d.message for d in result.diagnostics] == ["old_api is deprecated"]
    assert parses == ([source] if reads_the_ast else [])
    assert compiled == [ast.Module if reads_the_ast else str]


def test_a_verdict_from_the_ast_names_the_compilers_error():
    """CPython's compiler, not its parser, rejects this: the ``ast`` a
    precheck built parses, and compiling it gives the text's own reason."""
    import ast

    source = "old_api()\nreturn 1\n"
    reading = _precheck_recipe(lambda facts: [node for node in ast.walk(facts.tree) if isinstance(node, ast.Call)])
    result = transform(source, "r.py", Options((reading,)))
    assert (result.status.value, result.reason) == ("skipped", "syntax error at line 2: 'return' outside function")


def test_the_shared_node_index_holds_ast_walks_nodes_in_its_order():
    """SourceFacts walks the tree itself (faster), and so do prechecks'
    walks (``walk``, ``child_nodes``); every precheck still sees
    ``ast.walk``'s nodes, in its order, on every fixture and corpus file."""
    import ast
    from pathlib import Path

    from migrate.recipe import SourceFacts, child_nodes, walk

    root = Path(__file__).resolve().parent.parent
    sources = sorted((root / "fixtures").rglob("*.py")) + sorted((root / "tests" / "corpus").rglob("*.py"))
    assert len(sources) > 100
    for path in sources:
        facts = SourceFacts(path.read_text(encoding="utf-8"))
        expected = {}
        for node in ast.walk(facts.tree):
            expected.setdefault(type(node), []).append(node)
        assert list(facts._index()) == list(expected), path
        assert [id(n) for n in walk(facts.tree)] == [id(n) for n in ast.walk(facts.tree)], path
        assert all(child_nodes(n) == list(ast.iter_child_nodes(n)) for n in walk(facts.tree)), path
        for kind, nodes in expected.items():
            assert [id(n) for n in facts.nodes(kind)] == [id(n) for n in nodes], (path, kind)
