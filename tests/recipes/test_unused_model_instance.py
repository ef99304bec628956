"""unused-model-instance: edge cases beyond the fixtures (moved from the seed-named test
files), then VALID / INVALID cases for the failure classes of issue 11 (a
VALID case must give no finding; an INVALID one's findings and fix are a
JSON snapshot under tests/snapshots/unused-model-instance/)."""

from __future__ import annotations

import pytest

from recipe_cases import NEEDS_MODEL, check_case, dedent, fixed, invalid, params, run, valid

RECIPE = "unused-model-instance"


UM = RECIPE


def test_removes_an_unused_subclass_instance_and_its_describing_comment():
    source = """
        import tensorflow as tf


        class Base(tf.keras.Model):
            pass


        class Seq(Base):
            pass


        model = Seq()
        # a second model, never used
        vae = Seq()

        model.compile()
        """
    assert fixed(source, UM) == dedent("""
        import tensorflow as tf


        class Base(tf.keras.Model):
            pass


        class Seq(Base):
            pass


        model = Seq()

        model.compile()
        """)


def test_a_comment_heading_a_group_stays():
    source = """
        from tensorflow import keras

        def build():
            # layers
            probe = keras.layers.Dense(3)
            head = keras.layers.Dense(1)
            return head
        """
    assert fixed(source, UM) == dedent("""
        from tensorflow import keras

        def build():
            # layers
            head = keras.layers.Dense(1)
            return head
        """)


def test_an_emptied_function_gets_pass():
    source = """
        import tensorflow as tf

        def build():
            probe = tf.keras.Sequential()
        """
    assert fixed(source, UM) == dedent("""
        import tensorflow as tf

        def build():
            pass
        """)


def test_arguments_that_call_code_make_the_removal_unsafe():
    source = """
        import tensorflow as tf

        def build():
            probe = tf.keras.layers.Dense(3, kernel_initializer=make())
            return 1
        """
    safe_run = run(source, UM, unsafe=False)
    assert safe_run.output == dedent(source)
    [diagnostic] = safe_run.diagnostics
    assert diagnostic.safety == "unsafe" and not diagnostic.applied
    assert "probe" not in fixed(source, UM, unsafe=True)


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nm = tf.keras.Sequential()\nm.summary()\n",
    "import tensorflow as tf\n_ = tf.keras.Sequential()\n",
    "import tensorflow as tf\n__all__ = ['m']\nm = tf.keras.Sequential()\n",
    "import tensorflow as tf\nclass A:\n    m = tf.keras.layers.Dense(1)\n",
    "import tensorflow as tf\nclass Plain:\n    pass\np = Plain()\n",
    "import tensorflow as tf\nx = tf.keras.Input(shape=(3,))\n",
    "import tensorflow as tf\ndef f():\n    global m\n    m = tf.keras.Sequential()\n",
    "import tensorflow as tf\nopt = tf.keras.optimizers.SGD()\n",
])
def test_used_or_non_keras_instances_stay(source):
    assert fixed(source, UM) == source


# --- failure classes of issue 11 ----------------------------------------------

