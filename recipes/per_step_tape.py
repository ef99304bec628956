"""per-step-tape: watch, feed and differentiate one tensor, bound to one name.

What it does: an integrated-gradients path stacked before the loop,
``path = tf.stack([baseline + alpha * (x - baseline) for alpha in alphas])``,
then indexed inside it (``tape.watch(path[i])``, ``model(path[i])``,
``tape.gradient(out, path[i])``), becomes one interpolated tensor per step,
built before entering the tape and used by name; the stacked path goes away
when nothing else reads it. In general, ``tape.watch(EXPR)`` where EXPR is not
a plain name and is evaluated again inside the tape (or in its
``tape.gradient``) is bound to one name (``tape.watch(tf.convert_to_tensor(v))``
+ ``tape.gradient(y, tf.convert_to_tensor(v))`` included).

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
            out = model(path[i:i + 1])
        grads.append(tape.gradient(out, path[i]))
    # becomes
    for i in range(steps + 1):
        path_step = baseline + alphas[i] * (x - baseline)
        with tf.GradientTape() as tape:
            tape.watch(path_step)
            out = model(path_step[None])
        grads.append(tape.gradient(out, path_step))

A watched value that is not a tensor (``tape.watch`` raises ValueError on a
NumPy array or a Python number, on TF 2.3 and current TF) is converted once,
``x_tensor = tf.convert_to_tensor(x)`` above the ``with``, and that name is
watched, fed and differentiated (``tape.gradient(y, x_tensor)``); reads of
``x`` after the tape keep the array. Only a value provably NumPy data: a
number, a ``np.*`` call or ``.numpy()``, an index or array method of one, or
a name every reaching assignment binds to one. The fix is unsafe when the
tape also uses ``x`` as an arithmetic operand (a tensor does not promote
dtypes as NumPy does: float64 with float32 raises), reported only when it
uses an attribute (``x.reshape``) or binds ``x`` inside the tape.

The step must be the tensor that is watched, fed and differentiated. Every
use of it in the step is rewritten: ``path[i]`` and what starts with it
(``path[i][None]``, ``path[i].shape``), and the batch of one ``path[i:i + 1]``
(as ``name[None]``). From the semantic model (recipes/_model):
- no finding when indexing returns the same object: an item of a Python list
  or tuple (a comprehension, ``model.trainable_variables``, a tuple every
  call passes, a parameter the function unpacks ``a, b = inputs``);
- the name is bound above the ``with`` only when nothing from there to the
  watch (loops included) assigns what the expression reads; else right above
  the watch, inside the tape, when what the tape body assigns and the
  expression reads is NumPy/Python data (``frame = frames[i]`` in a loop
  inside the tape); else the finding is reported only;
- reported only, too: a step watched and differentiated that the code never
  reads (no rewrite makes that gradient non-None), and a step also read with
  the same index in another form (``path[i, None]``).

CAVEATS:
- The per-step interpolation reads ``baseline``, ``x`` and the alphas inside
  the loop: it is only done when the loop and the statements before it do not
  rebind them; an in-place change of a NumPy alphas array is not seen.
- A bound expression is evaluated once instead of several times; only
  subscripts, arithmetic and non-random ``tf.*``/``np.*`` calls are bound.
- Only tapes bound by ``with ...GradientTape(...) as name`` (any item of
  the ``with``) are recognised; a parameter typed from its calls in this
  module (calls from other modules are not seen) counts as that kind.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from migrate.recipe import Recipe, SourceFacts, propose
from recipes import _fissix as s
from recipes._model import Kind, Tape, model_of
from recipes._pyast import dotted, import_table, method_calls, source_segment, tapes

_RANDOM = ("random", "uniform", "normal", "dropout", "shuffle")
_ARRAY_METHODS = {".astype", ".reshape", ".flatten", ".ravel", ".copy", ".squeeze", ".T"}


def _free_names(expr) -> set:
    return {leaf.value for leaf in s.name_leaves(expr)}


def _evaluations(tape: Tape, expr) -> List:
    """Occurrences of ``expr`` in the tape body and in later gradient calls."""
    found = s.occurrences(tape.body, expr)
    for stmt in tape.later_statements(_free_names(expr)):
        for node in stmt.pre_order():
            call = s.call_parts(node)
            if call and call[0] == f"{tape.name}.gradient":
                found.extend(s.occurrences(node.children[-1], expr))
    return found


def _hoistable(expr, model) -> bool:
    """Re-evaluating ``expr`` gives a new tensor each time, and evaluating it
    once gives what each evaluation gave (no random or unknown calls); where
    it may be bound is `_binding_place`'s question."""
    if s.dotted_name(expr) is not None:
        return False  # a variable or attribute is the same object every time
    for node in expr.pre_order():
        if node.type in (s.syms.lambdef, s.syms.comp_for):
            return False
        if node.type == s.syms.trailer and node.children[0].value == "(":
            name = model.qualified_children(node.parent.children[:node.parent.children.index(node)])
            if not name or name.split(".")[0] not in ("tensorflow", "numpy") \
                    or any(r in name for r in _RANDOM):
                return False
    return True


