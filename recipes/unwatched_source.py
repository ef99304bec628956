"""unwatched-source: ``tape.gradient(y, x)`` where ``x`` is a tensor the tape
never watched before the computation that reads it.

What it does: for each source of ``tape.gradient(target, sources)`` that the
semantic model knows is a plain tensor (``tf.constant``, a converted array,
``tf.zeros``/``ones``, arithmetic made before the tape; not a
``tf.Variable``), bound before the tape, and not passed to ``tape.watch``
before the first statement of the tape that reads it, it inserts
``tape.watch(x)`` as the first statement of the tape body. A variable
counts too when the tape is ``watch_accessed_variables=False``. A NumPy
array or Python list source (tape.gradient raises on it) is first converted
before the tape: ``x = tf.convert_to_tensor(x, dtype=tf.float32)``. A
model's symbolic input (``model.inputs``, ``model.input``, or a name bound
to one) becomes the tensor the tape's one call of that model is given:
``tape.watch(images)`` goes just before the call, the watches of the
symbolic input go, and the gradient is taken with respect to ``images``
(``[images]`` when ``model.inputs``' result is indexed, iterated or
unpacked as a list; ``[a, b]`` for ``model([a, b])``). Unsafe: the code
after the gradient gets a tensor where it got None (or the watch raised).

Why this is a bug: a tape records operations on trainable variables it
sees and on tensors it was told to watch; a constant or a tensor computed
before the ``with`` is neither, so the gradient with respect to it is None
(``tape.watch`` after the computation is too late: what came before is not
recorded). A symbolic Keras tensor (``model.inputs``,
``model.get_layer(...).output``) is never a value of an eager call:
watching it records nothing.

Example::

    x = tf.zeros(())
    with tf.GradientTape() as tape:
        y = 2 * x + 3
    tape.gradient(y, x)          # None
    # becomes
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = 2 * x + 3

Safe when the source is provably a floating tensor bound before the tape
and the target is computed in the tape from it. NumPy data converted to
float32 is safe only when it was float32 and nothing after the tape reads
it as NumPy.

CAVEATS:
- A source whose kind the model cannot prove (a parameter, an attribute, a
  list built elsewhere) is not reported: unknown is not evidence.
- A tape that watches something the model cannot relate to the source (a
  list, a call) is trusted to watch it.
- A watch after the computation is a finding only when the tape could not
  have recorded that computation anyway: TF records an op when any input is
  watched, so a variable, a model or layer call, or a value the model cannot
  type before the watch lets a late watch work.
- Integer sources are integer-source's; a target that reads the source only
  through ``.numpy()``/``float()``/``np.*`` is numpy-on-loss-path's; a target
  computed outside the tape is outside-tape's.
- A target the tape computes without reading the source (a constant) is
  reported without a fix: watching alone will not connect them.
- A model's symbolic input is rewritten only when the tape body uses the
  model once, by a call with one positional argument that is a name (or a
  list of names) of tensors, bound to the same value at the gradient call;
  otherwise (two calls, an expression or NumPy data fed) it is reported
  with the way out. ``model.inputs`` whose result is used other than as a
  list (printed, passed on) becomes the bare tensor.
- Other symbolic tensors (a layer's ``output``, ``keras.Input``) are
  reported only: the way out needs a model with two outputs (one that also
  outputs the intermediate tensor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from migrate.recipe import Recipe, propose
from recipes import _fissix as s
from recipes._model import MANY, Kind, model_of
from recipes._model.dtypes import dtype_of, is_floating, is_integer, is_symbolic, model_input_of
from recipes._model.sources import (computed_from, gradient_of_tape, reads_through_tensors, same_tensor,
                                    tape_module, tape_option)
from recipes._pyast import has_a_named_tape

PATTERN = "power< tape=NAME trailer< '.' 'gradient' > trailer< '(' arglist ')' > any* >"
_SYMBOLIC_WAY_OUT = ("build a model that also outputs it (`tf.keras.Model(model.inputs, [layer.output, "
                     "model.output])`), call that model on your data in the tape, watch the tensor you feed "
                     "and differentiate with respect to the intermediate tensor it returns")


@dataclass(eq=False, repr=False)
class _Decision:
    at: object
    message: str
    safety: Optional[str] = None
    rewrite: Optional[Callable[[], None]] = None


def _first_reader(tape, names) -> int:
    """Index of the first top-level statement of the tape body that reads ``names``."""
    for i, stmt in enumerate(s.statements(tape.body)):
        if any(leaf.value in names for leaf in s.name_leaves(stmt)) and not _is_watch(stmt, tape):
            return i
    return -1


def _is_watch(stmt, tape) -> bool:
    return s.code(stmt).startswith(f"{tape.name}.watch(")


def _watch_state(model, tape, source) -> str:
    """"watched" (before the computation, or where the tape recorded it
    anyway), "late", "none", or "unclear" (something else is watched)."""
    root = same_tensor(model, source)
    body = s.statements(tape.body)
    matching, unclear = [], False
    for arg in tape.watch_arguments():
        arg = s.unparen(arg)
        if s.is_name(arg) and same_tensor(model, arg) == root:
            matching.append(arg)
        elif not (s.is_name(arg) and model.kind_of(arg).kind in (Kind.TENSOR, Kind.VARIABLE)):
            unclear = True
    if unclear and not matching:
        return "unclear"
    if not matching:
        return "none"
    aliases = {root} | {s.code(a) for a in matching} | {source.value}
    first = _first_reader(tape, aliases)
    for arg in matching:
        place = next(i for i, stmt in enumerate(body) if s.contains(stmt, arg))
        if first < 0 or place <= first or _records_anyway(model, tape, body[first:place]):
            return "watched"
    return "late"


def _records_anyway(model, tape, statements) -> bool:
    """Could the tape have recorded these statements without the watch? It
    records an op when any input is watched, and it watches every trainable
    variable it sees (unless watch_accessed_variables=False): a variable, a
    model or layer call, or anything the model cannot type (an attribute, a
    call of unknown code) may be one."""
    if not _watches_variables(tape):
        return False
    for stmt in statements:
        for leaf in s.name_leaves(stmt):
            value = model.kind_of(leaf)
            if value.kind in (Kind.VARIABLE, Kind.MODEL, Kind.LAYER, Kind.UNKNOWN) \
                    and not (leaf.parent.type == s.syms.trailer and leaf.prev_sibling is not None):
                return True
    return False


def _decide(node, capture, filename) -> bool:
    model = model_of(node)
    found = gradient_of_tape(model, node, capture["tape"])
    if found is None:
        return False
    tape, (target, _, sources) = found
    decisions = []
    for source in sources:
        source = s.unparen(source)
        decision = _symbolic(model, tape, node, source, len(sources) == 1) if is_symbolic(model, source) \
            else _plain(model, tape, node, target, source) if s.is_name(source) else None
        if decision is not None:
            decisions.append(decision)
    capture["decisions"] = decisions
    return bool(decisions)


def _symbolic(model, tape, call, source, alone: bool) -> _Decision:
    what = s.shown(source)
    problem = (f"`{what}` is a symbolic Keras tensor (the model's graph), not a tensor of this call: "
               "the tape never records it, so its gradient is None")
    at, problem = source, problem
    first = _first_computation(tape)
    for arg in tape.watch_arguments():
        if s.code(s.unparen(arg)) == s.code(source):
            place = next(i for i, stmt in enumerate(s.statements(tape.body)) if s.contains(stmt, arg))
            if first < 0 or place <= first:
                at, problem = arg, f"{problem}; watching it does nothing"
                break
    found = model_input_of(model, source)
    if found is None:
        return _Decision(at, f"{problem}: report only, the way out needs a model with two outputs: "
                             f"{_SYMBOLIC_WAY_OUT}")
    feed = _fed_tensor(model, tape, call, source, found) if alone else \
        "the gradient call has other sources too"
    way_out = f"watch the tensor the tape's call of `{found[0].value}` is given and differentiate with respect to it"
    if isinstance(feed, str):
        return _Decision(at, f"{problem}: {way_out} (not rewritten: {feed})")
    return _Decision(at, f"{problem}: watch `{feed.watched}` (what the tape's one call of `{found[0].value}` is "
                         f"given) before that call and differentiate with respect to `{feed.replacement}`; unsafe: "
                         "the code after the gradient now gets a tensor where it got None",
                     safety="unsafe", rewrite=lambda: _watch_fed(tape, feed))


@dataclass(eq=False, repr=False)
class _Feed:
    """The tensor a tape gives the model whose symbolic input was asked for."""

    source: object
    statement: object  # the statement of the model call: the watch goes before it
    watches: list  # the statements watching the symbolic input: removed
    watched: str
    replacement: str


def _fed_tensor(model, tape, call, source, found):
    """The ``_Feed`` when the tape calls the model exactly once, with one positional
    argument that is a name (or a list of names) bound to a tensor that the gradient
    call still sees; else why not."""
    owner, attr = found
    same_model = model.reaching(owner.value, owner)
    watches = []
    for stmt in tape.body.pre_order():
        parts = s.call_parts(stmt) if stmt.type == s.syms.power else None
        if parts is None or parts[0] != f"{tape.name}.watch" or len(parts[1]) != 1:
            continue
        watched = model_input_of(model, parts[1][0])
        if watched is None or model.reaching(watched[0].value, watched[0]) != same_model:
            continue
        if stmt.parent.type != s.syms.simple_stmt or len(stmt.parent.children) != 2:
            return f"`{s.shown(stmt)}` is not a statement of its own"
        watches.append(stmt.parent)
    uses = [leaf for leaf in s.name_reads(tape.body, owner.value)
            if model.reaching(owner.value, leaf) == same_model and not any(s.contains(w, leaf) for w in watches)]
    if len(uses) != 1 or not _called(uses[0]):
        return f"the tape {'does not call' if not uses else 'uses'} `{owner.value}`" + \
            (f" {len(uses)} times" if len(uses) > 1 else "" if not uses else " other than by one call")
    positional, keywords = s.split_arguments(uses[0].parent.children[1])
    names = s.literal_elements(s.unparen(positional[0])) if len(positional) == 1 else None
    names = names if names is not None else positional[:1]
    if len(positional) != 1 or not names or "*" in s.code(uses[0].parent.children[1]) \
            or not all(s.is_name(n) for n in names):
        return f"`{s.shown(uses[0].parent)}` is not given one name (or a list of names) to watch"
    for name in names:
        value = model.kind_of(name)
        if not value.is_tensor:
            return f"`{name.value}` ({value.describe()}) is not a tensor the tape can watch"
    if any(model.reaching(n.value, n) != model.reaching(n.value, call) for n in names):
        return "the tensor given to it is rebound before the gradient call"
    watched = s.shown(s.unparen(positional[0]))
    single = len(names) == 1 and s.literal_elements(s.unparen(positional[0])) is None
    replacement = f"[{watched}]" if single and attr == "inputs" and _used_as_list(model, call) else watched
    return _Feed(source, s.statement_of(uses[0]), watches, watched, replacement)


def _called(leaf) -> bool:
    """``leaf`` is the callee of ``leaf(...)``."""
    power = leaf.parent
    return power.type == s.syms.power and power.children[0] is leaf and len(power.children) > 1 \
        and power.children[1].type == s.syms.trailer and power.children[1].children[0].value == "("


def _used_as_list(model, call) -> bool:
    """Is the result of the gradient call indexed, iterated or unpacked (directly or
    through the name it is bound to)?"""
    if len(call.children) > 3:
        return True
    stmt = call.parent
    if stmt.type != s.syms.expr_stmt or len(stmt.children) != 3 or stmt.children[2] is not call:
        return False
    if not s.is_name(stmt.children[0]):
        return True  # unpacked
    name = stmt.children[0].value
    for leaf in s.name_reads(s.scope_of(call), name):
        if leaf is stmt.children[0] or not any(b.statement is not None and s.contains(b.statement, stmt)
                                               for b in model.reaching(name, leaf)):
            continue
        parent, following = leaf.parent, leaf.next_sibling
        if following is not None and following.type == s.syms.trailer and following.children[0].value == "[" \
                or parent.type in (s.syms.for_stmt, s.syms.comp_for) and parent.children[3] is leaf \
                or parent.type == s.syms.star_expr:
            return True
    return False


def _watch_fed(tape, feed) -> None:
    for stmt in feed.watches:
        s.remove_statement(stmt)
    s.insert_before(feed.statement, s.parse_statement(f"{tape.name}.watch({feed.watched})"))
    s.replace_with(feed.source, s.parse_expression(feed.replacement))


def _watches_variables(tape) -> bool:
    flag = tape_option(tape, "watch_accessed_variables")
    return flag is None or s.code(flag) != "False"


def _first_computation(tape) -> int:
    for i, stmt in enumerate(s.statements(tape.body)):
        if not _is_watch(stmt, tape):
            return i
    return -1


def _plain(model, tape, call, target, source) -> Optional[_Decision]:
    value = model.kind_of(source)
    if value.kind is Kind.VARIABLE and _watches_variables(tape):
        return None
    if value.kind not in (Kind.TENSOR, Kind.VARIABLE) and not _numbers(value):
        return None
    bindings = model.reaching(source.value, call)
    if not bindings or MANY in bindings or any(s.contains(tape.statement, b.node) for b in bindings) \
            or not model.same_value_at(source, tape.statement, call):
        return None  # bound in the tape (an intermediate result is recorded), or rebound after it
    dtype = dtype_of(model, source)
    if is_integer(dtype):
        return None  # integer-source's
    state = _watch_state(model, tape, source)
    if state in ("watched", "unclear"):
        return None
    if _numbers(value) and state != "none":
        return None  # a watched NumPy value is per-step-tape's
    computed = computed_from(model, tape.body, {source.value})
    target_names = {leaf.value for leaf in s.name_leaves(target)}
    bound_in_tape = {name for stmt in tape.body.pre_order() if stmt.type == s.syms.expr_stmt
                     for name in model.names_bound_in(stmt)}
    if not target_names & bound_in_tape:
        return None  # computed outside the tape: outside-tape's
    connected = reads_through_tensors(model, target, computed - {source.value})
    if not connected and s.name_reads(tape.body, source.value):
        return None  # read only through .numpy()/float()/np.*: numpy-on-loss-path's
    what = source.value
    watched = f"watched by `{tape.name}` only after the computation that reads it" if state == "late" \
        else f"never watched by `{tape.name}`"
    kind = "tf.Variable, and the tape is watch_accessed_variables=False" \
        if value.kind is Kind.VARIABLE else value.describe()
    problem = f"`{what}` ({kind}) is {watched}, so tape.gradient returns None for it" if not _numbers(value) \
        else f"`{what}` ({kind}) is not a tensor and is {watched}: tape.gradient raises on NumPy and Python data"
    if not connected:
        return _Decision(source, f"{problem}; the target is computed in the tape without reading `{what}`, so "
                                 "watching it alone will not connect them: compute the target from it")
    if _numbers(value):
        return _host(model, tape, call, source, problem, dtype)
    safe = is_floating(dtype)
    why = "" if safe else f"; the dtype of `{what}` is not known here (a non-floating tensor gets no gradient " \
                          "either way), so the fix is unsafe"
    return _Decision(source, f"{problem}: watch it as the tape's first statement{why}",
                     safety=None if safe else "unsafe",
                     rewrite=lambda: _watch_first(tape, what))


def _numbers(value) -> bool:
    """NumPy data or Python numbers (a list of tensors or variables is not)."""
    if value.kind in (Kind.NDARRAY, Kind.NUMBER):
        return True
    items = value.items if value.items is not None else (value.element,) if value.element is not None else ()
    return value.kind in (Kind.PYLIST, Kind.PYTUPLE) and bool(items) and all(_numbers(i) for i in items)


def _host(model, tape, call, source, problem, dtype) -> _Decision:
    what = source.value
    module = tape_module(tape)
    later = [leaf for leaf in s.name_reads(s.scope_of(call), what)
             if leaf.lineno > tape.statement.get_lineno() and not s.contains(tape.body, leaf)
             and not s.contains(call, leaf)]
    reasons = []
    if dtype != "float32":
        reasons.append(f"its dtype is {dtype or 'not known'}, and a float32 conversion may change it")
    if later:
        reasons.append(f"line {later[0].lineno} reads `{what}` again, which is a tensor after the conversion")
    if module is None:
        return _Decision(source, f"{problem}; convert it to a tensor before the tape and watch it")
    unsafe = "; unsafe: " + "; ".join(reasons) if reasons else ""
    return _Decision(source, f"{problem}; convert it to a float32 tensor before the tape and watch it{unsafe}",
                     safety="unsafe" if reasons else None,
                     rewrite=lambda: _convert_and_watch(tape, what, module))


def _watch_first(tape, name: str) -> None:
    s.insert_before(s.statements(tape.body)[0], s.parse_statement(f"{tape.name}.watch({name})"))


def _convert_and_watch(tape, name: str, module: str) -> None:
    s.insert_before(tape.statement,
                    s.parse_statement(f"{name} = {module}.convert_to_tensor({name}, dtype={module}.float32)"))
    _watch_first(tape, name)


def _modify(node, capture, filename) -> None:
    for decision in capture["decisions"]:
        fixable = decision.rewrite is not None
        if propose(decision.at, decision.message, safety=decision.safety, fixable=fixable) and fixable:
            decision.rewrite()



RECIPE = Recipe(
    id="unwatched-source",
    summary="tape.gradient(y, x) with a constant or converted x never watched -> tape.watch(x) first in the tape",
    safety="safe",
    query=lambda q: q.select(PATTERN).filter(_decide).modify(_modify),
    tokens=(".gradient(",),
    precheck=has_a_named_tape,
    before_fails="none-gradient",
)
