"""variable-in-call: ``tf.Variable(...)`` or ``add_weight(...)`` made inside
a Keras ``call``, a ``train_step``, or a tape body run every step.

What it reports: a variable created where the forward pass or the training
step runs (the semantic model's gradient contexts: ``keras_call``,
``train_step``, and tape bodies inside a loop), unless its creation is
guarded (``if self.w is None:``, ``if not self.built:``: any enclosing
``if`` makes it a one-time creation) or lifted out with ``tf.init_scope()``.

Why this is a bug: each call makes a new variable with a fresh initial
value. The optimizer was given (or Keras tracks) the variables that
existed before, so the new one never trains, and ``tape.gradient`` over
``layer.trainable_variables`` returns None for variables the forward pass
did not use; under ``tf.function`` creating a variable on every call raises.

Way out: create the variable once, in ``build()`` (``self.kernel =
self.add_weight(...)``, Keras calls it with the input shape before the
first ``call``) or in ``__init__``, and only read it in ``call``; for a tape
loop, create it before the loop.

CAVEATS:
- report only: where the variable belongs (``build`` or ``__init__``) and its
  shape come from the author's intent.
- a creation guarded by any ``if`` is taken to be one-time, whatever the test.
"""

from __future__ import annotations

from migrate.recipe import Recipe, propose
from recipes._fissix import enclosing_function, shown, syms
from recipes._model import model_of
from recipes._pyast import methods_calling

CREATION = "power< any* trailer< '.' ('Variable'|'add_weight'|'add_variable') > trailer< '(' any* ')' > > " \
           "| power< 'Variable' trailer< '(' any* ')' > >"
_PER_STEP = {"keras_call": "`call`", "train_step": "the training step"}
_STEP_METHODS = ("call", "train_step", "test_step")  # the names contexts.py gives keras_call/train_step
_CREATORS = ("Variable", "add_weight", "add_variable")


def _where_made(node) -> str:
    """Where a per-step creation runs ('' when it runs once or is no creation)."""
    model = model_of(node)
    callee = model.callee(node) or ""
    method = node.children[-2].children[-1].value if len(node.children) > 2 else ""
    if callee.rpartition(".")[2] != "Variable" and method not in ("add_weight", "add_variable"):
        return ""
    if method in ("add_weight", "add_variable") and str(node.children[0]).strip() != "self":
        return ""
    context = model.gradient_context(node)
    if context is None or _guarded(node, context.owner):
        return ""
    if context.how in _PER_STEP and enclosing_function(node) is context.owner:
        return _PER_STEP[context.how]
    if context.how == "tape" and _in_loop(context.owner.statement):
        return "a tape body run at every step of a loop"
    return ""


def _guarded(node, owner) -> bool:
    """Is there an ``if`` or ``with tf.init_scope()`` between ``node`` and its context?"""
    stop = owner.statement if hasattr(owner, "statement") else owner
    parent = node.parent
    while parent is not None and parent is not stop:
        if parent.type == syms.if_stmt or parent.type == syms.with_stmt and "init_scope" in str(parent.children[1]):
            return True
        parent = parent.parent
    return False


def _in_loop(statement) -> bool:
    parent = statement.parent
    while parent is not None and parent.type not in (syms.funcdef, syms.classdef):
        if parent.type in (syms.for_stmt, syms.while_stmt):
            return True
        parent = parent.parent
    return False


def _made_per_step(node, capture, filename) -> bool:
    return bool(_where_made(node))


def _report(node, capture, filename) -> None:
    propose(node, f"`{shown(node)}` makes a new variable every time {_where_made(node)} runs: the optimizer "
                  "never sees it, so it never trains (and its gradient is None for the variables Keras "
                  "tracks). Way out: create it once, in `build()` (or `__init__`), and only read it here",
            fixable=False)


def _may_make_per_step(facts):
    """Precheck: anywhere in a file naming ``GradientTape`` (a tape body in
    a loop, named or not); else the ``call``/``train_step``/``test_step``
    functions that create a variable themselves (the filter wants the
    creation directly in one)."""
    return "GradientTape" in facts.text or methods_calling(facts, _STEP_METHODS, _CREATORS)


RECIPE = Recipe(
    id="variable-in-call",
    summary="tf.Variable / add_weight created inside call, train_step or a per-step tape (report)",
    safety="safe",
    query=lambda q: q.select(CREATION).filter(_made_per_step).modify(_report),
    tokens=("Variable(", "add_weight(", "add_variable("),
    precheck=_may_make_per_step,
    before_fails="none-gradient",
)
