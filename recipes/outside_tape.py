"""outside-tape: the forward pass or the target computed where the gradient does not see it.

What it does: for ``tape.gradient(target, sources)`` (and ``jacobian``) and
for ``optimizer.minimize(loss_fn, var_list)``, follows the data flow of the
target (the semantic model's reaching definitions) back to the statements
that compute it, and tells those that run where the gradient is recorded
(the ``with`` body of that tape, the function given to ``minimize``) from
those that do not:

- (a) the forward pass runs before the ``with`` block: the target depends
  on the sources only through a value computed before recording started;
  the statements (those that read the sources, and those that read them)
  move to the top of the block::

      probs, value = model(state)
      with tf.GradientTape() as tape:
          loss = -tf.math.log(probs[0, 0]) + tf.square(value[0, 0] - 1.0)
      # becomes
      with tf.GradientTape() as tape:
          probs, value = model(state)
          loss = ...

- (b) the last ops on the target run after the block (``loss = -score``
  after the ``with``): they move to its end;
- (c) the target is computed in the gradient call after the block
  (``t.gradient(f(x), x)``): it is bound at the end of the block
  (``target = f(x)``) and the call differentiates that name;
- (d) ``minimize(lambda: cost, var_list)`` / ``minimize(loss_fn, ...)`` over
  a loss, or a value the loss reads, computed from the variables before the
  call: the statements move into the function (a lambda bound to a name
  becomes a ``def``; one written in the call becomes a ``def`` above it).

- (e) report only: ``self.t = <op on self.w>`` in a Keras ``build()``,
  where ``self.w`` is a trainable weight, read by ``call()``: the tensor is
  computed once, from the weight's value then; the way out is to compute
  it in ``call()``. A weight read for its shape or dtype
  (``tf.ones_like(self.w)``, ``self.w.shape``), a non-trainable weight and
  the variable itself are not findings.

Why this is a bug: a tape records only the operations run inside its
``with`` block, and ``minimize`` records only what its loss function
computes when it calls it. A value computed from the variables elsewhere is
a constant to the gradient: ``tape.gradient`` returns None for every
variable, ``minimize`` raises "No gradients provided for any variable".

Not a finding: the block (or the function) also reads the sources itself
(a value computed before on purpose, e.g. old log-probabilities in PPO, a
bootstrapped target); a target or value recomputed inside; sources the
model cannot resolve (unknown is not evidence).

Safety, from the model's data flow and calls:
- safe when the moved statements are single assignments in the same block
  as the ``with`` (or the ``minimize`` call), they only compute (TensorFlow,
  Keras and NumPy calls, model and layer calls, pure functions of this
  module), and no statement they are moved across reads or rebinds what
  they bind or read; a name still read elsewhere stays bound (the
  statement is copied, not moved);
- unsafe when a moved computation has effects (random draws, printing,
  assignments, calls of unknown functions): moved, they run at another
  time, or once per step;
- report only when the statements sit in another block (a loop around the
  tape, another function) or a statement in between reads or rebinds their
  names: the message says what to move.

CAVEATS:
- A model first called inside the moved code builds its weights there; a
  ``var_list`` read before that call is then empty.
- A tape re-entered with ``with tape:`` is not a tape the model knows.
- Only the sources' owners (``model`` of ``model.trainable_variables``) and
  the named variables count as reading the sources; a layer reached
  through another object is not seen.
"""

from __future__ import annotations

import ast
from typing import List

from migrate.recipe import Recipe, SourceFacts
from recipes import _fissix as s
from recipes._model import model_of
from recipes._model.recording import Sources, feeders
from recipes._outside_tape.built import built, classes_building_tensors
from recipes._pyast import code_text, tape_calls
from recipes._outside_tape.minimize import minimize
from recipes._outside_tape.statements import (among, argument, between, code, crossed, depends, method_at, movable,
                                              propose_moving, read_names, reading_sources, shown_part,
                                              sibling_holding, statement_text, statements_between, value,
                                              within)

GRADIENT = "power< any+ trailer< '.' ('gradient' | 'jacobian') > trailer< '(' any ')' > any* >"
MINIMIZE = "power< any+ trailer< '.' 'minimize' > trailer< '(' any ')' > any* >"
BUILT = "expr_stmt< power< 'self' trailer< '.' any > > '=' any >"
_GRADIENT_WORDS = (".gradient(", ".jacobian(", ".minimize(")


def _gradient(node, capture, filename) -> None:
    at = method_at(node, ("gradient", "jacobian"))
    if at != 1 or node.children[0].type != s.token.NAME:
        return
    model = model_of(node)
    tape = model.tape_named(node.children[0].value, node)
    trailer = node.children[at + 1]
    target, sources = argument(trailer, 0, "target"), argument(trailer, 1, "sources")
    if tape is None or target is None or sources is None or tape.body.type != s.syms.suite:
        return
    srcs = Sources.of(model, sources)
    fed = feeders(model, target)
    recorded = [f for f in fed if within(f, tape.body)]
    anchor = sibling_holding(node, tape.statement)
    in_body = within(node, tape.body)
    after = [f for f in fed if anchor is not None and between(f, tape.statement, anchor)]
    target = s.unparen(target)
    if not in_body and anchor is not None and _computes(model, target) \
            and depends(model, target, recorded, srcs):
        _computed_in_call(node, tape, target, anchor)
        return
    late = [f for f in after if depends(model, value(f), recorded, srcs)]
    if late:
        _after_block(tape, target, after, anchor)
        return
    if not srcs or any(srcs.mentioned_in(value(f)) for f in recorded) or in_body and srcs.mentioned_in(target):
        return
    before = [f for f in fed if not within(f, tape.statement) and f.get_lineno() < tape.statement.get_lineno()
              and model.scope_of(f) is model.scope_of(tape.statement) and not model.names_bound_in(f) & srcs.values]
    early = reading_sources(model, before, srcs)
    if early:
        _before_block(tape, target, early)



