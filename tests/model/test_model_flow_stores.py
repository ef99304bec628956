"""Stores the data flow must carry to the kinds (a random sample of
``flow.py``'s mutants found them unasserted, docs/mutation.md): an
annotation on an assignment, the value of an attribute store, the later
``for`` clauses of a comprehension."""

from recipes._model import Kind

HEADER = """
import numpy as np
import tensorflow as tf
t = tf.ones(3)
a = np.zeros(3)
"""


def test_an_annotated_assignment_has_the_annotation_s_kind(snippet):
    s = snippet(HEADER, "x: np.ndarray = unknown()\ny = x\n")
    assert s.kind("x").kind == Kind.NDARRAY


def test_an_attribute_store_carries_its_value(snippet):
    s = snippet(HEADER, """
        class Holder:
            def __init__(self):
                self.buf = np.zeros(3)

            def read(self):
                return self.buf
        """)
    assert s.kind("self.buf").kind == Kind.NDARRAY


def test_a_nested_comprehension_binds_its_later_clauses(snippet):
    s = snippet(HEADER, "rows = [[t]]\ny = [e for row in rows for e in row]\n")
    assert s.kind("[e for row in rows for e in row]").element.kind == Kind.TENSOR
