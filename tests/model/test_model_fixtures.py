"""Every question about every node of every fixture program is answered
(programs in users' styles; an answer may be UNKNOWN, never an error), and
in each of these TensorFlow programs the model recognizes tensors."""

from pathlib import Path

import pytest
from fissix import pygram
from fissix.pgen2 import token

from migrate.engine import parse
from recipes._model import Kind, model_of

syms = pygram.python_symbols
FIXTURES = sorted((Path(__file__).resolve().parents[2] / "fixtures").glob("*/*.py"))
_EXPRESSIONS = (token.NAME, syms.power, syms.atom, syms.arith_expr, syms.term)


def ask_everything(tree) -> dict:
    model = model_of(tree)
    kinds = {}
    for node in tree.pre_order():
        if node.type in _EXPRESSIONS:
            kinds[model.kind_of(node).kind] = kinds.get(model.kind_of(node).kind, 0) + 1
            model.iter_kind(node)
        if node.type == token.NAME:
            model.last_assignment(node.value, node)
            model.may_be_read_dynamically(node.value, node)
        if node.parent is not None and node.parent.type in (syms.suite, syms.file_input):
            model.gradient_context(node)
            model.after_tape(node)
            first = next(node.leaves())
            if first.type == token.NAME:
                model.same_value_at(first, node, first)
    return kinds


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_question_about_a_fixture_is_answered(path):
    kinds = ask_everything(parse(path.read_text()))
    assert kinds.get(Kind.TENSOR, 0) + kinds.get(Kind.VARIABLE, 0) > 0  # TF programs, all
