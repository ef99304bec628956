"""Small source snippets and a way to point at an expression in them.

The failure classes of issue 11 ("Why"), each with cases the model must
prove (VALID for a recipe: no false finding) and cases it must not claim
(INVALID: the finding stays):
- import spellings and unbound conventional aliases: test_model_imports.py
- kinds: tf.shape(x)[0], tf.argmax, model(x), tf.data loop variables,
  tf.Tensor annotations, np.array(...).reshape/.flatten/.astype, list
  comprehensions of tensors: test_model_kinds.py
- data flow: hoisting across a loop that reassigns or mutates; locals(),
  globals(), vars(), eval/exec, getattr with a string: test_model_flow.py,
  test_model_dynamic.py
- gradient context: NumPy writes after the tape closed, sampling code:
  test_model_contexts.py
- model facts: a Dense(1) model has output width 1: test_model_width.py
"""

import textwrap

import pytest
from fissix import pygram

from migrate.engine import parse
from recipes._model import model_of

syms = pygram.python_symbols


class Snippet:
    """A parsed snippet, its model, and nodes found by their source text."""

    def __init__(self, *parts: str):
        """``parts`` (e.g. a shared header and a test's own code), each
        dedented, joined in order: as a notebook's cells are."""
        self.tree = parse("".join(textwrap.dedent(p).lstrip("\n") for p in parts))
        self.model = model_of(self.tree)

    def node(self, text: str, occurrence: int = -1):
        """The ``occurrence``-th innermost node whose code is ``text`` (the
        last one by default: usually the use after the definitions)."""
        found = [n for n in self.tree.pre_order() if str(n).strip() == text
                 and not any(str(c).strip() == text for c in n.children)]
        assert found and -len(found) <= occurrence < len(found), f"{text!r} occurs {len(found)} times"
        return found[occurrence]

    def statement(self, text: str, occurrence: int = 0):
        """The statement (simple_stmt or compound) whose code starts with ``text``."""
        matches = [n for n in self.tree.pre_order() if _is_statement(n)
                   and str(n).strip().startswith(text)]
        assert len(matches) > occurrence, f"no statement starting {text!r}"
        return matches[occurrence]

    def kind(self, text: str, occurrence: int = -1):
        return self.model.kind_of(self.node(text, occurrence))


def _is_statement(node) -> bool:
    parent = node.parent
    return parent is not None and parent.type in (syms.suite, syms.file_input)


@pytest.fixture
def snippet():
    return Snippet
