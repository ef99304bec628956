"""vectorize-sample-loop: a per-sample loop of layer calls becomes one batched call.

What it does: a loop over the samples of a batch whose body is a pure chain
of layer calls on one sample is replaced by the same chain on the whole
batch: one layer call per position instead of one per sample and position.

- The loop: ``for j in range(bound)`` (the bound is ``tf.shape(x)[0]``,
  ``x.shape[0]``, ``len(x)``, a name bound to one of those, or a name
  containing ``batch``), ``for row in x`` / ``for row in tf.unstack(x)`` over
  a tensor or array, a list comprehension of either form, or
  numpy-accumulator's ``tf.while_loop`` form; in a function or at module
  level (a script).
- The collection: ``buf = buf.write(j, value)`` into a ``tf.TensorArray``
  read by ``buf.stack()``; ``buf.append(value)`` after ``buf = []``, or
  ``buf[j] = value`` after ``buf = [None] * n``, or a comprehension, joined
  after the loop by ``tf.concat(buf, 0)`` (each value a batch of one) or
  ``tf.stack(buf)`` (``keras.ops.concatenate`` / ``stack`` too).
- The chain: the sample ``inputs[j, ...]`` / ``inputs[j:j + 1]`` / ``row``,
  reshaped to a batch of one (``tf.reshape(x, [1, ...])`` becomes ``[-1,
  ...]``; ``tf.expand_dims(x, 0)`` or ``x[None]`` are dropped), a layer's
  output reshaped to its per-sample shape (``[d]`` becomes ``[-1, d]``) or
  indexed ``[0]``, calls of Keras layers or models (``self.<layer>``, a
  layer bound in the scope, the model itself in its ``train_step``), and a
  loop over positions that fills a per-sample TensorArray (its ``stack()``
  is then transposed so the batch axis comes first).

The collector goes away and its joins or ``.stack()`` reads become the
batched tensor. This is the batching step of seed 000's fix.

Stays a loop: state carried from one sample to the next (a name read
before the body binds it), per-sample routing (``self.heads[i]``), a
per-sample value in any index but the first (variable-length slices),
a method of the class or a function (it may keep state), a layer holding
``BatchNormalization`` (its training output mixes samples), a loop over
anything that is not the batch.

Why: not a gradient bug; a Python loop over the batch multiplies the number
of layer calls (and graph nodes under ``tf.function``) by the batch size, and
needs a ``tf.while_loop`` when the batch size is a tensor.

Example (seed 000)::

    samples = tf.TensorArray(tf.float32, size=batch_size)
    for j in range(batch_size):
        patch = tf.reshape(batch_inputs[j, seq_idx], [1, 7, 7, 1])
        code = self.local(patch)
        samples = samples.write(j, tf.reshape(code, [self.local_out_dim]))
    store = store.write(seq_idx, samples.stack())

becomes::

    patch = tf.reshape(batch_inputs[:, seq_idx], [-1, 7, 7, 1])
    code = self.local(patch)
    samples = tf.reshape(code, [-1, self.local_out_dim])
    store = store.write(seq_idx, samples)

CAVEATS (why it is unsafe):
- A layer whose output for one sample depends on the rest of the batch
  (batch-level statistics, a custom layer that reduces over axis 0)
  computes something else on the batch; only ``BatchNormalization`` built
  visibly in the module is seen.
- Results agree only up to floating-point rounding (different kernels).
- Only straight-line chains of assignments, layer calls and
  ``tf.reshape`` / ``tf.expand_dims`` / ``tf.squeeze`` / ``x[None]`` are
  recognised; the loop variable may appear only as the first index of the
  input and as the ``write`` / slot index. An attribute of ``self`` that no
  visible code binds counts as a layer. A per-sample TensorArray filled by
  an inner position loop needs its slot rank from a ``tf.reshape`` to
  transpose.
- "Over the samples" is read from the loop bound; a name such as
  ``batch_count`` that is not the batch size would fool it.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from typing import Dict, List, Optional, Set

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, propose
from recipes._fissix import (
    call_parts, contains, enclosing, find_root, index_of, is_call, is_name,
    is_sole_statement_on_line, literal_elements, name_reads, parse_expression, per_tree,
    remove_statement, replace_statement, replace_with, single_assignment, source, start,
    statement_of, subscript_parts, syms,
)
from recipes._model import Kind, model_of
from recipes._pyast import dotted, may_import, statements

ONE, BARE = "one", "bare"  # per-sample value with / without a leading batch-of-one axis
_NEWAXIS = ("None", "np.newaxis", "numpy.newaxis", "tf.newaxis")


@dataclass(eq=False, repr=False)
class Batched:
    """A per-sample expression rewritten for the whole batch. ``kind`` says
    how the per-sample value relates to the batched one: ONE (its leading 1
    became the batch axis) or BARE (the batch axis was prepended); ``rank`` is
    the per-sample rank when a reshape makes it known."""

    text: str
    kind: str
    rank: Optional[int] = None


class Chain:
    """Rewrites per-sample expressions of one loop body into batched ones."""

    def __init__(self, index: str, tensorflow: set, model=None, function=None):
        self.index = index
        self.tensorflow = tensorflow
        self.tf = ("tf" if "tf" in tensorflow else min(tensorflow)) if tensorflow else None
        self.model, self.function = model, function
        self.values: Dict[str, Batched] = {}
        self.arrays: Dict[str, Optional[int]] = {}  # per-sample TensorArray -> slot rank
        self.loop_indices: Set[str] = set()

    def batched(self, expr) -> Optional[Batched]:
        """The batched form of a per-sample expression; None if not a chain."""
        if is_name(expr):
            known = self.values.get(expr.value)
            if known is None:
                return None
            # the loop variable of ``for row in batch`` stands for the batch
            return Batched(known.text if expr.value == self.index else expr.value, known.kind, known.rank)
        sample = self._sample(expr)
        if sample is not None:
            return sample
        parts = call_parts(expr)
        if parts:
            return self._call(*parts)
        return self._subscript(expr)

    def _sample(self, expr) -> Optional[Batched]:
        """``inputs[j, rest]`` -> ``inputs[:, rest]``, ``inputs[j]`` -> ``inputs``;
        and an index into a per-sample value, ``sample[i]`` -> ``sample[:, i]``."""
        parts = subscript_parts(expr)
        if not parts:
            return None
        name, index = parts
        if name in self.values:
            if self.values[name].kind != BARE or any(self.mentions_chain(c) for c in index) \
                    or source(index[0]) in _NEWAXIS:
                return None
            base = self.values[name].text if name == self.index else name  # ``for row in x``: x
            return Batched(f"{base}[:, {', '.join(source(c) for c in index)}]", BARE)
        if any(self.mentions_chain(c) for c in index[1:]):
            return None
        if is_name(index[0], self.index):
            kind = BARE
        elif source(index[0]).replace(" ", "") in (f"{self.index}:{self.index}+1",
                                                   f"{self.index}:({self.index}+1)"):
            kind = ONE  # inputs[j:j + 1] keeps a batch-of-one axis
        else:
            return None
        if len(index) == 1:
            return Batched(name, kind)
        return Batched(f"{name}[:, {', '.join(source(c) for c in index[1:])}]", kind)

    def _call(self, callee: str, positional: List, keywords: Dict) -> Optional[Batched]:
        head, _, attr = callee.rpartition(".")
        if not positional:
            return None
        inner = self.batched(positional[0])
        if inner is None or any(self.mentions_chain(a) for a in positional[1:]) \
                or any(self.mentions_chain(v) for v in keywords.values()):
            return None
        if head and head in self.tensorflow and attr == "reshape" and len(positional) == 2 and not keywords:
            items = literal_elements(positional[1])
            if not items:
                return None
            shape = [source(i) for i in items]
            kind, rest = (ONE, shape[1:]) if shape[0] == "1" else (BARE, shape)
            batch = self._batch_item(inner.text, rest)
            if batch is None:
                return None
            return Batched(f"{callee}({inner.text}, [{', '.join([batch] + rest)}])", kind, len(shape))
        if head and head in self.tensorflow and attr in ("expand_dims", "squeeze"):
            axis = keywords.get("axis", positional[1] if len(positional) > 1 else None)
            wanted = BARE if attr == "expand_dims" else ONE
            if axis is None or source(axis) != "0" or inner.kind != wanted:
                return None
            return Batched(inner.text, ONE if attr == "expand_dims" else BARE)
        if len(positional) == 1 and inner.kind == ONE and self.is_layer(callee):
            extra = "".join(f", {k}={source(v)}" for k, v in keywords.items())
            return Batched(f"{callee}({inner.text}{extra})", ONE)
        return None

    def is_layer(self, callee: str) -> bool:
        """Is ``callee`` (``self.enc``, ``dense``) a Keras layer or model whose
        output for one sample does not depend on the rest of the batch? An
        attribute of ``self`` nobody binds visibly counts (built in
        ``build``); a method of the class, another value, or a layer that
        holds ``BatchNormalization`` (batch statistics in training) does not."""
        head, _, attr = callee.partition(".")
        if self.model is None or "." in attr:
            return False
        cls = self.model.method_class(self.function) if self.function is not None else None
        if callee == "self":  # the model itself, called in its train_step
            return cls is not None and self.model.keras_role(cls) is not None \
                and not self._mixes_samples(cls)
        if attr:
            if head != "self" or (cls is not None and attr in self.model.methods(cls)):
                return False
            if cls is None:
                return True  # a method of a class this module does not show
            values = [b.value for b in self.model.attribute_bindings(cls, attr)]
            if not values:
                return True
        else:
            scope = self.function if self.function is not None else self.model.root
            values = self.model.assignments(scope).get(head, []) \
                or self.model.assignments(self.model.root).get(head, [])
        return bool(values) and all(v is not None and self._per_sample_layer(v) for v in values)

    def _per_sample_layer(self, value) -> bool:
        kind = self.model.kind_of(value)
        if kind.kind not in (Kind.LAYER, Kind.MODEL):
            return False
        return not self._mixes_samples(kind.origin if kind.origin is not None else value)

    def _mixes_samples(self, made) -> bool:
        """Does the construction ``made`` (a call, or a class) hold a
        ``BatchNormalization``, whose training output mixes the samples?"""
        return any(is_call(n) and (self.model.callee(n) or "").endswith("BatchNormalization")
                   for n in made.pre_order())

    def _batch_item(self, batched: str, rest: List[str]) -> Optional[str]:
        """The batch axis of a batched reshape: ``-1``, or ``tf.shape(x)[0]``
        when another item is already ``-1`` (``[1, -1]`` flattens a sample);
        None when ``x`` is not a plain name or subscript to repeat."""
        if "-1" not in rest:
            return "-1"
        if not re.fullmatch(r"[\w.]+(\[[^()]*\])?", batched) or self.tf is None:
            return None
        return f"{self.tf}.shape({batched})[0]"

    def _subscript(self, expr) -> Optional[Batched]:
        """``x[None]`` (adds the batch-of-one axis) and ``x[0]`` (drops it)."""
        if expr.type != syms.power or len(expr.children) < 2:
            return None
        trailer = expr.children[-1]
        if trailer.type != syms.trailer or trailer.children[0].type != token.LSQB:
            return None
        base = expr.clone()
        base.children[-1].remove()
        inner = self.batched(base if len(base.children) > 1 else base.children[0])
        if inner is None:
            return None
        index = source(trailer.children[1])
        if self.mentions_chain(trailer):
            return None
        if index in _NEWAXIS and inner.kind == BARE:
            return Batched(inner.text, ONE)
        if index == "0" and inner.kind == ONE:
            return Batched(inner.text, BARE)
        return None

    def mentions_chain(self, node) -> bool:
        names = set(self.values) | set(self.arrays) | {self.index}
        return any(is_name(leaf) and leaf.value in names for leaf in node.leaves())


@dataclass(eq=False, repr=False)
class SampleLoop:
    """A loop over the samples: ``for j in range(bound)`` (a ``for``
    statement, a comprehension, or the ``def fill_buf(i, buf): ...; return
    i + 1, buf`` and ``tf.while_loop`` that numpy-accumulator writes when the
    bound is a tensor), or ``for row in batch`` / ``tf.unstack(batch)``
    (``batch`` set: the loop variable is one sample of it)."""

    index: str
    bound: object
    body: List           # its statements (without the while form's ``return``)
    nodes: List          # the statements it occupies, in order
    carried: Optional[str] = None  # the while form's buffer
    batch: object = None  # ``for row in batch``: the batch node

    def contains(self, leaf) -> bool:
        return any(contains(node, leaf) for node in self.nodes)


def _for_loop(loop) -> Optional[SampleLoop]:
    if loop.type != syms.for_stmt or not is_name(loop.children[1]) or len(loop.children) != 6:
        return None
    header = _range_loop(loop)
    if header is not None:
        return SampleLoop(header[0], header[1], _statements(loop.children[5]), [loop])
    batch = _iterated_batch(loop.children[3])
    if batch is None:
        return None
    return SampleLoop(loop.children[1].value, None, _statements(loop.children[5]), [loop], batch=batch)


def _iterated_batch(iterable):
    """``batch`` of ``for row in batch`` or ``tf.unstack(batch[, axis=0])``."""
    if is_name(iterable):
        return iterable
    call = call_parts(iterable)
    if call and call[0].rpartition(".")[2] == "unstack" and len(call[1]) == 1 and is_name(call[1][0]) \
            and set(call[2]) <= {"axis"} and all(source(v) == "0" for v in call[2].values()):
        return call[1][0]
    return None


def _while_form(function) -> Optional[SampleLoop]:
    """``def f(i, buf): ...; return i + 1, buf`` followed by ``_, buf =
    tf.while_loop(lambda i, *_: i < bound, f, [0, buf])``."""
    parameters = function.children[2].children[1:-1]
    if len(parameters) != 1 or parameters[0].type != syms.typedargslist \
            or len(parameters[0].children) != 3 or function.children[-1].type != syms.suite:
        return None
    index, buffer = (leaf.value for leaf in parameters[0].children[::2])
    body = _statements(function.children[-1])
    following = function.next_sibling
    if len(body) < 2 or following is None or following.type != syms.simple_stmt \
            or source(body[-1]).strip() != f"return {index} + 1, {buffer}":
        return None
    parts = single_assignment(following.children[0])
    call = call_parts(parts[1]) if parts else None
    if not call or source(parts[0]).replace(" ", "") != f"_,{buffer}" \
            or not call[0].endswith(".while_loop") or len(call[1]) != 3 \
            or not is_name(call[1][1], function.children[1].value) \
            or source(call[1][2]).replace(" ", "") != f"[0,{buffer}]":
        return None
    condition = call[1][0]
    if condition.type != syms.lambdef or condition.children[-1].type != syms.comparison:
        return None
    left, operator, bound = condition.children[-1].children
    if not is_name(left, index) or operator.value != "<":
        return None
    return SampleLoop(index, bound, body[:-1], [function, following], buffer)


def _tensor_array(stmt, tensorflow) -> Optional[str]:
    """The name bound by ``name = tf.TensorArray(...)``."""
    if stmt.type != syms.simple_stmt:
        return None
    parts = single_assignment(stmt.children[0])
    if not parts or not is_name(parts[0]):
        return None
    call = call_parts(parts[1])
    if call and call[0].rpartition(".")[0] in tensorflow and call[0].endswith(".TensorArray"):
        return parts[0].value
    return None


def _write_of(stmt, buffer: str, index: str):
    """The value of ``buffer = buffer.write(index, value)``."""
    if stmt.type != syms.simple_stmt or not is_sole_statement_on_line(stmt.children[0]):
        return None
    parts = single_assignment(stmt.children[0])
    if not parts or not is_name(parts[0], buffer):
        return None
    call = call_parts(parts[1])
    if not call or call[0] != f"{buffer}.write" or len(call[1]) != 2 or call[2]:
        return None
    return call[1][1] if is_name(call[1][0], index) else None


@dataclass(eq=False, repr=False)
class Collected:
    """Where a loop puts each sample's result: ``buffer`` (a TensorArray, or a
    Python list joined after the loop), made by ``creation``, and the value
    of one sample."""

    buffer: str
    creation: object
    value: object
    tensor_array: bool


def _collected(last, earlier: List, loop: SampleLoop, tensorflow) -> Optional[Collected]:
    """The collector written by the loop body's last statement:
    ``buf = buf.write(j, v)`` after ``buf = tf.TensorArray(...)``,
    ``buf.append(v)`` after ``buf = []``, ``buf[j] = v`` after
    ``buf = [None] * n``."""
    if last.type != syms.simple_stmt or not is_sole_statement_on_line(last.children[0]):
        return None
    made = {}
    for stmt in earlier:
        parts = single_assignment(stmt.children[0]) if stmt.type == syms.simple_stmt else None
        if parts and is_name(parts[0]):
            made[parts[0].value] = (stmt, parts[1])
    for name, (stmt, value) in made.items():
        if loop.batch is None and _tensor_array(stmt, tensorflow) == name:
            written = _write_of(last, name, loop.index)
            if written is not None and loop.carried in (None, name):
                return Collected(name, stmt, written, True)
    if loop.carried is not None:
        return None
    expr = last.children[0]
    call = call_parts(expr)
    if call and call[0].endswith(".append") and len(call[1]) == 1 and not call[2]:
        name = call[0][: -len(".append")]
        if name in made and source(made[name][1]) == "[]":
            return Collected(name, made[name][0], call[1][0], False)
    parts = single_assignment(expr)
    target = subscript_parts(parts[0]) if parts else None
    if target and loop.batch is None and target[0] in made and len(target[1]) == 1 \
            and is_name(target[1][0], loop.index) \
            and re.fullmatch(r"\[None\]\*.+", source(made[target[0]][1]).replace(" ", "")):
        return Collected(target[0], made[target[0]][0], parts[1], False)
    return None


# canonical joins of a list of per-sample results -> the per-sample kind they need
_JOINS = {"tensorflow.concat": ONE, "keras.ops.concatenate": ONE,
          "tensorflow.stack": BARE, "keras.ops.stack": BARE}


def _join_kind(call, model) -> Optional[str]:
    """ONE for ``tf.concat(list, 0)``, BARE for ``tf.stack(list)`` (axis 0),
    the list being the first argument; None for anything else."""
    if not is_call(call):
        return None
    kind = _JOINS.get(model.callee(call) or "")
    parts = call_parts(call)
    if kind is None or not parts or len(parts[1]) > 2 or set(parts[2]) - {"axis"}:
        return None
    axes = parts[1][1:] + list(parts[2].values())
    if any(source(a) != "0" for a in axes) or (not axes and model.callee(call) == "tensorflow.concat"):
        return None
    return kind


def _joined_text(stored: Batched, kind: str, tf: Optional[str]) -> Optional[str]:
    """The batched tensor that replaces a join of the per-sample results."""
    if stored.kind == kind:
        return stored.text
    if kind == BARE and tf is not None:  # a stack of batch-of-one results
        return f"{tf}.expand_dims({stored.text}, 1)"
    return None


def _list_joins(scope, buffer: str, loop: SampleLoop, creation, model) -> Optional[List]:
    """(join call, kind) for every read of the list ``buffer`` after the
    loop; None when it is read any other way."""
    joins = []
    for leaf in _scope_reads(scope, buffer) or [None]:
        if leaf is None:
            return None
        if contains(creation, leaf) or loop.contains(leaf):
            continue
        argument = leaf.parent
        if argument.type == syms.arglist:
            argument = argument.parent
        call = argument.parent if argument.type == syms.trailer else None
        if call is None or start(leaf) < start(loop.nodes[0]):
            return None
        kind = _join_kind(call, model)
        if kind is None or call_parts(call)[1][0] is not leaf:
            return None
        joins.append((call, kind))
    return joins or None


def _scope_reads(scope, name: str) -> Optional[List]:
    """The reads of ``name`` in ``scope`` itself: a nested function or class
    that binds its own ``name`` is another variable; one that reads the
    outer ``name`` makes the answer None (it can run at any time)."""
    found = []
    for leaf in name_reads(scope, name):
        inner = enclosing(leaf, syms.funcdef, syms.classdef)
        if inner is None or inner is scope or (scope.type == syms.funcdef and not contains(scope, inner)):
            found.append(leaf)
        elif name in model_of(inner).assignments(inner) \
                or inner.type == syms.funcdef and is_name(inner.children[1], name):
            continue
        else:
            return None
    return found


def _carried_state(body: List, buffer: str) -> bool:
    """Does a statement read a name the body binds only later (a value
    carried from one sample to the next, ``h = cell(x[i], h)``)? The
    collector ``buffer`` itself does not count."""
    bound = {}
    for position, stmt in enumerate(body):
        for name in _assigned(stmt) - {buffer}:
            bound.setdefault(name, position)
    for position, stmt in enumerate(body):
        targets = _assigned(stmt) if stmt.type == syms.simple_stmt else set()
        reads = [leaf for leaf in stmt.leaves() if is_name(leaf)]
        if stmt.type == syms.simple_stmt and targets:
            reads = [leaf for leaf in single_assignment(stmt.children[0])[1].leaves() if is_name(leaf)]
        if any(bound.get(leaf.value, -1) >= position for leaf in reads):
            return True
    return False


def _assigned(stmt) -> Set[str]:
    if stmt.type != syms.simple_stmt:
        return set()
    parts = single_assignment(stmt.children[0])
    return {parts[0].value} if parts and is_name(parts[0]) else set()


def _stack_reads(function, buffer: str, loop: SampleLoop, creation) -> Optional[List]:
    """``buffer.stack()`` nodes after the loop; None when the buffer is used
    any other way. Once ``buf = buf.stack()`` rebinds the name, later reads
    are of the stacked tensor and need nothing."""
    reads, restacked = [], None
    for leaf in name_reads(function, buffer):
        if contains(creation, leaf) or loop.contains(leaf):
            continue
        if restacked is not None and start(leaf) >= restacked:
            continue
        power = leaf.parent
        if power.type == syms.expr_stmt and power.children[0] is leaf \
                and source(power.children[-1]) == f"{buffer}.stack()":
            reads.append(power.children[-1])
            restacked = start(power.children[-1])
            continue
        if start(leaf) < start(loop.nodes[0]) or power.type != syms.power or len(power.children) < 3 \
                or source(power.children[1]) != ".stack" or source(power.children[2]) != "()":
            return None
        reads.append(power)
    return reads


@dataclass(eq=False, repr=False)
class Plan:
    """How to vectorize one loop: its statements become ``text``; ``creation``
    goes; each of ``stacks`` (``buf.stack()``) becomes ``buf``, each join
    call of ``joins`` becomes ``buf``."""

    loop: SampleLoop
    buffer: str
    creation: object
    text: str
    stacks: List
    joins: List


def _over_samples(loop: SampleLoop, scope, model) -> bool:
    if loop.batch is None:
        return _is_batch_size(loop.bound, model)
    return model.kind_of(loop.batch).kind in (Kind.TENSOR, Kind.NDARRAY) or _unstacked(loop.batch)


def _unstacked(batch) -> bool:
    """Is ``batch`` the argument of ``tf.unstack(batch)`` (then it is a tensor)?"""
    call = batch.parent.parent if batch.parent is not None else None
    return call is not None and call.type == syms.power and (call_parts(call) or ("",))[0].endswith("unstack")


def _match(loop: SampleLoop, scope, tensorflow, model) -> Optional[Plan]:
    """The plan when ``loop`` is a vectorizable per-sample loop."""
    if not _over_samples(loop, scope, model):
        return None
    body, first = loop.body, loop.nodes[0]
    if not body or first.parent.type not in (syms.suite, syms.file_input):
        return None
    earlier = _statements(first.parent)
    earlier = earlier[: index_of(earlier, first)]
    collected = _collected(body[-1], earlier, loop, tensorflow)
    if collected is None or _carried_state(body, collected.buffer):
        return None
    function = scope if scope.type == syms.funcdef else None
    chain = Chain(loop.index, tensorflow, model, function)
    if loop.batch is not None:
        chain.values[loop.index] = Batched(source(loop.batch), BARE)
    lines = _batch_statements(body[:-1], chain)
    stored = chain.batched(collected.value) if lines is not None else None
    if stored is None:
        return None
    buffer = collected.buffer
    local = set(chain.values) | set(chain.arrays) | chain.loop_indices
    if any(leaf.value in local for leaf in _after(scope, loop)):
        return None  # a per-sample intermediate is read after the loop
    if collected.tensor_array:
        text = stored.text if stored.kind == BARE else f"{chain.tf}.expand_dims({stored.text}, 1)"
        stacks = _stack_reads(scope, buffer, loop, collected.creation)
        joins = []
        if stacks is None:
            return None
    else:
        stacks, joins = [], _list_joins(scope, buffer, loop, collected.creation, model)
        texts = {_joined_text(stored, kind, chain.tf) for _, kind in joins or ()}
        if not joins or len(texts) != 1 or None in texts:
            return None
        text = texts.pop()
    lines.append(_with_comments(body[-1], f"{buffer} = {text}"))
    return Plan(loop, buffer, collected.creation, "".join(lines), stacks, [call for call, _ in joins])


def _comprehension_plan(atom, tensorflow, model):
    """``[chain(x[j:j + 1]) for j in range(n)]`` (or ``for row in x``) as
    the list of a join, directly or through a name: (node to replace, its
    batched text, joins of the name)."""
    listmaker = atom.children[1]
    element, comp = listmaker.children
    index, iterable = comp.children[1], comp.children[3]
    call = call_parts(iterable)
    if call and call[0] == "range" and len(call[1]) == 1 and not call[2]:
        loop = SampleLoop(index.value, call[1][0], [], [atom])
    else:
        batch = _iterated_batch(iterable)
        if batch is None:
            return None
        loop = SampleLoop(index.value, None, [], [atom], batch=batch)
    scope = enclosing(atom, syms.funcdef) or find_root(atom)
    if not _over_samples(loop, scope, model):
        return None
    chain = Chain(loop.index, tensorflow, model, scope if scope.type == syms.funcdef else None)
    if loop.batch is not None:
        chain.values[loop.index] = Batched(source(loop.batch), BARE)
    stored = chain.batched(element)
    if stored is None:
        return None
    holder = atom.parent.parent if atom.parent.type == syms.arglist else atom.parent
    call = holder.parent if holder.type == syms.trailer else None
    kind = _join_kind(call, model) if call is not None else None
    if kind is not None and call_parts(call)[1][0] is atom:
        text = _joined_text(stored, kind, chain.tf)
        return (call, text, []) if text else None
    statement = atom.parent
    if statement.type != syms.expr_stmt or not is_name(statement.children[0]) \
            or len(statement.children) != 3 or not is_sole_statement_on_line(statement):
        return None
    name = statement.children[0].value
    joins = _list_joins(scope, name, loop, statement, model)
    texts = {_joined_text(stored, kind, chain.tf) for _, kind in joins or ()}
    if not joins or len(texts) != 1 or None in texts:
        return None
    return atom, texts.pop(), [call for call, _ in joins]


def _range_loop(loop):
    """(index name, bound node) of ``for index in range(bound):`` without else."""
    if loop.type != syms.for_stmt or not is_name(loop.children[1]) or len(loop.children) != 6:
        return None
    iterable = call_parts(loop.children[3])
    if not iterable or iterable[0] != "range" or len(iterable[1]) != 1 or iterable[2]:
        return None
    return loop.children[1].value, iterable[1][0]


def _is_batch_size(bound, model, depth: int = 0) -> bool:
    """``tf.shape(x)[0]``, ``x.shape[0]``, ``len(x)``, a name whose one
    reaching assignment, in the same function, is one of those, or a name
    that says ``batch``: the loop runs over samples."""
    if is_name(bound):
        if "batch" in bound.value.lower():
            return True
        value = model.assigned_value(bound.value, bound)
        return value is not None and model.scope_of(value) is model.scope_of(bound) and depth < 3 \
            and _is_batch_size(value, model, depth + 1)
    call = call_parts(bound)
    if call:
        return call[0] == "len"
    text = source(bound).replace(" ", "")
    return text.endswith("[0]") and (".shape(" in text or text.startswith("shape(")
                                     or text[:-3].endswith(".shape"))


def _statements(suite) -> List:
    return [c for c in suite.children if c.type not in (token.NEWLINE, token.INDENT, token.DEDENT)]


def _batch_statements(stmts, chain: "Chain", inner: Optional[str] = None) -> Optional[List[str]]:
    """Batched source for per-sample statements: chain assignments, a
    per-sample TensorArray filled by an inner position loop, and its stack
    (transposed so the batch axis comes first). None when not a pure chain."""
    lines = []
    for stmt in stmts:
        if stmt.type == syms.for_stmt and inner is None:
            block = _batch_position_loop(stmt, chain)
            if block is None:
                return None
            lines.append(block)
            continue
        if stmt.type != syms.simple_stmt or not is_sole_statement_on_line(stmt.children[0]):
            return None
        parts = single_assignment(stmt.children[0])
        if not parts or not is_name(parts[0]) or parts[0].value in chain.loop_indices | {chain.index}:
            return None
        name, value = parts[0].value, parts[1]
        if inner is None and _tensor_array(stmt, chain.tensorflow) == name \
                and not chain.mentions_chain(value):
            chain.arrays[name] = None
            code = f"{name} = {source(value)}"
        elif inner is not None and name in chain.arrays and _write_of(stmt, name, inner) is not None:
            written = chain.batched(_write_of(stmt, name, inner))
            if written is None or written.kind != BARE or written.rank is None:
                return None
            chain.arrays[name] = written.rank
            code = f"{name} = {name}.write({inner}, {written.text})"
        elif inner is None and chain.arrays.get(name) and source(value) == f"{name}.stack()":
            rank = chain.arrays.pop(name)
            perm = [1, 0] + list(range(2, rank + 2))
            chain.values[name] = Batched(name, BARE, rank + 1)
            code = f"{name} = {chain.tf}.transpose({name}.stack(), perm={perm})"
        else:
            result = chain.batched(value)
            if result is None:
                return None
            chain.values[name] = result
            code = f"{name} = {result.text}"
        lines.append(_with_comments(stmt, code))
    return lines


def _batch_position_loop(loop, chain: "Chain") -> Optional[str]:
    """A loop over positions inside the per-sample loop, batched statement by
    statement (its bound must not depend on the sample)."""
    header = _range_loop(loop)
    if header is None or chain.mentions_chain(header[1]):
        return None
    index, bound = header
    chain.loop_indices.add(index)
    lines = _batch_statements(_statements(loop.children[5]), chain, inner=index)
    if lines is None:
        return None
    suite = loop.children[5]
    trailing = suite.children[0].prefix.rstrip() if suite.children[0].type == token.NEWLINE else ""
    head = _with_comments(loop, f"for {index} in range({source(bound)}):{trailing}")
    return head + "".join(textwrap.indent(line, "    ") for line in lines)


def _with_comments(stmt, code: str) -> str:
    """``code`` with the comment lines before ``stmt`` and its trailing comment."""
    holder = stmt.prev_sibling if stmt.prev_sibling is not None \
        and stmt.prev_sibling.type == token.INDENT else stmt
    comments = "".join(line.strip() + "\n" for line in holder.prefix.splitlines() if line.strip())
    last = stmt.children[-1]
    trailing = last.prefix.rstrip() if stmt.type == syms.simple_stmt and last.type == token.NEWLINE else ""
    return f"{comments}{code}{trailing}\n"


def _after(function, loop: SampleLoop):
    loop_start = start(loop.nodes[0])
    return [leaf for leaf in function.leaves()
            if is_name(leaf) and not loop.contains(leaf) and start(leaf) > loop_start]


def _unstack(power, buffer: str) -> None:
    """``buf.stack()`` -> ``buf``; a statement ``buf = buf.stack()`` goes."""
    stmt = power.parent
    if stmt.type == syms.expr_stmt and is_name(stmt.children[0], buffer) and len(power.children) == 3 \
            and is_sole_statement_on_line(stmt):
        remove_statement(statement_of(stmt))
        return
    power.children[2].remove()
    power.children[1].remove()
    if len(power.children) == 1:
        name, prefix = power.children[0], power.prefix
        name.remove()
        name.prefix = prefix
        power.replace(name)


# `for j in range(bound):` / `for row in batch:` (no else), the per-sample loop
PATTERN = "for_stmt< 'for' NAME 'in' any ':' any >"
# `def fill_buf(i, buf): ...`, the body of numpy-accumulator's tf.while_loop
# (the `tf.while_loop` statement after it is checked by _while_form)
WHILE_BODY = "funcdef< 'def' NAME parameters< '(' typedargslist< NAME ',' NAME > ')' > ':' suite >"
# `[chain(x[j:j + 1]) for j in range(n)]`, one comprehension without `if`
COMPREHENSION = "atom< '[' listmaker< any comp_for< 'for' NAME 'in' any > > ']' >"


def _libraries(node) -> set:
    """The module aliases of ``tensorflow`` (empty in a Keras 3 file)."""
    return model_of(node).imports.module_aliases("tensorflow")


def _plans(node) -> dict:
    return per_tree(node, "vectorize-sample-loop: plans", lambda root: {})


def _planned(node, make):
    """The plan for ``node`` (memoized per tree: the filter decides, the
    modifier rewrites what the filter decided)."""
    plans = _plans(node)
    if id(node) not in plans:
        plans[id(node)] = (node, make(node))
    return plans[id(node)][1]


def _loop_plan(node):
    loop = _for_loop(node) if node.type == syms.for_stmt else _while_form(node)
    if loop is None:
        return None
    scope = enclosing(loop.nodes[0], syms.funcdef)
    if scope is None and node.type == syms.funcdef:
        return None
    return _match(loop, scope if scope is not None else find_root(node), _libraries(node), model_of(node))


def _a_sample_loop(node, capture, filename) -> bool:
    return _planned(node, _loop_plan) is not None


def _a_sample_comprehension(node, capture, filename) -> bool:
    return _planned(node, lambda atom: _comprehension_plan(atom, _libraries(atom), model_of(atom))) is not None


_MESSAGE = ("the loop over `{}` calls the layers once per sample; one call on the whole batch "
            "gives the same result unless a layer mixes samples (batch statistics)")


def _vectorize_loop(node, capture, filename) -> None:
    plan = _planned(node, _loop_plan)
    if not propose(plan.loop.nodes[0], _MESSAGE.format(plan.loop.index)):
        return
    for power in plan.stacks:
        _unstack(power, plan.buffer)
    for call in plan.joins:
        replace_with(call, parse_expression(plan.buffer))
    for node in plan.loop.nodes[1:]:
        remove_statement(node)
    replace_statement(plan.loop.nodes[0], plan.text)
    remove_statement(plan.creation)


def _vectorize_comprehension(atom, capture, filename) -> None:
    target, text, joins = _planned(atom, lambda a: None)
    index = atom.children[1].children[1].children[1].value
    if not propose(atom, _MESSAGE.format(index)):
        return
    name = atom.parent.children[0].value if joins else None
    for call in joins:
        replace_with(call, parse_expression(name))
    replace_with(target, parse_expression(text))
def _may_loop_over_samples(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: with TensorFlow or Keras imported, the ``for`` loops ending
    with ``buf = buf.write(...)``, ``buf.append(...)`` or ``buf[i] = ...``,
    the functions ending with a write and a ``return`` (the body of a
    ``tf.while_loop``), the list comprehensions, and with any of those the
    ``concat`` / ``stack`` calls that may join their results."""
    if not may_import(facts, ("tensorflow", "keras")):
        return []
    found: List[ast.AST] = [node for node in facts.nodes(ast.ListComp) if _may_be_per_sample(node)]
    for node in (found.node for found in statements(facts, ast.For, ast.FunctionDef)):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            last = node.body[-1]
        elif isinstance(node, ast.FunctionDef) and len(node.body) > 1 \
                and isinstance(node.body[-1], ast.Return):
            last = node.body[-2]  # numpy-accumulator's tf.while_loop body
        else:
            continue
        value = last.value if isinstance(last, (ast.Assign, ast.Expr)) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in ("write", "append"):
            found.append(node)
        elif isinstance(last, ast.Assign) and isinstance(last.targets[0], ast.Subscript):
            found.append(node)
    if found:
        found += [call for call in facts.nodes(ast.Call) if isinstance(call.func, ast.Attribute)
                  and call.func.attr in ("concat", "concatenate", "stack")]
    return found


