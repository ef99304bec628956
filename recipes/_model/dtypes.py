"""The dtype of a tensor or variable expression, and whether a tensor is a
symbolic Keras tensor (a functional model's graph, not a value of this call).

    dtype_of(model, expr) -> "float32" | "int32" | "float" | ... | None
    is_floating(dtype)    -> a dtype gradients flow through
    dtype_named(model, node) -> tf.float32, np.half, "float32" -> "float32"
    is_symbolic(model, expr) -> keras.Input(...), a layer called on one,
                                model.inputs / layer.output ...
    model_input_of(model, expr) -> (owner NAME, "inputs" | "input") of ``m.inputs``
                                (also through names bound to it), m a Keras model

Why: a tape records gradients only through floating (and complex) dtypes,
and watching a symbolic Keras tensor records nothing of an eager call, so
the recipes about gradient sources must know both. ``dtype_of`` answers
only what construction proves (``tf.constant(3)`` is int32, ``tf.zeros(n)``
float32, a constructor's ``dtype=``); "float" is "some floating dtype" (a
model's output); None is unknown, never a guess.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional, Tuple

from ._tree import split_arguments, syms, token, unparen
from .values import Kind

if TYPE_CHECKING:
    from . import Model

_DEPTH = 12
_ALIASES = {"half": "float16", "double": "float64", "bool_": "bool", "single": "float32", "object_": "object"}
# constructors whose value's dtype is float32 unless ``dtype=`` says otherwise
_FLOAT32_MAKERS = {"zeros", "ones", "eye", "random.normal", "random.uniform", "random.truncated_normal",
                   "linspace", "random.stateless_normal", "random.stateless_uniform"}
# constructors whose dtype is their data's (a literal, an array), unless ``dtype=`` says otherwise
_FROM_DATA = {"constant", "convert_to_tensor", "Variable", "identity", "fill"}
_LIKE = {"zeros_like", "ones_like"}
# ops whose result has the dtype of their first argument
_SAME_DTYPE = {"square", "sqrt", "exp", "log", "sin", "cos", "tanh", "sigmoid", "abs", "negative", "reduce_sum",
               "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "matmul", "reshape", "transpose",
               "squeeze", "expand_dims", "stop_gradient", "multiply", "add", "subtract", "nn.relu",
               "nn.softmax", "nn.conv2d", "tile", "concat", "stack", "pow", "math.square", "math.exp"}
# NumPy constructors whose array is float64 unless a dtype is given
_NUMPY_FLOAT64 = {"zeros", "ones", "random.rand", "random.randn", "random.random", "random.normal",
                  "random.uniform", "linspace", "eye", "full"}
_SYMBOLIC_ATTRIBUTES = {"input", "output", "inputs", "outputs"}
_KERAS_INPUTS = {"keras.Input", "keras.layers.Input"}


def is_floating(dtype: Optional[str]) -> bool:
    return dtype is not None and (dtype.startswith("float") or dtype == "bfloat16")


def is_integer(dtype: Optional[str]) -> bool:
    return dtype is not None and dtype.startswith(("int", "uint"))


def dtype_named(model: "Model", node) -> Optional[str]:
    """The dtype a ``tf.*``/``np.*`` dtype attribute or a dtype string names."""
    node = unparen(node)
    if node.type == token.STRING:
        try:
            name = ast.literal_eval(node.value)
        except (ValueError, SyntaxError):
            return None
        if not isinstance(name, str):
            return None
    else:
        qualified = model.qualified(node)
        if not qualified or qualified.split(".")[0] not in ("tensorflow", "numpy"):
            return None
        name = qualified.rsplit(".", 1)[1]
    return _ALIASES.get(name, name)


def dtype_of(model: "Model", expr, depth: int = 0) -> Optional[str]:
    """The dtype ``expr`` provably has; None when not known."""
    if depth > _DEPTH:
        return None
    expr = unparen(expr)
    literal = _literal(expr)
    if literal is not None:
        return literal
    if expr.type == token.NAME:
        return _of_bindings(model, expr, depth)
    if expr.type in (syms.arith_expr, syms.term):
        return _arithmetic(model, expr.children[::2], depth)
    if expr.type == syms.factor:
        return dtype_of(model, expr.children[1], depth + 1)
    if expr.type == syms.power:
        return _power(model, expr, depth)
    return None


def _literal(expr) -> Optional[str]:
    """A Python number or a display of them: TensorFlow's default dtype for it."""
    if expr.type == syms.factor and expr.children[0].value in "+-":
        return _literal(expr.children[1])
    if expr.type == token.NUMBER:
        text = expr.value.lower()
        if text.endswith("j"):
            return None
        return "float32" if not text.startswith("0x") and ("." in text or "e" in text) else "int32"
    if expr.type == syms.atom and expr.children[0].value in "[(" and len(expr.children) == 3:
        inner = expr.children[1]
        elements = inner.children[::2] if inner.type in (syms.listmaker, syms.testlist_gexp) else [inner]
        found = {_literal(unparen(e)) for e in elements}
        if None in found:
            return None
        return "float32" if "float32" in found else found.pop() if len(found) == 1 else None
    return None


def _of_bindings(model: "Model", name, depth: int) -> Optional[str]:
    bindings = model.reaching(name.value, name)
    if not bindings or any(getattr(b, "how", None) not in ("assign", "annassign") or b.value is None
                           for b in bindings):
        return None
    found = {dtype_of(model, b.value, depth + 1) for b in bindings}
    return found.pop() if len(found) == 1 else None


