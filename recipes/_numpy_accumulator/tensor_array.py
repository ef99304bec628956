"""The TensorArray rewrite of a NumPy buffer: where it holds (one write per
index, by the counter of the loop it sits in: _for_a_tensor_array and its
``_why_not_*``), and the edits (TensorArray, ``.write``, ``.stack()`` after the
loop, transposes, reshapes, ``tf.while_loop`` over a tensor bound)."""

from __future__ import annotations

import re
import textwrap
from typing import Dict, FrozenSet, List, Optional

from fissix.pgen2 import token

from recipes._fissix import (
    call_parts, contains, enclosing, insert_after, is_full_slice, is_name, is_sole_statement_on_line,
    literal_elements, name_reads, not_an_attribute, parse_expression, find_root, remove_statement,
    replace_statement, scope_names, source, start, statement_of, subscript_parts, syms,
)
from recipes._model import MANY, Kind
from recipes._numpy_accumulator import scatter
from recipes._numpy_accumulator.buffers import (
    Analysis, Buffer, _SHAPED, _TENSOR_ATTRIBUTES, _dimension, _shape_zero_of,
)


def _for_a_tensor_array(buffer: Buffer, analysis: Analysis, writes) -> bool:
    """Can ``buffer`` become a ``tf.TensorArray`` (one write, by the
    counter of the loop it sits in)? Fills in its loop and reads; else
    ``buffer.problem`` says why not."""
    if buffer.problem:
        return False
    if len(writes) > 1:
        buffer.problem = "the buffer is written by more than one statement"
        return False
    write = buffer.write
    if len(write.children) != 3 or write.children[1].type != token.EQUAL \
            or not is_sole_statement_on_line(write) or subscript_parts(write.children[0]) is None:
        buffer.problem = "the write is not a plain `buf[...] = value` statement"
        return False
    _, index = subscript_parts(write.children[0])
    pair = _pair_loops(write, index)
    loop = pair and (pair[0], 0) or _index_loop(write, index)
    if loop is None:
        buffer.problem = "the write is not directly in a `for i in range(...)` loop over one index"
        return False
    buffer.loop, buffer.axis = loop
    if pair:
        buffer.inner = pair[1]
        buffer.problem = _why_not_a_pair(buffer, index, analysis)
        if buffer.problem:
            return False
    elif any(not is_full_slice(c) for i, c in enumerate(index) if i != buffer.axis):
        buffer.problem = _why_not_columns(buffer, index, analysis)
        if buffer.problem:
            return False
    creation_stmt = statement_of(buffer.creation)
    if buffer.loop.parent is not creation_stmt.parent or start(buffer.loop) < start(creation_stmt):
        buffer.problem = "the filling loop is not in the block that creates the buffer"
        return False
    if buffer.axis and buffer.dims is None:
        buffer.problem = _why_not_in_place(buffer, analysis)
        if buffer.problem:
            return False
        buffer.in_place = True
    if buffer.dims is not None and buffer.axis >= len(buffer.dims):
        buffer.problem = "the index has more components than the buffer has axes"
        return False
    _classify_reads(buffer, analysis)
    if buffer.problem is None:
        buffer.bound = _tensor_bound(buffer.loop, analysis)
        if buffer.bound is not None:
            buffer.problem = _why_not_liftable(buffer.loop, analysis)
    if buffer.problem is None:
        _decide_the_batch_axis(buffer, analysis)
    return buffer.problem is None


def _decide_the_batch_axis(buffer: Buffer, analysis: Analysis) -> None:
    """Does the write drop a leading 1 of its value (``buffer.batch_of_one``)?
    Where the model cannot tell, a reshape to a slot of known shape holds
    either way; without that shape the squeeze is a guess: ``buffer.doubt``."""
    doubts: List[str] = []
    one = _batch_of_one(buffer.write.children[-1], analysis, doubts)
    if one is None and buffer.columns is None and (buffer.dims is None or buffer.in_place):
        buffer.doubt = (f"the fix drops axis 0 of the value, which comes from a batch of one sample, but "
                        f"whether {doubts[0]} keeps that axis is not known")
    buffer.batch_of_one = one is not False


