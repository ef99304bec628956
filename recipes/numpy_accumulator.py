"""numpy-accumulator: NumPy buffers that collect tensors become tf.TensorArray.

What it does: inside a function, a buffer made by ``np.zeros``, ``np.empty``,
``np.ones``, ``np.full``, their ``_like`` forms, ``np.array(data)`` or
``np.copy(data)`` (any NumPy alias, or ``from numpy import zeros``) that a
loop fills with TensorFlow values (a layer call ``self.x(...)``, a ``tf.*``
call, or a name bound to one) becomes a ``tf.TensorArray``:
``buf[i] = v`` / ``buf[i, :] = v`` becomes ``buf = buf.write(i, v)``, reads of
one slot inside the loop become ``buf.read(i)``, and the buffer is stacked
once after the loop so later reads see a tensor of the NumPy shape. A loop
index on another axis (``buf[:, t, :] = v``) is written along ``t``, then
stacked and transposed back. Two nested loops writing ``buf[i, j] = v`` over the first two axes fill one
TensorArray at ``i * m + j``, reshaped to the NumPy shape after the loops.
``buf[i, cols] = v`` in a 2-D buffer of known shape writes row ``i`` as the
background row (``tf.zeros``/``tf.ones``/``tf.fill``) with ``v`` scattered
into the columns (``tf.tensor_scatter_nd_update``); ``cols`` is a slice
(written there or bound to ``slice(...)``) or a list of distinct column
literals. A loop index on a later axis of a ``_like``/``copy`` buffer, whose
rank the source does not say, makes the buffer a tensor
(``tf.zeros_like(x)``, ``tf.convert_to_tensor(x)``...) rebuilt at each step
around the slot: ``tf.concat([buf[:, :t], tf.expand_dims(v, 1), buf[:, t + 1:]],
axis=1)``; slots the loop does not write keep NumPy's values.
A value built from a batch of one (a layer fed
``tf.reshape(x, [1, ...])``, ``tf.expand_dims(x, 0)`` or ``x[None]``), which
NumPy silently broadcasts into its ``(d,)`` slot, is written as
``tf.reshape(v, slot_shape)`` so the stacked shape equals the NumPy one.
``size`` comes from the NumPy shape (``x.shape[0]``, None while ``fit``
traces, becomes ``tf.shape(x)[0]``; ``dynamic_size=True`` when the shape
cannot be known); the dtype from ``dtype=`` (values are cast to it), else
``tf.float32``. A loop whose bound is a tensor (``tf.shape(x)[0]``, the batch
size) becomes a function of the index and the buffers run by
``tf.while_loop``: a Python ``for`` over a tensor needs autograph, which
Keras 3 does not apply to a subclassed ``call``. Loops over a static bound
stay Python loops (unrolled in graph mode). The result runs eagerly, under
``tf.function`` and ``fit``, on TF 2.3, tf-keras and Keras 3. A buffer
rebound after the loop, ``buf = tf.convert_to_tensor(buf, dtype=D)`` (or
``tf.constant`` / ``tf.cast``), is part of the rewrite: ``D`` becomes the
TensorArray's dtype and the line goes (a cast when the buffer named another
dtype).

In a gradient context (see below), tensors collected in a Python list
(appended, a display or a comprehension) and turned into NumPy by ``np.array(lst)`` / ``np.asarray(lst)`` /
``np.stack(lst, axis=k)`` / ``np.concatenate(lst, axis=k)`` are the same bug:
the call becomes ``tf.stack(lst[, axis=k])`` / ``tf.concat(lst, axis=k)``.

So is NumPy computing on a tensor in a gradient context (a ``GradientTape``
block, a Keras ``call``/``train_step``, a ``tf.function``):
``np.mean(np.asarray(h), axis=1)`` becomes ``tf.reduce_mean(h, axis=1)``
(likewise sum, max, min, prod, std, var, exp, log, sqrt, square, abs, tanh),
``np.array(t)`` becomes ``t`` (``tf.cast`` with a dtype); another NumPy call
on a tensor is reported, naming the call.

Why this is a bug: ``arr[i] = tensor`` calls ``tensor.__array__()`` and stores
a NumPy copy. Nothing computed from the buffer afterwards is on the
GradientTape, so every gradient upstream of it is ``None`` (Keras reports "No
gradients provided for any variable"); under ``tf.function`` or ``model.fit``
the same line raises, because a symbolic tensor cannot be converted to NumPy.

Example (seed 000)::

    temp = np.zeros((seq_len, self.local_out_dim))
    for i in range(seq_len):
        inp = tf.reshape(inputs[i], [1, 7, 7, 1])
        temp[i, :] = self.local(inp)

becomes::

    temp = tf.TensorArray(tf.float32, size=seq_len)
    for i in range(seq_len):
        inp = tf.reshape(inputs[i], [1, 7, 7, 1])
        temp = temp.write(i, tf.reshape(self.local(inp), [self.local_out_dim]))
    temp = temp.stack()

Left alone: buffers filled only with constants, NumPy values or ``.numpy()``
results (a mask, preprocessing), integer or bool buffers (token ids of a
sampling loop, counts: no gradient flows through them), values drawn by
``tf.random.*`` (sampling code), writes after a ``GradientTape`` block of
the function closed (losses or gradient norms logged after the step), and
buffers outside any function. Imports, the kinds of values (annotated
parameters, layer and model outputs) and gradient contexts come from the
semantic model (``recipes._model``): every import spelling, and ``np``/``tf``
read unbound in a pasted snippet. The finding sits on the write line; put
``# tf-migrate: ignore[numpy-accumulator]`` there to keep a buffer.

CAVEATS:
- Only one write statement per buffer, directly in a ``for ... in range(...)``
  loop that sits next to the buffer's creation; the loop index must be one
  index component and every other component a bare ``:`` (or ``buf[i, j]``
  from two nested loops over ``range`` of the first two dimensions, static
  bounds only, or ``buf[i, cols]`` as above). Anything else (columns given
  by a parameter or an array, a single column ``buf[i, 0]``) is reported
  without a fix, with the reason.
- Slots the loop never writes hold zeros (ones, the fill value, the copied
  data) in NumPy, but make ``stack()`` fail for a TensorArray: the loop must
  cover the whole axis.
- The shape of a ``_like``/``array``/``copy`` buffer is not known from the
  source: a loop index on axis 0 gets ``dynamic_size=True``; on another axis
  the per-step ``tf.concat`` rebuild costs a copy of the buffer per step, and
  is reported without a fix for ``np.array``/``full_like`` buffers, a tensor
  loop bound or a buffer rebound after the loop (the rank is unknown).
- A TensorArray holds one dtype: values are not cast unless ``dtype=`` says
  so, and integer or float64 layer outputs need an explicit ``dtype=``.
- After the rewrite the buffer is a tensor: later NumPy-only use
  (``buf.mean()``, ``buf.astype(...)``) is reported without a fix, but the
  buffer passed to code that mutates it in place is not detected.
- Broadcasting other than dropping leading 1s (a scalar filling a row) is not
  reproduced.
- A loop over a tensor bound is lifted into a ``tf.while_loop`` only when
  its body does not ``return``/``break`` and binds no name used outside the
  loop (a state carried across iterations, a value read afterwards);
  otherwise it is reported without a fix. Its index is a tensor in graph
  mode, and the stacked result may lose its static batch dimension.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, child_nodes, propose, walk
from recipes._model import Kind, model_of
from recipes._model.imports import CONVENTIONAL, Imports as ImportTable
from migrate.prefilter import GAP
from recipes._pyast import (
    code_lines, code_text, dotted, first_line, import_table, keras_classes,
    line_of, may_import, may_name_keras_classes, spelled_alone, spelled_as_in_ast, standalone, statements,
    statements_at, tapes,
)
from recipes._fissix import (
    add_import, bindings, call_parts, contains, dotted_name, enclosing,
    insert_after, is_call, is_full_slice, is_name, is_sole_statement_on_line, literal_elements,
    name_reads,
    parse_expression, per_tree, find_root, remove_statement, replace_statement, scope_names, scope_nodes,
    source, start, statement_of, subscript_parts, syms,
)

# NumPy calls that make a buffer -> the position of their dtype argument
# (None: it takes none); the ``_like`` and data ones do not say the shape
_SHAPED = {"zeros": 1, "empty": 1, "ones": 1, "full": 2}
_FROM_DATA = {"zeros_like": 1, "empty_like": 1, "ones_like": 1, "full_like": 2,
              "array": 1, "copy": None}
FACTORIES = tuple(_SHAPED) + tuple(_FROM_DATA)
_INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "bool")
_CONVERSIONS = ("convert_to_tensor", "constant", "cast")
DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128")
_PY_DTYPES = {"float": "float64", "int": "int64", "bool": "bool", "complex": "complex128"}
_TO_PYTHON = ("float", "int", "bool", "complex", "list", "str")
_TENSOR_ATTRIBUTES = ("shape", "dtype", "ndim")


@dataclass
class Imports:
    """How this file spells NumPy and TensorFlow: ``module_of`` maps a local
    name to the canonical module or object it imports (``onp`` -> ``numpy``,
    ``zeros`` -> ``numpy.zeros``, ``tf`` of ``tensorflow.compat.v2`` ->
    ``tensorflow``)."""

    module_of: Callable[[str], Optional[str]]
    numpy: bool
    tensorflow: Set[str]

    @classmethod
    def of_model(cls, model) -> "Imports":
        """From the semantic model of the fissix tree (every spelling, presumed aliases)."""
        return cls(model.imports.module_of, model.imports.uses("numpy"),
                   model.imports.aliases("tensorflow"))

    @classmethod
    def of(cls, table: ImportTable) -> "Imports":
        """From the ``ast`` import table, for the precheck: never narrower than
        ``of_model`` (a ``tensorflow.compat`` alias and an unbound ``np``/``tf``
        count)."""
        names = {local: f"numpy.{name}" for local, name in table.imported_names("numpy").items()}
        names.update(dict.fromkeys(table.module_aliases("numpy"), "numpy"))
        tensorflow = {record.local for record in table.records
                      if record.name is None and record.module.split(".")[0] == "tensorflow"}
        names.update(dict.fromkeys(tensorflow, "tensorflow"))
        for alias, module in CONVENTIONAL.items():  # the model's presumed aliases
            names.setdefault(alias, module)
        return cls(names.get, True, tensorflow | {a for a, m in CONVENTIONAL.items() if m == "tensorflow"})

    def numpy_function(self, callee: str) -> Optional[str]:
        """``zeros`` for ``np.zeros`` / ``onp.zeros`` / an imported ``zeros``."""
        head, _, attr = callee.rpartition(".")
        if head:
            return attr if "." not in head and self.module_of(head) == "numpy" else None
        module, _, name = (self.module_of(attr) or "").partition(".")
        return name if module == "numpy" and "." not in name else None

    def is_tensorflow_call(self, callee: str) -> bool:
        return (self.module_of(callee.split(".")[0]) or "").split(".")[0] == "tensorflow"


@dataclass
class Buffer:
    """One NumPy buffer and what the rewrite needs to know about it."""

    name: str
    creation: object                 # the expr_stmt ``buf = np.zeros(...)``
    dims: Optional[List[str]]        # shape items as source text; None if unknown
    dtype: Optional[str]             # explicit dtype name (``float64``) or None
    write: object = None             # the expr_stmt ``buf[...] = v``
    loop: object = None              # the for_stmt whose index is written
    axis: int = 0
    slot_reads: List = field(default_factory=list)  # ``buf[i]`` inside the loop
    read_after: bool = False
    bound: Optional[str] = None      # the loop bound when it is a tensor (tf.while_loop)
    conversion: object = None        # ``buf = tf.convert_to_tensor(buf, ...)`` after the loop
    inner: object = None             # the inner loop of a ``buf[i, j] = v`` write
    problem: Optional[str] = None    # why it cannot be rewritten
    factory: str = "zeros"           # the NumPy function that made it
    data: object = None              # the ``_like``/``copy`` argument
    fill: object = None              # the value of ``np.full``
    columns: Optional[str] = None    # ``buf[i, cols]``: the selected columns as a tf expression
    in_place: bool = False           # axis > 0 of a ``_like``/``copy`` buffer: a tensor updated per step


def _factory_call(value, imports: Imports):
    parts = call_parts(value)
    if not parts:
        return None
    function = imports.numpy_function(parts[0])
    return (function, parts[1], parts[2]) if function in FACTORIES else None


def _dtype_name(node) -> Optional[str]:
    """``float32`` for ``np.float32`` / ``'float32'`` / ``tf.float32``; ``float64``
    for ``float``; ``?`` when it is something else."""
    if node.type == token.STRING:
        text = node.value.strip("'\"")
        return text if text in DTYPES else "?"
    name = dotted_name(node)
    if name is None:
        return "?"
    attr = name.rpartition(".")[2]
    if "." not in name and attr in _PY_DTYPES:
        return _PY_DTYPES[attr]
    return attr if attr in DTYPES else "?"


def _new_buffer(name, creation, function, positional, keywords) -> Buffer:
    dims = None
    if function in _SHAPED:
        shape = keywords.get("shape", positional[0] if positional else None)
        if shape is not None:
            items = literal_elements(shape)
            if items is not None:
                dims = [source(item) for item in items]
            elif shape.type == token.NUMBER:
                dims = [shape.value]
    where = _SHAPED.get(function, _FROM_DATA.get(function))
    dtype_node = keywords.get("dtype", positional[where] if where is not None
                              and len(positional) > where else None)
    dtype = _dtype_name(dtype_node) if dtype_node is not None else None
    buffer = Buffer(name, creation, dims, dtype, factory=function,
                    data=positional[0] if function in _FROM_DATA and positional else None,
                    fill=positional[1] if function == "full" and len(positional) > 1 else None)
    if dtype == "?":
        buffer.problem = f"the dtype `{source(dtype_node)}` has no TensorFlow name this recipe knows"
    return buffer


class Analysis:
    """Buffers of one function and which values are TensorFlow tensors."""

    def __init__(self, function, imports: Imports):
        self.function = function
        self.imports = imports
        self.model = model_of(function)
        self.bound = bindings(function)
        self.methods = _methods_of(enclosing(function, syms.classdef))
        self.buffers = self._buffers()
        self.tensor_names: Set[str] = set()
        self.settled = False
        self._writes: Dict[str, List] = {}  # buffer name -> its writes (the tree does not change meanwhile)
        self._calls: Optional[List] = None
        if self.buffers:
            self.settle_tensor_names()

    def _buffers(self) -> List[Buffer]:
        found = []
        for name, values in self.bound.items():
            factory = _factory_call(values[0], self.imports)
            rebound = values[1:]
            if factory and len(rebound) <= 1 and all(self.converts(v, name) for v in rebound):
                buffer = _new_buffer(name, values[0].parent, *factory)
                if rebound:
                    buffer.conversion = rebound[0].parent
                    _, positional, keywords = call_parts(rebound[0])
                    dtype = keywords.get("dtype", positional[1] if len(positional) > 1 else None)
                    if buffer.dtype is None and dtype is not None and _dtype_name(dtype) != "?":
                        buffer.dtype = _dtype_name(dtype)
                found.append(buffer)
        return found

    def converts(self, value, name: str) -> bool:
        """Is ``value`` ``tf.convert_to_tensor(name, ...)`` / ``tf.constant(name)``
        / ``tf.cast(name, ...)``: the buffer rebound as a tensor after its loop?"""
        parts = call_parts(value)
        return bool(parts) and self.imports.is_tensorflow_call(parts[0]) \
            and parts[0].rpartition(".")[2] in _CONVERSIONS and bool(parts[1]) \
            and is_name(parts[1][0], name)

    def settle_tensor_names(self) -> None:
        """Names bound to tensors, including buffers that will become
        TensorArrays (a nested buffer makes its outer buffer tensor-valued)."""
        written = [(buffer, [w.children[-1] for w in self.writes(buffer)]) for buffer in self.buffers]
        while True:
            before = set(self.tensor_names)
            for name, values in self.bound.items():
                if name not in self.tensor_names and any(self.is_tensor(v) for v in values):
                    self.tensor_names.add(name)
            for buffer, values in written:
                if buffer.name not in self.tensor_names and any(self.is_tensor(v) for v in values):
                    self.tensor_names.add(buffer.name)
            if self.tensor_names == before:
                self.settled = True
                return

    @property
    def tf(self) -> str:
        """How generated code spells TensorFlow (``tf`` is imported when absent)."""
        return "tf" if "tf" in self.imports.tensorflow else min(self.imports.tensorflow, default="tf")

    def is_tensor(self, expr) -> bool:
        """Does ``expr`` evaluate to a TensorFlow tensor (not NumPy, not Python)?"""
        parts = call_parts(expr)
        if parts:
            callee = parts[0]
            if callee in _TO_PYTHON or self.imports.numpy_function(callee) is not None:
                return False
        if _calls_method(expr, ("numpy", "item", "tolist")):
            return False
        kind = self.model.kind_of(expr)
        if kind.is_tensor or not kind.is_known and self.model.likely_kind_of(expr).is_tensor:
            return True  # what the model knows: annotated parameters, model outputs...
        if self._reads_a_filled_buffer(expr):
            return True  # a nested buffer: a tensor once its TensorArray is stacked
        if _not_a_tensor(kind):
            return False  # the model knows better than the guess below (sess.run(...).ravel())
        for node in expr.pre_order():
            if is_name(node) and node.value in self.tensor_names and _is_variable(node):
                return True
            if is_call(node):
                head = node.children[0]
                if is_name(head, "self") and len(node.children) == 3 \
                        and node.children[1].children[-1].value not in self.methods:
                    return True  # a layer attribute called: self.local(x)
                name = call_parts(node)
                if name and self.imports.is_tensorflow_call(name[0]):
                    return True
        return False

    def _reads_a_filled_buffer(self, expr) -> bool:
        """Does ``expr`` read the data (not ``.shape``/``.dtype``) of a buffer
        that receives tensors?"""
        filled = {b.name for b in self.buffers} & self.tensor_names
        return any(is_name(node) and node.value in filled and _is_variable(node)
                   and not _describes(node) for node in expr.pre_order())

    def numpy_calls(self) -> List[Tuple[object, tuple, str]]:
        """``_numpy_calls_of`` of the function, found once."""
        if self._calls is None:
            self._calls = _numpy_calls_of(self.function, self.imports)
        return self._calls

    def writes(self, buffer: Buffer) -> List:
        """expr_stmts ``buf[...] = value`` in this function."""
        if buffer.name not in self._writes:
            self._writes[buffer.name] = self._find_writes(buffer.name)
        return self._writes[buffer.name]

    def _find_writes(self, name: str) -> List:
        writes = []
        for leaf in name_reads(self.function, name):
            target = leaf.parent
            statement = target.parent if target is not None else None
            if (target is not None and subscript_parts(target) and statement is not None
                    and statement.type == syms.expr_stmt and statement.children[0] is target):
                writes.append(statement)
        return writes


def _methods_of(classdef) -> Set[str]:
    """Names of the methods a class defines (``self.name(...)`` calls them,
    not a layer)."""
    if classdef is None:
        return set()
    suite = classdef.children[-1]
    return {c.children[1].value for c in suite.children if c.type == syms.funcdef} | \
        {c.children[-1].children[1].value for c in suite.children
         if c.type == syms.decorated and c.children[-1].type == syms.funcdef}


def _not_a_tensor(kind) -> bool:
    """Does the model know ``kind`` is no tensor: NumPy or Python data, or a
    list or tuple of such?"""
    if kind.kind in (Kind.PYLIST, Kind.PYTUPLE):
        return kind.element is not None and _not_a_tensor(kind.element)
    return kind.is_known and not kind.is_tensor


def _calls_method(expr, methods) -> bool:
    for node in expr.pre_order():
        if node.type == syms.trailer and node.children[0].type == token.DOT \
                and node.children[1].value in methods:
            after = node.next_sibling
            if after is not None and after.type == syms.trailer and after.children[0].type == token.LPAR:
                return True
    return False


def _is_variable(leaf) -> bool:
    prev = leaf.prev_sibling
    return prev is None or prev.type != token.DOT


def _examine(buffer: Buffer, analysis: Analysis) -> bool:
    """Fill in the write, loop and reads of ``buffer``; False when it receives
    no tensor (left alone). ``buffer.problem`` says why a fix is impossible."""
    writes = analysis.writes(buffer)
    tensor_writes = [w for w in writes if analysis.is_tensor(w.children[-1])]
    if not tensor_writes or buffer.dtype in _INTEGERS \
            or _after_the_tape(tensor_writes[0], analysis.model) \
            or _sampled(tensor_writes[0].children[-1], analysis.model):
        return False  # token ids, counts, draws, values logged after the tape: no gradient wanted
    buffer.write = tensor_writes[0]
    if buffer.problem:
        return True
    if len(writes) > 1:
        buffer.problem = "the buffer is written by more than one statement"
        return True
    write = buffer.write
    if len(write.children) != 3 or write.children[1].type != token.EQUAL \
            or not is_sole_statement_on_line(write):
        buffer.problem = "the write is not a plain `buf[...] = value` statement"
        return True
    _, index = subscript_parts(write.children[0])
    pair = _pair_loops(write, index)
    loop = pair and (pair[0], 0) or _index_loop(write, index)
    if loop is None:
        buffer.problem = "the write is not directly in a `for i in range(...)` loop over one index"
        return True
    buffer.loop, buffer.axis = loop
    if pair:
        buffer.inner = pair[1]
        buffer.problem = _why_not_a_pair(buffer, index, analysis)
        if buffer.problem:
            return True
    elif any(not is_full_slice(c) for i, c in enumerate(index) if i != buffer.axis):
        buffer.problem = _why_not_columns(buffer, index, analysis)
        if buffer.problem:
            return True
    creation_stmt = statement_of(buffer.creation)
    if buffer.loop.parent is not creation_stmt.parent or start(buffer.loop) < start(creation_stmt):
        buffer.problem = "the filling loop is not in the block that creates the buffer"
        return True
    if buffer.axis and buffer.dims is None:
        buffer.problem = _why_not_in_place(buffer, analysis)
        if buffer.problem:
            return True
        buffer.in_place = True
    if buffer.dims is not None and buffer.axis >= len(buffer.dims):
        buffer.problem = "the index has more components than the buffer has axes"
        return True
    _classify_reads(buffer, analysis)
    if buffer.problem is None:
        buffer.bound = _tensor_bound(buffer.loop, analysis)
        if buffer.bound is not None:
            buffer.problem = _why_not_liftable(buffer.loop, analysis)
    return True


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


def _after_the_tape(write, model) -> bool:
    """Does ``write`` come after a ``GradientTape`` of its function closed (a
    loss or a gradient norm logged after the step), outside a ``tf.function``
    or ``train_step`` that would raise on it anyway?"""
    context = model.gradient_context(write)
    return model.after_tape(write) is not None \
        and (context is None or context.how not in ("tf_function", "train_step"))


# what draws samples: no gradient flows through a draw
_SAMPLERS = ("tensorflow.random.", "tensorflow.multinomial", "tensorflow.random_")


def _sampled(value, model) -> bool:
    """Is ``value`` computed from a random draw (``tf.random.categorical``):
    sampling code, whose buffers are not differentiated?"""
    return any(is_call(node) and (model.callee(node) or "").startswith(_SAMPLERS)
               for node in value.pre_order())


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
    if not iterable or iterable[0] != "range":
        return None
    variable = loop.children[1].value
    axes = [i for i, c in enumerate(index) if is_name(c, variable)]
    return (loop, axes[0]) if len(axes) == 1 else None


def _shape_zero_of(expr, bound, depth: int = 0) -> Optional[str]:
    """``x`` for ``x.shape[0]`` (or a name bound to it): a dimension that is
    None while ``model.fit`` traces, whatever the batch size."""
    if is_name(expr) and len(bound.get(expr.value, ())) == 1 and depth < 3:
        return _shape_zero_of(bound[expr.value][0], bound, depth + 1)
    text = source(expr).replace(" ", "")
    if text.endswith(".shape[0]") and expr.type == syms.power and len(expr.children) == 3 \
            and is_name(expr.children[0]):
        return expr.children[0].value
    return None


def _dimension(text: str, analysis: Analysis, tf: str) -> str:
    """A NumPy shape item as a TensorArray size or reshape item: ``x.shape[0]``
    becomes ``tf.shape(x)[0]``, known in graph mode too."""
    tensor = _shape_zero_of(parse_expression(text), analysis.bound)
    return f"{tf}.shape({tensor})[0]" if tensor else text


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
            and expr.children[0].value in analysis.imports.tensorflow:
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
               if is_name(leaf) and _is_variable(leaf) and not contains(body, leaf)}
    shared = sorted(inside & outside)
    if shared:
        return f"`{shared[0]}` lives on outside the loop over a tensor bound"
    return None


def _binds(leaf) -> bool:
    """Is ``leaf`` a name an assignment or a ``for`` binds?"""
    if not is_name(leaf) or not _is_variable(leaf):
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


def _describes(leaf) -> bool:
    """Is ``leaf`` read for its ``.shape``/``.dtype``/``.ndim`` (a Python value)?"""
    after = leaf.next_sibling
    return after is not None and after.type == syms.trailer and after.children[0].type == token.DOT \
        and after.children[1].value in _TENSOR_ATTRIBUTES


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


# --- rewriting ---------------------------------------------------------------

def _batch_of_one(expr, analysis: Analysis, depth: int = 0) -> bool:
    """Is ``expr`` (or what a name is bound to) a batch of one sample, which a
    layer keeps as a leading 1: ``tf.reshape(x, [1, ...])``,
    ``tf.expand_dims(x, 0)``, ``x[None]``, or a layer or model call on one of those?"""
    bound = analysis.bound
    if depth > 4:
        return False
    if is_name(expr) and len(bound.get(expr.value, ())) == 1:
        return _batch_of_one(bound[expr.value][0], analysis, depth + 1)
    parts = call_parts(expr)
    if parts:
        callee, positional, keywords = parts
        attr = callee.rpartition(".")[2]
        if attr == "reshape" and len(positional) >= 2:
            items = literal_elements(positional[1])
            return bool(items) and source(items[0]) == "1"
        if attr == "expand_dims" and positional:
            axis = keywords.get("axis", positional[1] if len(positional) > 1 else None)
            return axis is not None and source(axis) == "0"
        if positional and (callee.startswith("self.") or len(expr.children) == 2 and analysis.model
                           .likely_kind_of(expr.children[0]).kind in (Kind.MODEL, Kind.LAYER)):
            return _batch_of_one(positional[0], analysis, depth + 1)
        return False
    if expr.type == syms.power and expr.children[-1].type == syms.trailer \
            and expr.children[-1].children[0].type == token.LSQB:
        first = expr.children[-1].children[1]
        if first.type == syms.subscriptlist:
            first = first.children[0]
        return source(first) in ("None", "np.newaxis", "tf.newaxis", "numpy.newaxis") \
            or _one_row_slice(first)
    return False


def _one_row_slice(node) -> bool:
    """``i:i + 1`` (a slice of one row keeps the batch axis)."""
    if node.type != syms.subscript or len(node.children) != 3:
        return False
    low, _, high = node.children
    return source(high).replace(" ", "").strip("()") == f"{source(low).strip()}+1"


def _rewrite(buffer: Buffer, analysis: Analysis, tf: str) -> None:
    if buffer.in_place:
        _rewrite_in_place(buffer, analysis, tf)
        return
    index_var = buffer.loop.children[1].value
    for read in buffer.slot_reads:
        _, index = subscript_parts(read)
        call = parse_expression(f"{buffer.name}.read({source(index[0])})")
        call.prefix = read.prefix
        read.replace(call)

    value = buffer.write.children[-1]
    text = source(value)
    if buffer.dtype not in (None, "float32"):
        text = f"{tf}.cast({text}, {tf}.{buffer.dtype})"
    slot = [_dimension(d, analysis, tf) for i, d in enumerate(buffer.dims)
            if i != buffer.axis] if buffer.dims is not None else None
    if buffer.columns is not None:
        text = (f"{tf}.tensor_scatter_nd_update({_background_row(buffer, analysis, tf)}, "
                f"{tf}.reshape({buffer.columns}, [-1, 1]), {tf}.reshape({text}, [-1]))")
    elif _batch_of_one(value, analysis):
        text = (f"{tf}.reshape({text}, [{', '.join(slot)}])" if slot is not None
                else f"{tf}.squeeze({text}, axis=0)")
    if buffer.inner is not None:
        slot = slot[1:]
        if _batch_of_one(value, analysis):
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
    if _batch_of_one(value, analysis):
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
    stmt = buffer.conversion
    _, positional, keywords = call_parts(stmt.children[-1])
    node = keywords.get("dtype", positional[1] if len(positional) > 1 else None)
    dtype = _dtype_name(node) if node is not None else None
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


def _message(buffer: Buffer) -> str:
    target = source(buffer.write.children[0])
    text = (f"`{target} = <tensor>` copies the tensor into a NumPy array: the tape stops "
            f"there and gradients come back None (model.fit raises); use tf.TensorArray")
    return f"{text} ({buffer.problem})" if buffer.problem else text


# NumPy calls that turn a list of tensors into one array -> the tf.* that keeps the tape
_LIST_TO_TENSOR = {"array": "stack", "asarray": "stack", "stack": "stack", "concatenate": "concat"}


def _list_conversions(analysis: Analysis) -> List:
    """``np.stack(lst, axis=k)`` / ``np.array(lst)`` / ``np.asarray(lst)`` /
    ``np.concatenate(lst, axis=k)`` of a list of tensors built in the
    function (appended to, a list display or comprehension): each copies the
    tensors into NumPy. Only in a gradient context (the model's):
    elsewhere (tests, evaluation) NumPy is what the code wants."""
    found = []
    for node, parts, function in analysis.numpy_calls():
        if function not in _LIST_TO_TENSOR:
            continue
        positional = parts[1]
        if positional and _tensor_list(positional[0], analysis) \
                and analysis.model.in_gradient_context(node):
            found.append(node)
    return found


def _tensor_list(expr, analysis: Analysis) -> bool:
    """Is ``expr`` a list of tensors: a display or comprehension of them, or a
    name bound once to one, or to ``[]`` then appended only tensors?"""
    if expr.type == syms.atom and expr.children[0].value == "[" and len(expr.children) == 3:
        return analysis.is_tensor(expr)  # [a, b] or [f(t) for t in ...]
    if not is_name(expr):
        return False
    name = expr.value
    values = analysis.bound.get(name, [])
    if len(values) != 1 or values[0].type != syms.atom or values[0].children[0].value != "[":
        return False
    if len(values[0].children) == 3:
        return analysis.is_tensor(values[0])
    appended = [call_parts(n)[1] for n in scope_nodes(analysis.function)
                if is_call(n) and (call_parts(n) or ("",))[0] == f"{name}.append"]
    layers = _layer_loop_variables(analysis.function)
    return bool(appended) and all(len(a) == 1 and (analysis.is_tensor(a[0]) or is_call(a[0])
                                                   and source(a[0].children[0]).strip() in layers)
                                  for a in appended)


def _layer_loop_variables(function) -> Set[str]:
    """``layer`` of ``for layer in self.blocks:``: calling it calls a layer."""
    return {n.children[1].value for n in scope_nodes(function)
            if n.type == syms.for_stmt and is_name(n.children[1])
            and source(n.children[3]).strip().startswith("self.")}


def _list_conversion_fix(call, analysis: Analysis) -> Optional[str]:
    """``tf.stack(lst, axis=k)`` / ``tf.concat(lst, axis=k)`` for the NumPy
    call, or None when it has arguments TensorFlow's has not."""
    callee, positional, keywords = call_parts(call)
    function = analysis.imports.numpy_function(callee)
    extra = set(keywords) - {"axis"} if function in ("stack", "concatenate") else set(keywords)
    if extra or len(positional) > (2 if function in ("stack", "concatenate") else 1):
        return None
    axis = keywords.get("axis", positional[1] if len(positional) > 1 else None)
    axis_text = source(axis).strip() if axis is not None else "0"
    tf = analysis.tf
    items = source(positional[0]).strip()
    if function == "concatenate":
        return f"{tf}.concat({items}, axis={axis_text})"
    return f"{tf}.stack({items}" + (f", axis={axis_text})" if axis is not None else ")")


def _fix_list_conversions(analysis: Analysis) -> bool:
    """Report (and fix) every NumPy conversion of a list of tensors."""
    return _rewrite_calls(analysis, _list_conversions, _list_conversion_fix, lambda call: (
        f"`{source(call).strip()}` copies the tensors of the list into a NumPy array: "
        f"the tape stops there and gradients come back None (model.fit raises)",
        " (its arguments have no tf.stack/tf.concat equivalent)"))


def _rewrite_calls(analysis: Analysis, find, fix_of, explain) -> bool:
    """Propose ``fix_of(call)`` for each call ``find`` names; ``explain``
    gives the message and the reason added when there is no fix."""
    if not analysis.settled:
        analysis.settle_tensor_names()
    rewritten = False
    for call in find(analysis):
        fix = fix_of(call, analysis)
        message, no_fix = explain(call)
        message += f"; use `{fix}`" if fix else no_fix
        if propose(call, message, fixable=fix is not None):
            replacement = parse_expression(fix)
            replacement.prefix = call.prefix
            call.replace(replacement)
            rewritten = True
    return rewritten


# NumPy functions on a tensor -> their tf.* equivalent (keywords: axis, keepdims)
_NUMPY_TO_TF = {"mean": "reduce_mean", "sum": "reduce_sum", "max": "reduce_max",
                "min": "reduce_min", "prod": "reduce_prod", "std": "math.reduce_std",
                "var": "math.reduce_variance", "exp": "exp", "log": "math.log", "sqrt": "sqrt",
                "square": "square", "abs": "abs", "tanh": "tanh"}


def _tensor_under_numpy(expr, analysis: Analysis):
    """The tensor expression under ``np.asarray(t)`` / ``np.array(t)`` (or
    ``expr`` itself when it is a tensor); None when it is neither."""
    parts = call_parts(expr)
    if parts and analysis.imports.numpy_function(parts[0]) in ("array", "asarray") \
            and len(parts[1]) == 1 and not parts[2]:
        expr = parts[1][0]
    if expr.type == syms.atom and expr.children[0].value == "[":
        return None  # a list: _list_conversions
    text = source(expr)
    if any(f".{a}" in text for a in _TENSOR_ATTRIBUTES):
        return None  # shapes and dtypes are Python values
    return expr if analysis.is_tensor(expr) or _model_call(expr, analysis.function) else None


def _model_call(expr, function) -> bool:
    """``model(x)`` where the function also reads ``model.trainable_variables``
    (or ``trainable_weights``): a Keras model, so a tensor."""
    parts = call_parts(expr)
    if not parts or "." in parts[0]:
        return False
    text = source(function)
    return any(f"{parts[0]}.{weights}" in text for weights in _MODEL_WEIGHTS)


_MODEL_WEIGHTS = ("trainable_variables", "trainable_weights")


def _numpy_on_tensors(analysis: Analysis) -> List:
    """Outermost NumPy calls on a tensor in a gradient context; a buffer's
    creation (``np.copy(x)`` then written to) is the write's business."""
    found = []
    creations = {id(buffer.creation) for buffer in analysis.buffers if analysis.writes(buffer)}
    for node, parts, function in analysis.numpy_calls():
        if id(node.parent) in creations or not parts[1] \
                or function in _LIST_TO_TENSOR and _tensor_list(parts[1][0], analysis) \
                or _tensor_under_numpy(parts[1][0], analysis) is None \
                or not analysis.model.in_gradient_context(node):
            continue
        if not any(contains(outer, node) for outer in found):
            found.append(node)
    return found


def _numpy_on_tensor_fix(call, analysis: Analysis) -> Optional[str]:
    callee, positional, keywords = call_parts(call)
    function = analysis.imports.numpy_function(callee)
    tensor = source(_tensor_under_numpy(positional[0], analysis)).strip()
    tf = analysis.tf
    if function in ("array", "asarray"):
        dtype = keywords.get("dtype", positional[1] if len(positional) > 1 else None)
        name = _dtype_name(dtype) if dtype is not None else None
        if set(keywords) - {"dtype"} or len(positional) > 2 or name == "?":
            return None
        return f"{tf}.cast({tensor}, {tf}.{name})" if name else tensor
    if function not in _NUMPY_TO_TF or set(keywords) - {"axis", "keepdims"} or len(positional) > 2:
        return None
    if len(positional) == 2:
        keywords = dict(keywords, axis=positional[1])
    arguments = "".join(f", {k}={source(v).strip()}" for k, v in keywords.items())
    return f"{tf}.{_NUMPY_TO_TF[function]}({tensor}{arguments})"


def _fix_numpy_on_tensors(analysis: Analysis) -> bool:
    return _rewrite_calls(analysis, _numpy_on_tensors, _numpy_on_tensor_fix, lambda call: (
        f"`{source(call).strip()}` computes with NumPy on a tensor: the result is a "
        f"constant to the tape, so gradients come back None (model.fit raises)",
        f" (`{call_parts(call)[0]}` has no tf.* equivalent this recipe knows)"))


# `buf[...] = value`: the write where the tensor is copied into NumPy
PATTERN = "expr_stmt< power< NAME trailer< '[' any ']' > > any* >"
# `def ...`: a function where NumPy may compute on tensors or on a list of
# them (in a gradient context); no write selects those forms
FUNCTION = "funcdef< 'def' NAME parameters any* >"


@dataclass
class _Module:
    """What the recipe knows about the whole file during one pass."""

    imports: Imports
    tf: Optional[str]  # how the file spells TensorFlow; None: not imported (yet)
    done: Set[int] = field(default_factory=set)  # ids of the functions already rewritten
    tapes: List = field(default_factory=list)  # the `with` statements opening a tape

    @classmethod
    def of(cls, root) -> "_Module":
        model = model_of(root)
        imports = Imports.of_model(model)
        return cls(imports, "tf" if "tf" in imports.tensorflow else min(imports.tensorflow, default=None),
                   tapes=[tape.statement for tape in model.tapes])


def _may_be_a_gradient_function(node, capture, filename) -> bool:
    """The file imports NumPy and ``node`` is a gradient context (the
    model's: a Keras ``call``/``train_step``, a ``tf.function``, a function
    a context calls) or opens one (a ``GradientTape`` block)."""
    module = per_tree(node, "numpy-accumulator", _Module.of)
    if not module.imports.numpy:
        return False
    return model_of(node).in_gradient_context(node.children[-1]) \
        or any(contains(node, tape) for tape in module.tapes)


def _modify(node, capture, filename) -> None:
    """Rewrite the functions around this write or this function (outermost
    first), each once per pass: a buffer belongs to the function that
    creates it."""
    module = per_tree(node, "numpy-accumulator", _Module.of)
    functions = [node] if node.type == syms.funcdef else []
    scope = enclosing(node, syms.funcdef)
    while scope is not None:
        functions.insert(0, scope)
        scope = enclosing(scope, syms.funcdef)
    for function in functions:
        if id(function) not in module.done:
            module.done.add(id(function))
            _rewrite_function(function, module)


def _rewrite_function(function, module: _Module) -> None:
    tf = module.tf
    analysis = Analysis(function, module.imports)
    found = sorted((b for b in analysis.buffers if _examine(b, analysis)),
                   key=lambda b: start(b.write))
    fixes = [b for b in found
             if propose(b.write, _message(b), fixable=b.problem is None)]
    for buffer in fixes:
        _rewrite(buffer, analysis, tf or "tf")
    for buffer in reversed(fixes):  # each insert goes right after its loop
        _stack_after_loop(buffer, tf or "tf")
    for buffer in fixes:
        if buffer.conversion is not None:
            _merge_conversion(buffer, tf or "tf")
    _lift_tensor_bound_loops(fixes, tf or "tf")
    rewritten = bool(fixes)
    calls = _numpy_calls_of(function, module.imports) if rewritten else analysis.numpy_calls()
    if calls:  # else neither finds a call: spare their analyses
        # an analysis holds the function's nodes: a rewrite makes it stale, else it is reused
        analysis = Analysis(function, module.imports) if rewritten else analysis
        converted = _fix_list_conversions(analysis)
        analysis = Analysis(function, module.imports) if converted else analysis
        rewritten = _fix_numpy_on_tensors(analysis) or converted or rewritten
    if rewritten and tf is None:
        add_import(find_root(function), "import tensorflow as tf")
        module.tf = "tf"


def _numpy_calls_of(function, imports: Imports) -> List[Tuple[object, tuple, str]]:
    """The NumPy calls in ``function`` (outside nested scopes), what
    _list_conversions and _numpy_on_tensors look at (none: neither finds
    anything): (call, its call_parts, the NumPy function)."""
    found = []
    for node in scope_nodes(function):
        parts = call_parts(node) if is_call(node) else None
        numpy_function = imports.numpy_function(parts[0]) if parts else None
        if numpy_function is not None:
            found.append((node, parts, numpy_function))
    return found


# `...] = ` (not `==`), possibly across a line continuation: a subscript assignment
_SUBSCRIPT_ASSIGNMENT = re.compile(r"\](?:[ \t]|\\\r?\n)*=(?!=)")


# a NumPy call (with arguments) of one of the names ``{heads}``: ``np.f(``, a
# bare ``np(``; or of one of the names imported from NumPy ``{names}``
_NUMPY_CALL = (r"(?<![\w.])(?:(?P<head>{heads})(?:{gap}*\.{gap}*(?P<attr>\w+))?|(?P<name>{names}))"
               r"{gap}*\((?!{gap}*\))")
_PRESUMED_NP = re.compile(rf"{standalone('np')}(?!\w)")
# in the code's text, before any parse: a buffer needs a factory call (or a
# name imported from NumPy); a gradient context needs a tape, `tf.function`
# (as a decorator, a call or an import) or the `call`/step of a Keras class
_MAY_FILL = re.compile("|".join(rf"{standalone(name, after_dot=True)}{GAP}*\(" for name in FACTORIES)
                       + rf"|numpy{GAP}+import(?!\w)")
_MAY_OPEN_A_CONTEXT = re.compile(rf"GradientTape|{standalone('function', after_dot=True)}(?!\w)")
_KERAS_METHOD = re.compile(rf"{standalone('def', after_dot=True)}{GAP}+(?:call|train_step|test_step)(?!\w)")
_TENSOR_MODULES = ("tensorflow", "keras", "tf_keras")
_WORD = re.compile(r"\w+")
_FUNCTION_CALL = re.compile(rf"function{GAP}*\(")
# what makes a tensor besides a TensorFlow or Keras name: a `self.<layer>(...)` call, a model's weights
_SELF_CALL_OR_WEIGHTS = re.compile(rf"{standalone('self')}{GAP}*\.{GAP}*\w+{GAP}*\(|\.{GAP}*(?:"
                                   + "|".join(_MODEL_WEIGHTS) + r")(?!\w)")


def _may_fill_a_numpy_buffer(facts: SourceFacts) -> List[ast.AST]:
    """Precheck: the file imports NumPy or reads a presumed ``np``
    (Imports.numpy_function), something in it can make a tensor
    (Analysis.is_tensor and the model's kinds: a ``self.<layer>(...)``
    call, a model whose weights are read, or a name bound by importing
    TensorFlow or Keras, or presumed), and in the outermost functions
    returned (nested ones included) a name is bound to a NumPy factory
    and subscript-assigned, or a NumPy function is called on something
    while a gradient context may reach the function (_may_run_in_a_context).
    The NumPy calls are found in the code's text, so only the statements
    are walked, and the functions holding a factory and a subscript
    assignment."""
    if not may_import(facts, ("numpy",)) and not _PRESUMED_NP.search(code_text(facts)):
        return []  # no NumPy import, no presumed `np`
    text = code_text(facts)
    if not (_MAY_FILL.search(text) and _SUBSCRIPT_ASSIGNMENT.search(text)) and not (
            _MAY_OPEN_A_CONTEXT.search(text) or _KERAS_METHOD.search(text) and may_name_keras_classes(facts)):
        return []  # no factory call (or NumPy name import) and subscript assignment; no context
    table = import_table(facts)
    tensor_names = {"tf", "keras", "layers"} | {
        record.local for record in table.records if record.module.split(".")[0] in _TENSOR_MODULES}
    if not (_SELF_CALL_OR_WEIGHTS.search(text) or any(spelled_alone(text, name) for name in sorted(tensor_names))):
        return []
    calls = _numpy_calls(facts, table)
    if not calls:
        return []
    functions = sorted((first_line(s.node), s.node.end_lineno, s.node)
                       for s in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef) if s.function is None)
    firsts = [first for first, _, _ in functions]
    factories, calling = set(), {}
    for line, function in calls:
        at = bisect_right(firsts, line) - 1
        if at >= 0 and line <= functions[at][1]:
            calling[at] = functions[at][2]
            if function in FACTORIES:
                factories.add(at)
    found = []
    if factories:
        filled = {line_of(facts, match.start()) for match in _SUBSCRIPT_ASSIGNMENT.finditer(text)}
        imports = Imports.of(table)
        found = [functions[at][2] for at in sorted(factories)
                 if any(functions[at][0] <= line <= functions[at][1] for line in filled)
                 and _fills_a_buffer(functions[at][2], imports, spelled_as_in_ast(facts))]
    calling = [node for node in calling.values() if node not in found]
    if calling:
        starts = _may_run_in_a_context(facts)
        found += [node for node in calling
                  if bisect_right(starts, node.end_lineno) > bisect_left(starts, first_line(node))]
    return found


