"""What a differentiated target is made of: which values reach it along
paths a gradient can follow, and where such paths are cut.

A target is what TensorFlow differentiates: the first argument of
``tape.gradient``/``jacobian``, the return of a loss handed to ``compile``,
of a function handed to ``minimize``, of a ``Lambda`` layer's function and
of a Keras ``call``. ``Differentiation.walk(target)`` follows it backwards, through
assignments, arithmetic, TensorFlow calls and the module's own functions
(inlined with their arguments), and answers a ``Slice``:

- ``live``: some differentiable value (a variable, a model or layer output,
  a watched tensor, a parameter that may be one, ``y_pred`` of a compiled
  loss) reaches the target along a differentiable path;
- ``cuts``: non-differentiable ops (argmax, round, a cast to an integer, a
  comparison...) whose input is live: their output reaches the target, but
  no gradient flows back through them;
- ``assigns``: ``v.assign(value)`` calls with a live ``value`` whose
  variable is then read on the way to the target (the gradient stops at the
  assign: the read sees the variable, not the value's inputs);
- ``reads``: the bindings the target reads, ``values``: ids of the
  expressions it was followed through; ``calls``: the calls of models,
  layers and unknown functions on the way; ``opaque``: something on the way
  could not be followed (an unknown function, too many bindings, budget).

Only data positions are followed: the indices of ``gather``, the condition
of ``where``, a subscript's index, the dtype or axis of a call are not
paths a gradient follows, so an argmax used to pick a slice of a
differentiable tensor is no cut. ``stop_gradient`` is a deliberate cut,
neither live nor reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from ._tree import literal_elements, split_arguments, syms, token, unparen
from .flow import MANY, Binding, attribute_path
from .values import Kind
from .walks import Exhausted, Frame, PowerWalk, bound_arguments

if TYPE_CHECKING:
    from . import Model

# non-differentiable ops, by the last name of their TensorFlow / Keras path
CUT_OPS = frozenset({"argmax", "argmin", "argsort", "round", "rint", "floor", "ceil", "sign", "equal",
                     "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
                     "logical_or", "logical_not", "logical_xor", "in_top_k"})
ROUNDING = frozenset({"round", "rint", "floor", "ceil"})
_LIBRARIES = ("tensorflow.", "keras.", "tf_keras.")
# calls whose result is a new value, not a differentiable function of their arguments
_FRESH = frozenset({"zeros_like", "ones_like", "zeros", "ones", "fill", "shape", "size", "rank", "range",
                    "one_hot", "constant", "sequence_mask", "eye", "linspace", "normal", "uniform",
                    "truncated_normal", "random_normal", "random_uniform", "shape_n", "stop_gradient",
                    "int_shape", "count_params", "top_k_indices"})
# TensorFlow calls with index arguments: the (position, keyword) of their data arguments
_DATA_ARGUMENTS = {
    "gather": ((0, "params"),), "gather_nd": ((0, "params"),), "batch_gather": ((0, "params"),),
    "boolean_mask": ((0, "tensor"),), "where": ((1, "x"), (2, "y")), "where_v2": ((1, "x"), (2, "y")),
    "scatter_nd": ((1, "updates"),), "tensor_scatter_nd_update": ((0, "tensor"), (2, "updates")),
    "tensor_scatter_nd_add": ((0, "tensor"), (2, "updates")), "segment_sum": ((0, "data"),),
    "segment_mean": ((0, "data"),), "unsorted_segment_sum": ((0, "data"),), "take_along_axis": ((0, "arr"),),
    "dynamic_partition": ((0, "data"),), "reshape": ((0, "tensor"),), "tile": ((0, "input"),),
    "slice": ((0, "input_"),), "cast": ((0, "x"),), "expand_dims": ((0, "input"),), "pad": ((0, "tensor"),),
}
_NOT_DATA = frozenset({"axis", "dtype", "name", "keepdims", "keep_dims", "shape", "depth", "output_type",
                       "direction", "stable", "training", "mask"})
_INTEGER_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"})
_NO_VALUE_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "name", "device", "rank"})
_BUILTINS_NOT_DIFFERENTIABLE = frozenset({"int", "float", "bool", "len", "round", "str", "isinstance", "range"})
_BUILTINS_PASSING = frozenset({"zip", "enumerate", "list", "tuple", "sorted", "reversed", "sum", "min", "max",
                               "abs", "map", "filter", "iter", "next"})
ASSIGNS = frozenset({"assign", "assign_add", "assign_sub"})
_VARIABLE_LISTS = frozenset({"trainable_variables", "variables", "weights", "trainable_weights"})
_GRADIENT_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})
_TRAINING = frozenset({"gradient", "jacobian", "fit", "train_on_batch", "compile", "minimize", "fit_generator"})
# every method whose call makes a differentiation target (or a training module): the recipes' precheck word list
DIFFERENTIATING = _GRADIENT_METHODS | _TRAINING
_LAMBDA_LAYERS = frozenset({"keras.layers.Lambda", "keras.layers.core.Lambda"})
_BUDGET = 6000
_DEPTH = 4


@dataclass(eq=False, repr=False)
class Slice:
    """What ``Differentiation.walk`` found behind one target."""

    live: bool = False
    cuts: List = field(default_factory=list)
    assigns: List = field(default_factory=list)
    reads: Set[int] = field(default_factory=set)
    values: Set[int] = field(default_factory=set)
    calls: List = field(default_factory=list)
    opaque: bool = False


@dataclass(eq=False, repr=False)
class Target:
    """A differentiated value: ``node`` is an expression (``tape``: the
    first argument of ``tape.gradient``) or a function whose returns are
    differentiated (``loss`` handed to compile, ``lambda`` layer, Keras
    ``call``, ``minimize``); ``where``: the call or function that says so."""

    node: object
    how: str
    where: object


class Differentiation:
    """Walks differentiated targets of one module; get it from ``Model.differentiation``."""

    def __init__(self, model: "Model"):
        self.model = model
        self._trains: Optional[bool] = None
        self._targets: Optional[List[Target]] = None
        self._weight_assigns: Optional[Dict[str, List]] = None
        self._watched: Optional[Set[Tuple[int, str]]] = None

    def walk(self, target, params_live: bool = True) -> Slice:
        """The slice behind ``target`` (an expression, or a funcdef/lambda
        whose returns are the target); ``opaque`` when too costly.
        ``params_live=False`` (a tape's target): a parameter of the enclosing
        function is differentiable only when it is a variable or watched."""
        walker = _Walker(self, params_live)
        try:
            walker.slice.live = walker.target(target)
        except (Exhausted, RecursionError):
            return Slice(opaque=True)
        walker.slice.values = {node for node, _ in walker.memo}
        return walker.slice

    def targets(self) -> List["Target"]:
        """Every differentiated target of the module, found once."""
        if self._targets is None:
            self._targets = list(self._find_targets())
        return self._targets

    def trains(self) -> bool:
        """Does the module train or differentiate anything (a tape's
        gradient, ``compile``, ``fit``, ``minimize``)?"""
        if self._trains is None:
            self._trains = any(callee.rpartition(".")[2] in _TRAINING and _not_another_library(self.model, callee, call)
                               for scope in self.model.index.scopes.values() for callee, call in scope.calls)
        return self._trains

    def _find_targets(self):
        model = self.model
        for scope in model.index.scopes.values():
            for callee, call in scope.calls:
                receiver, _, method = callee.rpartition(".")
                trailer = call.children[callee.count(".") + 1]
                positional, keywords = split_arguments(trailer)
                if method in _GRADIENT_METHODS and "." not in receiver and len(call.children) == 3 \
                        and model.tape_named(receiver, call) is not None:
                    target = positional[0] if positional else keywords.get("target")
                    if target is not None:
                        yield Target(target, "tape", call)
                elif method == "minimize" and positional:
                    for function in _functions(model, positional[0]):
                        yield Target(function, "minimize", call)
                elif method == "Lambda" and model.qualified_children(call.children[:callee.count(".") + 1]) \
                        in _LAMBDA_LAYERS and positional and _applied_to_a_layer_output(model, call, trailer):
                    for function in _functions(model, positional[0]):
                        yield Target(function, "lambda", call)
        for function_id, how in model.contexts.functions.items():
            if how == "keras_call" or function_id in self.compiled_losses():
                function = model.index.scopes[function_id].node
                yield Target(function, "call" if how == "keras_call" else "loss", function)

    def watched(self) -> Set[Tuple[int, str]]:
        """(scope id, name) of every name a tape watches."""
        if self._watched is None:
            self._watched = {(id(tape.scope), unparen(arg).value) for tape in self.model.tapes
                             for arg in tape.watch_arguments() if unparen(arg).type == token.NAME}
        return self._watched

    def weight_assigns(self, owner: str) -> List:
        """``v.assign(...)`` calls whose ``v`` is an element of ``owner``'s
        variable list (``variable_list_owner``)."""
        if self._weight_assigns is None:
            self._weight_assigns = {}
            for scope in self.model.index.scopes.values():
                for callee, call in scope.calls:
                    receiver, _, method = callee.rpartition(".")
                    if method in ASSIGNS and "." not in receiver and len(call.children) == 3:
                        name = variable_list_owner(self.model, call.children[0])
                        if name is not None:
                            self._weight_assigns.setdefault(name, []).append(call)
        return self._weight_assigns.get(owner, [])

    def compiled_losses(self) -> Set[int]:
        """Ids of the funcdefs handed to ``compile`` as losses (not metrics:
        Keras never differentiates a metric)."""
        return self.model.contexts.compiled_losses


def is_integer_dtype(model: "Model", expr) -> bool:
    """``tf.int32``, ``"int32"``, ``tf.bool``, ``np.int64``... (any spelling)."""
    expr = unparen(expr)
    if expr.type == token.STRING:
        return expr.value.strip("'\"") in _INTEGER_DTYPES
    name = model.qualified(expr)
    return name is not None and name.rpartition(".")[2] in _INTEGER_DTYPES


def library_op(model: "Model", call) -> Optional[str]:
    """The last name of a TensorFlow/Keras function a call calls; else None."""
    callee = model.callee(call)
    if callee is None or not callee.startswith(_LIBRARIES):
        return None
    return callee.rpartition(".")[2]


def is_cut(model: "Model", node, trailer=None) -> bool:
    """Does ``node`` (a call, its argument ``trailer``, or a comparison) stop
    every gradient through it?"""
    if node.type == syms.comparison:
        return node.children[1].type in (token.LESS, token.GREATER, token.LESSEQUAL, token.GREATEREQUAL,
                                         token.EQEQUAL, token.NOTEQUAL)
    op = library_op(model, node)
    if op in CUT_OPS:
        return True
    if op == "cast":
        positional, keywords = split_arguments(trailer if trailer is not None else node.children[-1])
        dtype = positional[1] if len(positional) > 1 else keywords.get("dtype")
        return dtype is not None and is_integer_dtype(model, dtype)
    return False


def variable_list_owner(model: "Model", receiver) -> Optional[str]:
    """``M`` when ``receiver`` (a NAME) is an element of ``M.trainable_variables``
    (``for v in M.weights``, ``for v, w in zip(M.trainable_variables, ...)``)."""
    if receiver.type != token.NAME:
        return None
    bindings = model.reaching(receiver.value, receiver)
    if len(bindings) != 1 or bindings[0].how != "for" or bindings[0].source is None:
        return None
    source, path = unparen(bindings[0].source), bindings[0].path
    if path and source.type == syms.power and str(source.children[0]).strip() == "zip" and len(source.children) == 2:
        positional, _ = split_arguments(source.children[1])
        source = positional[path[0]] if path[0] < len(positional) else None
    elif path:
        return None
    if source is not None and source.type == syms.power and len(source.children) == 2 \
            and source.children[0].type == token.NAME and source.children[1].type == syms.trailer \
            and source.children[1].children[0].type == token.DOT \
            and source.children[1].children[1].value in _VARIABLE_LISTS:
        return source.children[0].value
    return None


class _Walker(PowerWalk):
    def __init__(self, owner: Differentiation, params_live: bool):
        self.owner = owner
        self.model = owner.model
        self.params_live = params_live
        self.slice = Slice()
        self.memo: Dict[Tuple[int, int], bool] = {}
        self.busy: Set[Tuple[int, int]] = set()
        self.budget = _BUDGET
        self.recorded: Set[int] = set()

    # ------------------------------------------------------------ entry

    def target(self, target) -> bool:
        if target.type in (syms.funcdef, syms.lambdef):
            return self.returns(target, None)
        return self.expr(target, None)

    def returns(self, function, frame: Optional[Frame]) -> bool:
        if function.type == syms.lambdef:
            return self.expr(function.children[-1], frame)
        scope = self.model.index.scopes.get(id(function))
        if scope is None:
            self.slice.opaque = True
            return True
        found = False
        for value in scope.returns:
            found |= self.expr(value, frame)
        return found

    # ------------------------------------------------------------ expressions

    def expr(self, node, frame: Optional[Frame]) -> bool:
        self.budget -= 1
        if self.budget < 0:
            raise Exhausted
        key = (id(node), id(frame))
        if key in self.memo:
            return self.memo[key]
        if key in self.busy:
            return False  # a value carried around a loop: its other bindings answer
        self.busy.add(key)
        try:
            found = self.memo[key] = self._evaluate(unparen(node), frame)
        finally:
            self.busy.discard(key)
        return found

    def _evaluate(self, node, frame) -> bool:
        kind = node.type
        if kind == token.NAME:
            return self.name(node, frame)
        if kind in (token.NUMBER, token.STRING) or not node.children:
            return False
        if kind == syms.power:
            return self.power(node, frame)
        if kind == syms.comparison:
            if is_cut(self.model, node):
                self.cut(node, [node.children[0], node.children[2]], frame)
            return False
        if kind in (syms.not_test, syms.and_test, syms.or_test, syms.lambdef):
            return False
        if kind == syms.test:  # a if c else b
            return self.expr(node.children[0], frame) | self.expr(node.children[4], frame)
        if kind == syms.atom:
            elements = literal_elements(node)
            if elements is not None:
                return any([self.expr(e, frame) for e in elements])
            inner = node.children[1] if len(node.children) == 3 else None
            if inner is not None and inner.type in (syms.listmaker, syms.testlist_gexp):
                return self.expr(inner.children[0], frame)
            return False
        return any([self.expr(child, frame) for child in node.children
                    if child.type == token.NAME or child.children or child.type == token.NUMBER])

    def cut(self, node, inputs, frame) -> None:
        """A non-differentiable op: reported when a live value goes in."""
        if any([self.expr(i, frame) for i in inputs]) and id(node) not in self.recorded:
            self.recorded.add(id(node))
            self.slice.cuts.append(node)

    def name(self, leaf, frame) -> bool:
        if leaf.value in ("True", "False", "None", "self"):
            return leaf.value == "self"
        bindings = self.model.reaching(leaf.value, leaf)
        if not bindings:
            return True  # a name this module does not bind: anything
        found = any([self.binding(b, frame) for b in bindings])
        return found or (id(self.model.scope_of(leaf)), leaf.value) in self.owner.watched()

    def binding(self, b: Binding, frame) -> bool:
        if b is MANY:
            self.slice.opaque = True
            return True
        self.slice.reads.add(id(b))
        key = (id(b), id(frame))
        if key in self.memo:
            return self.memo[key]
        if key in self.busy:
            return False
        self.busy.add(key)
        try:
            found = self.memo[key] = self._binding(b, frame)
        finally:
            self.busy.discard(key)
        return found

    def _binding(self, b: Binding, frame) -> bool:
        how = b.how
        if how in ("import", "def", "class", "with"):
            return False
        if how == "param":
            if frame is not None and b.statement is frame.function and b.name in frame.arguments:
                argument, caller = frame.arguments[b.name]
                return self.expr(argument, caller)
            return self.parameter(b)
        if how in ("assign", "annassign") and b.value is not None and not b.path:
            return self.expr(b.value, frame)
        if how in ("assign", "annassign", "for", "comprehension") and b.source is not None:
            return self.expr(b.source, frame)
        if how == "augassign":
            return self.expr(b.value.children[0], frame) | self.expr(b.value.children[2], frame)
        if how == "mutation" and b.value is not None and b.value is b.node and b.value.type == syms.power:
            return self.mutation(b, frame)
        if how == "mutation" and b.value is not None:  # ``xs[i] = value``, ``obj.attr = value``
            return self.expr(b.value, frame)
        return True

    def parameter(self, b: Binding) -> bool:
        """``y_true`` (the first parameter of a compiled loss) is data; any
        other parameter may be differentiable, but under a tape only a
        variable is (a tensor made before the tape is not recorded by it)."""
        if id(b.statement) in self.owner.compiled_losses() and b.path == (0,):
            return False
        return self.params_live or self.model.likely_kind_of(b.node).kind == Kind.VARIABLE

    def mutation(self, b: Binding, frame) -> bool:
        """``v.assign(value)``: the variable is live (a source of its own),
        but the value's path stops here; ``xs.append(x)``: x joins xs."""
        call = b.value
        trailer = call.children[-1]
        if trailer.type != syms.trailer or trailer.children[0].type != token.LPAR or len(call.children) < 3:
            return True
        method = call.children[-2].children[-1].value
        positional, keywords = split_arguments(trailer)
        if method in ASSIGNS:
            self.assigned(call, frame)
            return True
        return any([self.expr(a, frame) for a in positional])

    # ------------------------------------------------------------ calls, indices, attributes (PowerWalk)

    NOTHING = False
    operand = expr

    @staticmethod
    def join(left: bool, right: bool) -> bool:
        return left | right

    def index(self, node, i, frame, before) -> bool:
        """``x[i]``: the value of ``x``; the index is read, no gradient path."""
        live = self.expr(node.children[0], frame) if before is None else before
        self.read([node.children[i].children[1]], frame)
        return live

    def attribute(self, node, i, frame, before) -> bool:
        """``x.shape`` carries no value; ``a.b`` is what this function bound
        to it (an assign to it included), else ``self.b`` may be a weight and
        ``a.b`` is part of ``a``."""
        attr = node.children[i].children[1]
        if attr.value in _NO_VALUE_ATTRIBUTES:
            return False
        if before is not None:
            return before
        head = node.children[0]
        path = attribute_path(node.children[:i + 1]) if head.type == token.NAME else None
        bindings = [b for b in self.model.reaching(path, attr) if b.how != "param"] if path else []
        if bindings:
            return any([self.binding(b, frame) for b in bindings])
        return True if head.type == token.NAME and head.value == "self" else self.expr(head, frame)

    def call(self, node, at: int, frame, before: Optional[bool]) -> bool:
        children = node.children
        trailer = children[at]
        positional, keywords = split_arguments(trailer)
        callee = self.model.qualified_children(children[:at])
        if callee is not None and callee.startswith(_LIBRARIES):
            return self.library_call(node, trailer, callee.rpartition(".")[2], positional, keywords, frame)
        if callee is not None and callee.startswith("numpy."):  # NumPy on tensors: its own recipe's business
            return any([self.expr(a, frame) for a in positional])
        if callee is not None:  # another library: anything may happen inside
            self.read(positional + list(keywords.values()), frame)
            self.slice.calls.append(node)
            self.slice.opaque = True
            return True
        head = children[0]
        builtin = at == 1 and head.type == token.NAME and not self.model.reaching(head.value, head)
        if builtin and head.value in _BUILTINS_NOT_DIFFERENTIABLE:
            self.read(positional, frame)
            return False
        if builtin and head.value in _BUILTINS_PASSING:
            return any([self.expr(a, frame) for a in positional])
        if at == 1 and (frame is None or frame.depth < _DEPTH) and self.model.functions_called(node) \
                and not any(_decorated(f) for f in self.model.functions_called(node)):
            inlined = self.inline(self.model.functions_called(node), positional, keywords, frame)
            if inlined is not None:
                return inlined
        arguments = [self.expr(a, frame) for a in positional] + \
            [self.expr(v, frame) for k, v in keywords.items() if k not in _NOT_DATA]
        self.slice.calls.append(node)
        if at >= 2 and children[at - 1].children[0].value == ".":  # a method: ``x.numpy()``, ``self.dense(x)``
            receiver = before if before is not None else self.expr(head, frame)
            return receiver or any(arguments)
        if at >= 2:  # the call of a call's result: ``Dense(3)(x)``
            return True
        if self.model.likely_kind_of(head).kind not in (Kind.MODEL, Kind.LAYER):
            self.slice.opaque = True  # a function this module cannot see into
        elif head.type == token.NAME:
            self.weights_assigned(head.value, node, frame)
        return True

    def weights_assigned(self, owner: str, call, frame) -> None:
        """``M(x)`` reads M's weights: an assign to one of them earlier in
        the same tape (``for v, w in zip(M.trainable_variables, ...):
        v.assign(...)``) is on the way too."""
        tape = self.model.tape_of(call)
        if tape is None:
            return
        for assign in self.owner.weight_assigns(owner):
            if self.model.tape_of(assign) is tape and assign.get_lineno() < call.get_lineno():
                self.assigned(assign, frame)

    def assigned(self, call, frame) -> None:
        positional, keywords = split_arguments(call.children[-1])
        value = positional[0] if positional else keywords.get("value")
        if value is not None and self.expr(value, frame) and id(call) not in self.recorded:
            self.recorded.add(id(call))
            self.slice.assigns.append(call)

    def library_call(self, node, trailer, op, positional, keywords, frame) -> bool:
        if op in ("Variable", "add_weight"):
            return True
        every = [a for a in positional if a.type != syms.argument] + \
            [v for k, v in keywords.items() if k not in _NOT_DATA]
        if op in _FRESH:
            self.read(every, frame)
            return False
        if is_cut(self.model, node, trailer):
            data = positional[:1] or [v for k, v in keywords.items() if k in ("x", "input", "a", "values")]
            self.cut(node, data, frame)
            self.read(every, frame)
            return False
        places = _DATA_ARGUMENTS.get(op)
        if places is not None:
            data = [positional[p] if p < len(positional) else keywords.get(k) for p, k in places]
            self.read(every, frame)
            return any([self.expr(d, frame) for d in data if d is not None])
        return any([self.expr(a, frame) for a in every])

    def read(self, nodes, frame) -> None:
        """Follow what a value reads without a gradient path (indices, a
        fresh value's arguments): ``reads`` must hold every dependence."""
        for node in nodes:
            self.expr(node, frame)

    def inline(self, functions, positional, keywords, frame) -> Optional[bool]:
        found = False
        for function in functions:
            arguments = bound_arguments(self.model, function, positional, keywords, frame)
            if arguments is None:
                return None
            found |= self.returns(function, Frame(function, arguments, (frame.depth if frame else 0) + 1))
        return found


def _not_another_library(model: "Model", callee: str, call) -> bool:
    """``model.fit(...)``, ``tf.compat.v1.train.Optimizer.minimize``: not ``re.compile(...)``."""
    name = model.qualified_children(call.children[:callee.count(".") + 1])
    return name is None or name.startswith(_LIBRARIES)


def _functions(model: "Model", expr) -> List:
    """The lambda or the module functions an expression names."""
    expr = unparen(expr)
    if expr.type == syms.lambdef:
        return [expr]
    return model.functions_called(expr) if expr.type == token.NAME else []


def _applied_to_a_layer_output(model: "Model", call, trailer) -> bool:
    """``Lambda(fn)(x)``: is ``x`` something other than the model's
    ``Input`` (weights before the Lambda are what lose their gradients)?
    A Lambda not applied where it is made is given the benefit of the doubt."""
    after = call.children[call.children.index(trailer) + 1:]
    if not after or after[0].type != syms.trailer or after[0].children[0].type != token.LPAR:
        return True
    positional, _ = split_arguments(after[0])
    if len(positional) != 1 or positional[0].type != token.NAME:
        return True
    value = model.assigned_value(positional[0].value, positional[0])
    callee = model.callee(value) if value is not None else None
    return not (callee or "").endswith(("layers.Input", "keras.Input"))


def _decorated(function) -> bool:
    """A decorated function (``@tf.custom_gradient``...) is not what its body says."""
    return function.parent is not None and function.parent.type == syms.decorated