def _why_not_columns(buffer: Buffer, index, analysis: Analysis) -> Optional[str]:
    """Why ``buf[i, cols] = v`` cannot write row ``i`` as a background row
    with ``v`` scattered into ``cols`` (None when it can; ``buffer.columns``
    is then the column selection)."""
    if buffer.axis != 0 or len(index) != 2:
        return "index components other than the loop index must be `:` (or `buf[i, cols]`)"
    if buffer.factory not in _SHAPED or buffer.dims is None or len(buffer.dims) != 2:
        return "`buf[i, cols]` is fixed only in a 2-D `np.zeros`/`empty`/`ones`/`full` buffer of known shape"
    width = f"{analysis.tf}.range({_dimension(buffer.dims[1], analysis, analysis.tf)})"
    cols = index[1]
    if cols.type == syms.subscript:  # a slice written in place: a:b, a:b:c
        buffer.columns = f"{width}[{source(cols).strip()}]"
        return None
    bound = analysis.bound.get(cols.value, []) if is_name(cols) else []
    value = bound[0] if len(bound) == 1 else cols
    if (call_parts(value) or ("",))[0] == "slice":
        buffer.columns = f"{width}[{source(cols).strip()}]"
        return None
    items = literal_elements(value)
    numbers = [item.value for item in items or () if item.type == token.NUMBER and item.value.isdigit()]
    if items and len(numbers) == len(items) and len(set(map(int, numbers))) == len(numbers):
        buffer.columns = f"{analysis.tf}.constant([{', '.join(numbers)}])"
        return None
    return (f"the columns `{source(cols).strip()}` are neither a slice nor a list of distinct "
            f"non-negative integer literals")


# ``_like``/``copy`` buffers rewritten in place -> their TensorFlow background
_IN_PLACE = {"zeros_like": "zeros_like", "empty_like": "zeros_like", "ones_like": "ones_like",
             "copy": "convert_to_tensor"}


def _why_not_in_place(buffer: Buffer, analysis: Analysis) -> Optional[str]:
    """Why a write along axis > 0 of a buffer whose rank the source does
    not say cannot become a tensor updated at each step by slicing around
    the written index (None when it can: no rank needed)."""
    if buffer.factory not in _IN_PLACE or buffer.data is None:
        return "the loop index is not on axis 0 and the buffer's rank is unknown"
    if buffer.conversion is not None:
        return ("the loop index is not on axis 0, the buffer's rank is unknown and it is "
                "rebound after the loop")
    if _tensor_bound(buffer.loop, analysis) is not None:
        return "the loop index is not on axis 0, the buffer's rank is unknown and the bound is a tensor"
    _, positional, _ = call_parts(buffer.loop.children[3])
    if len(positional) > 1 and not (positional[0].type == token.NUMBER and positional[0].value.isdigit()):
        return ("the loop index is not on axis 0, the buffer's rank is unknown and the loop may "
                "start below 0")
    return None


def _pair_loops(write, index):
    """(outer, inner) for ``buf[i, j] = v`` written directly in ``for j`` that
    sits directly in ``for i`` (both over ``range``)."""
    loops = []
    node = write
    for _ in range(2):
        stmt = statement_of(node)
        loop = stmt.parent.parent if stmt.parent.type == syms.suite else None
        if loop is None or loop.type != syms.for_stmt or not is_name(loop.children[1]) \
                or (call_parts(loop.children[3]) or ("",))[0] != "range":
            return None
        loops.insert(0, loop)
        node = loop
    if len(index) < 2 or not all(is_name(c, l.children[1].value) for c, l in zip(index, loops)):
        return None
    return loops[0], loops[1]


