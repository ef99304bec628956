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

import textwrap
from typing import List, Optional, Set

from migrate.recipe import Recipe, propose
from recipes import _fissix as s
from recipes._model import Kind, model_of
from recipes._model.recording import Sources, effects, feeders

GRADIENT = "power< any+ trailer< '.' ('gradient' | 'jacobian') > trailer< '(' any ')' > any* >"
MINIMIZE = "power< any+ trailer< '.' 'minimize' > trailer< '(' any ')' > any* >"
BUILT = "expr_stmt< power< 'self' trailer< '.' any > > '=' any >"
_SHAPE_ATTRIBUTES = {"shape", "dtype", "get_shape", "name", "trainable"}
_SHAPE_CALLS = {"shape", "ones_like", "zeros_like", "size", "rank", "shape_n", "len"}


def _method_at(power, names) -> Optional[int]:
    for i in range(len(power.children) - 2, 0, -1):
        trailer, args = power.children[i], power.children[i + 1]
        if trailer.children[0].type == s.token.DOT and trailer.children[1].value in names \
                and args.type == s.syms.trailer and args.children[0].type == s.token.LPAR:
            return i
    return None


def _argument(trailer, position: int, keyword: str):
    positional, keywords = s.split_arguments(trailer)
    return positional[position] if len(positional) > position else keywords.get(keyword)


def _within(node, ancestor) -> bool:
    return s.contains(ancestor, node)


def _among(node, nodes) -> bool:
    """``node in nodes`` by identity (fissix's ``==`` compares trees: two
    statements spelled alike are equal)."""
    return any(other is node for other in nodes)


def _depends(model, stmt, on, sources: Sources) -> bool:
    """Does ``stmt`` read the sources, or a value computed by a statement of ``on``?"""
    if sources.read_by(stmt):
        return True
    return any(_among(f, on) for f in feeders(model, stmt))


def _reading_sources(model, candidates: List, sources: Sources) -> List:
    """The statements of ``candidates`` that read the sources, or read what
    such a statement computes, in source order."""
    chosen: List = []
    for stmt in candidates:
        if sources.read_by(_value(stmt)) or any(_among(f, chosen) for f in feeders(model, _value(stmt))):
            chosen.append(stmt)
    return chosen


def _value(stmt):
    small = stmt.children[0] if stmt.type == s.syms.simple_stmt else stmt
    return small.children[-1] if small.type == s.syms.expr_stmt else small


# ------------------------------------------------------------------ tape.gradient

def _gradient(node, capture, filename) -> None:
    model = model_of(node)
    at = _method_at(node, ("gradient", "jacobian"))
    if at != 1 or node.children[0].type != s.token.NAME:
        return
    tape = model.tape_named(node.children[0].value, node)
    trailer = node.children[at + 1]
    target, sources = _argument(trailer, 0, "target"), _argument(trailer, 1, "sources")
    if tape is None or target is None or sources is None or tape.body.type != s.syms.suite:
        return
    srcs = Sources.of(model, sources)
    fed = feeders(model, target)
    recorded = [f for f in fed if _within(f, tape.body)]
    anchor = _sibling_holding(node, tape.statement)
    in_body = _within(node, tape.body)
    after = [f for f in fed if anchor is not None and _between(f, tape.statement, anchor)]
    target = s.unparen(target)
    if not in_body and anchor is not None and _computes(model, target) \
            and _depends(model, target, recorded, srcs):
        _computed_in_call(node, tape, target, anchor)
        return
    late = [f for f in after if _depends(model, _value(f), recorded, srcs)]
    if late:
        _after_block(tape, target, after, anchor)
        return
    if not srcs or any(srcs.mentioned_in(_value(f)) for f in recorded) or in_body and srcs.mentioned_in(target):
        return
    before = [f for f in fed if not _within(f, tape.statement) and f.get_lineno() < tape.statement.get_lineno()
              and model.scope_of(f) is model.scope_of(tape.statement) and not s.bound_names(f) & srcs.values]
    early = _reading_sources(model, before, srcs)
    if early:
        _before_block(tape, target, early)