class _Path:
    """``P = tf.stack([ELT for V in ITER])`` indexed as ``P[I]`` in one loop."""

    def __init__(self, stmt, elt, var: str, iterable, loop, index: str):
        self.stmt, self.elt, self.var, self.iterable = stmt, elt, var, iterable
        self.loop, self.index = loop, index


def _stacked_path(expr, tape: Tape, model, feeds: List) -> Optional[_Path]:
    """The pre-stacked IG path behind ``tape.watch(P[I])``, when it can be
    rebuilt step by step and nothing but ``P[I]`` in that loop reads it."""
    kids = expr.children
    if expr.type != s.syms.power or len(kids) != 2 or not s.is_name(kids[0]) \
            or kids[1].children[0].value != "[" or not s.is_name(kids[1].children[1]):
        return None
    path, index = kids[0].value, kids[1].children[1].value
    loop = s.enclosing(tape.statement, s.syms.for_stmt)
    while loop is not None and not s.is_name(loop.children[1], index):
        loop = s.enclosing(loop, s.syms.for_stmt)
    if loop is None:
        return None
    value = model.assigned_value(path, loop)
    stmt = s.enclosing_statement(value) if value is not None else None
    if stmt is None or stmt.parent is not loop.parent or s.assigned_name(stmt) != path:
        return None
    call = s.call_parts(value)
    args = s.call_args(value.children[-1]) if call else []
    if not call or model.callee(value) != "tensorflow.stack" or not args:
        return None
    comp, options = args[0], [s.keyword_arg(a) for a in args[1:]]
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
    between = siblings[s.index_of(siblings, stmt) + 1:s.index_of(siblings, loop) + 1]
    if any(needed & model.names_bound_in(b) for b in between):
        return None
    uses = [leaf for leaf in s.name_leaves(s.scope_of(loop)) if leaf.value == path
            and not s.contains(stmt, leaf)]
    inside = {id(node) for node, _ in s.occurrences(loop, expr)} | {id(node) for node in feeds}
    if not all(id(leaf.parent) in inside for leaf in uses):
        return None
    return _Path(stmt, elt, var, iterable, loop, index)


def _rebuild_per_step(expr, path: _Path, taken: set, feeds: List) -> None:
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
    _use_name(found, feeds, step)


def _use_name(found, feeds, name: str) -> None:
    """Every evaluation of the per-step tensor becomes ``name``; a feed
    ``p[k:k + 1]`` becomes ``name[None]`` (the same batch of one)."""
    for node in feeds:
        s.replace_with(node, s.parse_expression(f"{name}[None]"))
    for node, k in found:
        s.substitute(node, k, name)


