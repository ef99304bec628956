"""What a host value (NumPy, pandas, plain Python data) is, in the terms of
typed-convert's measured table (recipes/_typed_convert_matrix.py): the rows
(``"py-list-float"``, ``"ndarray-int64"``, ``"pandas-values-float64"``...)
it may be, from the semantic model's kinds and the literals and NumPy calls
that fix a dtype. None: not provably host data (or a kind the table did not
measure), so nothing is promised.

    rows_of(node, model) -> Optional[FrozenSet[str]]
    dtype_name(node, model) -> Optional[str]   # tf.float32, np.half, "float32" -> "float32"
"""

from __future__ import annotations

from typing import FrozenSet, Iterable, Optional

from fissix.pgen2 import token

from recipes import _fissix as s
from recipes._model import Kind
from recipes._model.dtypes import dtype_named

_NDARRAY_DTYPES = ("int32", "int64", "float16", "float32", "float64", "bool", "object")
NDARRAY_ANY = frozenset(f"ndarray-{d}" for d in _NDARRAY_DTYPES)
_PANDAS_VALUES = frozenset({"pandas-values-float64", "pandas-values-int64", "pandas-values-mixed"})
_FRAMES = frozenset({"pandas-frame-float64", "pandas-frame-int64", "pandas-values-mixed"})
_SCALARS = frozenset({"py-scalar-int", "py-scalar-float", "py-scalar-bool"})
_LISTS = frozenset({"py-list-int", "py-list-float", "py-list-bool", "py-list-mixed",
                    "py-nested-int", "py-nested-float"})
# NumPy constructors whose result is float64 unless a dtype is given
_FLOAT64_MAKERS = {"zeros", "ones", "empty", "random.rand", "random.randn", "random.random", "random.normal",
                   "random.uniform", "random.standard_normal", "random.random_sample", "linspace", "eye",
                   "identity"}
_FROM_DATA = {"array", "asarray", "asanyarray", "ascontiguousarray"}
# methods of an array that keep its dtype
_SAME_DTYPE = {"reshape", "flatten", "ravel", "copy", "squeeze", "transpose", "T"}
_MAX_DEPTH = 8


def dtype_name(node, model) -> Optional[str]:
    """The dtype a ``tf.*``/``np.*`` dtype attribute or a dtype string names
    (the model's answer: recipes/_model/dtypes.py)."""
    return dtype_named(model, node)


def _union(parts: Iterable[Optional[FrozenSet[str]]]) -> Optional[FrozenSet[str]]:
    found: FrozenSet[str] = frozenset()
    for part in parts:
        if part is None:
            return None
        found |= part
    return found


def rows_of(node, model, depth: int = 0) -> Optional[FrozenSet[str]]:
    if depth > _MAX_DEPTH:
        return None
    node = s.unparen(node)
    literal = _literal_scalar(node)
    if literal is not None:
        return frozenset({literal})
    elements = s.literal_elements(node)
    if elements is not None:
        return _display_rows(elements, node.children[0].value == "(", model, depth)
    if node.type == token.NAME:
        bindings = model.reaching(node.value, node)
        values = [_bound_expression(b, model) for b in bindings]
        if not values or any(v is None for v in values):
            return None
        return _union(rows_of(v, model, depth + 1) for v in values)
    chained = _method_chain(node, model, depth)
    if chained is not False:
        return chained
    value = model.kind_of(node)
    if value.kind is Kind.NDARRAY:
        return _ndarray_rows(node, model)
    if value.kind is Kind.DATAFRAME:
        return _FRAMES
    if value.kind is Kind.NUMBER:  # a computed number: maybe a NumPy scalar
        return _SCALARS | NDARRAY_ANY - {"ndarray-object"}
    if value.kind in (Kind.PYLIST, Kind.PYTUPLE) and _host_items(value):
        return _LISTS
    return None


def _host_items(value) -> bool:
    """A list or tuple of numbers all the way down (a list of arrays or
    tensors is packed: not measured)."""
    if value.kind is Kind.NUMBER:
        return True
    if value.kind not in (Kind.PYLIST, Kind.PYTUPLE):
        return False
    if value.items is not None:
        return all(_host_items(item) for item in value.items)
    return value.element is not None and _host_items(value.element)


def _literal_scalar(node) -> Optional[str]:
    if node.type == s.syms.factor and node.children[0].value in "-+":
        return _literal_scalar(node.children[1])
    if node.type == token.NUMBER:
        text = node.value.lower()
        if text.endswith("j"):
            return None
        is_float = not text.startswith("0x") and ("." in text or "e" in text)
        return "py-scalar-float" if is_float else "py-scalar-int"
    if node.type == token.NAME and node.value in ("True", "False"):
        return "py-scalar-bool"
    return None