def _sibling_holding(node, stmt):
    """The statement of ``stmt``'s block that holds ``node``, when it comes after ``stmt``."""
    while node is not None and node.parent is not stmt.parent:
        node = node.parent
    if node is None or node is stmt:
        return None
    sibling = stmt.next_sibling
    while sibling is not None and sibling is not node:
        sibling = sibling.next_sibling
    return node if sibling is node else None


def _between(stmt, first, last) -> bool:
    if stmt.parent is not first.parent:
        return False
    sibling = first.next_sibling
    while sibling is not None and sibling is not last:
        if sibling is stmt:
            return True
        sibling = sibling.next_sibling
    return False


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
    blocked = _crossed(_statements_between(tape.statement, anchor), [], _read_names(target))
    if not _propose_moving(target, message, blocked, [target], ", and it would run inside the block"):
        return
    name = s.fresh_name("target", s.scope_names(model.scope_of(node).node))
    body = s.statements(tape.body)
    s.insert_after(body[-1], f"{name} = {s.source(target)}\n")
    s.replace_with(target, s.Leaf(s.token.NAME, name))


def _after_block(tape, target, after: List, anchor) -> None:
    model = model_of(tape.statement)
    first = after[0]
    message = (f"`{_code(first)}` runs after the block of `{_tape_text(tape)}` closed: the tape did not "
               f"record it, so `{_tape_text(tape)}.gradient({s.shown(target)}, ...)` returns None; "
               "compute it inside the `with` block")
    between = [stmt for stmt in _statements_between(tape.statement, anchor) if not _among(stmt, after)]
    blocked = _movable(after) or _crossed(between, after, set())
    if not _propose_moving(_shown_part(first), message, blocked, [_value(f) for f in after]):
        return
    text = "".join(_text(f) for f in after)
    body = s.statements(tape.body)
    for stmt in after:
        s.remove_statement(stmt)
    s.insert_after(body[-1], text)


def _before_block(tape, target, early: List) -> None:
    model = model_of(tape.statement)
    first = early[0]
    message = (f"`{_code(first)}` runs before `{_tape_text(tape)}` starts recording, and the target "
               f"`{s.shown(target)}` reaches the sources only through it: the tape sees a constant, so the "
               "gradient is None; move the forward pass into the `with` block")
    if any(stmt.parent is not tape.statement.parent for stmt in early):
        blocked = "it runs in another block than the `with`"
    else:
        between = [stmt for stmt in _statements_between(first, tape.statement) if not _among(stmt, early)]
        blocked = _movable(early) or _crossed(between, early, set())
    if not _propose_moving(_shown_part(first), message, blocked, [_value(f) for f in early]):
        return
    body = s.statements(tape.body)
    new = s.statements_from_source("".join(_text(f) for f in early), s.indent_of(body[0]))
    for stmt in new:
        s.insert_before(body[0], stmt)
    for stmt in early:  # what they bind stays bound: the block binds it now
        s.remove_statement(stmt)


def _propose_moving(where, message: str, blocked: Optional[str], moved: List, when: str = "") -> bool:
    """Report only (``blocked`` says why), or offer to move the expressions
    ``moved``: unsafe when one has effects. True: rewrite now."""
    if blocked:
        propose(where, f"{message} ({blocked})", fixable=False)
        return False
    effect = next((e for e in (effects(model_of(where), expr) for expr in moved) if e), None)
    if effect:
        message += f" (unsafe: {effect}{when})"
    return propose(where, message, safety="unsafe" if effect else "safe")


# ------------------------------------------------------------------ optimizer.minimize