def _arithmetic(model: "Model", operands, depth: int) -> Optional[str]:
    """Python numbers are weak: the tensors' dtype wins."""
    typed = [dtype_of(model, o, depth + 1) for o in operands if _literal(unparen(o)) is None]
    if not typed:
        return dtype_of(model, operands[0], depth + 1)
    found = set(typed)
    return found.pop() if len(found) == 1 else None


def _power(model: "Model", expr, depth: int) -> Optional[str]:
    last = expr.children[-1]
    if last.type != syms.trailer:
        return None
    if last.children[0].type == token.LSQB:  # a slice keeps the dtype
        head = expr.children[:-1]
        return dtype_of(model, head[0], depth + 1) if len(head) == 1 else None
    if last.children[0].type != token.LPAR:
        return None
    astype = _astype(model, expr)
    if astype is not None:
        return astype
    callee = model.callee(expr) or ""
    positional, keywords = split_arguments(last)
    if "dtype" in keywords and callee.startswith(("tensorflow.", "numpy.")):
        return dtype_named(model, keywords["dtype"])
    if _is_model_call(model, expr):
        return "float"
    if callee.startswith("numpy."):
        return "float64" if callee[len("numpy."):] in _NUMPY_FLOAT64 else None
    if not callee.startswith("tensorflow."):
        return None
    op = callee[len("tensorflow."):]
    if op in ("cast", "constant", "convert_to_tensor") and len(positional) > 1:  # the dtype, positional
        return dtype_named(model, positional[1])
    if op in _FLOAT32_MAKERS:
        return "float32"
    data = positional[-1] if op == "fill" and positional else positional[0] if positional else None
    if data is None:
        return None
    if op in _FROM_DATA or op in _LIKE or op in _SAME_DTYPE:
        return dtype_of(model, data, depth + 1)
    return None


def _astype(model: "Model", expr) -> Optional[str]:
    """``array.astype(D)``."""
    children = expr.children
    if len(children) >= 3 and children[-2].type == syms.trailer and children[-2].children[0].type == token.DOT \
            and children[-2].children[1].value == "astype":
        positional, _ = split_arguments(children[-1])
        return dtype_named(model, positional[0]) if positional else None
    return None


def _is_model_call(model: "Model", expr) -> bool:
    """``model(x)``, ``layer(x)``: a Keras model or layer called."""
    if len(expr.children) != 2:
        return False
    return model.kind_of(expr.children[0]).kind in (Kind.MODEL, Kind.LAYER)


def is_symbolic(model: "Model", expr, depth: int = 0) -> bool:
    """A symbolic Keras tensor: ``keras.Input(...)``, a layer or model
    called on one, ``model.inputs``/``layer.output`` (also through
    ``get_layer(...)``), arithmetic on one; names through their assignments."""
    if depth > _DEPTH:
        return False
    expr = unparen(expr)
    if expr.type == token.NAME:
        bindings = model.reaching(expr.value, expr)
        return bool(bindings) and all(getattr(b, "how", None) == "assign" and b.value is not None
                                      and is_symbolic(model, b.value, depth + 1) for b in bindings)
    if expr.type in (syms.arith_expr, syms.term):
        return any(is_symbolic(model, o, depth + 1) for o in expr.children[::2])
    if expr.type != syms.power:
        return False
    last = expr.children[-1]
    if last.type == syms.trailer and last.children[0].type == token.DOT \
            and last.children[1].value in _SYMBOLIC_ATTRIBUTES:
        owner = expr.children[:-1]
        return _is_keras_object(model, owner)
    if last.type == syms.trailer and last.children[0].type == token.LPAR:
        if model.callee(expr) in _KERAS_INPUTS:
            return True
        if _is_model_call(model, expr):
            positional, _ = split_arguments(last)
            return bool(positional) and is_symbolic(model, positional[0], depth + 1)
    return False


def _is_keras_object(model: "Model", children) -> bool:
    """``children`` (a power's first children) make a Keras model or layer,
    or ``m.get_layer(...)``."""
    if len(children) == 1:
        return model.kind_of(children[0]).kind in (Kind.MODEL, Kind.LAYER)
    last = children[-1]
    return len(children) >= 3 and last.type == syms.trailer and last.children[0].type == token.LPAR \
        and children[-2].type == syms.trailer and children[-2].children[0].type == token.DOT \
        and children[-2].children[1].value == "get_layer"


def model_input_of(model: "Model", expr) -> Optional[Tuple[object, str]]:
    """(``m``, attribute) when ``expr`` is ``m.inputs``/``m.input`` of a Keras
    model ``m`` (a NAME), or a name whose one assignment chain ends there: the
    symbolic input whose eager counterpart is what a call of ``m`` is given."""
    for _ in range(_DEPTH):
        expr = unparen(expr)
        if expr.type != token.NAME:
            break
        expr = model.assigned_value(expr.value, expr)
        if expr is None:
            return None
    kids = expr.children if expr.type == syms.power else ()
    if len(kids) != 2 or kids[0].type != token.NAME or kids[1].type != syms.trailer \
            or kids[1].children[0].type != token.DOT or kids[1].children[1].value not in ("inputs", "input") \
            or model.kind_of(kids[0]).kind is not Kind.MODEL:
        return None
    return kids[0], kids[1].children[1].value