def _may_be_per_sample(comprehension: ast.ListComp) -> bool:
    """``[call(...) for j in range(...)]`` or ``for row in x`` /
    ``tf.unstack(x)``: one generator without a condition, an element that
    calls something."""
    if len(comprehension.generators) != 1 or comprehension.generators[0].ifs:
        return False
    iterable = comprehension.generators[0].iter
    over = isinstance(iterable, ast.Name) or (
        isinstance(iterable, ast.Call) and (dotted(iterable.func) or "").rpartition(".")[2] in ("range", "unstack"))
    element = comprehension.elt.value if isinstance(comprehension.elt, ast.Subscript) else comprehension.elt
    return over and isinstance(element, ast.Call)


RECIPE = Recipe(
    id="vectorize-sample-loop",
    summary="a per-sample loop of layer calls becomes one call on the whole batch",
    safety="unsafe",
    query=lambda q: (q.select(PATTERN).filter(_a_sample_loop).modify(_vectorize_loop)
                     .select(WHILE_BODY).filter(_a_sample_loop).modify(_vectorize_loop)
                     .select(COMPREHENSION).filter(_a_sample_comprehension).modify(_vectorize_comprehension)),
    # numpy-accumulator's TensorArrays count too: the prefilter runs again
    # on each pass's text; a list of samples is joined by concat or stack
    tokens=("TensorArray", "concat", "stack"),
    precheck=_may_loop_over_samples,
    before_fails=None,
)