def _minimize(node, capture, filename) -> None:
    model = model_of(node)
    at = _method_at(node, ("minimize",))
    trailer = node.children[at + 1] if at is not None else None
    loss = _argument(trailer, 0, "loss") if trailer is not None else None
    var_list = _argument(trailer, 1, "var_list") if trailer is not None else None
    if loss is None or var_list is None:
        return
    closure, binding = _closure(model, s.unparen(loss))
    srcs = Sources.of(model, var_list)
    if closure is None or not srcs:
        return
    returned = _returned(closure)
    if not returned:
        return
    fed = [f for expr in returned for f in feeders(model, expr)]
    fed = sorted({id(f): f for f in fed}.values(), key=lambda f: f.get_lineno() or 0)
    inside = [f for f in fed if _within(f, closure)]
    if any(srcs.mentioned_in(expr) for expr in returned) or any(srcs.mentioned_in(_value(f)) for f in inside):
        return
    outside = [f for f in fed if not _within(f, closure) and f.get_lineno() < node.get_lineno()]
    early = _reading_sources(model, outside, srcs)
    if not early:
        return
    bare = all(s.unparen(expr).type == s.token.NAME and not any(_within(f, closure) for f in feeders(model, expr))
               for expr in returned)
    where = closure if bare else _shown_part(early[0])
    names = ", ".join(f"`{n}`" for n in sorted(_bound_names(early)))
    lines = ", ".join(str(f.get_lineno()) for f in early)
    message = (f"`minimize` calls its loss function under a tape at every step, but the loss reads {names}, "
               f"computed from the variables once (line {lines}): the tape sees a constant, so there are no "
               "gradients ('No gradients provided'); compute it inside the loss function")
    blocked = _movable(early) or _same_values(model, early, node) \
        or _closure_site(closure, binding, early, node)
    if not _propose_moving(where, message, blocked, [_value(f) for f in early], ", and it would run at every step"):
        return
    kept = _read_elsewhere(model, early, closure)
    _move_into_closure(model, closure, binding, early, node)
    for stmt in early:
        if not _among(stmt, kept):
            s.remove_statement(stmt)


def _closure(model, loss):
    """The lambda or def given as the loss, and the binding that names it (or None)."""
    if loss.type == s.syms.lambdef:
        return loss, None
    if loss.type != s.token.NAME:
        return None, None
    binding = model.last_assignment(loss.value, loss)
    if binding is None:
        return None, None
    if binding.how == "def":
        return binding.value, binding
    if binding.how == "assign" and binding.value is not None and binding.value.type == s.syms.lambdef:
        return binding.value, binding
    return None, None


def _returned(closure) -> List:
    if closure.type == s.syms.lambdef:
        return [closure.children[-1]]
    found = []
    for node in closure.children[-1].pre_order():
        if node.type == s.syms.return_stmt and len(node.children) == 2 \
                and model_of(node).scope_of(node).node is closure:
            found.append(node.children[1])
    return found


def _closure_site(closure, binding, early, call) -> Optional[str]:
    """Why the statements cannot move into the loss function as written (None: they can)."""
    if closure.type == s.syms.lambdef and len(closure.children) != 3:
        return "the lambda takes parameters"
    if closure.type == s.syms.lambdef and binding is None:
        holder = s.statement_of(call)
        if holder.type != s.syms.simple_stmt or holder.parent is None or not s.is_block(holder.parent):
            return "the `minimize` call is not a statement of its own"
        return None
    if closure.type == s.syms.lambdef:
        stmt = s.statement_of(closure)
        if s.simple_assignment(stmt) is None or s.simple_assignment(stmt)[1] is not closure:
            return "the lambda is not assigned on a line of its own"
    elif closure.children[-1].type != s.syms.suite:
        return "the function's body is on its `def` line"
    return None


def _move_into_closure(model, closure, binding, early, call) -> None:
    text = "".join(_text(f) for f in early)
    if closure.type != s.syms.lambdef:
        body = [stmt for stmt in s.statements(closure.children[-1])
                if not (stmt.type == s.syms.simple_stmt and stmt.children[0].type == s.token.STRING)]
        for stmt in s.statements_from_source(text, s.indent_of(body[0])):
            s.insert_before(body[0], stmt)
        return
    returned = s.source(closure.children[-1])
    body = textwrap.indent(text + f"return {returned}\n", "    ")
    if binding is not None:
        stmt = s.statement_of(closure)
        comment = s.last_leaf(stmt).prefix.strip()
        s.replace_statement(stmt, f"def {binding.name}():{'  ' + comment if comment else ''}\n{body}")
        return
    holder = s.statement_of(call)
    name = s.fresh_name("loss_fn", s.scope_names(model.scope_of(call).node))
    s.replace_with(closure, s.Leaf(s.token.NAME, name))
    new = s.statements_from_source(f"def {name}():\n{body}", s.indent_of(holder))
    for stmt in new:
        s.insert_before(holder, stmt)


