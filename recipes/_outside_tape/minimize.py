"""outside-tape (d): ``optimizer.minimize(loss_fn, var_list)`` whose loss
function reads a value computed from the variables before the call: the
statements move into the function (recipes/outside_tape.py)."""

from __future__ import annotations

import textwrap
from typing import List, Optional

from recipes import _fissix as s
from recipes._model import model_of
from recipes._model.recording import Sources, feeders
from recipes._outside_tape.statements import (among, argument, bound_names, method_at, movable, propose_moving,
                                              reading_sources, shown_part, statement_text, value, within)


def minimize(node, capture, filename) -> None:
    model = model_of(node)
    at = method_at(node, ("minimize",))
    trailer = node.children[at + 1] if at is not None else None
    loss = argument(trailer, 0, "loss") if trailer is not None else None
    var_list = argument(trailer, 1, "var_list") if trailer is not None else None
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
    inside = [f for f in fed if within(f, closure)]
    if any(srcs.mentioned_in(expr) for expr in returned) or any(srcs.mentioned_in(value(f)) for f in inside):
        return
    outside = [f for f in fed if not within(f, closure) and f.get_lineno() < node.get_lineno()]
    early = reading_sources(model, outside, srcs)
    if not early:
        return
    bare = all(s.unparen(expr).type == s.token.NAME and not any(within(f, closure) for f in feeders(model, expr))
               for expr in returned)
    where = closure if bare else shown_part(early[0])
    names = ", ".join(f"`{n}`" for n in sorted(bound_names(early)))
    lines = ", ".join(str(f.get_lineno()) for f in early)
    message = (f"`minimize` calls its loss function under a tape at every step, but the loss reads {names}, "
               f"computed from the variables once (line {lines}): the tape sees a constant, so there are no "
               "gradients ('No gradients provided'); compute it inside the loss function")
    blocked = movable(early) or _same_values(model, early, node) \
        or _closure_site(closure, binding, early, node)
    if not propose_moving(where, message, blocked, [value(f) for f in early], ", and it would run at every step"):
        return
    kept = _read_elsewhere(model, early, closure)
    _move_into_closure(model, closure, binding, early, node)
    for stmt in early:
        if not among(stmt, kept):
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
    text = "".join(statement_text(f) for f in early)
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
    moved = bound_names(early)
    for stmt in early:
        for leaf in s.name_leaves(value(stmt)):
            if leaf.value in moved or not model.index.reads.get(id(leaf)):
                continue
            here = {id(b) for b in model.reaching(leaf.value, leaf)}
            later = {id(b) for b in model.reaching(leaf.value, call)}
            if here != later:
                return f"`{leaf.value}` is rebound before `minimize` runs the loss"
    return None



def _read_elsewhere(model, moved: List, closure) -> List:
    """The moved statements whose names code outside the loss function
    still reads: they are copied into it, so the names stay bound."""
    kept = []
    for stmt in moved:
        names = model.names_bound_in(stmt)
        for leaf in model.scope_of(stmt).node.leaves():
            if leaf.type != s.token.NAME or leaf.value not in names or not model.index.reads.get(id(leaf)) \
                    or within(leaf, closure) or any(within(leaf, other) for other in moved):
                continue
            if any(b.statement is not None and within(b.statement, stmt) for b in model.reaching(leaf.value, leaf)):
                kept.append(stmt)
                break
    return kept