def _bind(place, expr, found, feeds, taken: set, convert: Optional[str] = None) -> None:
    """Bind ``expr`` to a fresh name above ``place`` (converted once with
    ``convert.convert_to_tensor`` when it is host data) and use the name."""
    kids = expr.children
    if s.is_name(expr):
        base = f"{expr.value}_tensor"
    elif expr.type == s.syms.power and len(kids) == 2 and s.is_name(kids[0]) \
            and kids[1].children[0].value == "[" and kids[1].children[1].type in (s.token.NAME, s.token.NUMBER):
        base = f"{kids[0].value}_{kids[1].children[1].value}"
    else:
        base = "watched"
    name = s.fresh_name(base, taken)
    value = f"{convert}.convert_to_tensor(__expr__)" if convert else "__expr__"
    s.insert_before(place, s.fill(f"{name} = {value}", expr=expr.clone()))
    _use_name(found, feeds, name)


def _index_parts(expr):
    """(base, index) of ``base[index]`` (one plain subscript); else None."""
    kids = expr.children if expr.type == s.syms.power else ()
    if len(kids) < 2 or kids[-1].type != s.syms.trailer or kids[-1].children[0].value != "[":
        return None
    index = kids[-1].children[1]
    if index.type in (s.syms.subscript, s.syms.subscriptlist, s.token.COLON):
        return None
    base = kids[0] if len(kids) == 2 else s.Node(s.syms.power, [c.clone() for c in kids[:-1]])
    return base, index


def _same_object(expr, model) -> bool:
    """``xs[i]`` of a Python list or tuple (of tensors, variables...) is the
    same object each time: nothing to connect."""
    parts = _index_parts(expr)
    if parts is None or len(expr.children) != 2:
        return False
    base = parts[0]
    value = model.likely_kind_of(base)
    if value.kind in (Kind.PYLIST, Kind.PYTUPLE):
        return True
    return s.is_name(base) and not value.is_known and _unpacked(base, model)


def _unpacked(name, model) -> bool:
    """Does the function unpack the name (``a, b = inputs``): a list or tuple
    of inputs, as Keras and GNN code pass them."""
    scope = model.scope_of(name).node
    for node in scope.pre_order():
        if node.type == s.syms.expr_stmt and len(node.children) == 3 and node.children[1].value == "=" \
                and node.children[0].type in (s.syms.testlist_star_expr, s.syms.exprlist) \
                and s.is_name(s.unparen(node.children[2]), name.value):
            return True
    return False


def _feeds(tape: Tape, expr, found) -> Tuple[List, bool]:
    """Other spellings of the per-step tensor in the tape body: ``p[k:k + 1]``
    for a watched ``p[k]`` (fed as a batch of one); and whether ``p`` is also
    read there with the same index in a form not understood (then the fix
    could miss a use)."""
    parts = _index_parts(expr)
    if parts is None:
        return [], False
    base, index = (s.code(p) for p in parts)
    wanted = f"{index}:{index}+1".replace(" ", "")
    index_names = {leaf.value for leaf in s.name_leaves(parts[1])}
    covered = {id(node) for node, _ in found}
    feeds, unclear = [], False
    for node in tape.body.pre_order():
        if node.type != s.syms.power or id(node) in covered or len(node.children) < len(expr.children):
            continue
        head = node.children[:len(expr.children) - 1]
        trailer = node.children[len(expr.children) - 1]
        if s.code(s.Node(s.syms.power, [c.clone() for c in head]) if len(head) > 1 else head[0]) != base \
                or trailer.type != s.syms.trailer or trailer.children[0].value != "[":
            continue
        inside = trailer.children[1]
        if s.code(inside).replace(" ", "") == wanted and len(node.children) == len(expr.children):
            feeds.append(node)
        elif index_names & {leaf.value for leaf in s.name_leaves(inside)}:
            unclear = True
    return feeds, unclear


def _roles(tape: Tape, found, watch_call) -> Tuple[bool, bool]:
    """(fed, differentiated): is an evaluation read by the code in the tape
    (other than ``tape.watch``), and one asked for by ``tape.gradient``?"""
    fed = differentiated = False
    for node, _ in found:
        if s.contains(watch_call, node):
            continue
        if _in_gradient_call(node, tape.name):
            differentiated = True
        elif s.contains(tape.body, node):
            fed = True
    return fed, differentiated