def _why_not_a_pair(buffer: Buffer, index, analysis: Analysis) -> Optional[str]:
    """Why ``buf[i, j] = v`` cannot become one TensorArray written at
    ``i * m + j`` and reshaped to ``(n, m, ...)`` after the loops."""
    if any(not is_full_slice(c) for c in index[2:]):
        return "index components other than the loop indices must be `:`"
    bounds = [call_parts(loop.children[3])[1] for loop in (buffer.loop, buffer.inner)]
    if buffer.dims is None or len(buffer.dims) < 2 \
            or [[source(b).strip() for b in bound] for bound in bounds] != [[d] for d in buffer.dims[:2]]:
        return "the two loops do not run over the buffer's first two axes, `range(n)` and `range(m)`"
    if any(_tensor_bound(loop, analysis) for loop in (buffer.loop, buffer.inner)):
        return "a `buf[i, j]` write over a tensor bound"
    return None


def _index_loop(write, index):
    """(for_stmt, axis) when the write sits directly in a ``for v in range(...)``
    loop and ``v`` is exactly one of the index components."""
    stmt = statement_of(write)
    loop = stmt.parent.parent if stmt.parent.type == syms.suite else None
    if loop is None or loop.type != syms.for_stmt or not is_name(loop.children[1]):
        return None
    iterable = call_parts(loop.children[3])
    if not iterable or iterable[0] != "range" or not scatter.counts_up_from_zero(loop.children[3]):
        return None  # a negative index counts from the end in NumPy, fails in a TensorArray
    variable = loop.children[1].value
    axes = [i for i, c in enumerate(index) if is_name(c, variable)]
    return (loop, axes[0]) if len(axes) == 1 else None


def _tensor_bound(loop, analysis: Analysis) -> Optional[str]:
    """The bound of ``for i in range(n)`` when ``n`` is a tensor in graph mode
    (``tf.shape(x)[0]``, ``x.shape[0]``, a name bound to one): a Python ``for``
    over it needs autograph, which Keras 3 does not apply to ``call``."""
    _, positional, _ = call_parts(loop.children[3])
    if len(positional) != 1:
        return None
    tf = analysis.tf
    tensor = _shape_zero_of(positional[0], analysis.bound)
    if tensor is not None:
        return f"{tf}.shape({tensor})[0]"
    return source(positional[0]) if _computed_by_tensorflow(positional[0], analysis) else None


def _computed_by_tensorflow(expr, analysis: Analysis, depth: int = 0) -> bool:
    """``tf.shape(x)[0]``, ``tf.size(x)``, a tensor, or a name bound to one."""
    if is_name(expr) and len(analysis.bound.get(expr.value, ())) == 1 and depth < 3:
        return _computed_by_tensorflow(analysis.bound[expr.value][0], analysis, depth + 1)
    if expr.type == syms.power and is_name(expr.children[0]) \
            and analysis.model.qualified(expr.children[0]) == "tensorflow":
        return True
    if ".shape[" in source(expr).replace(" ", "") or call_parts(expr) and call_parts(expr)[0] == "len":
        return False  # a static dimension: a Python int (or None)
    return analysis.is_tensor(expr)


_LEAVE_A_LOOP = ("return", "yield", "global", "nonlocal")


