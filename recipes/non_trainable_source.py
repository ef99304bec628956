"""non-trainable-source: ``tape.gradient(loss, model.variables)`` (or
``.weights``) differentiates the non-trainable weights too.

What it does: when the sources of ``tape.gradient`` are ``m.variables`` or
``m.weights`` of a value the semantic model knows is a Keras model or layer
(also ``self`` in one, or a parameter every call in the module passes one
to: a tf.Module has the same two attributes), they become ``m.trainable_variables`` /
``m.trainable_weights``, and so does the ``m.variables`` an optimizer's
``apply_gradients(zip(grads, m.variables))`` pairs the gradients with.

Why this is a bug: ``variables``/``weights`` include non-trainable weights
(BatchNormalization's moving mean and variance, a frozen layer's kernel).
The loss does not depend on them through the tape, so their gradients are
None; ``apply_gradients`` then warns or fails with "No gradients provided
for any variable", and code that sums or clips the gradients breaks.

Example::

    grads = tape.gradient(loss, model.variables)
    opt.apply_gradients(zip(grads, model.variables))
    # becomes
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))

Safe when every read of the gradients is that ``zip`` with the same list
(both rewritten). Otherwise the fix is unsafe (the gradients' positions
now follow the trainable list), and where the code checks gradients
against None it is only reported: that code may count on the None entries.

CAVEATS:
- Only ``.variables``/``.weights`` of Keras models or layers: a value the
  model proves is one, or a parameter every call in this module passes one
  to (calls from other modules are not seen; the rewritten attribute exists
  on any tf.Module too). An unknown object's are not reported.
- A model whose weights are all trainable gets the same gradients either
  way: the finding is still made (its next BatchNormalization would break it).
"""

from __future__ import annotations

from typing import List, Optional

from migrate.recipe import Recipe, propose
from recipes import _fissix as s
from recipes._model import Kind, model_of
from recipes._model.sources import gradient_of_tape
from recipes._pyast import has_a_named_tape

PATTERN = "power< tape=NAME trailer< '.' 'gradient' > trailer< '(' arglist ')' > any* >"
_TRAINABLE = {"variables": "trainable_variables", "weights": "trainable_weights"}


def _all_weights(model, expr) -> Optional[str]:
    """``m`` of ``m.variables``/``m.weights`` when ``m`` is a Keras model or layer."""
    expr = s.unparen(expr)
    kids = expr.children if expr.type == s.syms.power else ()
    if len(kids) < 2 or kids[-1].type != s.syms.trailer or kids[-1].children[0].type != s.token.DOT \
            or kids[-1].children[1].value not in _TRAINABLE:
        return None
    if len(kids) != 2 or model.likely_kind_of(kids[0]).kind not in (Kind.MODEL, Kind.LAYER):
        return None
    return s.code(kids[0])


def _decide(node, capture, filename) -> bool:
    model = model_of(node)
    found = gradient_of_tape(model, node, capture["tape"])
    if found is None:
        return False
    sources = s.unparen(found[1][1])
    owner = _all_weights(model, sources)
    if owner is None:
        return False
    capture["sources"], capture["owner"] = sources, owner
    return True


def _gradient_name(call) -> Optional[str]:
    stmt = call.parent
    if stmt.type == s.syms.expr_stmt and len(stmt.children) == 3 and stmt.children[2] is call \
            and s.is_name(stmt.children[0]):
        return stmt.children[0].value
    return None


def _pairings(scope, grads: str, sources) -> List:
    """``X.variables`` in ``zip(grads, X.variables)`` in ``scope`` (same spelling as ``sources``)."""
    found = []
    for node in scope.pre_order():
        call = s.call_parts(node)
        if call and call[0] == "zip" and len(call[1]) == 2 and s.is_name(call[1][0], grads) \
                and s.code(call[1][1]) == s.code(sources):
            found.append(call[1][1])
    return found


def _checks_none(scope, grads: str) -> bool:
    """Does code reading the gradients compare something with None
    (``g is None`` in a loop or a comprehension over them)?"""
    for node in scope.pre_order():
        if node.type == s.syms.comparison and any(s.is_name(c, "None") for c in node.children):
            outer = node
            while outer is not None and outer is not scope:
                if s.name_reads(outer, grads):
                    return True
                outer = outer.parent
    return False


def _modify(node, capture, filename) -> None:
    sources, owner = capture["sources"], capture["owner"]
    attr = sources.children[-1].children[1].value
    trainable = _TRAINABLE[attr]
    problem = (f"`{owner}.{attr}` includes non-trainable weights (BatchNormalization statistics, frozen "
               "layers): their gradients are None (apply_gradients warns, and fails with \"No gradients "
               "provided\" when none is left); "
               f"differentiate `{owner}.{trainable}`")
    grads = _gradient_name(node)
    scope = s.scope_of(node)
    if grads is None:
        propose(sources, problem, fixable=False)
        return
    pairs = _pairings(scope, grads, sources)
    reads = [leaf for leaf in s.name_reads(scope, grads)
             if leaf.lineno > node.get_lineno() and not any(s.contains(p.parent, leaf) for p in pairs)]
    if _checks_none(scope, grads):
        propose(sources, f"{problem}; the code compares gradients with None, so it is only reported: it may "
                         "count on those entries", fixable=False)
        return
    safety = "unsafe" if reads else None
    why = f"; unsafe: `{s.shown(reads[0].parent)}` (line {reads[0].lineno}) reads the gradients, whose " \
          f"positions now follow `{trainable}`" if reads else ""
    if propose(sources, problem + why, safety=safety):
        for expr in [sources] + pairs:
            s.replace_with(expr.children[-1], s.parse_expression(f"x.{trainable}").children[-1])



RECIPE = Recipe(
    id="non-trainable-source",
    summary="tape.gradient(loss, model.variables / model.weights) -> model.trainable_variables / trainable_weights",
    safety="safe",
    query=lambda q: q.select(PATTERN).filter(_decide).modify(_modify),
    tokens=(".gradient(",),
    precheck=has_a_named_tape,
    before_fails="none-gradient",
)
