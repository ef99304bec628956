"""Every import spelling users write resolves to one canonical name."""

import pytest

SPELLINGS = [
    ("import tensorflow as tf", "tf.shape", "tensorflow.shape"),
    ("import tensorflow.compat.v2 as tf", "tf.shape", "tensorflow.shape"),
    ("import tensorflow.compat.v1 as tf", "tf.shape", "tensorflow.shape"),
    ("import tensorflow", "tensorflow.keras.layers.Dense", "keras.layers.Dense"),
    ("import tensorflow as tf", "tf.keras.layers.Dense", "keras.layers.Dense"),
    ("from tensorflow import keras", "keras.layers.Dense", "keras.layers.Dense"),
    ("from tensorflow.keras import layers, Model", "Model", "keras.Model"),
    ("from tensorflow.keras import layers, Model", "layers.Dense", "keras.layers.Dense"),
    ("from tensorflow.keras.layers import Dense", "Dense", "keras.layers.Dense"),
    ("from tensorflow.keras.layers import Dense as D", "D", "keras.layers.Dense"),
    ("import keras", "keras.layers.Dense", "keras.layers.Dense"),
    ("from keras import layers", "layers.Dense", "keras.layers.Dense"),
    ("from keras.layers import Layer", "Layer", "keras.layers.Layer"),
    ("import tf_keras as keras", "keras.Model", "keras.Model"),
    ("import numpy as np", "np.zeros", "numpy.zeros"),
    ("from numpy import zeros, array as arr", "arr", "numpy.array"),
    ("from numpy import zeros, array as arr", "zeros", "numpy.zeros"),
    ("import pandas as pd", "pd.read_csv", "pandas.read_csv"),
    ("from tensorflow import cast, convert_to_tensor", "cast", "tensorflow.cast"),
    ("from tensorflow import cast, convert_to_tensor", "convert_to_tensor", "tensorflow.convert_to_tensor"),
    ("from tensorflow.compat.v1 import convert_to_tensor as ctt", "ctt", "tensorflow.convert_to_tensor"),
    ("from tensorflow.compat import v2 as tf", "tf.cast", "tensorflow.cast"),
    ("import tensorflow.compat.v1 as tf", "tf.keras.Model", "keras.Model"),
    ("from numpy import zeros", "zeros", "numpy.zeros"),
    ("import numpy", "numpy.zeros", "numpy.zeros"),
    ("import tf_keras", "tf_keras.layers.Dense", "keras.layers.Dense"),
    ("from tf_keras import layers", "layers.Dense", "keras.layers.Dense"),
    ("import keras as K", "K.layers.Dense", "keras.layers.Dense"),
    ("import tensorflow.keras as K", "K.Model", "keras.Model"),
    ("import tensorflow.keras", "tensorflow.keras.Model", "keras.Model"),
]


@pytest.mark.parametrize("imports, expr, expected", SPELLINGS)
def test_every_spelling_has_one_canonical_name(snippet, imports, expr, expected):
    s = snippet(f"{imports}\ny = {expr}\n")
    assert s.model.qualified(s.node(expr)) == expected


def test_import_inside_a_function_is_seen_there(snippet):
    s = snippet("""
        def build():
            import tensorflow.compat.v2 as tf
            return tf.zeros(3)
    """)
    assert s.model.callee(s.node("tf.zeros(3)")) == "tensorflow.zeros"


def test_import_in_try_except_with_two_spellings_of_one_module(snippet):
    s = snippet("""
        try:
            import tensorflow.compat.v2 as tf
        except ImportError:
            import tensorflow as tf
        x = tf.ones(2)
    """)
    assert s.model.callee(s.node("tf.ones(2)")) == "tensorflow.ones"


def test_two_different_modules_under_one_name_resolve_to_neither(snippet):
    s = snippet("""
        try:
            import tensorflow as backend
        except ImportError:
            import numpy as backend
        x = backend.ones(2)
    """)
    assert s.model.callee(s.node("backend.ones(2)")) is None


def test_module_level_import_reaches_functions(snippet):
    s = snippet("""
        import numpy as np
        def f():
            return np.mean([1])
    """)
    assert s.model.callee(s.node("np.mean([1])")) == "numpy.mean"


def test_pasted_snippet_without_imports_presumes_conventional_aliases(snippet):
    s = snippet("""
        x = tf.constant([1.0])
        a = np.zeros(3)
        d = layers.Dense(1)
        m = keras.Model()
        f = pd.DataFrame()
    """)
    assert s.model.imports.presumed == {"tf", "np", "layers", "keras", "pd"}
    assert s.model.callee(s.node("tf.constant([1.0])")) == "tensorflow.constant"
    assert s.model.callee(s.node("np.zeros(3)")) == "numpy.zeros"
    assert s.model.callee(s.node("layers.Dense(1)")) == "keras.layers.Dense"
    assert s.model.callee(s.node("pd.DataFrame()")) == "pandas.DataFrame"