def _numpy_calls(facts: SourceFacts, table: ImportTable) -> List[tuple]:
    """(line, NumPy function name) of every call with arguments that may be
    a NumPy function's (Imports.numpy_function), found in the code's text."""
    heads = sorted(table.module_aliases("numpy") | {"np"})
    imported = table.imported_names("numpy")
    pattern = re.compile(_NUMPY_CALL.format(
        heads="|".join(map(re.escape, heads)), gap=GAP,
        names="|".join(map(re.escape, sorted(imported))) or r"(?!)"))
    return [(line_of(facts, match.start()),
             match.group("attr") or "" if match.group("head") else imported[match.group("name")])
            for match in pattern.finditer(code_text(facts))]


def _fills_a_buffer(function: ast.AST, imports: Imports, same_names: bool) -> bool:
    """Does ``function`` or a function nested in it hold a buffer
    (Analysis._buffers: a name whose first ``name = value`` in that scope is
    a NumPy factory, without an integer ``dtype`` when the ``ast``'s names
    are the text's, rebound at most once, by a conversion) and assign to a
    subscript of that name something that may be a tensor (no number:
    _examine, Analysis.is_tensor)?"""
    values: Dict[int, Dict[str, list]] = {}  # scope -> name -> (position, value) of `name = value`
    filled: Dict[int, Set[str]] = {}  # scope -> names subscript-assigned in it (nested scopes too)
    stack = [(child, (function,)) for child in child_nodes(function)]
    while stack:
        node, scopes = stack.pop()
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and scopes[-1] is not None:
            values.setdefault(id(scopes[-1]), {}).setdefault(node.targets[0].id, []).append(
                ((node.lineno, node.col_offset), node.value))
        if isinstance(node, (ast.Assign, ast.AugAssign)) and not _is_a_number(node.value) \
                or isinstance(node, ast.AnnAssign):  # the model sees `: T = v`, not `v`
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                base = target
                while isinstance(base, ast.Subscript):
                    base = base.value
                if base is not target and isinstance(base, ast.Name):
                    for scope in scopes:
                        if scope is not None:
                            filled.setdefault(id(scope), set()).add(base.id)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = scopes + (node,)
        elif isinstance(node, (ast.ClassDef, ast.Lambda)):
            inner = scopes + (None,)  # no function's own bindings (scope_nodes)
        else:
            inner = scopes
        stack.extend((child, inner) for child in child_nodes(node))
    for scope, bound in values.items():
        for name, found in bound.items():
            first, *rebound = [value for _, value in sorted(found, key=lambda pair: pair[0])]
            if name in filled.get(scope, ()) and isinstance(first, ast.Call) and len(rebound) <= 1 \
                    and all(_may_convert(value, name) for value in rebound):
                factory = imports.numpy_function(dotted(first.func) or "")
                if factory in FACTORIES and not (same_names and _factory_dtype(first, factory) in _INTEGERS):
                    return True
    return False


