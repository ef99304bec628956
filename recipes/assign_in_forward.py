"""assign-in-forward: ``v.assign(value)`` in the forward pass, then ``v``
read on the way to the loss: the gradient stops at the assign.

What it reports: ``.assign``/``.assign_add``/``.assign_sub`` on a variable
inside a tape body (before its target is computed) or inside a Keras
``call``, when the assigned value is differentiable (it comes from the
inputs, a layer, a variable, a gradient) and the variable is then read on
a path to the differentiated target: a read of the same variable that the
assign reaches, or a call of the model whose ``trainable_variables`` the
variable was taken from (``for v, w in zip(copy.trainable_variables, ...):
v.assign(...)`` then ``copy(x)``). Decided by the semantic model's
differentiation walk (``recipes/_model/differentiation.py``).

Why this is a bug: an assign copies the value into the variable's storage;
the tape records no path from the variable's later reads back to what the
value was computed from. The gradient with respect to the input or the
weights behind ``value`` is None (MAML-style fast weights copied into a
model, a memory written in ``call``, an input stored in a weight).

Way out: a functional update: compute the new value as a tensor and use
that tensor in the forward pass (``w_fast = w - lr * g``, then compute with
``w_fast``, e.g. through a functional call of the layer); keep the state
update (the assign) outside the differentiated path, after the gradient.

Left alone: state updates whose value is not differentiable (counters,
``assign_add(1)``), updates nothing reads afterwards on the way to the
target (BatchNorm-like moving averages used only at inference), optimizer
steps after ``tape.gradient`` or outside the tape, assigns in a later
iteration of a training loop (they are not in the same forward pass).

CAVEATS:
- report only: the functional form of a model is a redesign the author
  makes.
- a read through a function the model cannot see into is not followed: such
  an assign is not reported.
"""

from __future__ import annotations

import ast

from migrate.recipe import Recipe, propose, walk
from recipes._fissix import contains, per_tree, shown
from recipes._model import model_of
from recipes._pyast import defines, dotted, keras_classes, statements, tape_calls

ASSIGN = "power< any* trailer< '.' ('assign'|'assign_add'|'assign_sub') > trailer< '(' any* ')' > >"
_ASSIGNS = ("assign", "assign_add", "assign_sub")


def _assigns_in_forward(root) -> dict:
    """id of each assign read on the way to a target in its forward pass -> the target."""
    model = model_of(root)
    differentiation = model.differentiation
    found = {}
    for target in differentiation.targets():
        if target.how not in ("tape", "call"):
            continue
        walked = differentiation.walk(target.node, params_live=target.how != "tape")
        if walked.opaque:
            continue
        tape = model.tape_named(target.where.children[0].value, target.where) if target.how == "tape" else None
        for assign in walked.assigns:
            inside = model.tape_of(assign) is tape if tape is not None else contains(target.node, assign)
            if inside and (tape is not None or target.how == "call"):
                found.setdefault(id(assign), target)
    return found


def _in_forward(node, capture, filename) -> bool:
    return id(node) in per_tree(node, "assign-in-forward", _assigns_in_forward)


def _report(node, capture, filename) -> None:
    target = per_tree(node, "assign-in-forward", _assigns_in_forward)[id(node)]
    where = "this layer's output" if target.how == "call" else f"`{shown(target.node)}`"
    propose(node, f"`{shown(node)}` stores a differentiable value in a variable that is read afterwards on the "
                  f"way to {where}: the gradient stops at the assign, so gradients with respect to what the "
                  "value was computed from are None. Way out: a functional update: compute the new value as "
                  "a tensor and use it in the forward pass; keep the assign outside the differentiated path "
                  "(after the gradient)", fixable=False)


def _may_assign_in_forward(facts):
    """Precheck: anywhere in a file with a named tape's gradient call (a
    target); else the ``call`` methods of classes that may be Keras layers
    holding an ``R.assign(...)`` whose receiver ``R`` they spell again: the
    walk meets an assign only at a read of ``R`` that it reaches."""
    if tape_calls(facts, ("gradient", "jacobian", "batch_jacobian")):
        return True
    if not defines(facts, "call"):
        return []
    keras = keras_classes(facts)
    return [found.node for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef)
            if found.node.name == "call" and found.cls is not None and found.cls.name in keras
            and _assigns_a_receiver_read_again(found.node)]


def _assigns_a_receiver_read_again(function) -> bool:
    spelled, receivers = {}, set()
    for node in walk(function):
        if isinstance(node, (ast.Name, ast.Attribute)):
            path = dotted(node)
            spelled[path] = spelled.get(path, 0) + 1
            if isinstance(node, ast.Attribute) and node.attr in _ASSIGNS:
                receivers.add(dotted(node.value))
    return any(spelled.get(path, 0) > 1 for path in receivers if path)


RECIPE = Recipe(
    id="assign-in-forward",
    summary="v.assign(value) in a tape body or Keras call, then v read on the way to the loss (report)",
    safety="safe",
    query=lambda q: q.select(ASSIGN).filter(_in_forward).modify(_report),
    tokens=(".assign",),
    precheck=_may_assign_in_forward,
    before_fails="none-gradient",
)
