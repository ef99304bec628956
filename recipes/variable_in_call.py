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

import ast
from itertools import chain
from typing import Iterator, List

from migrate.recipe import Recipe, propose, walk
from recipes._fissix import enclosing_function, shown, syms
from recipes._model import model_of
from recipes._pyast import defines, keras_classes, names_read, on_self, statements, tape_statements

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


def _may_make_per_step(facts) -> List[ast.AST]:
    """Precheck: the ``with`` statements that may open a tape, in a loop,
    that create a variable; the ``call``/``train_step``/``test_step``
    methods of ``keras_classes`` that create one themselves (a default
    argument too), outside every ``if``, nested function and ``with
    ...init_scope()``."""
    found = []
    tapes = {id(tape.node) for tape in tape_statements(facts)}
    if tapes:
        found += [node for loop in statements(facts, ast.For, ast.AsyncFor, ast.While) for node in walk(loop.node)
                  if id(node) in tapes and any(_creates(n) for n in walk(node))]
    if not defines(facts, *_STEP_METHODS):
        return found
    keras = keras_classes(facts)
    return found + [step.node for step in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)
                    if step.node.name in _STEP_METHODS and step.cls is not None and step.cls.name in keras
                    and any(_creates(n) for n in chain(walk(step.node.args), _unguarded(step.node.body)))]


def _creates(node) -> bool:
    """``...Variable(...)``, ``self.add_weight(...)``, ``self.add_variable(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "Variable"
    return isinstance(func, ast.Attribute) and (func.attr == "Variable" or func.attr in _CREATORS and on_self(func))


def _unguarded(body) -> Iterator[ast.AST]:
    """The nodes of ``body`` outside ``if`` statements, nested functions and
    ``with`` statements naming ``init_scope`` (what ``_guarded`` and the
    direct-creation test leave)."""
    for statement in body:
        if isinstance(statement, (ast.If, ast.FunctionDef, ast.AsyncFunctionDef)) or isinstance(
                statement, (ast.With, ast.AsyncWith)) and "init_scope" in names_read(statement.items[0].context_expr):
            continue  # `_guarded` reads the first item only
        for name, value in ast.iter_fields(statement):
            parts = value if isinstance(value, list) else [value]
            if name in ("body", "orelse", "finalbody"):
                yield from _unguarded(parts)
            elif name in ("handlers", "cases"):
                for part in parts:
                    yield from _unguarded(part.body)
                    yield from (n for field in ("type", "pattern", "guard") if getattr(part, field, None)
                                for n in walk(getattr(part, field)))
            else:
                yield from (n for part in parts if isinstance(part, ast.AST) for n in walk(part))


RECIPE = Recipe(
    id="variable-in-call",
    summary="tf.Variable / add_weight created inside call, train_step or a per-step tape (report)",
    safety="safe",
    query=lambda q: q.select(CREATION).filter(_made_per_step).modify(_report),
    tokens=("Variable(", "add_weight(", "add_variable("),
    precheck=_may_make_per_step,
    before_fails="graph-error",  # TF 2.3, tf-keras and Keras 3 refuse a variable made in a traced call
)
