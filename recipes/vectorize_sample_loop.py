"""vectorize-sample-loop: a per-sample loop of layer calls becomes one batched call.

What it does: a loop ``for j in range(batch):`` over the samples (the bound
is ``tf.shape(x)[0]``, ``x.shape[0]``, ``len(x)``, a name bound to one of
those, or a name containing ``batch``) whose body is a pure chain of layer
calls on one sample, ``inputs[j, ...]``, collected in a ``tf.TensorArray``
(``buf = buf.write(j, value)``), is replaced by the same chain on the whole
batch, ``inputs[:, ...]``: one layer call per position instead of one per
sample and position. The chain may reshape the sample to a batch of one
(``tf.reshape(x, [1, ...])`` becomes ``[-1, ...]``; ``tf.expand_dims(x, 0)``
or ``x[None]`` are dropped), reshape a layer's output to its per-sample shape
(``[d]`` becomes ``[-1, d]``), call ``self.<layer>``, and contain a loop over
positions that fills a per-sample TensorArray; that array's ``stack()`` is
then transposed so the batch axis comes first. The outer TensorArray goes
away and its ``.stack()`` reads become the batched tensor. This is the
batching step of seed 000's fix.

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
  (``BatchNormalization`` in training, batch-level statistics, a custom layer
  that reduces over axis 0) computes something else on the batch.
- Results agree only up to floating-point rounding (different kernels).
- Only straight-line chains of assignments, ``self.<layer>(x)`` calls and
  ``tf.reshape`` / ``tf.expand_dims`` / ``tf.squeeze`` / ``x[None]`` are
  recognised; the loop variable may appear only as the first index of the
  input and as the ``write`` index. A per-sample TensorArray filled by an
  inner position loop needs its slot rank from a ``tf.reshape`` to transpose.
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
    call_parts, contains, enclosing, index_of, is_name, is_sole_statement_on_line,
    literal_elements, name_reads, remove_statement, replace_statement,
    single_assignment, source, start, statement_of, subscript_parts, syms,
)
from recipes._model import model_of
from recipes._pyast import dotted, import_table, may_import, statements

ONE, BARE = "one", "bare"  # per-sample value with / without a leading batch-of-one axis
_NEWAXIS = ("None", "np.newaxis", "numpy.newaxis", "tf.newaxis")


@dataclass(frozen=True)
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

    def __init__(self, index: str, tensorflow: set):
        self.index = index
        self.tensorflow = tensorflow
        self.tf = "tf" if "tf" in tensorflow else min(tensorflow)
        self.values: Dict[str, Batched] = {}
        self.arrays: Dict[str, Optional[int]] = {}  # per-sample TensorArray -> slot rank
        self.loop_indices: Set[str] = set()

    def batched(self, expr) -> Optional[Batched]:
        """The batched form of a per-sample expression; None if not a chain."""
        if is_name(expr):
            known = self.values.get(expr.value)
            return Batched(expr.value, known.kind, known.rank) if known else None
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
            if self.values[name].kind != BARE or any(self.mentions_chain(c) for c in index):
                return None
            return Batched(f"{name}[:, {', '.join(source(c) for c in index)}]", BARE)
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
        if head in self.tensorflow and attr == "reshape" and len(positional) == 2 and not keywords:
            items = literal_elements(positional[1])
            if not items:
                return None
            shape = [source(i) for i in items]
            kind, rest = (ONE, shape[1:]) if shape[0] == "1" else (BARE, shape)
            batch = self._batch_item(inner.text, rest)
            if batch is None:
                return None
            return Batched(f"{callee}({inner.text}, [{', '.join([batch] + rest)}])", kind, len(shape))
        if head in self.tensorflow and attr in ("expand_dims", "squeeze"):
            axis = keywords.get("axis", positional[1] if len(positional) > 1 else None)
            wanted = BARE if attr == "expand_dims" else ONE
            if axis is None or source(axis) != "0" or inner.kind != wanted:
                return None
            return Batched(inner.text, ONE if attr == "expand_dims" else BARE)
        if head == "self" and len(positional) == 1 and inner.kind == ONE:
            extra = "".join(f", {k}={source(v)}" for k, v in keywords.items())
            return Batched(f"{callee}({inner.text}{extra})", ONE)
        return None

    def _batch_item(self, batched: str, rest: List[str]) -> Optional[str]:
        """The batch axis of a batched reshape: ``-1``, or ``tf.shape(x)[0]``
        when another item is already ``-1`` (``[1, -1]`` flattens a sample);
        None when ``x`` is not a plain name or subscript to repeat."""
        if "-1" not in rest:
            return "-1"
        if not re.fullmatch(r"[\w.]+(\[[^()]*\])?", batched):
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
        if index in _NEWAXIS and inner.kind == BARE:
            return Batched(inner.text, ONE)
        if index == "0" and inner.kind == ONE:
            return Batched(inner.text, BARE)
        return None

    def mentions_chain(self, node) -> bool:
        names = set(self.values) | set(self.arrays) | {self.index}
        return any(is_name(leaf) and leaf.value in names for leaf in node.leaves())


@dataclass
class SampleLoop:
    """A loop over ``range(bound)``: a ``for`` statement, or the ``def
    fill_buf(i, buf): ...; return i + 1, buf`` and ``tf.while_loop`` that
    numpy-accumulator writes when the bound is a tensor."""

    index: str
    bound: object
    body: List           # its statements (without the while form's ``return``)
    nodes: List          # the statements it occupies, in order
    carried: Optional[str] = None  # the while form's buffer

    def contains(self, leaf) -> bool:
        return any(contains(node, leaf) for node in self.nodes)


def _for_loop(loop) -> Optional[SampleLoop]:
    header = _range_loop(loop)
    if header is None:
        return None
    return SampleLoop(header[0], header[1], _statements(loop.children[5]), [loop])


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


def _match(loop: SampleLoop, function, tensorflow):
    """(creation, batched source, stack reads, buffer) when ``loop`` is a
    vectorizable per-sample loop."""
    if not _is_batch_size(loop.bound, model_of(function)):
        return None
    index, body, first = loop.index, loop.body, loop.nodes[0]
    if not body or first.parent.type != syms.suite:
        return None
    earlier = _statements(first.parent)
    earlier = earlier[: index_of(earlier, first)]
    buffers = {_tensor_array(s, tensorflow): s for s in earlier}
    buffer = next((b for b in buffers if b and _write_of(body[-1], b, index) is not None), None)
    if buffer is None or loop.carried not in (None, buffer):
        return None
    chain = Chain(index, tensorflow)
    lines = _batch_statements(body[:-1], chain)
    stored = chain.batched(_write_of(body[-1], buffer, index)) if lines is not None else None
    if stored is None:
        return None
    text = stored.text
    if stored.kind == ONE:  # each slot kept its batch-of-one axis
        text = f"{chain.tf}.expand_dims({text}, 1)"
    lines.append(_with_comments(body[-1], f"{buffer} = {text}"))
    local = set(chain.values) | set(chain.arrays) | chain.loop_indices
    if any(leaf.value in local for leaf in _after(function, loop)):
        return None  # a per-sample intermediate is read after the loop
    reads = _stack_reads(function, buffer, loop, buffers[buffer])
    if reads is None:
        return None
    return buffers[buffer], "".join(lines), reads, buffer


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


# `for j in range(bound):` (no else), the per-sample loop
PATTERN = "for_stmt< 'for' NAME 'in' power< 'range' trailer< '(' any ')' > > ':' any >"
# `def fill_buf(i, buf): ...`, the body of numpy-accumulator's tf.while_loop
# (the `tf.while_loop` statement after it is checked by _while_form)
WHILE_BODY = "funcdef< 'def' NAME parameters< '(' typedargslist< NAME ',' NAME > ')' > ':' suite >"


def _in_function_with_tensorflow(node, capture, filename) -> bool:
    return enclosing(node, syms.funcdef) is not None and bool(_tensorflow(node))


def _tensorflow(node) -> set:
    return model_of(node).imports.module_aliases("tensorflow")


def _modify_for(loop, capture, filename) -> None:
    sample_loop = _for_loop(loop)
    if sample_loop is not None:
        _vectorize(sample_loop, enclosing(loop, syms.funcdef), _tensorflow(loop))


def _modify_while(function, capture, filename) -> None:
    sample_loop = _while_form(function)
    if sample_loop is not None:
        _vectorize(sample_loop, enclosing(function, syms.funcdef), _tensorflow(function))


def _vectorize(loop: SampleLoop, function, tensorflow) -> None:
    found = _match(loop, function, tensorflow)
    if found is None:
        return
    creation, text, reads, buffer = found
    message = (f"the loop over `{loop.index}` calls the layers once per sample; "
               f"one call on the whole batch gives the same result")
    if not propose(loop.nodes[0], message):
        return
    for power in reads:
        _unstack(power, buffer)
    for node in loop.nodes[1:]:
        remove_statement(node)
    replace_statement(loop.nodes[0], text)
    remove_statement(creation)


def _may_loop_over_samples(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: with ``import tensorflow [as tf]``, the ``for i in
    range(...)`` loops ending with ``buf = buf.write(...)``, and the
    functions ending with it and a ``return`` (the body of a
    ``tf.while_loop``)."""
    if not may_import(facts, ("tensorflow",)) or not import_table(facts).module_aliases("tensorflow"):
        return []
    found = []
    for node in (found.node for found in statements(facts, ast.For, ast.FunctionDef)):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) \
                and isinstance(node.iter, ast.Call) and dotted(node.iter.func) == "range":
            last = node.body[-1]
        elif isinstance(node, ast.FunctionDef) and len(node.body) > 1 \
                and isinstance(node.body[-1], ast.Return):
            last = node.body[-2]  # numpy-accumulator's tf.while_loop body
        else:
            continue
        if isinstance(last, ast.Assign) and isinstance(last.value, ast.Call) \
                and isinstance(last.value.func, ast.Attribute) and last.value.func.attr == "write":
            found.append(node)
    return found


RECIPE = Recipe(
    id="vectorize-sample-loop",
    summary="a per-sample loop of layer calls becomes one call on the whole batch",
    safety="unsafe",
    query=lambda q: (q.select(PATTERN).filter(_in_function_with_tensorflow).modify(_modify_for)
                     .select(WHILE_BODY).filter(_in_function_with_tensorflow).modify(_modify_while)),
    # numpy-accumulator's TensorArrays count too: the prefilter runs again
    # on each pass's text
    tokens=("TensorArray",),
    precheck=_may_loop_over_samples,
    before_fails=None,
)