def _same_values(model, early, call) -> Optional[str]:
    """Evaluated when the loss function runs, the moved statements must read
    what they read where they stand: no binding of their inputs in between."""
    moved = _bound_names(early)
    for stmt in early:
        for leaf in s.name_leaves(_value(stmt)):
            if leaf.value in moved or not model.index.reads.get(id(leaf)):
                continue
            here = {id(b) for b in model.reaching(leaf.value, leaf)}
            later = {id(b) for b in model.reaching(leaf.value, call)}
            if here != later:
                return f"`{leaf.value}` is rebound before `minimize` runs the loss"
    return None


# ------------------------------------------------------------------ a tensor made in build()

def _built(node, capture, filename) -> None:
    """``self.t = <op on self.w>`` in a Keras ``build``, read by ``call``:
    computed once, from the weights' values then."""
    model = model_of(node)
    function = s.enclosing(node, s.syms.funcdef)
    cls = model.method_class(function) if function is not None and function.children[1].value == "build" else None
    if cls is None or not model.keras_role(cls) or len(node.children) != 3:
        return
    attr, value = node.children[0].children[1].children[1].value, node.children[2]
    plain = s.unparen(value)
    if _makes_variable(model, value) or plain.type == s.syms.power and len(plain.children) == 2 \
            or model.kind_of(value).kind in (Kind.MODEL, Kind.LAYER, Kind.OTHER):
        return  # the variable itself, an alias of an attribute, a layer built here
    weights = sorted({path for path in _self_paths(value, values_only=True)
                      if any(_makes_variable(model, b.value) for b in model.attribute_bindings(cls, path)
                             if b.value is not None)})
    call = model.methods(cls).get("call")
    if not weights or call is None or attr not in _self_paths(call):
        return
    names = ", ".join(f"`self.{w}`" for w in weights)
    propose(node, f"`self.{attr}` is computed from the weights {names} once, in build(): call() reads a "
                  "constant tensor holding their values at build time, so those weights get no gradient "
                  "through it; compute it in call() from the weights", fixable=False)


def _makes_variable(model, value) -> bool:
    """``self.add_weight(...)`` (trainable) or ``tf.Variable(...)``."""
    value = s.unparen(value)
    parts = s.call_parts(value)
    if parts and parts[0].rpartition(".")[2] in ("add_weight", "add_variable"):
        trainable = parts[2].get("trainable")
        return trainable is None or s.code(trainable) != "False"
    return model.kind_of(value).kind is Kind.VARIABLE


def _self_paths(node, values_only: bool = False) -> Set[str]:
    """The ``x`` of every ``self.x`` read in ``node``; ``values_only``: not
    those read for their shape or dtype only (``self.x.shape``,
    ``tf.ones_like(self.x)``)."""
    found = set()
    for leaf in node.leaves():
        trailer = leaf.next_sibling
        if not (s.is_name(leaf, "self") and trailer is not None and trailer.type == s.syms.trailer
                and trailer.children[0].type == s.token.DOT):
            continue
        if values_only and (_shape_only(trailer.next_sibling) or _in_shape_call(leaf.parent)):
            continue
        found.add(trailer.children[1].value)
    return found


def _shape_only(trailer) -> bool:
    return trailer is not None and trailer.type == s.syms.trailer and trailer.children[0].type == s.token.DOT \
        and trailer.children[1].value in _SHAPE_ATTRIBUTES


