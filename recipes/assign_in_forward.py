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

Way out (by hand where the fix below is not offered): a functional
update: compute the new value as a tensor and use
that tensor in the forward pass (``w_fast = w - lr * g``, then compute with
``w_fast``, e.g. through a functional call of the layer); keep the state
update (the assign) outside the differentiated path, after the gradient.

Fix (UNSAFE), where the model sees every later reader of the variable in
the forward pass's body (the tape's block, or the ``call``)::

    self.w.assign(x)            w_value = x
    return -0.5 * self.w ** 2   self.w.assign(w_value)
                                return -0.5 * w_value ** 2

``v.assign_add(e)`` binds ``v_value = v + e`` (``assign_sub``: ``v - e``)
and assigns it; the assign stays, so the state is still updated. Offered
only when every later read of the variable in that body is an explicit
spelling of it (``v``, ``self.w``) in the assign's own block, used where
a tensor does what the variable did (arithmetic, a subscript, ``.shape``,
an argument of a TensorFlow function or a layer); when no later call may read it implicitly
(calling the model or layer that holds it, e.g. fast weights copied into
``model_copy`` and then ``model_copy(x)``; a function of this module or one
given ``self``; any layer, unless the variable is provably made on its own
by ``tf.Variable``/``add_weight``); when nothing writes or rebinds it
again; when no loop in the body holds the assign (the next round would
read the old value through the variable); and when the assign is a
statement of its own. Otherwise the finding says why it is not offered.

Left alone: state updates whose value is not differentiable (counters,
``assign_add(1)``), updates nothing reads afterwards on the way to the
target (BatchNorm-like moving averages used only at inference), optimizer
steps after ``tape.gradient`` or outside the tape, assigns in a later
iteration of a training loop (they are not in the same forward pass).

CAVEATS:
- the fix is unsafe: the gradient now flows through the assigned value
  into whatever it was computed from; that is the point, and it changes
  what training does.
- ``v.assign`` casts and checks the value's dtype and shape; the new name
  keeps the value's own (a float64 value, a broadcast shape): the forward
  pass may compute in another dtype or shape than before.
- only the reads in that body change: other methods, later calls and code
  after the tape still read the variable, which holds the assigned value
  (without its gradient).
- an accumulating update (``assign_add`` in a ``call``) still accumulates
  from call to call: the gradient reaches this call's increment only, and
  the output drifts between training steps, so the loss may not go down.
- a read through a function the model cannot see into is not followed:
  such an assign is not reported.
"""

from __future__ import annotations

import ast

from migrate.recipe import Recipe, propose, walk
from recipes._fissix import contains, per_tree, shown
from recipes._functional_update import plan, rewrite
from recipes._model import forget, model_of
from recipes._pyast import defines, dotted, keras_classes, statements, tape_calls

ASSIGN = "power< any* trailer< '.' ('assign'|'assign_add'|'assign_sub') > trailer< '(' any* ')' > >"
_ASSIGNS = ("assign", "assign_add", "assign_sub")


def _assigns_in_forward(root) -> dict:
    """id of each assign read on the way to a target in its forward pass ->
    (the target, its functional update or why there is none)."""
    model = model_of(root)
    differentiation = model.differentiation
    found, names = {}, {}
    for target in differentiation.targets():
        if target.how not in ("tape", "call"):
            continue
        walked = differentiation.walk(target.node, params_live=target.how != "tape")
        if walked.opaque:
            continue
        tape = model.tape_named(target.where.children[0].value, target.where) if target.how == "tape" else None
        for assign in walked.assigns:
            inside = model.tape_of(assign) is tape if tape is not None else contains(target.node, assign)
            if inside and id(assign) not in found:
                body = tape.body if tape is not None else target.node.children[-1]
                found[id(assign)] = target, plan(model, assign, body, names)
    return found


def _in_forward(node, capture, filename) -> bool:
    return id(node) in per_tree(node, "assign-in-forward", _assigns_in_forward)


def _report(node, capture, filename) -> None:
    target, update = per_tree(node, "assign-in-forward", _assigns_in_forward)[id(node)]
    where = "this layer's output" if target.how == "call" else f"`{shown(target.node)}`"
    message = f"`{shown(node)}` stores a differentiable value in a variable that is read afterwards on the " \
              f"way to {where}: the gradient stops at the assign, so gradients with respect to what the " \
              "value was computed from are None. Way out: a functional update: compute the new value as " \
              "a tensor and use it in the forward pass"
    if update.name is None:
        propose(node, f"{message}; keep the assign outside the differentiated path (after the gradient). "
                      f"Not fixed: {update.reason}", fixable=False)
    elif propose(node, f"{message} (fix: bind it to `{update.name}`, assign that, and read `{update.name}` "
                       "after it in this body; unsafe: the gradient now flows through the value, which changes "
                       f"training, `{update.name}` keeps the value's dtype and shape where the assign would cast "
                       "or check them, and code elsewhere still reads the variable)", safety="unsafe"):
        rewrite(node, update)
        # the tree's model now misdescribes the rewritten body: a later decision in this pass (another
        # recipe's, on a statement after it) must read a model of the tree as it is
        forget(node)


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
    summary="v.assign(value) in a tape body or Keras call, then v read on the way to the loss (report; "
            "functional update where every later read is explicit)",
    safety="unsafe",
    query=lambda q: q.select(ASSIGN).filter(_in_forward).modify(_report),
    tokens=(".assign",),
    precheck=_may_assign_in_forward,
    before_fails="none-gradient",
)
