"""The general rewrite of a NumPy buffer that receives tensors, whatever
fills it: the buffer becomes a tensor (``tf.zeros``..., or the NumPy value
converted; ``keras.ops`` in Keras 3 code: Spelling), and each write becomes a
``tf.tensor_scatter_nd_update`` (``_add`` for ``+=`` / ``-=``) of the written
slot. It does not depend on the loop: ``while`` loops, ``enumerate``/``zip``,
loops over a tensor, several writes, augmented writes, ``buf[i][j]``,
columns, one-row slices and unrolled writes are all one form, which runs
eagerly, under ``tf.function`` (a loop-carried tensor of fixed shape) and
``fit``, on TF 2.3 and current TF.

Used where the TensorArray rewrite (one write per index, by the loop
counter) does not apply. ``why_not`` decides (and records the plan on the
buffer); ``rewrite`` only edits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from fissix.pgen2 import token

from recipes._fissix import call_parts, contains, is_full_slice, is_name, literal_elements, parse_expression, source, syms
from recipes._numpy_accumulator.buffers import _TENSOR_ATTRIBUTES, _dimension

# the assignments a write may use
_OPERATORS = ("=", "+=", "-=", "*=", "/=")
# NumPy factory -> the call making the same start from a shape (any start will do for `empty`)
_FROM_SHAPE = {"zeros": "zeros", "empty": "zeros", "ones": "ones"}
_LIKE = {"zeros_like": "zeros_like", "empty_like": "zeros_like", "ones_like": "ones_like"}
_FLOATS = ("float16", "bfloat16", "float32", "float64")


@dataclass(eq=False, repr=False)
class Write:
    """One ``buf[...] op= value`` statement and how it becomes a scatter."""

    statement: object
    operator: str
    index: List  # the index components, ``buf[i][j]`` joined to ``[i, j]``

    @property
    def value(self):
        """The value written, as the statement reads now (a fix of a NumPy
        call in it comes before the scatter)."""
        return self.statement.children[2]


def writes_of(buffer, leaves) -> Optional[List[Write]]:
    """Every statement writing into ``buffer.name`` among the NAME ``leaves``
    read in its function; None when one is not a write this form knows."""
    found = []
    for leaf in leaves:
        power = leaf.parent
        statement = power.parent if power is not None else None
        if power is None or power.type != syms.power or power.children[0] is not leaf \
                or statement is None or statement.type != syms.expr_stmt or statement.children[0] is not power:
            continue
        trailers = power.children[1:]
        if not all(t.type == syms.trailer and t.children[0].type == token.LSQB for t in trailers):
            continue
        if len(statement.children) != 3 or statement.children[1].value not in _OPERATORS:
            return None
        index = []
        for trailer in trailers:
            inner = trailer.children[1]
            index += [c for c in inner.children if c.type != token.COMMA] \
                if inner.type == syms.subscriptlist else [inner]
        found.append(Write(statement, statement.children[1].value, index))
    return found


def why_not(buffer, writes: Optional[List[Write]], reads, analysis) -> Optional[str]:
    """Why the buffer cannot become a tensor updated by scatters (None when
    it can: ``buffer.scatter`` then holds its writes)."""
    if writes is None:
        return "a write into the buffer is not `buf[...] = value` or `+=`, `-=`, `*=`, `/=`"
    if buffer.dtype is not None and buffer.dtype not in _FLOATS:
        return f"the buffer's dtype `{buffer.dtype}` is not a float"
    if _start(buffer, analysis) is None:
        return "the buffer's shape is not known from the source"
    written = {id(w.statement) for w in writes}
    for leaf in reads:
        statement = _statement(leaf)
        if id(statement) in written or statement is buffer.creation:
            continue
        attribute = _attribute(leaf)
        if attribute is not None and attribute not in _TENSOR_ATTRIBUTES:
            return f"`{buffer.name}.{attribute}` expects a NumPy array"
        if attribute is None and not _subscripted(leaf) and _written_later(leaf, writes):
            return (f"`{source(statement)}` reads the whole buffer while it is still written "
                    f"(a NumPy alias sees later writes, a tensor does not)")
    for write in writes:
        problem = _why_not_index(write.index, write.statement) or _why_not_unconverted(write.statement, analysis)
        if problem:
            return problem
        if analysis.imports.keras_ops and not buffer.dims and _kinds(write.index)[0] == "all":
            return "a column of a buffer whose rank the source does not say, in keras.ops code"
    buffer.scatter = writes
    return None


def _why_not_unconverted(statement, analysis) -> Optional[str]:
    """A Python ``for`` over a tensor (``tf.range(n)``) runs in graph mode only
    where autograph converts it: Keras converts ``call``, losses and metrics,
    not ``train_step``/``test_step``."""
    function = statement
    while function is not None and function.type != syms.funcdef:
        function = function.parent
    context = analysis.model.gradient_context(function.children[-1]) if function is not None else None
    if context is None or context.how != "train_step":  # the step itself, not a tape inside it
        return None
    loop = _loop_of(statement)
    while loop is not None:
        if loop.type == syms.for_stmt and analysis.is_tensor(loop.children[3]):
            return (f"`for ... in {source(loop.children[3])}` iterates over a tensor in `train_step`, "
                    f"which Keras does not autograph: the loop cannot run under `fit`")
        loop = _loop_of(loop)
    return None


def _subscripted(leaf) -> bool:
    after = leaf.next_sibling
    return after is not None and after.type == syms.trailer and after.children[0].type == token.LSQB


def _written_later(leaf, writes: List[Write]) -> bool:
    """Is a write after ``leaf``, or in a loop around both (run again after it)?"""
    for write in writes:
        if write.statement.get_lineno() > leaf.get_lineno():
            return True
        loop = _loop_of(write.statement)
        while loop is not None:
            if contains(loop, leaf):
                return True
            loop = _loop_of(loop)
    return False


def _loop_of(node):
    node = node.parent
    while node is not None and node.type not in (syms.for_stmt, syms.while_stmt, syms.funcdef):
        node = node.parent
    return node if node is not None and node.type != syms.funcdef else None


def _statement(node):
    while node.parent is not None and node.type not in (syms.expr_stmt, syms.simple_stmt):
        node = node.parent
    return node


def _attribute(leaf) -> Optional[str]:
    after = leaf.next_sibling
    if after is None or after.type != syms.trailer or after.children[0].type != token.DOT:
        return None
    return after.children[1].value


def _kinds(index) -> List[str]:
    """``scalar``, ``all`` (a bare ``:``) or ``range`` (``a:b``) per component."""
    kinds = []
    for component in index:
        if is_full_slice(component):
            kinds.append("all")
        elif component.type == syms.subscript:
            kinds.append("range")
        else:
            kinds.append("scalar")
    return kinds


def _why_not_index(index, statement) -> Optional[str]:
    kinds = _kinds(index)
    while kinds and kinds[-1] == "all":
        kinds.pop()
    if not kinds:
        return "a write of the whole buffer (`buf[:] = v`)"
    if "range" in kinds:
        slice_ = index[kinds.index("range")]
        parts = [c for c in slice_.children]
        if kinds != ["range"] or len(parts) != 3 or parts[1].type != token.COLON:
            return f"the slice `{source(slice_)}` is not `a:b` as the only index before `:`"
    components = list(zip(index, kinds))
    if kinds == ["range"]:
        low, _, high = index[0].children
        components = [(low, "scalar"), (high, "scalar")]
    for component, kind in components:
        if kind == "scalar" and not _non_negative(component, statement):
            return f"the index `{source(component)}` may be negative or is not an integer"
    return None


def _non_negative(node, statement) -> bool:
    """A counter (_counts_up), a non-negative integer literal, or a sum
    or product of those (``i * m + j``, ``i + 1``): never a negative index,
    which NumPy counts from the end and a scatter rejects."""
    if is_name(node):
        return _counts_up(node.value, statement)
    if node.type == token.NUMBER:
        return node.value.isdigit()
    if node.type in (syms.arith_expr, syms.term):
        operators = node.children[1::2]
        return all(op.value in ("+", "*") for op in operators) \
            and all(_non_negative(c, statement) for c in node.children[::2])
    if node.type == syms.atom and node.children[0].value == "(" and len(node.children) == 3:
        return _non_negative(node.children[1], statement)
    return False


def _counts_up(name: str, statement) -> bool:
    """Is ``name`` the counter of a loop around ``statement`` that starts
    at a non-negative literal and goes up: ``for name in range(n)`` (or
    ``range(a, b[, step])`` with literal ``a >= 0`` and ``step > 0``,
    ``tf.range``), ``for name, _ in enumerate(...)``, ``for name, _ in
    zip(range(n), ...)``; or a ``while`` counter bound only to a
    non-negative literal and raised by ``+=`` a positive literal?"""
    loop = _loop_of(statement)
    while loop is not None:
        if loop.type == syms.for_stmt:
            target, iterable = loop.children[1], loop.children[3]
            if is_name(target, name) and counts_up_from_zero(iterable):
                return True
            first = target.children[0] if target.type == syms.exprlist else None
            if first is not None and is_name(first, name):
                parts = call_parts(iterable)
                if parts and parts[0] == "enumerate" and not parts[2] and len(parts[1]) == 1:
                    return True
                if parts and parts[0] == "zip" and parts[1] and counts_up_from_zero(parts[1][0]):
                    return True
        elif _a_while_counter(name, loop):
            return True
        loop = _loop_of(loop)
    return False


def counts_up_from_zero(node) -> bool:
    """``range(n)``, or ``range(a, b[, step])`` (``tf.range``) with literal ``a >= 0`` and ``step > 0``."""
    parts = call_parts(node)
    if not parts or parts[0].rpartition(".")[2] != "range" or parts[2] or not 1 <= len(parts[1]) <= 3:
        return False
    rest = parts[1][1:] if len(parts[1]) == 1 else [parts[1][0]] + parts[1][2:]
    return len(parts[1]) == 1 or all(n.type == token.NUMBER and n.value.isdigit() for n in rest) \
        and (len(parts[1]) < 3 or parts[1][2].value != "0")


def _a_while_counter(name: str, loop) -> bool:
    """``name = 0`` before ``while`` and ``name += 1`` as its only other binding in the function."""
    function = loop
    while function is not None and function.type != syms.funcdef:
        function = function.parent
    if function is None:
        return False
    values = []
    for node in function.pre_order():
        if node.type == syms.expr_stmt and is_name(node.children[0], name):
            values.append((node.children[1].value, node.children[-1]))
        elif node.type in (syms.for_stmt, syms.global_stmt, syms.comp_for):
            if any(is_name(leaf, name) for leaf in node.children[1].leaves()):
                return False
    return bool(values) and all(v.type == token.NUMBER and v.value.isdigit() and (op == "=" or op == "+="
                                and v.value != "0") for op, v in values) and any(op == "=" for op, _ in values)


class Spelling:
    """How generated code names its operations: TensorFlow's (``tf.zeros``,
    ``tf.tensor_scatter_nd_update``), or, in Keras 3 code written against
    ``keras.ops`` (which may run on JAX or PyTorch), the backend-neutral
    ``keras.ops`` (``ops.zeros``, ``ops.scatter_update``): no new TensorFlow import."""

    def __init__(self, analysis):
        self.keras = analysis.imports.keras_ops is not None
        self.p = analysis.imports.keras_ops or analysis.tf

    def dtype(self, name: str) -> str:
        return f'"{name}"' if self.keras else f"{self.p}.{name}"

    def fill(self, dims: str, value: str, dtype: str) -> str:
        if self.keras:
            return f"{self.p}.full({dims}, {value}, dtype={dtype})"
        return f"{self.p}.fill({dims}, {self.p}.cast({value}, {dtype}))"

    def scatter(self, name: str, indices: str, updates: str, add: bool) -> str:
        if not self.keras:
            return f"{self.p}.tensor_scatter_nd_{'add' if add else 'update'}({name}, {indices}, {updates})"
        return f"{self.p}.scatter_update({name}, {indices}, {updates})"  # add: the caller adds the slot

    def range(self, low: str, high: str) -> str:
        return f"{self.p}.{'arange' if self.keras else 'range'}({low}, {high})"


def _start(buffer, analysis) -> Optional[str]:
    """The tensor expression of the buffer before any write, or None."""
    spell = Spelling(analysis)
    p = spell.p
    dtype = spell.dtype(buffer.dtype or "float32")
    _, positional, keywords = call_parts(buffer.creation.children[-1]) or (None, [], {})
    if buffer.factory in _FROM_SHAPE or buffer.factory == "full":
        shape = keywords.get("shape", positional[0] if positional else None)
        if shape is None:
            return None
        items = literal_elements(shape)
        if items is not None:
            dims = "[" + ", ".join(_dimension(source(i), analysis, p) for i in items) + "]"
        elif shape.type == token.NUMBER or is_name(shape):
            dims = f"[{source(shape)}]" if shape.type == token.NUMBER else source(shape)
        else:
            return None
        if buffer.factory == "full":
            return spell.fill(dims, source(buffer.fill), dtype) if buffer.fill else None
        return f"{p}.{_FROM_SHAPE[buffer.factory]}({dims}, {dtype})"
    data = source(buffer.data) if buffer.data is not None else None
    if buffer.factory in _LIKE and data:
        extra = f", dtype={dtype}" if buffer.dtype else ""
        return f"{p}.{_LIKE[buffer.factory]}({data}{extra})"
    if buffer.factory == "full_like" and data and len(positional) > 1:
        like = f"{p}.ones_like({data}" + (f", dtype={dtype})" if buffer.dtype else ")")
        return f"{like} * {source(positional[1])}"
    if buffer.factory in ("array", "asarray", "copy") and data:
        return f"{p}.cast({data}, {dtype})"
    if buffer.factory == "helper":
        return f"{p}.cast({source(buffer.creation.children[-1])}, {dtype})"
    return None


def rewrite(buffer, analysis) -> None:
    """Make the buffer a tensor and each write a scatter into it."""
    spell = Spelling(analysis)
    for write in buffer.scatter:
        write.statement.replace(_scatter(write, buffer.name, spell, len(buffer.dims) if buffer.dims else None))
    start = parse_expression(_start(buffer, analysis))
    old = buffer.creation.children[-1]
    start.prefix = old.prefix
    old.replace(start)


def _scatter(write: Write, name: str, spell: Spelling, rank: Optional[int]):
    p = spell.p
    kinds = _kinds(write.index)
    while kinds and kinds[-1] == "all":
        kinds.pop()
    index = write.index[:len(kinds)]
    read = f"{name}[{', '.join(source(c) for c in index)}]"
    value = f"{p}.cast({source(write.value)}, {name}.dtype)"
    if write.value.type in (token.NUMBER, syms.factor):
        value = f"{p}.broadcast_to({value}, {p}.shape({read}))"  # NumPy broadcasts a number
    else:
        value = f"{p}.reshape({value}, {p}.shape({read}))"  # NumPy drops leading 1s
    add = write.operator in ("+=", "-=") and not spell.keras
    if add:
        value = value if write.operator == "+=" else f"-{value}"
    elif write.operator != "=":
        value = f"{read} {write.operator[0]} {value}"
    if kinds == ["range"]:
        low, _, high = write.index[0].children
        text = spell.scatter(name, f"{spell.range(source(low), source(high))}[:, None]", value, add)
        return _statement_like(write, f"{name} = {text}")
    scalars = [source(c) for c, k in zip(index, kinds) if k == "scalar"]
    leading = [i for i, k in enumerate(kinds) if k == "scalar"]
    if leading == list(range(len(leading))):
        text = spell.scatter(name, f"[[{', '.join(scalars)}]]", f"[{value}]", add)
        return _statement_like(write, f"{name} = {text}")
    # a `:` before an index (a column): move the indexed axes first, scatter, move them back
    order = leading + [i for i, k in enumerate(kinds) if k != "scalar"]
    back = [order.index(i) for i in range(len(order))]
    n = len(order)
    if rank is not None:  # the shape is known: the permutations too
        perm, inverse = order + list(range(n, rank)), back + list(range(n, rank))
    else:  # why_not: never in keras.ops code
        perm = f"{p}.concat([{order}, {p}.range({n}, {p}.rank({name}))], 0)"
        inverse = f"{p}.concat([{back}, {p}.range({n}, {p}.rank({name}))], 0)"
    moved = spell.scatter(f"{p}.transpose({name}, {perm})", f"[[{', '.join(scalars)}]]", f"[{value}]", add)
    return _statement_like(write, f"{name} = {p}.transpose({moved}, {inverse})")


def _statement_like(write: Write, text: str):
    node = parse_expression(text)
    node.prefix = write.statement.prefix
    return node
