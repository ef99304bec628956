"""What the model knows about a value: its kind, and for containers, models
and layers a little more."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable, Optional, Tuple


class Kind(enum.Enum):
    TENSOR = "tensor"
    VARIABLE = "tf.Variable"
    NDARRAY = "NumPy array"
    PYLIST = "Python list"
    PYTUPLE = "Python tuple"
    NUMBER = "Python number"
    STRING = "string"
    MODEL = "Keras model"
    LAYER = "Keras layer"
    DATASET = "tf.data dataset"
    DATASET_ELEMENT = "dataset element"
    DATAFRAME = "pandas object"
    OTHER = "other"
    UNKNOWN = "unknown"


_TENSORS = (Kind.TENSOR, Kind.VARIABLE)
_HOST_DATA = (Kind.NDARRAY, Kind.PYLIST, Kind.PYTUPLE, Kind.NUMBER, Kind.DATAFRAME)


@dataclass
class Value:
    """``element``: what iterating or indexing gives (lists, tuples, datasets,
    ranges); ``items``: per-position values of a tuple; ``width``: output
    units of a model or layer, and of the tensor it outputs; ``what``: a
    finer name for OTHER values (``"range"``, ``"tape"``, ``"dtype"``,
    ``"function"``, ``"class"``, ``"module"``, ``"instance"``, a builtin as
    ``"builtin:len"``) or the Keras class of a layer; ``origin``: the node that
    made it (a call, or the classdef of an instance). Compared (``join``),
    never hashed nor mutated: not frozen, which would double its creation
    cost at import."""

    kind: Kind
    element: Optional["Value"] = None
    items: Optional[Tuple["Value", ...]] = None
    width: Optional[int] = None
    what: Optional[str] = None
    origin: object = field(default=None, compare=False, hash=False)

    @property
    def is_tensor(self) -> bool:
        return self.kind in _TENSORS

    @property
    def is_host_data(self) -> bool:
        """NumPy, pandas or plain Python data: converting it makes a new tensor."""
        return self.kind in _HOST_DATA

    @property
    def is_known(self) -> bool:
        return self.kind is not Kind.UNKNOWN

    def describe(self) -> str:
        text = self.kind.value
        if self.element is not None and self.kind in (Kind.PYLIST, Kind.PYTUPLE):
            text += f" of {self.element.kind.value}s"
        if self.width is not None:
            text += f" (output width {self.width})"
        return text


UNKNOWN = Value(Kind.UNKNOWN)


def of(kind: Kind, **fields) -> Value:
    return Value(kind, **fields)


def join(values: Iterable[Optional[Value]]) -> Optional[Value]:
    """What a name is when any of ``values`` may reach it. None (no
    information, e.g. a binding still being inferred) is left out."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    first = present[0]
    if all(v == first for v in present):
        return first
    kinds = {v.kind for v in present}
    if kinds <= set(_TENSORS):
        return Value(Kind.TENSOR)
    if kinds == {Kind.NUMBER, Kind.NDARRAY}:
        return Value(Kind.NDARRAY)
    if len(kinds) > 1:
        return UNKNOWN
    widths = {v.width for v in present}
    elements = join(v.element for v in present)
    origins = {id(v.origin) for v in present}
    return Value(first.kind, element=elements,
                 width=widths.pop() if len(widths) == 1 else None,
                 what=first.what if all(v.what == first.what for v in present) else None,
                 origin=first.origin if len(origins) == 1 else None)
