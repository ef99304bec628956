"""non-trainable-source: ``tape.gradient(loss, model.variables)`` (or
``.weights``) differentiates the non-trainable weights too.

What it does: when the sources of ``tape.gradient`` are ``m.variables`` or
``m.weights`` (or ``m.trainable_variables + m.non_trainable_variables``) of
a value the semantic model knows is a Keras model or layer (also ``self``
in one, or a parameter every call in the module passes one to: a tf.Module
has the same attributes), they become ``m.trainable_variables`` /
``m.trainable_weights``, and so does every ``zip(grads, m.variables)`` that
pairs the gradients with the same list, so the pairs stay aligned.

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

Safe when every use of the gradients is such a ``zip`` given to an
optimizer's ``apply_gradients`` (both lists rewritten), the list is read
nowhere else in the function, and no layer can be frozen: the model is built
by a call in this module and nothing here sets ``trainable`` (a model passed
in, ``self``, or a module that freezes layers make the fix unsafe: see the
last caveat). Otherwise the fix is unsafe and says why:
the gradients indexed, iterated, counted against None, passed to other code
or returned (their positions and number now follow the trainable list), or
the list read again elsewhere (it no longer lines up with the gradients).

CAVEATS:
- Only ``.variables``/``.weights`` of Keras models or layers: a value the
  model proves is one, or a parameter every call in this module passes one
  to (calls from other modules are not seen; the rewritten attribute exists
  on any tf.Module too). An unknown object's are not reported.
- ``apply_gradients`` on a value of unknown kind (an optimizer passed as a
  parameter) is taken for an optimizer's: it skips no pair of a ``zip``.
- Gradients bound to a name are followed in their function; a list bound
  to a name first (``params = model.variables``, one assignment in the
  same function) is rewritten at that assignment, every read of the name
  then follows it.
- Gradients transformed first (clipped, scaled) make the fix unsafe; a
  ``zip`` of values computed from them with the same list is rewritten too,
  for the reader to review.
- A model whose weights are all trainable gets the same gradients either
  way: the finding is still made (its next BatchNormalization would break it).
- Under tf.keras (Keras 2) a frozen layer's (``trainable = False``)
  variables are still watched by the tape: their gradients are not None,
  and ``apply_gradients`` over ``model.variables`` trained them despite the
  freeze. The fix stops that, as the freeze asked: training changes there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional

from migrate.recipe import Recipe, propose
from recipes import _fissix as s
from recipes._model import Kind, model_of
from recipes._model.sources import computed_from, gradient_of_tape
from recipes._pyast import has_a_named_tape

PATTERN = "power< tape=NAME trailer< '.' 'gradient' > trailer< '(' arglist ')' > any* >"
_TRAINABLE = {"variables": "trainable_variables", "weights": "trainable_weights"}
_MIXES = {("trainable_variables", "non_trainable_variables"): "trainable_variables",
          ("trainable_weights", "non_trainable_weights"): "trainable_weights"}
_STATEMENTS = {s.syms.simple_stmt, s.syms.suite, s.syms.file_input, s.syms.for_stmt, s.syms.if_stmt,
               s.syms.while_stmt, s.syms.with_stmt}
_NONE_COUNTS = {"builtin:sum", "builtin:len", "builtin:any", "builtin:all"}


@dataclass(eq=False, repr=False)
class _Plan:
    """What the filter decided: the sources (and the pairing lists) to rewrite, and why."""

    sources: object
    owner: str
    shown: str
    trainable: str
    pairs: List = field(default_factory=list)
    unsafe: str = ""
    bound: object = None  # ``m.variables`` of ``params = m.variables`` when the sources are ``params``


def _attribute(model, expr):
    """(owner, attribute) of ``m.attr`` where ``m`` is a Keras model or layer."""
    kids = expr.children if expr.type == s.syms.power else ()
    if len(kids) != 2 or kids[1].type != s.syms.trailer or kids[1].children[0].type != s.token.DOT \
            or model.likely_kind_of(kids[0]).kind not in (Kind.MODEL, Kind.LAYER):
        return None
    return kids[0].value, kids[1].children[1].value


def _all_weights(model, expr) -> Optional[_Plan]:
    """``m.variables``/``m.weights``, or ``m.trainable_variables + m.non_trainable_variables``
    (resp. ``_weights``), of one Keras model or layer ``m``."""
    expr = s.unparen(expr)
    if expr.type == s.syms.arith_expr and len(expr.children) == 3 and expr.children[1].value == "+":
        parts = [_attribute(model, s.unparen(e)) for e in expr.children[::2]]
        if None in parts or parts[0][0] != parts[1][0] or (parts[0][1], parts[1][1]) not in _MIXES:
            return None
        return _Plan(expr, parts[0][0], s.shown(expr), _MIXES[parts[0][1], parts[1][1]])
    if expr.type == s.token.NAME:
        return _bound_list(model, expr)
    found = _attribute(model, expr)
    if found is None or found[1] not in _TRAINABLE:
        return None
    return _Plan(expr, found[0], s.shown(expr), _TRAINABLE[found[1]])


def _bound_list(model, name) -> Optional[_Plan]:
    """``params`` whose one reaching assignment, in this scope, is ``params = m.variables``:
    that assignment is what gets rewritten."""
    binding = model.last_assignment(name.value, name)
    value = binding.value if binding is not None and binding.how == "assign" else None
    plan = _all_weights(model, value) if value is not None and value.type != s.token.NAME else None
    if plan is None or s.scope_of(binding.statement) is not s.scope_of(name):
        return None
    return _Plan(name, plan.owner, name.value, plan.trainable, bound=plan.sources)


def _same_list(model, expr, plan) -> bool:
    """``expr`` spells the plan's sources, of the same owner (the same bindings reach both)."""
    expr = s.unparen(expr)
    if s.code(expr) != s.code(plan.sources):
        return False
    owner = next(leaf for leaf in expr.leaves())
    first = next(leaf for leaf in plan.sources.leaves())
    return model.reaching(owner.value, owner) == model.reaching(first.value, first)