def _in_gradient_call(node, tape_name: str) -> bool:
    while node is not None:
        if node.type == s.syms.trailer and node.children[0].value == "(":
            call = node.parent
            index = call.children.index(node)
            if index >= 2 and s.code(call.children[index - 1]) == ".gradient" \
                    and s.code(call.children[index - 2]) == tape_name:
                return True
        node = node.parent
    return False


def _binding_place(expr, tape: Tape, watch_call, found, feeds, model):
    """Where one name can be bound to ``expr``: above the ``with`` when
    nothing between there and the watch (loops included) assigns what it
    reads; else right above the watch's statement, inside the tape, when
    every evaluation comes after it and what it reads that the tape body
    assigns is NumPy/Python data (converting it records nothing upstream);
    else None (report only)."""
    if model.same_value_at(expr, tape.statement, watch_call):
        return tape.statement
    stmt = s.enclosing_statement(watch_call)
    if any(s.start(node) < s.start(stmt) for node in [n for n, _ in found] + feeds):
        return None
    for leaf in s.name_leaves(expr):
        bindings = model.reaching(leaf.value, leaf)
        if any(s.contains(tape.body, b.node) for b in bindings) \
                and not model.likely_kind_of(leaf).is_host_data:
            return None
    return stmt


# `tape.watch(...)`: the call where the watched expression is named
PATTERN = "power< tape=NAME trailer< '.' 'watch' > trailer< '(' any ')' > >"


@dataclass(eq=False, repr=False)
class _Decision:
    """What the filter decided for one watched expression; ``rewrite`` (given
    the names taken in the scope) is what the modifier runs once proposed."""

    expr: object
    message: str
    fixable: bool = True
    safety: Optional[str] = None
    rewrite: Optional[Callable[[set], None]] = None


def _decide(node, capture, filename) -> bool:
    """Filter: the decisions for each watched expression of this
    ``tape.watch(...)`` (kept in ``capture`` for the modifier)."""
    model = model_of(node)
    tape = model.tape_named(capture["tape"].value, capture["tape"])
    call = s.call_parts(node)
    args = s.call_args(node.children[-1]) if call else []
    if tape is None or not s.contains(tape.body, node) or call is None or len(args) != 1:
        return False
    elements = s.literal_elements(args[0])
    decisions = []
    for expr in elements if elements is not None else args:
        if s.contains(node, expr):
            decision = _host_watch(expr, tape, node, model) if s.is_name(expr) \
                else _reevaluated(expr, tape, node, model)
            if decision is not None:
                decisions.append(decision)
    capture["decisions"] = decisions
    return bool(decisions)


def _tf_module(tape: Tape) -> Optional[str]:
    """How this module spells tensorflow, read off ``tf.GradientTape()``."""
    callee = s.call_parts(tape.statement.children[1].children[0])[0]
    return callee.rsplit(".", 1)[0] if "." in callee else None


def _is_host_value(expr, model, depth: int = 0) -> bool:
    """Provably a NumPy array or a Python number (tape.watch raises on it):
    a number, a ``np.*`` call or ``.numpy()``, an index or array method of
    one, or a name every reaching assignment binds to one. Arithmetic is
    not followed (``x - baseline`` with a tensor ``x`` is a tensor)."""
    expr = s.unparen(expr)
    if depth > 8 or model.likely_kind_of(expr).kind not in (Kind.NDARRAY, Kind.NUMBER):
        return False
    if expr.type == s.token.NUMBER or (expr.type == s.syms.factor and expr.children[-1].type == s.token.NUMBER):
        return True
    if s.is_name(expr):
        bindings = model.reaching(expr.value, expr)
        return bool(bindings) and all(b.how == "assign" and b.value is not None
                                      and _is_host_value(b.value, model, depth + 1) for b in bindings)
    if expr.type != s.syms.power:
        return False
    kids = expr.children
    for end in range(len(kids), 1, -1):
        trailer = kids[end - 1]
        if trailer.children[0].value == "(" and (model.qualified_children(kids[:end - 1]) or "").startswith("numpy."):
            return True
        if trailer.children[0].value == "(" and end >= 3 and s.code(kids[end - 2]) == ".numpy":
            return True
    return s.is_name(kids[0]) and _is_host_value(kids[0], model, depth + 1) \
        and all(k.children[0].value == "[" or s.code(k) in _ARRAY_METHODS or k.children[0].value == "("
                for k in kids[1:])


