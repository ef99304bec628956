"""What numpy-accumulator knows about one function: its NumPy buffers
(Buffer) and which of its values are tensors (Analysis). Imports, kinds and
bindings are the semantic model's (``recipes._model``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from fissix.pgen2 import token

from recipes._fissix import (
    call_parts, dotted_name, is_call, is_name, literal_elements, name_reads, parse_expression, scope_nodes, source,
    syms,
)
from recipes._host_dtypes import dtype_name
from recipes._model import Kind, model_of
from recipes._model.imports import Imports


# NumPy calls that make a buffer -> the position of their dtype argument
# (None: it takes none); the ``_like`` and data ones do not say the shape
_SHAPED = {"zeros": 1, "empty": 1, "ones": 1, "full": 2}


_FROM_DATA = {"zeros_like": 1, "empty_like": 1, "ones_like": 1, "full_like": 2,
              "array": 1, "asarray": 1, "copy": None}


FACTORIES = tuple(_SHAPED) + tuple(_FROM_DATA)


_INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "bool")


_CONVERSIONS = ("convert_to_tensor", "constant", "cast")


DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128")


_PY_DTYPES = {"float": "float64", "int": "int64", "bool": "bool", "complex": "complex128"}


_TENSOR_ATTRIBUTES = ("shape", "dtype", "ndim")


@dataclass(eq=False, repr=False)
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
    conversion_dtype: Optional[str] = None  # the dtype it names (``?``: one this recipe cannot name)
    inner: object = None             # the inner loop of a ``buf[i, j] = v`` write
    problem: Optional[str] = None    # why it cannot be rewritten
    factory: str = "zeros"           # the NumPy function that made it
    columns: Optional[str] = None    # ``buf[i, cols]``: the selected columns as a tf expression
    in_place: bool = False           # axis > 0 of a ``_like``/``copy`` buffer: a tensor updated per step
    batch_of_one: bool = False       # the write drops the value's leading 1 (tensor_array._decide_the_batch_axis)
    doubt: Optional[str] = None      # why the fix is unsafe: what the model cannot tell
    scatter: Optional[list] = None   # the general form: its writes (_numpy_accumulator.scatter)

    @property
    def data(self):
        """The ``_like``/``array``/``copy`` argument, as the creation reads now
        (a fix of a NumPy call inside it comes before the buffer's rewrite)."""
        return self._argument(0) if self.factory in _FROM_DATA else None

    @property
    def fill(self):
        """The value of ``np.full``, as the creation reads now."""
        return self._argument(1) if self.factory == "full" else None

    def _argument(self, position: int):
        parts = call_parts(self.creation.children[-1])
        return parts[1][position] if parts and len(parts[1]) > position else None


def _factory_call(value, imports: Imports):
    parts = call_parts(value)
    if not parts:
        return None
    function = imports.numpy_function(parts[0])
    return (function, parts[1], parts[2]) if function in FACTORIES else None


def _dtype_name(node) -> Optional[str]:
    """``float32`` for ``np.float32`` / ``'float32'`` / ``tf.float32`` (the
    model's ``dtype_name``), or a dtype another library spells the same
    (``jnp.int32``); ``float64`` for NumPy's reading of ``float``; ``?`` when
    it is something else."""
    if node.type == token.NAME and node.value in _PY_DTYPES:
        return _PY_DTYPES[node.value]
    name = dtype_name(node, model_of(node)) or (dotted_name(node) or "").rpartition(".")[2]
    return name if name in DTYPES else "?"


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
    buffer = Buffer(name, creation, dims, dtype, factory=function)
    if dtype == "?":
        buffer.problem = f"the dtype `{source(dtype_node)}` has no TensorFlow name this recipe knows"
    return buffer


class Analysis:
    """Buffers of one function and which values are TensorFlow tensors (the
    model's ``may_hold_a_tensor``, with the buffers that receive tensors
    counted as tensors: the rewrite makes them so)."""

    def __init__(self, function, model):
        self.function = function
        self.model = model
        self.imports = model.imports
        self.bound = model.assignments(function)
        self.buffers = self._buffers()
        # ids of values the rewrite makes tensors: creations of buffers that receive
        # tensors, NumPy joins of tensors (``np.stack(lst)`` becomes ``tf.stack(lst)``)
        self.filled: frozenset = frozenset()
        self.settled = False
        self._writes: Dict[str, List] = {}  # buffer name -> its writes (the tree does not change meanwhile)
        self._calls: Optional[List] = None
        if self.buffers:
            self.settle_tensor_names()

    def _buffers(self) -> List[Buffer]:
        found = []
        for name, values in self.bound.items():
            factory = _factory_call(values[0], self.imports) or self._made_by_a_helper(values[0])
            rebound = values[1:]
            if factory and len(rebound) <= 1 and all(self.converts(v, name) for v in rebound):
                buffer = _new_buffer(name, values[0].parent, *factory)
                if rebound:
                    buffer.conversion = rebound[0].parent
                    _, positional, keywords = call_parts(rebound[0])
                    dtype = keywords.get("dtype", positional[1] if len(positional) > 1 else None)
                    buffer.conversion_dtype = _dtype_name(dtype) if dtype is not None else None
                    if buffer.dtype is None and buffer.conversion_dtype not in (None, "?"):
                        buffer.dtype = buffer.conversion_dtype
                found.append(buffer)
        return found

    def _made_by_a_helper(self, value):
        """(``helper``, [], {}) for a call of a function or method of the
        module that returns a NumPy array (the model's kinds through
        functions): a buffer made by a helper."""
        parts = call_parts(value)
        if not parts or self.imports.numpy_function(parts[0]) is not None:
            return None
        kind = self.model.kind_of(value)
        return ("helper", [], {}) if kind.kind == Kind.NDARRAY and kind.origin is not None else None

    def converts(self, value, name: str) -> bool:
        """Is ``value`` ``tf.convert_to_tensor(name, ...)`` / ``tf.constant(name)``
        / ``tf.cast(name, ...)``: the buffer rebound as a tensor after its loop?"""
        parts = call_parts(value)
        callee = self.model.callee(value) or ""
        return bool(parts) and callee.startswith("tensorflow.") \
            and callee.rpartition(".")[2] in _CONVERSIONS and bool(parts[1]) \
            and is_name(parts[1][0], name)

    def settle_tensor_names(self) -> None:
        """Which buffers receive tensors (``filled``): a buffer written with a
        value read from another one that does is one too (nested buffers)."""
        written = [(buffer, [w.children[-1] for w in self.writes(buffer)]) for buffer in self.buffers]
        while True:
            filled = self.filled | {id(buffer.creation.children[-1]) for buffer, values in written
                                    if any(self.is_tensor(v) for v in values)}
            if filled == self.filled:
                self.settled = True
                return
            self.filled = frozenset(filled)

    def becoming_tensors(self, values) -> None:
        """Count ``values`` as tensors: the rewrite makes them so."""
        self.filled |= frozenset(id(value) for value in values)

    @property
    def tf(self) -> str:
        """How generated code spells TensorFlow (``tf`` is imported when absent)."""
        tensorflow = self.imports.aliases("tensorflow")
        return "tf" if "tf" in tensorflow else min(tensorflow, default="tf")

    def is_tensor(self, expr) -> bool:
        """Does ``expr`` evaluate to a TensorFlow tensor (not NumPy, not Python)?"""
        return id(expr) in self.filled or self.model.may_hold_a_tensor(expr, self.filled)

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
            if (target is not None and _subscripted(target) and statement is not None
                    and statement.type == syms.expr_stmt and statement.children[0] is target):
                writes.append(statement)
        return writes


def _subscripted(target) -> bool:
    """``buf[...]`` or ``buf[i][j]``: a name then only subscripts."""
    return target.type == syms.power and is_name(target.children[0]) and all(
        t.type == syms.trailer and t.children[0].type == token.LSQB for t in target.children[1:])


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


_MODEL_WEIGHTS = ("trainable_variables", "trainable_weights")


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