def _zip_partner(model, expr, plan):
    """The second argument of ``zip(expr, <the same sources>)`` around ``expr``; None otherwise."""
    trailer = expr.parent.parent if expr.parent.type == s.syms.arglist else None
    call = trailer.parent if trailer is not None and trailer.type == s.syms.trailer else None
    parts = s.call_parts(call) if call is not None else None
    if parts is None or parts[0] != "zip" or parts[2] or len(parts[1]) != 2 or parts[1][0] is not expr \
            or model.kind_of(call.children[0]).what != "builtin:zip" or not _same_list(model, parts[1][1], plan):
        return None
    return call


def _applied(model, zipped) -> bool:
    """``zipped`` is the one argument of ``opt.apply_gradients(...)``, ``opt`` an optimizer
    or a value of unknown kind (a parameter): the optimizer protocol pairs each gradient
    with its variable, and skips nothing else."""
    trailer = zipped.parent
    power = trailer.parent if trailer.type == s.syms.trailer and trailer.children[0].value == "(" else None
    if power is None or power.type != s.syms.power or power.children[-1] is not trailer \
            or len(power.children) < 3 or power.children[-2].type != s.syms.trailer \
            or power.children[-2].children[-1].value != "apply_gradients":
        return False
    receiver = model.receiver_kind(power, len(power.children) - 2)
    if receiver.kind is Kind.UNKNOWN:
        return True
    origin = receiver.origin
    return receiver.kind is Kind.OTHER and origin is not None and origin.type == s.syms.power \
        and ".optimizers." in (model.callee(origin) or "")


def _none_count(model, leaf) -> bool:
    """``leaf`` is iterated by a comprehension, compared with None inside it, counted by
    ``sum``/``len``/``any``/``all``: a count of the None gradients."""
    comp = leaf.parent
    if comp.type != s.syms.comp_for or comp.children[3] is not leaf:
        return False
    outer = comp.parent
    while outer is not None and outer.type not in (s.syms.power, s.syms.simple_stmt):
        outer = outer.parent
    if outer is None or outer.type != s.syms.power or model.kind_of(outer.children[0]).what not in _NONE_COUNTS:
        return False
    return any(n.type == s.syms.comparison and any(s.is_name(c, "None") for c in n.children)
               for n in outer.pre_order())


def _gradient_uses(model, call, plan) -> List[str]:
    """Follow the gradients: pairings with the same list go into ``plan.pairs``; the
    uses the recipe cannot follow are returned, as the reasons the fix is unsafe (a zip
    of values computed from the gradients with the same list is rewritten too, unproven)."""
    zipped = _zip_partner(model, call, plan)
    if zipped is not None:
        plan.pairs.append(s.call_parts(zipped)[1][1])
        return [] if _applied(model, zipped) else [f"`{s.shown(zipped)}` pairs the gradients with code the "
                                                   "recipe cannot follow"]
    stmt = call.parent
    if not (stmt.type == s.syms.expr_stmt and len(stmt.children) == 3 and stmt.children[2] is call
            and s.is_name(stmt.children[0])):
        return [f"the gradients go to `{s.shown(_use_of(call))}`, which the recipe cannot follow"]
    grads = stmt.children[0].value
    scope = s.scope_of(call)
    reasons = []
    for leaf in s.name_reads(scope, grads):
        if leaf is stmt.children[0] or not any(b.statement is not None and s.contains(b.statement, stmt)
                                               for b in model.reaching(grads, leaf)):
            continue
        zipped = _zip_partner(model, leaf, plan)
        if zipped is not None:
            plan.pairs.append(s.call_parts(zipped)[1][1])
            if _applied(model, zipped):
                continue
        use = f"`{s.shown(_use_of(leaf))}` (line {leaf.lineno})"
        reasons.append(f"{use} counts the None gradients, which the fix removes" if _none_count(model, leaf)
                       else f"{use} pairs the gradients with code the recipe cannot follow" if zipped
                       else f"{use} reads the gradients, whose positions now follow `{plan.trainable}`")
    if reasons:
        body = scope.children[-1] if scope.type == s.syms.funcdef else scope
        for name in sorted(computed_from(model, body, {grads})):
            for leaf in s.name_reads(scope, name):
                zipped = _zip_partner(model, leaf, plan)
                if zipped is not None and leaf.lineno > call.get_lineno() \
                        and not any(p is s.call_parts(zipped)[1][1] for p in plan.pairs):
                    plan.pairs.append(s.call_parts(zipped)[1][1])
    return reasons[:1]