def _display_rows(elements, is_tuple: bool, model, depth: int) -> Optional[FrozenSet[str]]:
    """A list or tuple display: flat (ints, floats, bools, mixed) or nested one level."""
    if not elements:
        return None
    kinds = [rows_of(e, model, depth + 1) for e in elements]
    if any(k is None for k in kinds):
        return None
    if all(k <= _SCALARS for k in kinds):
        if any(len(k) > 1 for k in kinds):
            return frozenset({"py-list-int", "py-list-float", "py-list-bool", "py-list-mixed"})
        found = {next(iter(k)) for k in kinds}
        flat = {frozenset({"py-scalar-int"}): "int", frozenset({"py-scalar-float"}): "float",
                frozenset({"py-scalar-bool"}): "bool",
                frozenset({"py-scalar-int", "py-scalar-float"}): "mixed"}.get(frozenset(found))
        if flat is None:
            return None
        return frozenset({"py-tuple-float" if is_tuple and flat == "float" else f"py-list-{flat}"})
    if all(k <= {"py-list-int", "py-nested-int"} for k in kinds):
        return frozenset({"py-nested-int"})
    if all(k <= {"py-list-float", "py-list-mixed", "py-tuple-float", "py-nested-float"} for k in kinds):
        return frozenset({"py-nested-float"})
    return None


def _method_chain(node, model, depth: int):
    """Rows of ``....values``/``.to_numpy()`` (pandas or NumPy, trusted on an
    unknown receiver), ``.astype(D)``, and of an array method that keeps the
    receiver's dtype; False when ``node`` is none of these."""
    trailers = node.children[1:] if node.type == s.syms.power else []
    if not trailers or any(t.type != s.syms.trailer for t in trailers):
        return False
    last = trailers[-1]
    called = last.children[0].value == "(" and len(trailers) >= 2 and trailers[-2].children[0].value == "."
    method = trailers[-2].children[1].value if called else \
        last.children[1].value if last.children[0].value == "." else None
    receiver_end = -2 if called else -1
    if model.kind_of(node).is_tensor or method is None:
        return False
    if method in ("values", "to_numpy"):
        return NDARRAY_ANY | _PANDAS_VALUES
    if method == "astype" and called:
        args = s.call_args(last)
        dtype = dtype_name(args[0], model) if args and not s.keyword_arg(args[0]) else None
        return frozenset({f"ndarray-{dtype}"}) if dtype in _NDARRAY_DTYPES else None
    if method in _SAME_DTYPE and model.kind_of(node).kind is Kind.NDARRAY:
        receiver = node.children[:len(node.children) + receiver_end]
        return rows_of(receiver[0], model, depth + 1) if len(receiver) == 1 else _made_by(receiver, model)
    return False


def _ndarray_rows(node, model) -> Optional[FrozenSet[str]]:
    return _made_by(node.children if node.type == s.syms.power else [node], model)


def _made_by(children, model) -> Optional[FrozenSet[str]]:
    """The row of an array made by the call ``children`` (callee parts, then
    the call's trailer): its dtype from ``dtype=``, a float64 constructor or
    the literal it is made from; every array row when that is not known."""
    last = children[-1]
    if len(children) < 2 or last.type != s.syms.trailer or last.children[0].value != "(":
        return NDARRAY_ANY
    name = model.qualified_children(children[:-1]) or ""
    if not name.startswith("numpy."):
        return NDARRAY_ANY
    positional, keywords = s.split_arguments(last)
    if "dtype" in keywords:
        dtype = dtype_name(keywords["dtype"], model)
        return frozenset({f"ndarray-{dtype}"}) if dtype in _NDARRAY_DTYPES else None
    short = name[len("numpy."):]
    if short in _FLOAT64_MAKERS:
        return frozenset({"ndarray-float64"})
    if short in _FROM_DATA and positional and s.literal_elements(s.unparen(positional[0])) is not None:
        rows = rows_of(positional[0], model)
        by_literal = {"int": "int64", "float": "float64", "mixed": "float64", "bool": "bool"}
        if rows is not None and len(rows) == 1:
            kind = next(iter(rows)).rsplit("-", 1)[1]
            if kind in by_literal:
                return frozenset({f"ndarray-{by_literal[kind]}"})
    return NDARRAY_ANY


def _bound_expression(binding, model):
    """The expression an assignment binds to this name, also one item of an
    unpacked list/tuple display (or of a name assigned once to one); None
    otherwise."""
    if binding.how != "assign":
        return None
    if binding.value is not None:
        return binding.value
    node = binding.source
    for index in binding.path:
        if node is not None and s.unparen(node).type == token.NAME:
            assigned = model.last_assignment(s.unparen(node).value, node)
            node = assigned.value if assigned is not None and assigned.how == "assign" else None
        elements = s.literal_elements(s.unparen(node)) if node is not None else None
        if elements is None or not 0 <= index < len(elements):
            return None
        node = elements[index]
    return node