CASES = [
    invalid("keras_from_tensorflow", """
        from tensorflow import keras


        def build(units):
            spare = keras.layers.Dense(units)
            return keras.Sequential([keras.layers.Dense(units)])
        """, "import spellings: from tensorflow import keras", safety="safe"),
    invalid("layer_from_keras_layers", """
        from keras.layers import Dense, Layer


        class Block(Layer):
            def call(self, x):
                return x


        def build():
            unused = Block()
            return Dense(3)
        """, "import spellings: from keras.layers import Layer", safety="safe"),
    invalid("compat_v2_import", """
        import tensorflow.compat.v2 as tf


        def build(units):
            spare = tf.keras.layers.Dense(units)
            return tf.keras.Sequential([tf.keras.layers.Dense(units)])
        """, "import spellings: tensorflow.compat.v2"),
    invalid("snippet_without_imports", """
        def build(units):
            spare = tf.keras.layers.Dense(units)
            return tf.keras.Sequential([tf.keras.layers.Dense(units)])
        """, "import spellings: a pasted snippet using tf. unbound"),
    valid("read_through_globals", """
        import tensorflow as tf

        encoder = tf.keras.layers.Dense(3)


        def lookup(name):
            return globals()[name]
        """, "data flow: a module-level name read through globals()"),
    valid("read_through_getattr", """
        import sys

        import tensorflow as tf

        encoder = tf.keras.layers.Dense(3)
        layer = getattr(sys.modules[__name__], "encoder")
        """, 'data flow: a name read through getattr(obj, "name")'),
    valid("read_through_locals", """
        import tensorflow as tf


        def build(units):
            encoder = tf.keras.layers.Dense(units)
            return locals()
        """, "data flow: a local read through locals()"),
    valid("registers_itself_in_a_module_list", """
        import tensorflow as tf

        MEMBERS = []


        class Member(tf.keras.Model):
            def __init__(self, units):
                super().__init__()
                self.dense = tf.keras.layers.Dense(units)
                MEMBERS.append(self)


        def ensemble():
            first = Member(4)
            return MEMBERS
        """, "the instance is used through the list it registered with"),
    valid("registers_itself_in_a_parameter", """
        import tensorflow as tf


        class Member(tf.keras.layers.Layer):
            def __init__(self, hub, **kwargs):
                super().__init__(**kwargs)
                hub[self.name] = self


        def build(hub):
            member = Member(hub)
            return hub
        """, "the instance is stored in an object from outside"),
    invalid("prints_when_built", """
        import tensorflow as tf


        class Loud(tf.keras.layers.Layer):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                print("building")
                self.dense = tf.keras.layers.Dense(2)


        def build():
            spare = Loud()
            return tf.keras.Sequential([tf.keras.layers.Dense(1)])
        """, "printing is output the user sees: the removal is unsafe", safety="unsafe"),
    invalid("counts_in_a_class_attribute", """
        import tensorflow as tf


        class Counted(tf.keras.Model):
            count = 0

            def __init__(self):
                super().__init__()
                Counted.count += 1


        spare = Counted()
        """, "a class attribute shared by every instance changes", safety="unsafe"),
    invalid("sequential_given_its_input", """
        import tensorflow as tf


        def build():
            spare = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
            return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        """, "it builds weights when constructed: later initial weights change", safety="unsafe"),
    invalid("validates_its_arguments", """
        import tensorflow as tf


        class Block(tf.keras.layers.Layer):
            def __init__(self, units, **kwargs):
                super().__init__(**kwargs)
                if units <= 0:
                    raise ValueError("units must be positive")
                width = units
                self.layers_ = []
                for _ in range(units):
                    self.layers_.append(tf.keras.layers.Dense(width))


        def build():
            spare = Block(2)
            return Block(3)
        """, "raising and building its own layers touch only the object: safe", safety="safe"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_failure_class(case):
    check_case(RECIPE, case)


@pytest.mark.parametrize("spare, safety, said", [
    # no input shape: nothing is built, a plain removal
    ("tf.keras.Sequential([tf.keras.layers.Dense(3)])", "safe", None),
    # a layer given its input size: the Sequential builds its weights now
    ("tf.keras.Sequential([tf.keras.layers.Dense(3, input_dim=4)])", "unsafe",
     "; building it may matter beyond the object: it builds its weights when constructed (its initializers draw "
     "from the random state the layers built after it use) (line 3)"),
    # auto-named: a later lookup by name would see another layer
    ("tf.keras.layers.Dense(3)", "unsafe",
     "; removing it renames the auto-named `tf.keras.layers.Dense` objects built after it, and these lookups by "
     'name would change: "dense_1" (line 5)'),
    # named: removing it renames nothing
    ('tf.keras.layers.Dense(3, name="spare")', "safe", None),
])
def test_what_removing_an_unused_instance_may_change_is_said(spare, safety, said):
    source = (f"import tensorflow as tf\n\nspare = {spare}\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(2)])\n"
              'print(model.get_layer("dense_1"))\n')
    [finding] = run(source, UM, unsafe=False).diagnostics
    assert finding.safety == safety
    assert finding.message.endswith("builds a Keras object that is never used" + (said or ""))