def _use_of(node):
    """The expression statement, or the header part of a compound statement, that holds ``node``."""
    while node.parent is not None and node.parent.type not in _STATEMENTS:
        node = node.parent
    return node


def _other_reads(model, call, plan) -> List[str]:
    """A read of the same list in the scope that neither is the source nor pairs with the
    gradients: the code may line it up with them."""
    for node in s.scope_nodes(s.scope_of(call)):
        if node is plan.sources or any(node is p for p in plan.pairs) or node.type != plan.sources.type \
                or node.type == s.token.NAME and (not s.not_an_attribute(node) or s.contains(
                    s.statement_of(plan.bound), node)) or not _same_list(model, node, plan):
            continue
        after = "which now sees the trainable list only" if plan.bound is not None \
            else "and the gradients no longer line up with it"
        return [f"`{plan.shown}` is also read at line {node.get_lineno()}, {after}"]
    return []


_FREEZE = re.compile(r"\btrainable\s*=\s*(?!True\b)")


def _maybe_frozen(model, call, plan) -> List[str]:
    """Under tf.keras a frozen layer's variables get gradients through ``.variables`` and
    ``apply_gradients`` trains them: the fix stops that. Safe only when no layer can be
    frozen: the owner is built by a call in this module and nothing here sets ``trainable``."""
    if _FREEZE.search(str(s.find_root(call))):
        return ["this module sets `trainable`: under tf.keras a frozen layer's variables are trained "
                "through `.variables`, and the fix stops that"]
    owner = next(plan.sources.leaves()) if plan.bound is None else next(plan.bound.leaves())
    bindings = model.reaching(owner.value, owner)
    if not bindings or any(b.how != "assign" or b.value is None or b.value.type != s.syms.power
                           or b.value.children[-1].type != s.syms.trailer
                           or b.value.children[-1].children[0].value != "(" for b in bindings):
        return [f"`{owner.value}` is not built here: a layer frozen elsewhere is trained through "
                "`.variables` under tf.keras, and the fix stops that"]
    return []


def _decide(node, capture, filename) -> bool:
    model = model_of(node)
    found = gradient_of_tape(model, node, capture["tape"])
    plan = _all_weights(model, found[1][1]) if found is not None else None
    if plan is None:
        return False
    plan.unsafe = "; ".join(_gradient_uses(model, node, plan) + _other_reads(model, node, plan)
                            + _maybe_frozen(model, node, plan))
    capture["plan"] = plan
    return True


def _modify(node, capture, filename) -> None:
    plan = capture["plan"]
    bound = f" (`{s.shown(plan.bound)}`, line {plan.bound.get_lineno()})" if plan.bound is not None else ""
    message = (f"`{plan.shown}`{bound} includes non-trainable weights (BatchNormalization statistics; "
               "frozen layers' under Keras 3): their gradients are None (apply_gradients warns, and fails with \"No gradients "
               f"provided\" when none is left); differentiate `{plan.owner}.{plan.trainable}`")
    if plan.unsafe:
        message += f"; unsafe: {plan.unsafe}"
    if propose(plan.sources, message, safety="unsafe" if plan.unsafe else None):
        for expr in [plan.bound] if plan.bound is not None else [plan.sources] + plan.pairs:
            s.replace_with(expr, s.parse_expression(f"{plan.owner}.{plan.trainable}"))


RECIPE = Recipe(
    id="non-trainable-source",
    summary="tape.gradient(loss, model.variables / model.weights) -> model.trainable_variables / trainable_weights",
    safety="safe",
    query=lambda q: q.select(PATTERN).filter(_decide).modify(_modify),
    tokens=(".gradient(",),
    precheck=has_a_named_tape,
    before_fails="none-gradient",
)