def _why_not_liftable(loop, analysis: Analysis) -> Optional[str]:
    """Why the body of ``loop`` cannot become the body of a ``tf.while_loop``
    function (None when it can): it must not leave the loop early, and the
    names it binds, other than the index and the buffers it fills, must live
    only inside it (nothing carried across iterations or read afterwards)."""
    if len(loop.children) != 6:
        return "the loop over a tensor bound has an `else` clause"
    body = loop.children[5]
    carried = {b.name for b in analysis.buffers if b.write is not None and contains(body, b.write)
               and not contains(body, b.creation)}
    for leaf in body.leaves():
        leaves_early = leaf.value in ("break", "continue") \
            and enclosing(leaf, syms.for_stmt, syms.while_stmt) is loop
        if leaf.type == token.NAME and leaf.value in _LEAVE_A_LOOP or leaves_early:
            return f"the loop over a tensor bound contains `{leaf.value}`"
    inside = {leaf.value for leaf in body.leaves() if _binds(leaf)} - carried - {loop.children[1].value}
    outside = {leaf.value for leaf in analysis.function.leaves()
               if is_name(leaf) and not_an_attribute(leaf) and not contains(body, leaf)}
    shared = sorted(inside & outside)
    if shared:
        return f"`{shared[0]}` lives on outside the loop over a tensor bound"
    return None


def _binds(leaf) -> bool:
    """Is ``leaf`` a name an assignment or a ``for`` binds?"""
    if not is_name(leaf) or not not_an_attribute(leaf):
        return False
    node = leaf
    while node.parent is not None and node.parent.type in (syms.exprlist, syms.testlist_star_expr,
                                                            syms.atom, syms.testlist_gexp):
        node = node.parent
    parent = node.parent
    if parent is None:
        return False
    if parent.type == syms.expr_stmt:
        return parent.children.index(node) < len(parent.children) - 1
    return parent.type == syms.for_stmt and parent.children[1] is node


def _classify_reads(buffer: Buffer, analysis: Analysis) -> None:
    creation_target = buffer.creation.children[0]
    write_target = buffer.write.children[0].children[0]
    loop_start = start(buffer.loop)
    for leaf in name_reads(analysis.function, buffer.name):
        if leaf is creation_target or leaf is write_target:
            continue
        if contains(buffer.loop, leaf):
            read = _slot_read(leaf, buffer)
            if read is None:
                buffer.problem = f"`{source(statement_of(leaf))}` uses the buffer inside the loop"
                return
            buffer.slot_reads.append(read)
        elif start(leaf) > loop_start:
            attribute = _numpy_attribute(leaf)
            if attribute:
                buffer.problem = f"`{buffer.name}.{attribute}` after the loop expects a NumPy array"
                return
            buffer.read_after = True
        else:
            buffer.problem = f"`{source(statement_of(leaf))}` uses the buffer before it is filled"
            return


def _numpy_attribute(leaf) -> Optional[str]:
    """``mean`` for ``buf.mean``: an attribute a tensor may not have."""
    after = leaf.next_sibling
    if after is None or after.type != syms.trailer or after.children[0].type != token.DOT:
        return None
    attribute = after.children[1].value
    return None if attribute in _TENSOR_ATTRIBUTES else attribute


def _slot_read(leaf, buffer: Buffer):
    """The ``buf[i]`` node of a read of one slot along the written axis."""
    power = leaf.parent
    parts = subscript_parts(power) if power is not None else None
    if not parts or buffer.axis != 0 or buffer.inner is not None:
        return None
    _, index = parts
    if any(not is_full_slice(c) for c in index[1:]) or is_full_slice(index[0]):
        return None
    statement = power.parent
    if statement is not None and statement.type == syms.expr_stmt and statement.children[0] is power:
        return None  # an augmented or second assignment target
    return power


