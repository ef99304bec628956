"""The kind of each expression, inferred on demand and memoized.

Names go through their reaching bindings; calls through the canonical name
of the callee (``tensorflow.*`` ops make tensors, ``numpy.*`` arrays,
``keras.layers.Dense(n)`` a layer of width n...); methods and attributes
through the kind of their receiver. A binding that is still being inferred
(a loop-carried name) gives no information, so ``x = x + t`` in a loop keeps
the kind of the ``x`` it starts from.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Dict, List, Optional

from ._tree import literal_elements, split_arguments, syms, token
from .flow import Binding
from .imports import canonical
from .values import UNKNOWN, Kind, Value, join, of

if TYPE_CHECKING:
    from . import Model

_BINARY = (syms.arith_expr, syms.term, syms.shift_expr, syms.and_expr, syms.xor_expr, syms.expr)
_TUPLES = (syms.testlist_star_expr, syms.exprlist, syms.testlist, syms.testlist_gexp)

_TF_OP_MODULES = ("tensorflow", "tensorflow.math", "tensorflow.linalg", "tensorflow.nn",
                  "tensorflow.image", "tensorflow.random", "tensorflow.signal",
                  "tensorflow.strings", "tensorflow.dtypes", "tensorflow.bitwise",
                  "tensorflow.experimental.numpy", "tensorflow.raw_ops", "tensorflow.io",
                  "tensorflow.audio", "tensorflow.sets", "tensorflow.ragged", "keras.ops",
                  "keras.backend", "keras.activations", "keras.losses", "keras.ops.numpy")
_TF_LISTS = {"unstack", "split", "meshgrid", "dynamic_partition", "gradients", "while_loop"}
_TF_NOT_TENSORS = {"function": "function", "print": "none", "device": "context",
                   "name_scope": "context", "executing_eagerly": "bool", "is_tensor": "bool",
                   "control_dependencies": "context", "load_op_library": "module",
                   "set_seed": "none", "clear_session": "none", "set_floatx": "none",
                   "set_value": "none", "set_learning_phase": "none", "floatx": "dtype",
                   "image_data_format": "string", "epsilon": "number"}
_KERAS_ARRAYS = {"keras.utils.to_categorical", "keras.backend.eval", "keras.backend.get_value",
                 "keras.backend.batch_get_value"}
_TF_ARRAYS = {"make_ndarray", "get_static_value"}
_TF_CLASSES = {"Variable": Kind.VARIABLE, "constant": Kind.TENSOR, "Tensor": Kind.TENSOR,
               "SparseTensor": Kind.TENSOR, "RaggedTensor": Kind.TENSOR}
_DATASET_SOURCES = ("tensorflow.data.", "keras.utils.image_dataset_from_directory",
                    "keras.utils.text_dataset_from_directory",
                    "keras.utils.timeseries_dataset_from_array",
                    "keras.preprocessing.image_dataset_from_directory")
_NUMPY_NOT_ARRAYS = {"shape": of(Kind.PYTUPLE, element=of(Kind.NUMBER)), "ndim": of(Kind.NUMBER),
                     "size": of(Kind.NUMBER), "isscalar": of(Kind.NUMBER),
                     "dtype": of(Kind.OTHER, what="dtype"), "save": of(Kind.OTHER, what="none"),
                     "savez": of(Kind.OTHER, what="none"), "printoptions": of(Kind.OTHER)}
_NUMPY_CONSTANTS = {"pi", "e", "inf", "nan", "newaxis", "euler_gamma"}
_ARRAY_METHODS = {"tolist": of(Kind.PYLIST), "item": of(Kind.NUMBER),
                  "tobytes": of(Kind.OTHER, what="bytes")}
_ARRAY_MUTATORS = {"fill", "sort", "resize", "put", "itemset", "setflags"}
# methods a NumPy array has and a tf.Tensor has not: whatever the receiver,
# the result is host data (``y.eval(...).ravel().view(dtype)``, ``sess.run`` values)
_ARRAY_ONLY_METHODS = {"ravel", "tobytes", "tofile", "byteswap"}
_DATASET_KEEP = {"batch", "shuffle", "prefetch", "take", "skip", "repeat", "cache", "filter",
                 "unbatch", "padded_batch", "concatenate", "with_options", "shard", "rebatch",
                 "apply", "map", "flat_map", "interleave", "enumerate", "window", "zip",
                 "take_while", "ignore_errors", "bucket_by_sequence_length"}
_DATASET_NEW_ELEMENT = {"map", "flat_map", "interleave", "apply", "window", "zip"}
_MODEL_ARRAYS = {"predict", "predict_on_batch"}
_MODEL_TENSORS = {"call", "predict_step", "__call__"}
_WIDTH_KEEPING_LAYERS = {"Activation", "Dropout", "BatchNormalization", "LayerNormalization",
                         "Softmax", "ReLU", "LeakyReLU", "ELU", "PReLU", "GaussianNoise",
                         "GaussianDropout", "AlphaDropout", "ActivityRegularization",
                         "SpatialDropout1D", "SpatialDropout2D", "UnitNormalization"}
_UNITS_LAYERS = {"Dense", "LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell", "SimpleRNNCell"}
_ANNOTATIONS = {"tensorflow.Tensor": of(Kind.TENSOR), "tensorflow.Variable": of(Kind.VARIABLE),
                "tensorflow.data.Dataset": of(Kind.DATASET), "numpy.ndarray": of(Kind.NDARRAY),
                "keras.Model": of(Kind.MODEL), "keras.models.Model": of(Kind.MODEL),
                "keras.layers.Layer": of(Kind.LAYER), "pandas.DataFrame": of(Kind.DATAFRAME),
                "pandas.Series": of(Kind.DATAFRAME), "int": of(Kind.NUMBER),
                "float": of(Kind.NUMBER), "bool": of(Kind.NUMBER), "str": of(Kind.STRING),
                "list": of(Kind.PYLIST), "List": of(Kind.PYLIST), "typing.List": of(Kind.PYLIST),
                "tuple": of(Kind.PYTUPLE), "Tuple": of(Kind.PYTUPLE),
                "typing.Tuple": of(Kind.PYTUPLE)}
_KERAS_MODEL_BASES = {"keras.Model", "keras.models.Model", "keras.Sequential",
                      "keras.models.Sequential", "keras.engine.training.Model"}
_KERAS_LAYER_BASES = ("keras.layers.", "keras.engine.base_layer.Layer", "keras.Layer")
_STEP_METHODS = {"train_step", "test_step", "predict_step"}
_DEPTH = 120  # questions nested deeper than this (long rebinding chains) are unknown
_VARIABLE_LISTS = {"trainable_variables", "trainable_weights", "non_trainable_variables"}
_CALLABLE = (Kind.MODEL, Kind.LAYER)  # an attribute holding one is called, not a method


def last_name(path: str) -> str:
    return path.rpartition(".")[2]


class Kinds:
    """Infers values for one module's model; every answer is memoized."""

    def __init__(self, model: "Model", call_sites: bool = False):
        self.model = model
        # also bind a parameter the model cannot type from the arguments of
        # every call of its function in this module (``likely_kind_of``)
        self.call_sites = call_sites
        self.memo: Dict[object, Optional[Value]] = {}
        # Inference in progress, innermost last: key, and the lowest stack
        # position of an unfinished inference its result depended on.
        self.stack: List[object] = []
        self.lowest: List[int] = []
        self.position: Dict[object, int] = {}
        self.assumed: Dict[object, Optional[Value]] = {}

    # ------------------------------------------------------------ entry points

    def value(self, node) -> Value:
        found = self._memoized(id(node), self._infer, node)
        return found if found is not None else UNKNOWN

    def element(self, node) -> Value:
        """What iterating ``node`` gives."""
        found = self._element(self._memoized(id(node), self._infer, node))
        return found if found is not None else UNKNOWN

    def _memoized(self, key, compute, arg) -> Optional[Value]:
        """``compute(arg)``, memoized. A question that comes back to itself
        (a name bound from itself in a loop) is answered from an assumption,
        first "nothing known", then the previous answer, until the answer
        settles; answers that leaned on an unsettled assumption are not kept."""
        if key in self.memo:
            return self.memo[key]
        if key in self.position:
            depth = self.position[key]
            self.lowest[-1] = min(self.lowest[-1], depth)
            return self.assumed.get(key)
        depth = len(self.stack)
        if depth >= _DEPTH:
            return UNKNOWN  # a chain too long to follow: nothing promised
        self.stack.append(key)
        self.position[key] = depth
        self.lowest.append(depth + 1)
        try:
            found = compute(arg)
            for _ in range(4):
                settled = key in self.assumed and found == self.assumed[key]
                if self.lowest[-1] != depth or settled:
                    break
                self.assumed[key] = found
                self.lowest[-1] = depth + 1
                found = compute(arg)
            else:
                found = UNKNOWN
        finally:
            self.stack.pop()
            del self.position[key]
            lowest = self.lowest.pop()
            self.assumed.pop(key, None)
        if lowest < depth:
            self.lowest[-1] = min(self.lowest[-1], lowest)
        else:
            self.memo[key] = found
        return found

    def _of(self, node) -> Optional[Value]:
        return self._memoized(id(node), self._infer, node)

    # ------------------------------------------------------------ expressions

    def _infer(self, node) -> Optional[Value]:
        kind = node.type
        if kind == token.NAME:
            return self._name(node)
        if kind == token.NUMBER:
            return of(Kind.NUMBER)
        if kind == token.STRING:
            return of(Kind.STRING)
        if kind == syms.atom:
            return self._atom(node)
        if kind == syms.power:
            return self._power(node)
        if kind in _BINARY:
            return self._arithmetic([self._of(c) for c in node.children[::2]])
        if kind == syms.factor:
            operand = self._of(node.children[1])
            return operand if operand is None or operand.kind != Kind.VARIABLE else of(Kind.TENSOR)
        if kind == syms.comparison:
            found = self._arithmetic([self._of(c) for c in node.children[::2]])
            return found if found is not None and found.kind in (Kind.TENSOR, Kind.NDARRAY) \
                else of(Kind.NUMBER)
        if kind in (syms.and_test, syms.or_test):
            return join(self._of(c) for c in node.children[::2])
        if kind == syms.not_test:
            return of(Kind.NUMBER)
        if kind == syms.test and len(node.children) == 5:
            return join((self._of(node.children[0]), self._of(node.children[4])))
        if kind in _TUPLES:
            items = tuple(self.value(c) for c in node.children if c.type != token.COMMA)
            return of(Kind.PYTUPLE, items=items, element=join(items), origin=node)
        if kind == syms.namedexpr_test:
            return self._of(node.children[2])
        if kind == syms.lambdef:
            return of(Kind.OTHER, what="function", origin=node)
        return UNKNOWN

    def _atom(self, node) -> Optional[Value]:
        children = node.children
        opener = children[0].type
        if opener == token.STRING:
            return of(Kind.STRING)
        if opener == token.LBRACE:
            return of(Kind.OTHER, what="dict", origin=node)
        if len(children) == 2:
            return of(Kind.PYLIST if opener == token.LSQB else Kind.PYTUPLE, items=(), origin=node)
        inner = children[1]
        if inner.type in (syms.listmaker, syms.testlist_gexp) and inner.children[-1].type == syms.comp_for:
            element = self.value(inner.children[0])
            if opener == token.LSQB:
                return of(Kind.PYLIST, element=element, origin=node)
            return of(Kind.OTHER, what="generator", element=element, origin=node)
        elements = literal_elements(node)
        if elements is None:
            return self._of(inner)  # parentheses around one expression
        items = tuple(self.value(e) for e in elements)
        return of(Kind.PYLIST if opener == token.LSQB else Kind.PYTUPLE, items=items,
                  element=join(items), origin=node)

    @staticmethod
    def _arithmetic(operands: List[Optional[Value]]) -> Optional[Value]:
        known = [v for v in operands if v is not None]
        if not known:
            return None
        kinds = {v.kind for v in known}
        if kinds & {Kind.TENSOR, Kind.VARIABLE}:
            return of(Kind.TENSOR)
        if Kind.NDARRAY in kinds:
            return of(Kind.NDARRAY)
        if kinds == {Kind.NUMBER}:
            return of(Kind.NUMBER)
        if kinds == {Kind.DATAFRAME} or kinds == {Kind.DATAFRAME, Kind.NUMBER}:
            return of(Kind.DATAFRAME)
        if len(kinds) == 1 and kinds & {Kind.PYLIST, Kind.PYTUPLE, Kind.STRING}:
            return join(known)
        return UNKNOWN

    # ------------------------------------------------------------ names

    def _name(self, leaf) -> Optional[Value]:
        target = self.model.index.targets.get(id(leaf))
        if target is not None:
            return self._binding(target)
        return self._memoized(("read", id(leaf)), self._read, leaf)

    def _read(self, leaf) -> Optional[Value]:
        """What a read of a name sees: the join of its reaching bindings."""
        bindings = self.model.reaching(leaf.value, leaf)
        if not bindings:
            module = self.model.imports.module_of(leaf.value) \
                if leaf.value in self.model.imports.presumed else None
            if module is not None:
                return of(Kind.OTHER, what="module")
            if hasattr(builtins, leaf.value):
                return of(Kind.OTHER, what="builtin:" + leaf.value)
            return self.model.presumed(leaf.value) or UNKNOWN
        found = join(self._binding(b) for b in bindings if b.how != "mutation")
        return self._after_mutations(found, [b for b in bindings if b.how == "mutation"])

    def _after_mutations(self, found: Optional[Value], mutations: List[Binding]) -> Optional[Value]:
        """What in-place calls made of the value: a list filled by
        ``append``/``insert``/``extend`` holds what they added; a Sequential
        model grown by ``add(layer)`` has the width of the last layer added."""
        calls = [(b, call) for b in mutations for call in [_mutating_call(b)] if call]
        if found is None or not calls:
            return found
        if found.kind == Kind.MODEL:
            adds = [(b, args) for b, (method, args) in calls if method == "add" and args]
            if not adds:
                return found
            added = self._of(max(adds, key=lambda pair: pair[0].line)[1][0])
            return of(Kind.MODEL, width=added.width if added is not None else None,
                      origin=found.origin)
        if found.kind == Kind.PYLIST:
            elements = [found.element] if found.items != () else []
            for _, (method, args) in calls:
                if method == "append" and args:
                    elements.append(self._of(args[0]))
                elif method == "insert" and len(args) > 1:
                    elements.append(self._of(args[1]))
                elif method == "extend" and args:
                    elements.append(self._element(self._of(args[0])))
            return of(Kind.PYLIST, element=join(elements), origin=found.origin)
        return found

    def binding(self, binding: Binding) -> Value:
        found = self._memoized(("binding", id(binding)), self._binding_uncached, binding)
        return found if found is not None else UNKNOWN

    def _binding(self, binding: Binding) -> Optional[Value]:
        return self._memoized(("binding", id(binding)), self._binding_uncached, binding)

    def _binding_uncached(self, b: Binding) -> Optional[Value]:
        how = b.how
        if b.annotation is not None:
            return self.annotation(b.annotation)
        if how in ("assign", "annassign", "walrus", "with"):
            if b.value is not None:
                return self._of(b.value)
            return self._descend(self._of(b.source), b.path) if b.source is not None else UNKNOWN
        if how in ("for", "comprehension"):
            return self._descend(self._element(self._of(b.source)), b.path)
        if how == "augassign":
            target, value = b.value.children[0], b.value.children[2]
            before = self._memoized(("read", id(target)), self._read, target) \
                if target.type == token.NAME else self._of(target)
            return self._arithmetic([before, self._of(value)])
        if how == "param":
            return self._parameter(b)
        simple = {"import": "module", "def": "function", "class": "class", "except": "exception"}
        if how in simple:
            return of(Kind.OTHER, what=simple[how], origin=b.value)
        return UNKNOWN

    def _parameter(self, b: Binding) -> Optional[Value]:
        function = b.statement
        if function.type != syms.funcdef:
            return UNKNOWN
        cls = self.model.method_class(function)
        if cls is not None:
            position, name = b.path[0], function.children[1].value
            if position == 0 and not self.model.is_static(function):
                return self.instance(cls, with_width=False)
            role = self.keras_role(cls)
            if position == 1 and role and name == "call":
                return of(Kind.TENSOR)
            if position == 1 and role == "model" and name in _STEP_METHODS:
                return of(Kind.DATASET_ELEMENT)
        elif b.path[0] in (0, 1) and self.model.contexts.functions.get(id(function)) == "compiled":
            return of(Kind.TENSOR)  # Keras calls a loss or metric handed to compile with (y_true, y_pred)
        return self._from_calls(b) if self.call_sites else UNKNOWN

    def _from_calls(self, b: Binding) -> Optional[Value]:
        """The join of what every call of the function in this module passes
        for parameter ``b`` (its default where a call leaves it out);
        UNKNOWN when there is no call, the function is used otherwise
        (passed around, so called from elsewhere) or ``*``/``**`` is involved."""
        sites = self.model.call_sites(b.statement)
        if not sites or _after_star(b.node):
            return UNKNOWN
        passed = []
        for trailer, shift in sites:
            positional, keywords = split_arguments(trailer)
            if any(a.type == syms.argument and a.children[0].type in (token.STAR, token.DOUBLESTAR)
                   for a in positional):
                return UNKNOWN
            index = b.path[0] - shift
            if b.name in keywords:
                passed.append(keywords[b.name])
            elif 0 <= index < len(positional):
                passed.append(positional[index])
            elif b.value is not None:
                passed.append(b.value)
            else:
                return UNKNOWN
        found = join(self._of(arg) for arg in passed)
        return found if found is not None else None

    def annotation(self, node) -> Value:
        if node.type == syms.power and node.children[-1].children[0].type == token.LSQB:
            outer = _ANNOTATIONS.get(self.model.qualified_children(node.children[:-1]) or "")
            if outer is not None and outer.kind in (Kind.PYLIST, Kind.PYTUPLE):
                inner = self.annotation(node.children[-1].children[1])
                return of(outer.kind, element=inner if inner.is_known else None)
            return outer or UNKNOWN
        name = self.model.qualified(node) or (node.value if node.type == token.NAME else "")
        return _ANNOTATIONS.get(name, UNKNOWN)

    # ------------------------------------------------------------ containers

    def _element(self, value: Optional[Value]) -> Optional[Value]:
        if value is None:
            return None
        kind = value.kind
        if value.element is not None:
            return value.element
        if value.items:
            return join(value.items)
        if kind in (Kind.TENSOR, Kind.VARIABLE):
            return of(Kind.TENSOR)
        if kind == Kind.NDARRAY:
            return of(Kind.NDARRAY)
        if kind == Kind.DATASET:
            return of(Kind.DATASET_ELEMENT)
        if kind == Kind.STRING:
            return of(Kind.STRING)
        return UNKNOWN

    def _item(self, value: Optional[Value], index: Optional[int]) -> Optional[Value]:
        if value is None:
            return None
        if value.items is not None and index is not None and -len(value.items) <= index < len(value.items):
            return value.items[index]
        if value.kind in (Kind.PYLIST, Kind.PYTUPLE):
            return value.element or UNKNOWN
        if value.kind == Kind.DATASET_ELEMENT:
            return of(Kind.TENSOR)
        if value.kind == Kind.OTHER and value.what == "shape":
            return of(Kind.NUMBER)
        if value.kind in (Kind.NDARRAY, Kind.DATAFRAME, Kind.STRING):
            return of(value.kind)
        return self._element(value)

    def _descend(self, value: Optional[Value], path) -> Optional[Value]:
        for index in path:
            if value is None:
                return None
            value = of(Kind.PYLIST, element=self._element(value)) if index == -1 \
                else self._item(value, index)
        return value

    def _subscript(self, value: Optional[Value], index) -> Optional[Value]:
        if value is None:
            return None
        if value.kind in (Kind.TENSOR, Kind.VARIABLE):
            return of(Kind.TENSOR)
        if _is_slice(index) and value.kind in (Kind.PYLIST, Kind.PYTUPLE):
            return of(value.kind, element=value.element)
        return self._item(value, _int_literal(index))

    # ------------------------------------------------------------ calls

    def _power(self, node) -> Optional[Value]:
        children = node.children
        if len(children) < 2:  # emptied by a rewrite earlier in this pass: detached, unknown
            return None
        if children[-2].type == token.DOUBLESTAR:
            return self._arithmetic([self._power_chain(node, children[:-2]), self._of(children[-1])])
        return self._power_chain(node, children)

    def _power_chain(self, node, children) -> Optional[Value]:
        head = children[0]
        path = self.model.qualified(head) if head.type == token.NAME else None
        value = None if path is not None else self._of(head)
        receiver = method = None
        for trailer in children[1:]:
            if trailer.type != syms.trailer:
                return UNKNOWN  # ``await x``
            opener = trailer.children[0].type
            if opener == token.DOT:
                attr = trailer.children[1].value
                if path is not None:
                    path = f"{path}.{attr}"
                    continue
                receiver, method, value = value, attr, self._attribute(value, attr)
                continue
            if opener == token.LPAR:
                args = _positional(trailer)
                if path is not None:
                    value = self._call_path(canonical(path), args, trailer)
                elif method is not None and not (value is not None and value.kind in _CALLABLE):
                    value = self._method(receiver, method, args)
                else:
                    value = self._call_value(value, args)
            else:
                if path is not None:
                    value = self._path_value(canonical(path))
                value = self._subscript(value, trailer.children[1])
            path = receiver = method = None
        return self._path_value(canonical(path)) if path is not None else value

    def _path_value(self, path: str) -> Value:
        """An imported name used as a value (not called)."""
        module, _, name = path.rpartition(".")
        if module == "numpy" and name in _NUMPY_CONSTANTS:
            return of(Kind.NUMBER)
        if module in ("tensorflow", "numpy", "tensorflow.dtypes") and name[:1].islower() \
                and name.rstrip("0123456789") in ("float", "int", "uint", "bool", "complex", "string",
                                                   "bfloat", "half", "double"):
            return of(Kind.OTHER, what="dtype")
        return of(Kind.OTHER, what="module" if not name[:1].isupper() else "class")

    def _call_path(self, path: str, args, trailer) -> Optional[Value]:
        root, name = path.split(".")[0], last_name(path)
        module = path.rpartition(".")[0]
        if root == "numpy":
            return _NUMPY_NOT_ARRAYS.get(name, of(Kind.NDARRAY, origin=trailer.parent))
        if root == "pandas":
            return of(Kind.DATAFRAME, origin=trailer.parent)
        if "tqdm" in path or name == "trange":
            element = of(Kind.NUMBER) if name == "trange" else self._element(self._of(args[0])) if args else None
            return of(Kind.OTHER, what="iterator", element=element)
        if path.startswith(_DATASET_SOURCES):
            return self._dataset(path, args)
        if root == "keras":
            return self._keras_call(path, args, trailer)
        if root != "tensorflow":
            return UNKNOWN
        if name in _TF_CLASSES:
            return of(_TF_CLASSES[name], origin=trailer.parent)
        if name == "GradientTape":
            return of(Kind.OTHER, what="tape", origin=trailer.parent)
        if name in _TF_NOT_TENSORS:
            return of(Kind.OTHER, what=_TF_NOT_TENSORS[name])
        if name in _TF_LISTS:
            return of(Kind.PYLIST, element=of(Kind.TENSOR), origin=trailer.parent)
        if name in _TF_ARRAYS:
            return of(Kind.NDARRAY, origin=trailer.parent)
        if module in _TF_OP_MODULES and name[:1].islower():
            return of(Kind.TENSOR, origin=trailer.parent)
        return of(Kind.OTHER, what=name) if name[:1].isupper() else UNKNOWN

    def _dataset(self, path: str, args) -> Value:
        name = last_name(path)
        if name in ("from_tensor_slices", "from_tensors") and args:
            source = self._of(args[0])
            if source is not None and source.items:
                element = of(Kind.DATASET_ELEMENT, items=tuple(of(Kind.TENSOR) for _ in source.items))
            elif source is not None and source.kind == Kind.OTHER and source.what == "dict":
                element = of(Kind.DATASET_ELEMENT)
            else:
                element = of(Kind.TENSOR)
            return of(Kind.DATASET, element=element)
        if name in ("range", "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset",
                    "list_files"):
            return of(Kind.DATASET, element=of(Kind.TENSOR))
        return of(Kind.DATASET)

    def _keras_call(self, path: str, args, trailer) -> Value:
        name, node = last_name(path), trailer.parent
        keywords = split_arguments(trailer)[1]
        if name == "Input":
            return of(Kind.TENSOR, origin=node)
        if path in ("keras.Sequential", "keras.models.Sequential"):
            layers = args[0] if args else keywords.get("layers")
            return of(Kind.MODEL, width=self._sequential_width(layers), origin=node)
        if path in ("keras.Model", "keras.models.Model"):
            outputs = args[1] if len(args) > 1 else keywords.get("outputs")
            return of(Kind.MODEL, width=self._output_width(outputs), origin=node)
        if path.startswith(("keras.models.", "keras.applications.", "keras.saving.")):
            return of(Kind.MODEL, origin=node)
        if path.startswith("keras.layers.") and name[:1].isupper():
            width = None
            if name in _UNITS_LAYERS:
                units = args[0] if args else keywords.get("units")
                width = self.constant(units) if units is not None else None
            return of(Kind.LAYER, width=width, what=name, origin=node)
        if path in _KERAS_ARRAYS:
            return of(Kind.NDARRAY, origin=node)
        if name in _TF_NOT_TENSORS:
            return of(Kind.OTHER, what=_TF_NOT_TENSORS[name])
        if path.rpartition(".")[0] in _TF_OP_MODULES and name[:1].islower():
            return of(Kind.TENSOR, origin=node)
        return of(Kind.OTHER, what=name, origin=node) if name[:1].isupper() else UNKNOWN

    def _sequential_width(self, layers) -> Optional[int]:
        elements = literal_elements(layers) if layers is not None and layers.type == syms.atom else None
        for element in reversed(elements or []):
            layer = self._of(element)
            if layer is None or layer.kind != Kind.LAYER:
                return None
            if layer.width is not None:
                return layer.width
            if layer.what not in _WIDTH_KEEPING_LAYERS:
                return None
        return None

    def _output_width(self, outputs) -> Optional[int]:
        if outputs is None:
            return None
        value = self._of(outputs)
        if value is not None and value.items is not None and len(value.items) == 1:
            value = value.items[0]
        return value.width if value is not None and value.kind == Kind.TENSOR else None

    def constant(self, node, depth: int = 0) -> Optional[int]:
        """An int literal, directly or through names bound once to one."""
        if node is None or depth > 8:
            return None
        if node.type == token.NUMBER:
            try:
                return int(node.value)
            except ValueError:
                return None
        if node.type == token.NAME:
            binding = self.model.last_assignment(node.value, node)
            if binding is not None and binding.how == "assign" and binding.value is not None:
                return self.constant(binding.value, depth + 1)
        return None

    def _call_value(self, callee: Optional[Value], args) -> Optional[Value]:
        """Calling something that is not an imported name."""
        if callee is None:
            return None
        kind, what = callee.kind, callee.what or ""
        if kind in (Kind.MODEL, Kind.LAYER):
            width = callee.width
            if width is None and kind == Kind.LAYER and what in _WIDTH_KEEPING_LAYERS and args:
                fed = self._of(args[0])
                width = fed.width if fed is not None else None
            return of(Kind.TENSOR, width=width, origin=callee.origin)
        if kind != Kind.OTHER:
            return UNKNOWN
        if what == "function" and callee.origin is not None and callee.origin.type == syms.funcdef:
            return self.returns(callee.origin)
        if what == "class" and callee.origin is not None:
            return self.instance(callee.origin, with_width=True)
        if what.startswith("builtin:"):
            return self._builtin(what[8:], args)
        if what in ("loss", "metric") or what.endswith(("Loss", "Crossentropy", "Error")):
            return of(Kind.TENSOR)
        return UNKNOWN

    def _builtin(self, name: str, args) -> Optional[Value]:
        first = self._of(args[0]) if args else None
        if name in ("len", "int", "float", "round", "bool", "isinstance", "hash", "ord"):
            return of(Kind.NUMBER)
        if name in ("str", "repr", "format", "chr"):
            return of(Kind.STRING)
        if name in ("list", "sorted"):
            return of(Kind.PYLIST, element=self._element(first) if args else None)
        if name == "tuple":
            return of(Kind.PYTUPLE, element=self._element(first) if args else None)
        if name == "range":
            return of(Kind.OTHER, what="range", element=of(Kind.NUMBER))
        if name == "enumerate" and args:
            return of(Kind.OTHER, what="iterator",
                      element=of(Kind.PYTUPLE, items=(of(Kind.NUMBER), self._element(first) or UNKNOWN)))
        if name == "zip":
            items = tuple(self._element(self._of(a)) or UNKNOWN for a in args)
            return of(Kind.OTHER, what="iterator", element=of(Kind.PYTUPLE, items=items))
        if name in ("iter", "reversed"):
            return of(Kind.OTHER, what="iterator", element=self._element(first))
        if name == "next":
            return self._element(first)
        if name in ("abs", "sum", "min", "max") and first is not None:
            return self._element(first) if first.kind in (Kind.PYLIST, Kind.PYTUPLE) and name != "abs" \
                else first if first.kind != Kind.VARIABLE else of(Kind.TENSOR)
        if name == "dict":
            return of(Kind.OTHER, what="dict")
        return UNKNOWN

    def _attribute(self, value: Optional[Value], attr: str) -> Optional[Value]:
        if attr in _VARIABLE_LISTS:
            return of(Kind.PYLIST, element=of(Kind.VARIABLE))
        if value is None:
            return None
        kind = value.kind
        if kind in (Kind.TENSOR, Kind.VARIABLE):
            return {"shape": of(Kind.OTHER, what="shape"), "dtype": of(Kind.OTHER, what="dtype"),
                    "T": of(Kind.TENSOR)}.get(attr, UNKNOWN)
        if kind == Kind.NDARRAY:
            if attr == "shape":
                return of(Kind.PYTUPLE, element=of(Kind.NUMBER))
            return of(Kind.NUMBER) if attr in ("ndim", "size", "nbytes") else \
                of(Kind.OTHER, what="dtype") if attr == "dtype" else of(Kind.NDARRAY)
        if kind == Kind.DATAFRAME:
            return of(Kind.NDARRAY) if attr == "values" else \
                of(Kind.PYTUPLE, element=of(Kind.NUMBER)) if attr == "shape" else of(Kind.DATAFRAME)
        if kind in (Kind.MODEL, Kind.LAYER):
            if attr == "layers":
                return of(Kind.PYLIST, element=of(Kind.LAYER))
            if attr in ("variables", "weights"):
                return of(Kind.PYLIST, element=of(Kind.VARIABLE))
            if attr in ("output", "input"):
                return of(Kind.TENSOR, width=value.width if attr == "output" else None)
            if attr in ("kernel", "bias"):
                return of(Kind.VARIABLE)
        if value.origin is not None and value.origin.type == syms.classdef:
            return self.class_attribute(value.origin, attr)
        return UNKNOWN

    def _method(self, receiver: Optional[Value], method: str, args) -> Optional[Value]:
        if method == "numpy":
            return of(Kind.NDARRAY)
        if method in _ARRAY_ONLY_METHODS and (receiver is None or not receiver.is_known):
            return _ARRAY_METHODS.get(method, of(Kind.NDARRAY))
        if receiver is None:
            return None
        kind = receiver.kind
        if kind in (Kind.TENSOR, Kind.VARIABLE):
            return of(Kind.TENSOR) if method in ("read_value", "value", "assign", "assign_add",
                                                 "assign_sub") else \
                of(Kind.OTHER, what="shape") if method == "get_shape" else UNKNOWN
        if kind == Kind.NDARRAY:
            if method in _ARRAY_MUTATORS:
                return of(Kind.OTHER, what="none")
            return _ARRAY_METHODS.get(method, of(Kind.NDARRAY))
        if kind == Kind.DATAFRAME:
            return of(Kind.NDARRAY) if method == "to_numpy" else \
                of(Kind.PYLIST) if method == "tolist" else of(Kind.DATAFRAME)
        if kind == Kind.DATASET:
            if method == "as_numpy_iterator":
                return of(Kind.OTHER, what="iterator", element=of(Kind.NDARRAY))
            if method in _DATASET_KEEP:
                return of(Kind.DATASET, element=None if method in _DATASET_NEW_ELEMENT
                          else receiver.element)
            return UNKNOWN
        if kind in (Kind.MODEL, Kind.LAYER):
            if method in _MODEL_ARRAYS:
                return of(Kind.NDARRAY, width=receiver.width)
            if method in _MODEL_TENSORS:
                return of(Kind.TENSOR, width=receiver.width)
            if method == "get_layer":
                return of(Kind.LAYER)
            if method == "get_weights":
                return of(Kind.PYLIST, element=of(Kind.NDARRAY))
        if kind == Kind.OTHER and receiver.what == "tape":
            if method == "gradient" and len(args) > 1:
                sources = self._of(args[1])
                if sources is not None and sources.kind in (Kind.PYLIST, Kind.PYTUPLE):
                    return of(Kind.PYLIST, element=of(Kind.TENSOR))
                return of(Kind.TENSOR) if sources is not None and sources.is_tensor else UNKNOWN
            return of(Kind.TENSOR) if method in ("jacobian", "batch_jacobian") else UNKNOWN
        if kind in (Kind.PYLIST, Kind.PYTUPLE):
            return receiver.element if method == "pop" else \
                of(Kind.NUMBER) if method in ("index", "count") else \
                of(kind, element=receiver.element) if method == "copy" else UNKNOWN
        if kind == Kind.STRING:
            return of(Kind.STRING) if method not in ("split", "splitlines") else \
                of(Kind.PYLIST, element=of(Kind.STRING))
        if receiver.origin is not None and receiver.origin.type == syms.classdef:
            function = self.model.methods(receiver.origin).get(method)
            return self.returns(function) if function is not None else UNKNOWN
        return UNKNOWN

    # ------------------------------------------------------------ classes and functions

    def returns(self, function) -> Value:
        """What calling a function of this module returns."""
        found = self._memoized(("returns", id(function)), self._returns, function)
        return found if found is not None else UNKNOWN

    def _returns(self, function) -> Optional[Value]:
        scope = self.model.index.scopes.get(id(function))
        if scope is None:
            return UNKNOWN
        if not scope.returns:
            return of(Kind.OTHER, what="none")
        return join(self._of(r) for r in scope.returns)

    def instance(self, cls, with_width: bool) -> Value:
        role = self.keras_role(cls)
        kind = Kind.MODEL if role == "model" else Kind.LAYER if role == "layer" else Kind.OTHER
        width = None
        if role and with_width:
            call = self.model.methods(cls).get("call")
            found = self.returns(call) if call is not None else None
            width = found.width if found is not None and found.kind == Kind.TENSOR else None
        return of(kind, width=width, what=None if role else "instance", origin=cls)

    def class_attribute(self, cls, attr: str) -> Value:
        bindings = self.model.attribute_bindings(cls, attr)
        found = join(self._binding(b) for b in bindings if b.how != "mutation")
        return found if found is not None else UNKNOWN

    def keras_role(self, cls) -> Optional[str]:
        """"model" or "layer" when ``cls`` derives from Keras' Model or Layer
        (any spelling, through classes of this module); else None."""
        found = self._memoized(("role", id(cls)), self._keras_role, cls)
        return found.what if found is not None else None

    def _keras_role(self, cls) -> Value:
        roles = set()
        for base in self.model.bases(cls):
            if isinstance(base, str):
                roles.add(keras_base_role(base))
            elif base is not None:
                roles.add(self.keras_role(base))
        role = "model" if "model" in roles else "layer" if "layer" in roles else None
        return of(Kind.OTHER, what=role)