def _may_convert(value: ast.AST, name: str) -> bool:
    """May ``value`` be ``tf.convert_to_tensor(name, ...)`` (Analysis.converts)?"""
    return isinstance(value, ast.Call) and (dotted(value.func) or "").rpartition(".")[2] in _CONVERSIONS \
        and bool(value.args) and isinstance(value.args[0], ast.Name) and value.args[0].id == name


def _factory_dtype(call: ast.Call, function: str) -> Optional[str]:
    """The dtype a factory call names by a name (_new_buffer, _dtype_name), or None."""
    where = _SHAPED.get(function, _FROM_DATA.get(function))
    keywords = {k.arg: k.value for k in call.keywords}
    node = keywords.get("dtype", call.args[where] if where is not None and len(call.args) > where
                        and not any(isinstance(a, ast.Starred) for a in call.args[:where + 1]) else None)
    name = dotted(node) if node is not None else None
    return _PY_DTYPES.get(name) if name in _PY_DTYPES else (name or "").rpartition(".")[2] or None


def _is_a_number(node: Optional[ast.AST]) -> bool:
    """A literal number, bool or None (signed): the model knows it for no tensor."""
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex, bool, type(None))


# what makes a gradient context (recipes._model.contexts): the `call` of a
# Keras class, a Keras model's steps, a `tf.function`, a tape; and every
# function a context calls
_KERAS_METHODS = ("call", "train_step", "test_step")