def _in_shape_call(power) -> bool:
    """Is ``power`` an argument of ``tf.shape(...)``, ``tf.ones_like(...)``...?"""
    node = power.parent
    while node is not None and node.type in (s.syms.arglist, s.syms.argument):
        node = node.parent
    if node is None or node.type != s.syms.trailer or node.children[0].type != s.token.LPAR:
        return False
    callee = node.prev_sibling
    name = callee.children[1].value if callee.type == s.syms.trailer and callee.children[0].type == s.token.DOT \
        else callee.value if callee.type == s.token.NAME else ""
    return name in _SHAPE_CALLS


# ------------------------------------------------------------------ statements moved

def _movable(stmts: List) -> Optional[str]:
    for stmt in stmts:
        pair = s.simple_assignment(stmt)
        if pair is None or not _names_only(pair[0]) or stmt.parent is None or not s.is_block(stmt.parent):
            return f"`{_code(stmt)}` is not a single assignment to names"
    return None


def _names_only(target) -> bool:
    target = s.unparen(target)
    if target.type == s.token.NAME:
        return True
    if target.type in (s.syms.testlist_star_expr, s.syms.exprlist, s.syms.testlist_gexp, s.syms.atom):
        parts = s.literal_elements(target) if target.type == s.syms.atom else \
            [c for c in target.children if c.type != s.token.COMMA]
        return parts is not None and all(_names_only(p) for p in parts)
    return False


def _crossed(between: List, moved: List, read: Set[str]) -> Optional[str]:
    """Moving ``moved`` (and code reading ``read``) across ``between`` keeps
    every value: nothing there rebinds what they read, nor reads or rebinds
    what they bind."""
    bound = _bound_names(moved)
    read = read | _read_names_of(moved)
    for stmt in between:
        rebinds = s.bound_names(stmt) & (read | bound)
        reads = {leaf.value for leaf in s.name_leaves(stmt)} & bound
        if rebinds or reads:
            names = ", ".join(f"`{n}`" for n in sorted(rebinds | reads))
            return f"line {stmt.get_lineno()} reads or rebinds {names} in between"
    return None


def _read_elsewhere(model, moved: List, closure) -> List:
    """The moved statements whose names code outside the loss function
    still reads: they are copied into it, so the names stay bound."""
    kept = []
    for stmt in moved:
        names = s.bound_names(stmt)
        for leaf in model.scope_of(stmt).node.leaves():
            if leaf.type != s.token.NAME or leaf.value not in names or not model.index.reads.get(id(leaf)) \
                    or _within(leaf, closure) or any(_within(leaf, other) for other in moved):
                continue
            if any(b.statement is not None and _within(b.statement, stmt) for b in model.reaching(leaf.value, leaf)):
                kept.append(stmt)
                break
    return kept


def _statements_between(first, last) -> List:
    found, sibling = [], first.next_sibling
    while sibling is not None and sibling is not last:
        if sibling.type not in s.LAYOUT:
            found.append(sibling)
        sibling = sibling.next_sibling
    return found


def _bound_names(stmts: List) -> Set[str]:
    return {name for stmt in stmts for name in s.bound_names(stmt)}


def _read_names(node) -> Set[str]:
    return {leaf.value for leaf in s.name_leaves(node)}


def _read_names_of(stmts: List) -> Set[str]:
    return {name for stmt in stmts for name in _read_names(_value(stmt))}


def _text(stmt) -> str:
    text = str(stmt)[len(stmt.prefix):]
    return text if text.endswith("\n") else text + "\n"


def _shown_part(stmt):
    """A statement without its newline and comment: where a finding spans."""
    return stmt.children[0] if stmt.type == s.syms.simple_stmt else stmt


def _code(stmt) -> str:
    return s.shown(_shown_part(stmt))


RECIPE = Recipe(
    id="outside-tape",
    summary="forward pass or target computed outside the tape (or the minimize loss) -> computed inside",
    safety="safe",
    query=lambda q: q.select(GRADIENT).modify(_gradient).select(MINIMIZE).modify(_minimize)
    .select(BUILT).modify(_built),
    tokens=(".gradient(", ".jacobian(", ".minimize(", "def build("),
    before_fails="none-gradient",
)