def keras_base_role(path: str) -> Optional[str]:
    """"model" or "layer" when the canonical path of a base class is Keras'
    Model (or Sequential) or a Layer; the prechecks' ``keras_classes`` asks
    the same of the ``ast``."""
    if path in _KERAS_MODEL_BASES:
        return "model"
    return "layer" if path.startswith(_KERAS_LAYER_BASES) else None


def _mutating_call(binding: Binding):
    """(method, positional args) when a mutation is a method call
    (``buf.append(x)``), not a subscript or attribute store."""
    if binding.value is not binding.node:
        return None
    children = binding.value.children
    for i, trailer in enumerate(children[1:], 1):
        if trailer.type == syms.trailer and trailer.children[0].type == token.LPAR:
            return children[i - 1].children[1].value, _positional(trailer)
    return None


def _positional(trailer) -> List:
    """Positional arguments of a call trailer, ``*args`` left out."""
    return [a for a in split_arguments(trailer)[0] if a.type != syms.argument]


def _after_star(name) -> bool:
    """Is the parameter ``name`` ``*args``/``**kwargs`` or keyword-only?"""
    node = name if name.parent.type != syms.tname else name.parent
    while node is not None:
        if node.type in (token.STAR, token.DOUBLESTAR):
            return True
        node = node.prev_sibling
    return False


def _is_slice(index) -> bool:
    return index.type == syms.subscript or index.type == token.COLON


def _int_literal(index) -> Optional[int]:
    if index.type == token.NUMBER:
        try:
            return int(index.value)
        except ValueError:
            return None
    if index.type == syms.factor and index.children[0].value == "-" and index.children[1].type == token.NUMBER:
        value = _int_literal(index.children[1])
        return -value if value is not None else None
    return None
