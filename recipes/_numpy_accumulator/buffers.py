"""What numpy-accumulator knows about one function: how the file spells
NumPy and TensorFlow (Imports), its NumPy buffers (Buffer) and which of
its values are tensors (Analysis)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

from fissix.pgen2 import token

from recipes._fissix import (
    bindings, call_parts, dotted_name, enclosing, is_call, is_name, literal_elements, name_reads,
    parse_expression, scope_nodes, source, syms,
)
from recipes._model import Kind, model_of
from recipes._model.imports import CONVENTIONAL
from recipes._pyast import Declarations


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
    keras_ops: Optional[str] = None  # ``keras.ops`` / ``ops`` in Keras 3 code that does not import TensorFlow

    @classmethod
    def of_model(cls, model, root) -> "Imports":
        """From the semantic model of the fissix tree (every spelling, presumed aliases)."""
        ops = None
        if _imports_keras_3_only(root):
            keras = sorted(model.imports.aliases("keras"))
            ops = "ops" if model.imports.module_of("ops") == "keras.ops" else f"{keras[0]}.ops" if keras else None
        return cls(model.imports.module_of, model.imports.uses("numpy"), model.imports.aliases("tensorflow"), ops)

    @classmethod
    def of(cls, table: Declarations) -> "Imports":
        """From the ``ast`` import table, for the precheck: never narrower than
        ``of_model`` (a ``tensorflow.compat`` alias and an unbound ``np``/``tf``
        count)."""
        names = {local: f"numpy.{name}" for local, name in table.imported_names("numpy").items()}
        names.update(dict.fromkeys(table.module_aliases("numpy"), "numpy"))
        tensorflow = set().union(*(aliases for module, aliases in table.aliases.items()
                                   if module.split(".")[0] == "tensorflow"))
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


def _imports_keras_3_only(root) -> bool:
    """Does the file import ``keras`` itself and nothing from ``tensorflow`` or
    ``tf_keras`` (the model's canonical names say ``keras`` for all three)?"""
    roots = set()
    for node in root.pre_order():
        if node.type == syms.import_name:
            names = node.children[1]
            items = names.children if names.type == syms.dotted_as_names else [names]
            roots.update(next(item.leaves()).value for item in items if item.type != token.COMMA)
        elif node.type == syms.import_from:
            roots.add(next(node.children[1].leaves()).value)
    return "keras" in roots and not roots & {"tensorflow", "tf_keras"}


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
    scatter: Optional[list] = None   # the general form: its writes (_numpy_accumulator.scatter)


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
            factory = _factory_call(values[0], self.imports) or self._made_by_a_helper(values[0])
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
            if (target is not None and _subscripted(target) and statement is not None
                    and statement.type == syms.expr_stmt and statement.children[0] is target):
                writes.append(statement)
        return writes


def _subscripted(target) -> bool:
    """``buf[...]`` or ``buf[i][j]``: a name then only subscripts."""
    return target.type == syms.power and is_name(target.children[0]) and all(
        t.type == syms.trailer and t.children[0].type == token.LSQB for t in target.children[1:])


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


def _describes(leaf) -> bool:
    """Is ``leaf`` read for its ``.shape``/``.dtype``/``.ndim`` (a Python value)?"""
    after = leaf.next_sibling
    return after is not None and after.type == syms.trailer and after.children[0].type == token.DOT \
        and after.children[1].value in _TENSOR_ATTRIBUTES


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
