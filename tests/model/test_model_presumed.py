"""A pasted snippet's names bound nowhere (issue 26, item 7): `tape` and
`model` are presumed from their uses only (recipes/_model/presumed.py)."""

from recipes._model import Kind


def test_a_tape_and_a_model_read_but_never_bound(snippet):
    s = snippet("""
        loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    assert s.kind("model").kind is Kind.MODEL
    assert s.kind("tape").what == "tape"
    assert s.kind("loss_fn").kind is Kind.UNKNOWN  # called, nothing more: unknown is not evidence


def test_a_model_called_with_training_or_asked_to_predict(snippet):
    s = snippet("""
        fake = generator(noise, training=True)
        probs = policy.predict(states)
    """)
    assert s.kind("generator").kind is Kind.MODEL
    assert s.kind("policy").kind is Kind.MODEL
    assert s.kind("noise").kind is Kind.UNKNOWN


def test_a_name_used_both_ways_or_bound_somewhere_is_not_presumed(snippet):
    s = snippet("""
        both.watch(x)
        both.fit(x, y)

        def step():
            return tape.gradient(y, x)

        tape = make_tape()
    """)
    assert s.kind("both").kind is Kind.UNKNOWN
    assert s.model.presumed("tape") is None  # bound at module level: its binding decides


def test_a_star_import_may_bind_anything(snippet):
    s = snippet("""
        from helpers import *
        grads = tape.gradient(loss, model.trainable_variables)
    """)
    assert s.kind("model").kind is Kind.UNKNOWN
    assert s.model.presumed("tape") is None