def test_a_conventional_name_bound_by_the_module_is_not_presumed(snippet):
    s = snippet("""
        layers = [1, 2]
        np = make_backend()
        y = layers.count(1) + np.zeros(3)
    """)
    assert s.model.imports.presumed == set()
    assert s.model.callee(s.node("layers.count(1)")) is None
    assert s.model.callee(s.node("np.zeros(3)")) is None


def test_a_name_rebound_after_its_import_is_no_longer_the_module(snippet):
    s = snippet("""
        import numpy as np
        np = None
        y = np.zeros(3)
    """)
    assert s.model.callee(s.node("np.zeros(3)")) is None


def test_notebook_cells_joined_in_order_share_imports(snippet):
    cells = ["import tensorflow as tf\n", "from tensorflow.keras import layers\n",
             "x = tf.ones(3)\nd = layers.Dense(4)\n"]
    s = snippet("".join(cells))
    assert s.model.callee(s.node("tf.ones(3)")) == "tensorflow.ones"
    assert s.model.callee(s.node("layers.Dense(4)")) == "keras.layers.Dense"
    assert s.model.imports.presumed == set()


def test_notebook_cells_run_in_order(snippet):
    """An import in a later cell does not reach an earlier one; a later
    import of another module under the same name takes over from there."""
    s = snippet("x = np.zeros(3)\n", "import jax.numpy as np\n", "y = np.zeros(3)\n",
                "import numpy as np\n", "z = np.zeros(3)\n")
    assert [s.model.callee(s.node("np.zeros(3)", i)) for i in range(3)] == \
        [None, "jax.numpy.zeros", "numpy.zeros"]
    assert s.model.imports.module_of("np") is None  # two modules under one name


@pytest.mark.parametrize("imports, expr, expected", SPELLINGS)
def test_the_prechecks_ast_walk_gives_the_same_import_table(snippet, imports, expr, expected):
    """One table, one builder: the records of the ast walk (prechecks) are
    the model's, and its ``qualified`` includes the model's answer."""
    from migrate.recipe import SourceFacts
    from recipes._pyast import import_table

    source = f"{imports}\ny = {expr}\n"
    s, table = snippet(source), import_table(SourceFacts(source))
    assert sorted(table.records) == sorted(s.model.imports.records)
    assert expected in table.qualified(expr)


def test_the_table_answers_modules_as_spelled_for_text_gates(snippet):
    s = snippet("""
        import tensorflow.compat.v2 as tf
        import tensorflow.keras
        from numpy import zeros, array as arr
        from . import sibling
    """)
    imports = s.model.imports
    assert imports.module_aliases("tensorflow.compat.v2") == {"tf"}
    assert imports.module_aliases("tensorflow") == set()
    assert imports.module_aliases("tensorflow.keras") == {"tensorflow"}  # `import a.b` binds `a`
    assert imports.imported_names("numpy") == {"zeros": "zeros", "arr": "array"}
    assert imports.module_of("sibling") is None  # relative: nothing we can name
    assert imports.qualified("tf.keras.layers.Dense") == {"keras.layers.Dense"}


def test_imports_table_answers_aliases_and_uses(snippet):
    s = snippet("""
        import tensorflow.compat.v2 as tf
        import numpy as onp
        from tensorflow import keras
    """)
    imports = s.model.imports
    assert imports.aliases("tensorflow") == {"tf"}
    assert imports.aliases("numpy") == {"onp"}
    assert imports.module_of("keras") == "keras"
    assert imports.uses("numpy") and imports.uses("keras") and not imports.uses("pandas")


def test_an_empty_module_has_a_model(snippet):
    s = snippet("# only a comment\n")
    assert s.model.imports.presumed == set() and s.model.tapes == []


def test_a_module_call_named_like_a_mutator_does_not_hide_the_module(snippet):
    s = snippet("""
        import tensorflow as tf


        def deltas(image):
            baseline = tf.fill(tf.shape(image), 0.5)
            return tf.math.subtract(image, baseline)
    """)
    assert s.model.callee(s.node("tf.math.subtract(image, baseline)")) == "tensorflow.math.subtract"
    assert s.model.callee(s.node("tf.fill(tf.shape(image), 0.5)")) == "tensorflow.fill"


def test_a_presumed_alias_uses_its_module_only(snippet):
    """``np`` read without an import presumes NumPy: the module uses numpy,
    not pandas (mutation testing: the comparison was unasserted)."""
    imports = snippet("y = np.zeros(3)\n").model.imports
    assert imports.presumed == {"np"}
    assert imports.uses("numpy") and not imports.uses("pandas") and not imports.uses("tensorflow")