def _batch_of_one(expr, analysis: Analysis, doubts: List[str], seen: FrozenSet[int] = frozenset()) -> Optional[bool]:
    """Is ``expr`` a batch of one sample, whose leading 1 NumPy drops into a
    slot and a TensorArray keeps? True: ``tf.reshape(x, [1, ...])``,
    ``tf.expand_dims(x, 0)``, ``x[None]``, ``x[i:i + 1]``, or a Keras layer or
    model (the model's kinds) called on one. False: none goes into it. None:
    one goes into a call or an operation the model cannot type (``doubts``
    gets it), which may keep the axis or drop it. ``seen``: the values of
    names followed so far (a name bound from itself adds nothing)."""
    if is_name(expr):
        bindings = analysis.model.reaching(expr.value, expr)
        values = [b.value for b in bindings if b.how in ("assign", "annassign") and not b.path
                  and b.value is not None and id(b.value) not in seen]
        verdicts = {_batch_of_one(v, analysis, doubts, seen | {id(v)}) for v in values}
        if len(verdicts) > 1 or any(b is MANY for b in bindings):
            doubts.append(f"`{expr.value}`")  # bound to one and to another value, or too often to follow
            return None
        return verdicts.pop() if verdicts else False
    parts = call_parts(expr)
    if parts:
        return _call_of_one(expr, parts, analysis, doubts, seen)
    if expr.type == syms.power and expr.children[-1].type == syms.trailer \
            and expr.children[-1].children[0].type == token.LSQB:
        first = expr.children[-1].children[1]
        if first.type == syms.subscriptlist:
            first = first.children[0]
        if source(first).strip() in ("None", "np.newaxis", "tf.newaxis", "numpy.newaxis") or _one_row_slice(first):
            return True
        return False  # an element of the batch, or a slice: axis 0 is what the subscript says
    operands = [c for c in expr.children if c.children or c.type == token.NAME] \
        if expr.type in _ARITHMETIC else []
    if any(_batch_of_one(c, analysis, doubts, seen) is not False for c in operands):
        doubts.append(f"`{source(expr).strip()}`")  # broadcasting may keep the axis
        return None
    return False


# TensorFlow reductions: without an axis, a scalar
_TO_A_SCALAR = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_std",
                "reduce_variance", "reduce_logsumexp", "reduce_all", "reduce_any", "norm", "l2_loss")


# expressions whose operands broadcast
_ARITHMETIC = (syms.arith_expr, syms.term, syms.factor, syms.shift_expr, syms.and_expr, syms.xor_expr, syms.expr)


def _call_of_one(expr, parts, analysis: Analysis, doubts: List[str], seen: FrozenSet[int]) -> Optional[bool]:
    callee, positional, keywords = parts
    attr = callee.rpartition(".")[2]
    if attr == "reshape" and len(positional) >= 2:
        items = literal_elements(positional[1])
        return bool(items) and source(items[0]).strip() == "1"
    if attr == "expand_dims" and positional:
        axis = keywords.get("axis", positional[1] if len(positional) > 1 else None)
        if axis is not None and source(axis).strip() == "0":
            return True
    qualified = analysis.model.callee(expr) or ""
    if qualified.startswith("tensorflow.") and attr in _TO_A_SCALAR and len(positional) < 2 \
            and "axis" not in keywords:
        return False  # reduced over every axis: a scalar
    called = analysis.model.receiver_kind(expr, len(expr.children) - 1)
    if called.kind in (Kind.MODEL, Kind.LAYER):  # Keras keeps the batch axis
        return _batch_of_one(positional[0], analysis, doubts, seen) if positional else False
    inputs = [_batch_of_one(a, analysis, doubts, seen) for a in positional]
    if any(one is not False for one in inputs):
        doubts.append(f"`{callee}`")
        return None
    return False


def _one_row_slice(node) -> bool:
    """``i:i + 1`` (a slice of one row keeps the batch axis)."""
    if node.type != syms.subscript or len(node.children) != 3:
        return False
    low, _, high = node.children
    return source(high).replace(" ", "").strip("()") == f"{source(low).strip()}+1"


def _read_slots(buffer: Buffer) -> None:
    """``buf[i]`` read inside the loop becomes ``buf.read(i)``."""
    for read in buffer.slot_reads:
        _, index = subscript_parts(read)
        call = parse_expression(f"{buffer.name}.read({source(index[0])})")
        call.prefix = read.prefix
        read.replace(call)