def _host_watch(name, tape: Tape, watch_call, model) -> Optional[_Decision]:
    """``tape.watch(x)`` of a NumPy array or Python number ``x``: convert it
    once to a tensor before the tape, watched, fed and differentiated by
    name; reads of ``x`` after the tape (outside tape.gradient) keep ``x``."""
    if not _is_host_value(name, model):
        return None
    found = [(leaf, 0) for leaf in s.name_reads(tape.body, name.value)]
    for stmt in tape.later_statements({name.value}):
        for node in stmt.pre_order():
            call = s.call_parts(node)
            if call and call[0] == f"{tape.name}.gradient":
                found += [(leaf, 0) for leaf in s.name_reads(node.children[-1], name.value)]
    what, module = name.value, _tf_module(tape)
    problem = f"`{what}` is a {model.likely_kind_of(name).kind.value}, not a tensor: tape.watch raises ValueError"
    if not model.same_value_at(name, tape.statement, watch_call):
        return _Decision(name, f"{problem}; `{what}` is rebound between the tape and the watch, so it is "
                               "only reported: convert it once with tf.convert_to_tensor and watch that",
                         fixable=False)
    if module is None:
        return _Decision(name, f"{problem}; convert it once with tf.convert_to_tensor before the tape and "
                               "watch, feed and differentiate that tensor", fixable=False)
    fed = [leaf for leaf, _ in found if s.contains(tape.body, leaf) and not s.contains(watch_call, leaf)]
    uses = {id(leaf): _use_of(leaf) for leaf in fed}
    odd = [leaf for leaf in fed if uses[id(leaf)] == "attribute"]
    if odd:
        return _Decision(name, f"{problem}; the tape also uses `{s.shown(odd[0].parent)}`, which a tensor may "
                               "not support, so it is only reported: convert it once with "
                               "tf.convert_to_tensor and watch, feed and differentiate that", fixable=False)
    operand = "operand" in uses.values()
    caveat = (f"; `{what}` is also an operand in the tape, where a tensor does not promote dtypes as NumPy "
              "does (float64 with float32 raises), so the fix is unsafe") if operand else ""
    return _Decision(name, f"{problem}; convert it once to a tensor before the tape and watch, feed and "
                           f"differentiate that name{caveat}", safety="unsafe" if operand else None,
                     rewrite=lambda taken: _bind(tape.statement, name, found, [], taken, convert=module))


def _use_of(leaf) -> str:
    """How the tape reads a watched name: ``"argument"`` of a call (indexed
    or not: ``model(x[None])``; an item of a list or tuple passed to it:
    ``model([x, other])``), ``"attribute"`` (``x.reshape``: a tensor may not
    have it), or ``"operand"`` of arithmetic and anything else."""
    node = leaf
    following = leaf.next_sibling
    if following is not None and following.type == s.syms.trailer:
        if following.children[0].value == ".":
            return "attribute"
        if following.children[0].value == "[" and following is node.parent.children[-1]:
            node = node.parent
    parent = node.parent
    if parent is not None and parent.type in (s.syms.listmaker, s.syms.testlist_gexp):
        parent = parent.parent
    if parent is not None and parent.type == s.syms.atom and parent.children[0].value in ("[", "("):
        node, parent = parent, parent.parent
    if parent is not None and parent.type == s.syms.arglist:
        parent = parent.parent
    is_argument = parent is not None and parent.type == s.syms.trailer and parent.children[0].value == "("
    return "argument" if is_argument or (parent is not None and parent.type == s.syms.argument) else "operand"


