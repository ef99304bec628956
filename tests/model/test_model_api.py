"""How recipes and the engine get, share and drop the model."""

from fissix.pytree import Leaf
from fissix.pgen2 import token

from migrate.engine import parse
from recipes._model import Kind, forget, model_of


def test_one_model_per_tree_whatever_node_asks():
    tree = parse("import tensorflow as tf\nx = tf.ones(3)\n")
    leaf = next(tree.leaves())
    assert model_of(tree) is model_of(leaf) is model_of(tree.children[1])
    assert model_of(parse("y = 1\n")) is not model_of(tree)


def test_forget_makes_the_next_question_see_the_changed_tree():
    tree = parse("import numpy as np\nx = np.ones(3)\ny = x\n")
    use = tree.children[2].children[0].children[2]
    assert model_of(tree).kind_of(use).kind == Kind.NDARRAY
    # a modifier rewrites ``np.ones(3)`` into ``tf.ones(3)`` and adds the import
    np_leaf = tree.children[1].children[0].children[2].children[0]
    np_leaf.replace(Leaf(token.NAME, "tf"))
    tree.children[0].children[0].children[1].children[0].replace(Leaf(token.NAME, "tensorflow", prefix=" "))
    tree.children[0].children[0].children[1].children[2].replace(Leaf(token.NAME, "tf", prefix=" "))
    stale = model_of(tree)
    forget(use)
    fresh = model_of(tree)
    assert fresh is not stale
    assert fresh.kind_of(use).kind == Kind.TENSOR


def test_a_node_added_after_the_build_is_unknown_not_an_error():
    tree = parse("import numpy as np\nx = np.ones(3)\n")
    model = model_of(tree)
    added = parse("z = np.zeros(2)\n").children[0]
    added.remove()
    tree.insert_child(2, added)
    expr = added.children[0].children[2]
    assert model.kind_of(expr).kind in (Kind.NDARRAY, Kind.UNKNOWN)
    assert model.gradient_context(expr) is None


def test_very_deep_nesting_and_long_rebinding_chains_promise_nothing_and_do_not_crash():
    deep = parse("import numpy as np\nx = " + "(" * 1200 + "np.zeros(3)" + ")" * 1200 + "\n")
    model = model_of(deep)
    value = deep.children[1].children[0].children[2]
    assert model.kind_of(value).kind == Kind.UNKNOWN
    assert model.gradient_context(value) is None
    chain = parse("import tensorflow as tf\nx = tf.zeros(1)\n"
                  + "".join(f"x = x + {i}\n" for i in range(400)) + "y = x\n")
    model = model_of(chain)
    early = chain.children[3].children[0].children[2]   # x + 1, near the start
    last = chain.children[-2].children[0].children[2]   # the x in ``y = x``
    assert model.kind_of(early).kind == Kind.TENSOR
    assert model.kind_of(last).kind in (Kind.TENSOR, Kind.UNKNOWN)


def test_dropping_the_trees_per_tree_facts_drops_the_model():
    tree = parse("x = 1\n")
    model = model_of(tree)
    tree.__dict__.pop("_tf_migrate_facts")   # what the engine's per-tree cache forget does
    assert model_of(tree) is not model