def _rewrite(buffer: Buffer, analysis: Analysis, tf: str) -> None:
    """The write, the creation: from their text as it is now (after _read_slots
    and the NumPy calls' fixes inside them)."""
    if buffer.in_place:
        _rewrite_in_place(buffer, analysis, tf)
        return
    index_var = buffer.loop.children[1].value
    value = buffer.write.children[-1]
    text = source(value)
    if buffer.dtype not in (None, "float32"):
        text = f"{tf}.cast({text}, {tf}.{buffer.dtype})"
    slot = [_dimension(d, analysis, tf) for i, d in enumerate(buffer.dims)
            if i != buffer.axis] if buffer.dims is not None else None
    if buffer.columns is not None:
        text = (f"{tf}.tensor_scatter_nd_update({_background_row(buffer, analysis, tf)}, "
                f"{tf}.reshape({buffer.columns}, [-1, 1]), {tf}.reshape({text}, [-1]))")
    elif buffer.batch_of_one:
        text = (f"{tf}.reshape({text}, [{', '.join(slot)}])" if slot is not None
                else f"{tf}.squeeze({text}, axis=0)")
    if buffer.inner is not None:
        slot = slot[1:]
        if buffer.batch_of_one:
            text = f"{tf}.reshape({source(value)}, [{', '.join(slot)}])"
        index_var = f"{index_var} * {_factor(buffer.dims[1])} + {buffer.inner.children[1].value}"
    write = parse_expression(f"{buffer.name} = {buffer.name}.write({index_var}, {text})")
    write.prefix = buffer.write.prefix
    buffer.write.replace(write)

    dtype = f"{tf}.{buffer.dtype or 'float32'}"
    if buffer.inner is not None:
        size = f"size={_factor(buffer.dims[0])} * {_factor(buffer.dims[1])}"
    elif buffer.dims is not None:
        size = f"size={_dimension(buffer.dims[buffer.axis], analysis, tf)}"
    else:
        size = "size=0, dynamic_size=True"
    array = parse_expression(f"{tf}.TensorArray({dtype}, {size})")
    old = buffer.creation.children[-1]
    array.prefix = old.prefix
    old.replace(array)


def _background_row(buffer: Buffer, analysis: Analysis, tf: str) -> str:
    """One row of the buffer before its columns are written."""
    dtype = f"{tf}.{buffer.dtype or 'float32'}"
    width = _dimension(buffer.dims[1], analysis, tf)
    if buffer.factory == "ones":
        return f"{tf}.ones([{width}], {dtype})"
    if buffer.factory == "full":
        return f"{tf}.fill([{width}], {tf}.cast({source(buffer.fill).strip()}, {dtype}))"
    return f"{tf}.zeros([{width}], {dtype})"  # zeros; empty: any value will do


def _rewrite_in_place(buffer: Buffer, analysis: Analysis, tf: str) -> None:
    """``buf[:, t] = v`` of a ``_like``/``copy`` buffer: the buffer becomes a
    tensor and each step rebuilds it around slot ``t`` (``tf.concat`` of the
    slices before and after it and ``v`` with the axis put back), which
    keeps NumPy's meaning for slots the loop does not write and needs no rank."""
    _, index = subscript_parts(buffer.write.children[0])
    variable = buffer.loop.children[1].value
    value = buffer.write.children[-1]
    text = source(value).strip()
    if buffer.batch_of_one:
        text = f"{tf}.squeeze({text}, axis=0)"
    name, axis = buffer.name, buffer.axis

    def around(part: str) -> str:
        return ", ".join(part if i == axis else source(c).strip() for i, c in enumerate(index))

    write = parse_expression(
        f"{name} = {tf}.concat([{name}[{around(':' + variable)}], "
        f"{tf}.expand_dims({tf}.cast({text}, {name}.dtype), {axis}), "
        f"{name}[{around(variable + ' + 1:')}]], axis={axis})")
    write.prefix = buffer.write.prefix
    buffer.write.replace(write)
    data = source(buffer.data).strip()
    extra = f", dtype={tf}.{buffer.dtype}" if buffer.dtype and buffer.factory != "copy" else ""
    background = parse_expression(f"{tf}.{_IN_PLACE[buffer.factory]}({data}{extra})")
    old = buffer.creation.children[-1]
    background.prefix = old.prefix
    old.replace(background)