def _may_run_in_a_context(facts: SourceFacts) -> List[int]:
    """Sorted first lines of the tapes and of the functions that may run in
    a gradient context (a superset of the model's Contexts): ``call``,
    ``train_step`` and ``test_step`` of a class that may derive from Keras,
    functions decorated with or passed to what may be ``tf.function``, and,
    by name, every function named in the text of a tape or of any of
    those (nested functions lie in that text)."""
    qualified = import_table(facts).qualified
    keras = keras_classes(facts)
    by_name: Dict[str, list] = {}
    pending = []
    for statement in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef):
        node = statement.node
        by_name.setdefault(node.name, []).append(node)
        decorators = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
        if statement.cls is not None and statement.cls.name in keras and node.name in _KERAS_METHODS \
                or any("tensorflow.function" in qualified(dotted(d)) for d in decorators):
            pending.append(node)
    named = [(stmt.lineno, stmt.end_lineno) for stmt, _ in tapes(facts)]
    starts = [first for first, _ in named]
    wrapping = {line_of(facts, match.start()) for match in _FUNCTION_CALL.finditer(code_text(facts))}
    for statement in {id(node): node for line in wrapping for node in statements_at(facts, line)}.values():
        for call in walk(statement):  # `tf.function(fn)`: the model's Contexts._wrapped
            if isinstance(call, ast.Call) and (dotted(call.func) or "").endswith("function") \
                    and "tensorflow.function" in qualified(dotted(call.func)):
                named += [(arg.lineno, arg.end_lineno) for arg in call.args[:1]]
    lines = code_lines(facts)
    seen: Set[int] = set()
    while pending or named:
        if pending:
            function = pending.pop()
            if id(function) in seen:
                continue
            seen.add(id(function))
            starts.append(function.lineno)
            named.append((function.lineno, function.end_lineno))
        first, last = named.pop()
        for word in set(_WORD.findall("\n".join(lines[first - 1:last]))):
            pending.extend(by_name.get(word, ()))
    return sorted(starts)


RECIPE = Recipe(
    id="numpy-accumulator",
    summary="NumPy buffers filled with tensors cut the tape; use tf.TensorArray",
    safety="safe",
    query=lambda q: (q.select(PATTERN).modify(_modify)
                     .select(FUNCTION).filter(_may_be_a_gradient_function).modify(_modify)),
    tokens=("numpy", "np."),  # NumPy imported or a presumed `np`; the precheck does the rest
    precheck=_may_fill_a_numpy_buffer,
    before_fails="none-gradient",
)