def _computes(model, target) -> bool:
    """A target that runs an op: more than a name, a display of names or an
    item of a Python list or tuple (indexing a tensor is an op)."""
    elements = s.literal_elements(target)
    if elements is not None:
        return any(_computes(model, s.unparen(e)) for e in elements)
    if target.type == s.syms.power and all(t.type == s.syms.trailer and t.children[0].value == "["
                                           for t in target.children[1:]):
        return model.kind_of(target.children[0]).is_tensor
    return target.type != s.token.NAME



def _tape_text(tape) -> str:
    return tape.name or "the tape"



def _computed_in_call(node, tape, target, anchor) -> None:
    model = model_of(node)
    message = (f"the target `{s.shown(target)}` is computed in the gradient call, after the block of "
               f"`{_tape_text(tape)}` closed: the tape recorded nothing of it, so the gradient is None; "
               "compute it inside the `with` block")
    blocked = crossed(statements_between(tape.statement, anchor), [], read_names(target))
    if not propose_moving(target, message, blocked, [target], ", and it would run inside the block"):
        return
    name = s.fresh_name("target", s.scope_names(model.scope_of(node).node))
    body = s.statements(tape.body)
    s.insert_after(body[-1], f"{name} = {s.source(target)}\n")
    s.replace_with(target, s.Leaf(s.token.NAME, name))



def _after_block(tape, target, after: List, anchor) -> None:
    model = model_of(tape.statement)
    first = after[0]
    message = (f"`{code(first)}` runs after the block of `{_tape_text(tape)}` closed: the tape did not "
               f"record it, so `{_tape_text(tape)}.gradient({s.shown(target)}, ...)` returns None; "
               "compute it inside the `with` block")
    between = [stmt for stmt in statements_between(tape.statement, anchor) if not among(stmt, after)]
    blocked = movable(after) or crossed(between, after, set())
    if not propose_moving(shown_part(first), message, blocked, [value(f) for f in after]):
        return
    text = "".join(statement_text(f) for f in after)
    body = s.statements(tape.body)
    for stmt in after:
        s.remove_statement(stmt)
    s.insert_after(body[-1], text)



def _before_block(tape, target, early: List) -> None:
    model = model_of(tape.statement)
    first = early[0]
    message = (f"`{code(first)}` runs before `{_tape_text(tape)}` starts recording, and the target "
               f"`{s.shown(target)}` reaches the sources only through it: the tape sees a constant, so the "
               "gradient is None; move the forward pass into the `with` block")
    if any(stmt.parent is not tape.statement.parent for stmt in early):
        blocked = "it runs in another block than the `with`"
    else:
        between = [stmt for stmt in statements_between(first, tape.statement) if not among(stmt, early)]
        blocked = movable(early) or crossed(between, early, set())
    if not propose_moving(shown_part(first), message, blocked, [value(f) for f in early]):
        return
    body = s.statements(tape.body)
    new = s.statements_from_source("".join(statement_text(f) for f in early), s.indent_of(body[0]))
    for stmt in new:
        s.insert_before(body[0], stmt)
    for stmt in early:  # what they bind stays bound: the block binds it now
        s.remove_statement(stmt)


def _may_compute_outside(facts: SourceFacts):
    """Precheck: anywhere when the code takes a named tape's gradient or
    jacobian, or minimizes with a ``var_list`` (two arguments at least);
    else the classes whose ``build`` computes from their attributes."""
    text = code_text(facts)
    if (".gradient(" in text or ".jacobian(" in text) and tape_calls(facts, ("gradient", "jacobian")) \
            or ".minimize(" in text and any(_may_name_var_list(call) for call in facts.nodes(ast.Call)):
        return True
    return classes_building_tensors(facts)


def _may_name_var_list(call: ast.Call) -> bool:
    """A ``.minimize(...)`` given two arguments, or some unpacked."""
    return getattr(call.func, "attr", None) == "minimize" and (
        len(call.args) + len(call.keywords) >= 2 or any(isinstance(a, ast.Starred) for a in call.args)
        or any(k.arg is None for k in call.keywords))


RECIPE = Recipe(
    id="outside-tape",
    summary="forward pass or target computed outside the tape (or the minimize loss) -> computed inside",
    safety="safe",
    query=lambda q: q.select(GRADIENT).modify(_gradient).select(MINIMIZE).modify(minimize)
    .select(BUILT).modify(built),
    tokens=_GRADIENT_WORDS + ("def build(",),
    precheck=_may_compute_outside,
    before_fails="none-gradient",
)