def _factor(text: str) -> str:
    """``text`` safe as a factor of a product: parenthesised unless a name or number."""
    return text if re.fullmatch(r"[\w.]+", text) else f"({text})"


def _stack_after_loop(buffer: Buffer, tf: str) -> None:
    """Stack once after the loop so later reads see the NumPy-shaped tensor."""
    if buffer.read_after and not buffer.in_place:
        stacked = f"{buffer.name}.stack()"
        if buffer.inner is not None:
            stacked = f"{tf}.reshape({stacked}, [{', '.join(buffer.dims)}])"
        if buffer.axis:
            rank = len(buffer.dims)
            perm = list(range(1, buffer.axis + 1)) + [0] + list(range(buffer.axis + 1, rank))
            stacked = f"{tf}.transpose({stacked}, perm={perm})"
        insert_after(buffer.loop, f"{buffer.name} = {stacked}\n")


def _merge_conversion(buffer: Buffer, tf: str) -> None:
    """``buf = tf.convert_to_tensor(buf, dtype=D)`` after the loop: the stacked
    buffer already is a tensor of the dtype the conversion named (it set the
    TensorArray's), so the line goes; to another dtype it becomes a cast."""
    stmt, dtype = buffer.conversion, buffer.conversion_dtype
    if dtype in (None, buffer.dtype or "float32"):
        remove_statement(statement_of(stmt))
    elif dtype != "?":
        cast = parse_expression(f"{tf}.cast({buffer.name}, {tf}.{dtype})")
        cast.prefix = stmt.children[-1].prefix
        stmt.children[-1].replace(cast)


def _lift_loop(loop, buffers: List[Buffer], tf: str) -> None:
    """``for i in range(n): body`` over a tensor ``n`` becomes ``def
    fill_buf(i, buf): body; return i + 1, buf`` and ``tf.while_loop``: a
    Python ``for`` over a tensor needs autograph, and Keras 3 does not
    autograph a subclassed ``call``; ``tf.while_loop`` runs eagerly, under
    ``tf.function`` and under ``fit`` in TF 2.3, tf-keras and Keras 3."""
    index = loop.children[1].value
    carried = ", ".join(b.name for b in buffers)
    name = _fresh_name(f"fill_{buffers[0].name}", loop)
    suite = loop.children[5]
    comment = suite.children[0].prefix.rstrip() if suite.children[0].type == token.NEWLINE else ""
    body = textwrap.dedent("".join(str(c) for c in suite.children[1:] if c.type != token.DEDENT))
    text = (f"def {name}({index}, {carried}):{comment}\n"
            + textwrap.indent(body, "    ")
            + f"    return {index} + 1, {carried}\n"
            + f"_, {carried} = {tf}.while_loop(lambda {index}, *_: {index} < {buffers[0].bound}, "
            + f"{name}, [0, {carried}])\n")
    replace_statement(loop, text)


def _fresh_name(wanted: str, node) -> str:
    """``wanted``, or ``wanted_2``... when the file already uses the name."""
    taken = scope_names(find_root(node))
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}_{number}", number + 1
    return name


def _lift_tensor_bound_loops(fixes: List[Buffer], tf: str) -> None:
    """Lift every loop over a tensor bound, inner loops first."""
    loops: Dict[int, List[Buffer]] = {}
    for buffer in fixes:
        if buffer.bound is not None:
            loops.setdefault(id(buffer.loop), []).append(buffer)
    for group in sorted(loops.values(), key=lambda g: start(g[0].loop), reverse=True):
        _lift_loop(group[0].loop, group, tf)
