"""per-step-tape: watch, feed and differentiate one tensor, bound to one name.

What it does: an integrated-gradients path stacked before the loop,
``path = tf.stack([baseline + alpha * (x - baseline) for alpha in alphas])``,
then indexed inside it (``tape.watch(path[i])``, ``model(path[i])``,
``tape.gradient(out, path[i])``), becomes one interpolated tensor per step,
built before entering the tape and used by name; the stacked path goes away
when nothing else reads it. In general, ``tape.watch(EXPR)`` where EXPR is not
a plain name and is evaluated again inside the tape (or in its
``tape.gradient``) is hoisted to one name above the ``with``.

Why this is a bug: every evaluation of ``path[i]`` is a new tensor. The tape
watches one slice, the model reads another and the gradient is asked for a
third, so ``tape.gradient`` returns None. The step is built before the tape:
built inside from a watched ``x`` it would add a factor ``alpha`` to the
gradient.

Example::

    path = tf.stack([baseline + a * (x - baseline) for a in alphas])
    for i in range(steps + 1):
        with tf.GradientTape() as tape:
            tape.watch(path[i])
            out = model(path[i])
        grads.append(tape.gradient(out, path[i]))
    # becomes
    for i in range(steps + 1):
        path_step = baseline + alphas[i] * (x - baseline)
        with tf.GradientTape() as tape:
            tape.watch(path_step)
            out = model(path_step)
        grads.append(tape.gradient(out, path_step))

CAVEATS:
- The per-step interpolation reads ``baseline``, ``x`` and the alphas inside
  the loop: it is only done when the loop and the statements before it do not
  rebind them; an in-place change of a NumPy alphas array is not seen.
- A hoisted expression is evaluated once instead of several times; only
  subscripts, arithmetic and non-random ``tf.*``/``np.*`` calls are hoisted.
- Only ``with ...GradientTape(...) as name:`` with a single item is
  recognised.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from migrate.recipe import Recipe, SourceFacts, propose
from recipes import _fissix as s
from recipes._pyast import method_calls, source_segment, tapes

_RANDOM = ("random", "uniform", "normal", "dropout", "shuffle")


def _free_names(expr) -> set:
    return {leaf.value for leaf in s.name_leaves(expr)}


def _evaluations(tape: s.Tape, expr) -> List:
    """Occurrences of ``expr`` in the tape body and in later gradient calls."""
    found = s.occurrences(tape.body, expr)
    for stmt in tape.later_statements(_free_names(expr)):
        for node in stmt.pre_order():
            call = s.split_call(node) if node.type == s.syms.power else None
            if call and call[0] == f"{tape.name}.gradient":
                found.extend(s.occurrences(node.children[-1], expr))
    return found


def _hoistable(expr, tape: s.Tape, aliases) -> bool:
    """Re-evaluating ``expr`` gives a new tensor each time, and evaluating it
    once before the tape gives the same value."""
    if s.dotted_name(expr) is not None:
        return False  # a variable or attribute is the same object every time
    for node in expr.pre_order():
        if node.type in (s.syms.lambdef, s.syms.comp_for):
            return False
        if node.type == s.syms.trailer and node.children[0].value == "(":
            callee = node.parent.children[:node.parent.children.index(node)]
            name = s.dotted_name(callee[0]) if len(callee) == 1 else \
                s.dotted_name(s.Node(s.syms.power, [c.clone() for c in callee]))
            if not name or name.split(".")[0] not in aliases or any(r in name for r in _RANDOM):
                return False
    return not (_free_names(expr) & s.bound_names(tape.body))


class _Path:
    """``P = tf.stack([ELT for V in ITER])`` indexed as ``P[I]`` in one loop."""

    def __init__(self, stmt, elt, var: str, iterable, loop, index: str):
        self.stmt, self.elt, self.var, self.iterable = stmt, elt, var, iterable
        self.loop, self.index = loop, index


def _stacked_path(expr, tape: s.Tape, aliases) -> Optional[_Path]:
    """The pre-stacked IG path behind ``tape.watch(P[I])``, when it can be
    rebuilt step by step and nothing but ``P[I]`` in that loop reads it."""
    kids = expr.children
    if expr.type != s.syms.power or len(kids) != 2 or not s.is_name(kids[0]) \
            or kids[1].children[0].value != "[" or not s.is_name(kids[1].children[1]):
        return None
    path, index = kids[0].value, kids[1].children[1].value
    loop = s.enclosing(tape.stmt, s.syms.for_stmt)
    while loop is not None and not s.is_name(loop.children[1], index):
        loop = s.enclosing(loop, s.syms.for_stmt)
    if loop is None:
        return None
    value = s.reaching_value(path, loop)
    stmt = s.enclosing_statement(value) if value is not None else None
    if stmt is None or stmt.parent is not loop.parent or s.assigned_name(stmt) != path:
        return None
    call = s.split_call(value) if value.type == s.syms.power else None
    if not call or call[0] not in {f"{tf}.stack" for tf in aliases["tf"]} or not call[1]:
        return None
    comp, options = call[1][0], [s.keyword_arg(a) for a in call[1][1:]]
    if any(o is None or o[0] != "axis" or s.code(o[1]) != "0" for o in options):
        return None
    if comp.type != s.syms.atom or comp.children[0].value != "[" \
            or comp.children[1].type != s.syms.listmaker:
        return None
    elt, comp_for = comp.children[1].children
    if comp_for.type != s.syms.comp_for or len(comp_for.children) != 4 or not s.is_name(comp_for.children[1]):
        return None
    var, iterable = comp_for.children[1].value, comp_for.children[3]
    if any(n.type in (s.syms.lambdef, s.syms.comp_for) for n in elt.pre_order()):
        return None
    needed = (_free_names(elt) - {var}) | (_free_names(iterable) if s.is_name(iterable) else set())
    siblings = s.statements(loop.parent)
    between = siblings[siblings.index(stmt) + 1:siblings.index(loop) + 1]
    if any(needed & s.bound_names(b) for b in between):
        return None
    uses = [leaf for leaf in s.name_leaves(s.scope_of(loop)) if leaf.value == path
            and not s.contains(stmt, leaf)]
    inside = {id(node) for node, _ in s.occurrences(loop, expr)}
    if not all(id(leaf.parent) in inside for leaf in uses):
        return None
    return _Path(stmt, elt, var, iterable, loop, index)


def _rebuild_per_step(expr, path: _Path, taken: set) -> None:
    name = s.code(expr.children[0])
    step = s.fresh_name(f"{name}_step", taken)
    if s.is_name(path.iterable):
        alphas = path.iterable.value
        s.remove_statement(path.stmt)
    else:
        plural = f"{path.var}s" if len(path.var) > 1 else "alphas"
        alphas = s.fresh_name(plural, taken)
        new = s.fill(f"{alphas} = __iterable__", iterable=path.iterable)
        s.move_trailing_comment(path.stmt, new)
        s.replace_with(path.stmt, new)
    elt = path.elt.clone()
    for leaf in list(s.name_leaves(elt)):
        if leaf.value == path.var:
            s.replace_with(leaf, s.parse_expression(f"{alphas}[{path.index}]"))
    found = s.occurrences(path.loop.children[-1], expr)
    body = s.statements(path.loop.children[-1])
    first = next(stmt for stmt in body if any(s.contains(stmt, node) for node, _ in found))
    s.insert_before(first, s.fill(f"{step} = __elt__", elt=elt))
    for node, k in found:
        s.substitute(node, k, step)


def _hoist(tape: s.Tape, expr, found, taken: set) -> None:
    kids = expr.children
    if expr.type == s.syms.power and len(kids) == 2 and s.is_name(kids[0]) \
            and kids[1].children[0].value == "[" and kids[1].children[1].type in (s.token.NAME, s.token.NUMBER):
        base = f"{kids[0].value}_{kids[1].children[1].value}"
    else:
        base = "watched"
    name = s.fresh_name(base, taken)
    s.insert_before(tape.stmt, s.fill(f"{name} = __expr__", expr=expr.clone()))
    for node, k in found:
        s.substitute(node, k, name)


# `tape.watch(...)`: the call where the watched expression is named
PATTERN = "power< tape=NAME trailer< '.' 'watch' > trailer< '(' any ')' > >"


def _facts(root) -> tuple:
    imports = s.import_table(root)
    aliases = {"tf": imports.module_aliases("tensorflow"), "np": imports.module_aliases("numpy")}
    return aliases, s.per_tree(root, "tapes", s.tapes_by_statement)


def _tape_of(call, name: str, tapes) -> Optional[s.Tape]:
    """The ``with ...GradientTape() as name:`` block around ``call``."""
    node = call.parent
    while node is not None:
        tape = tapes.get(id(node))
        if tape is not None and tape.name == name:
            return tape
        node = node.parent
    return None


def _modify(node, capture, filename):
    aliases, tapes = s.per_tree(node, "per-step-tape", _facts)
    tape = _tape_of(node, capture["tape"].value, tapes)
    if tape is None:
        return
    call = s.split_call(node)
    if call is None or len(call[1]) != 1:
        return
    elements = s.literal_elements(call[1][0])
    for expr in [e for e in (elements if elements is not None else call[1]) if not s.is_name(e)]:
        if not s.contains(node, expr):
            continue
        found = _evaluations(tape, expr)
        if len(found) < 2:
            continue
        taken = s.scope_names(s.scope_of(tape.stmt))
        path = _stacked_path(expr, tape, aliases)
        what = s.shown(expr)
        if path is not None:
            if propose(expr, f"each `{what}` is a new tensor: the tape watches one, the model reads "
                             "another and tape.gradient gets None; build the interpolated step "
                             "before the tape and watch, feed and differentiate it by name"):
                _rebuild_per_step(expr, path, taken)
        elif _hoistable(expr, tape, aliases["tf"] | aliases["np"]):
            if propose(expr, f"each `{what}` is a new tensor: the tape watches one and the code "
                             "reads another, so its gradient is None; bind it to one name before "
                             "the tape"):
                _hoist(tape, expr, found, taken)


def _may_watch_an_expression(facts: SourceFacts) -> bool:
    """Precheck: a ``with ...GradientTape() as tape:`` body calls
    ``tape.watch`` on something other than a plain name (``(x)`` counts:
    the recipe sees an expression there, so any second parenthesis does)."""
    for stmt, tape in tapes(facts):
        for call in method_calls(stmt, tape, "watch"):
            items = [item for arg in call.args
                     for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])]
            if not all(isinstance(item, ast.Name) for item in items + call.keywords) \
                    or source_segment(facts, call).count("(") > 1:
                return True
    return False


RECIPE = Recipe(
    id="per-step-tape",
    summary="tape.watch(path[i]) on a re-evaluated expression -> one per-step tensor bound to a name",
    safety="safe",
    query=lambda q: q.select(PATTERN).modify(_modify),
    tokens=(".watch(",),
    precheck=_may_watch_an_expression,
    before_fails="none-gradient",
)
