"""vectorize-sample-loop: a per-sample loop of layer calls becomes one batched call.

What it does: a loop ``for j in range(batch):`` whose body is a pure chain of
layer calls on one sample, ``inputs[j, ...]``, collected in a
``tf.TensorArray`` (``buf = buf.write(j, value)``), is replaced by the same
chain on the whole batch, ``inputs[:, ...]``: one layer call per position
instead of one per sample and position. The chain may reshape the sample to a
batch of one (``tf.reshape(x, [1, ...])`` becomes ``[-1, ...]``;
``tf.expand_dims(x, 0)`` or ``x[None]`` are dropped), reshape a layer's output
to its per-sample shape (``[d]`` becomes ``[-1, d]``), and call ``self.<layer>``.
The TensorArray goes away and its ``.stack()`` reads become the batched tensor.
This is the batching step of seed 000's fix.

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
  input and as the ``write`` index.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from fissix.pgen2 import token

from migrate.recipe import Recipe, propose
from recipes._ast import (
    call_parts, contains, is_name, is_sole_statement_on_line, module_aliases, name_reads,
    remove_statement, replace_statement, sequence_items, single_assignment, source, start,
    statement_of, subscript_parts, syms,
)

ONE, BARE = "one", "bare"  # per-sample value with / without a leading batch-of-one axis
_NEWAXIS = ("None", "np.newaxis", "numpy.newaxis", "tf.newaxis")


class Chain:
    """Rewrites per-sample expressions of one loop body into batched ones."""

    def __init__(self, index: str, tensorflow: set):
        self.index = index
        self.tensorflow = tensorflow
        self.kinds: Dict[str, str] = {}

    def batched(self, expr) -> Optional[Tuple[str, str]]:
        """(batched source, kind) of a per-sample expression; None if not a chain."""
        if is_name(expr):
            return (expr.value, self.kinds[expr.value]) if expr.value in self.kinds else None
        sample = self._sample(expr)
        if sample is not None:
            return sample
        parts = call_parts(expr)
        if parts:
            return self._call(*parts)
        return self._subscript(expr)

    def _sample(self, expr):
        """``inputs[j, rest]`` -> ``inputs[:, rest]``; ``inputs[j]`` -> ``inputs``."""
        parts = subscript_parts(expr)
        if not parts or not is_name(parts[1][0], self.index) or parts[0] in self.kinds:
            return None
        rest = parts[1][1:]
        if any(self._mentions_chain(r) for r in rest):
            return None
        if not rest:
            return parts[0], BARE
        return f"{parts[0]}[:, {', '.join(source(r) for r in rest)}]", BARE

    def _call(self, callee: str, positional: List, keywords: Dict):
        head, _, attr = callee.rpartition(".")
        if not positional:
            return None
        inner = self.batched(positional[0])
        if inner is None or any(self._mentions_chain(a) for a in positional[1:]) \
                or any(self._mentions_chain(v) for v in keywords.values()):
            return None
        text, kind = inner
        if head in self.tensorflow and attr == "reshape" and len(positional) == 2 and not keywords:
            items = sequence_items(positional[1])
            if not items:
                return None
            first = source(items[0])
            shape = [source(i) for i in items]
            if first == "1":
                return f"{callee}({text}, [{', '.join(['-1'] + shape[1:])}])", ONE
            if first == "-1":
                return None
            return f"{callee}({text}, [{', '.join(['-1'] + shape)}])", BARE
        if head in self.tensorflow and attr in ("expand_dims", "squeeze"):
            axis = keywords.get("axis", positional[1] if len(positional) > 1 else None)
            wanted = BARE if attr == "expand_dims" else ONE
            if axis is None or source(axis) != "0" or kind != wanted:
                return None
            return text, ONE if attr == "expand_dims" else BARE
        if head == "self" and len(positional) == 1 and kind == ONE:
            extra = "".join(f", {k}={source(v)}" for k, v in keywords.items())
            return f"{callee}({text}{extra})", ONE
        return None

    def _subscript(self, expr):
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
        text, kind = inner
        index = source(trailer.children[1])
        if index in _NEWAXIS and kind == BARE:
            return text, ONE
        if index == "0" and kind == ONE:
            return text, BARE
        return None

    def _mentions_chain(self, node) -> bool:
        return any(is_name(leaf) and (leaf.value in self.kinds or leaf.value == self.index)
                   for leaf in node.leaves())


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


def _stack_reads(function, buffer: str, loop, creation) -> Optional[List]:
    """``buffer.stack()`` nodes after the loop; None when the buffer is used
    any other way."""
    reads = []
    for leaf in name_reads(function, buffer):
        if contains(creation, leaf) or contains(loop, leaf):
            continue
        power = leaf.parent
        if start(leaf) < start(loop) or power.type != syms.power or len(power.children) < 3 \
                or source(power.children[1]) != ".stack" or source(power.children[2]) != "()":
            return None
        reads.append(power)
    return reads


def _match(loop, function, tensorflow):
    """(creation, body rewrite text, stack reads) when ``loop`` is a vectorizable
    per-sample loop."""
    if not is_name(loop.children[1]) or len(loop.children) != 6:
        return None
    iterable = call_parts(loop.children[3])
    if not iterable or iterable[0] != "range" or len(iterable[1]) != 1:
        return None
    index = loop.children[1].value
    body = [c for c in loop.children[5].children if c.type not in (token.NEWLINE, token.INDENT, token.DEDENT)]
    if not body or loop.parent.type != syms.suite:
        return None
    siblings = [c for c in loop.parent.children if c.type not in (token.NEWLINE, token.INDENT, token.DEDENT)]
    earlier = siblings[: siblings.index(loop)]
    buffers = {_tensor_array(s, tensorflow): s for s in earlier}
    chain = Chain(index, tensorflow)
    lines = []
    for stmt in body[:-1]:
        if stmt.type != syms.simple_stmt or not is_sole_statement_on_line(stmt.children[0]):
            return None
        parts = single_assignment(stmt.children[0])
        if not parts or not is_name(parts[0]) or parts[0].value == index:
            return None
        result = chain.batched(parts[1])
        if result is None:
            return None
        chain.kinds[parts[0].value] = result[1]
        lines.append(_with_comments(stmt, f"{parts[0].value} = {result[0]}"))
    last = body[-1]
    buffer = next((b for b in buffers if b and _write_of(last, b, index) is not None), None)
    if buffer is None:
        return None
    stored = chain.batched(_write_of(last, buffer, index))
    if stored is None:
        return None
    text, kind = stored
    if kind == ONE:  # each slot kept its batch-of-one axis
        tf = "tf" if "tf" in tensorflow else min(tensorflow)
        text = f"{tf}.expand_dims({text}, 1)"
    lines.append(_with_comments(last, f"{buffer} = {text}"))
    if any(leaf.value in chain.kinds for leaf in _after(function, loop)):
        return None  # a per-sample intermediate is read after the loop
    reads = _stack_reads(function, buffer, loop, buffers[buffer])
    if reads is None:
        return None
    return buffers[buffer], "".join(lines), reads, buffer


def _with_comments(stmt, code: str) -> str:
    """``code`` with the comment lines before ``stmt`` and its trailing comment."""
    holder = stmt.prev_sibling if stmt.prev_sibling is not None \
        and stmt.prev_sibling.type == token.INDENT else stmt
    comments = "".join(line.strip() + "\n" for line in holder.prefix.splitlines() if line.strip())
    trailing = stmt.children[-1].prefix.rstrip() if stmt.children[-1].type == token.NEWLINE else ""
    return f"{comments}{code}{trailing}\n"


def _after(function, loop):
    loop_start = start(loop)
    return [leaf for leaf in function.leaves()
            if is_name(leaf) and not contains(loop, leaf) and start(leaf) > loop_start]


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


def _modify(node, capture, filename) -> None:
    tensorflow = module_aliases(node, "tensorflow")
    if not tensorflow:
        return
    for function in [n for n in node.pre_order() if n.type == syms.funcdef]:
        loops = [n for n in function.pre_order() if n.type == syms.for_stmt]
        for loop in reversed(loops):  # inner loops first
            if loop.parent is None:
                continue
            found = _match(loop, function, tensorflow)
            if found is None:
                continue
            creation, text, reads, buffer = found
            message = (f"the loop over `{loop.children[1].value}` calls the layers once per sample; "
                       f"one call on the whole batch gives the same result")
            if not propose(loop, message):
                continue
            for power in reads:
                _unstack(power, buffer)
            replace_statement(loop, text)
            remove_statement(creation)


RECIPE = Recipe(
    id="vectorize-sample-loop",
    summary="a per-sample loop of layer calls becomes one call on the whole batch",
    safety="unsafe",
    query=lambda q: q.select("file_input< any* >").modify(_modify),
    tokens=("TensorArray",),
    before_fails=None,
)