def _reevaluated(expr, tape: Tape, watch_call, model) -> Optional[_Decision]:
    """``tape.watch(EXPR)`` where EXPR is evaluated again in the tape or its
    gradient: one name for the step (a pre-stacked IG path rebuilt per step)."""
    found = _evaluations(tape, expr)
    if len(found) < 2 or _same_object(expr, model) or not _hoistable(expr, model):
        return None
    fed, differentiated = _roles(tape, found, watch_call)
    feeds, unclear = _feeds(tape, expr, found)
    fed = fed or bool(feeds)
    if not differentiated:
        return None
    what = s.shown(expr)
    if unclear:
        return _Decision(expr, f"each `{what}` is a new tensor, so tape.gradient gets None; the tape also "
                               f"reads `{s.code(expr.children[0])}` with that index in another form, so it "
                               "is only reported: bind the step to one name and use it everywhere",
                         fixable=False)
    if not fed:
        return _Decision(expr, f"each `{what}` is a new tensor and the code in the tape never reads the "
                               "watched one, so tape.gradient gets None; no rewrite can connect them: "
                               "compute the output from the watched tensor", fixable=False)
    path = _stacked_path(expr, tape, model, feeds)
    if path is not None:
        return _Decision(expr, f"each `{what}` is a new tensor: the tape watches one, the model reads "
                               "another and tape.gradient gets None; build the interpolated step "
                               "before the tape and watch, feed and differentiate it by name",
                         rewrite=lambda taken: _rebuild_per_step(expr, path, taken, feeds))
    place = _binding_place(expr, tape, watch_call, found, feeds, model)
    if place is None:
        return _Decision(expr, f"each `{what}` is a new tensor, so tape.gradient gets None; it cannot be "
                               "bound to one name here (what it reads is assigned inside the tape from "
                               "recorded tensors, or it is read before the watch): bind it yourself",
                         fixable=False)
    convert = _tf_module(tape) if _is_host_value(expr, model) else None
    where = "before the tape" if place is tape.statement else "before the watch"
    also = ", converted once to a tensor (it is NumPy data: tape.watch raises on it)" if convert else ""
    return _Decision(expr, f"each `{what}` is a new tensor: the tape watches one and the code reads "
                           f"another, so its gradient is None; bind it to one name {where}{also}",
                     rewrite=lambda taken: _bind(place, expr, found, feeds, taken, convert))


def _rewrite(node, capture, filename) -> None:
    """Modifier: report each decision and run its rewrite when allowed."""
    for decision in capture["decisions"]:
        if propose(decision.expr, decision.message, safety=decision.safety, fixable=decision.fixable) \
                and decision.rewrite:
            decision.rewrite(s.scope_names(s.scope_of(node)))


def _may_watch_an_expression(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: the ``with ...GradientTape() as tape:`` statements whose
    body calls ``tape.watch`` on something other than a plain name (``(x)``
    counts: the recipe sees an expression there, so any second parenthesis
    does), or on a name some assignment binds to something other than a
    ``tf.*`` call (_is_host_value: NumPy data is bound by assignments)."""
    found = []
    host = _assigned_other_than_tensorflow(facts)
    for stmt, tape in tapes(facts):
        for call in method_calls(stmt, tape, "watch"):
            items = [item for arg in call.args
                     for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])]
            if not all(isinstance(item, ast.Name) and item.id not in host for item in items + call.keywords) \
                    or source_segment(facts, call).count("(") > 1:
                found.append(stmt)
                break
    return found


def _assigned_other_than_tensorflow(facts: SourceFacts) -> set:
    qualified = import_table(facts).qualified
    found = set()
    for node in facts.nodes(ast.Assign, ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if value is None or (isinstance(value, ast.Call) and any(
                name.startswith("tensorflow.") for name in qualified(dotted(value.func)))):
            continue
        found.update(target.id for target in targets if isinstance(target, ast.Name))
    return found


RECIPE = Recipe(
    id="per-step-tape",
    summary="tape.watch(path[i]) on a re-evaluated expression, or of a NumPy value -> one tensor bound to a name",
    safety="safe",
    query=lambda q: q.select(PATTERN).filter(_decide).modify(_rewrite),
    tokens=(".watch(",),
    precheck=_may_watch_an_expression,
    before_fails="none-gradient",
)
