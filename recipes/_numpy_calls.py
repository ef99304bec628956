"""NumPy calls on tensors and what TensorFlow (or ``keras.ops``) computes
instead: the one table that numpy-accumulator (NumPy calls on a tensor, joins
of tensor lists) and numpy-on-loss-path (what follows a ``.numpy()`` or
``float(t)`` conversion) both read, so the two never disagree on a rewrite."""

from __future__ import annotations

from typing import Dict, List, Optional

from recipes._fissix import is_name, source, split_arguments, syms

# NumPy function of a tensor -> its tf.* equivalent (keywords: axis, keepdims);
# keras.ops names each one like NumPy
NUMPY_TO_TF = {"mean": "reduce_mean", "sum": "reduce_sum", "max": "reduce_max",
               "min": "reduce_min", "prod": "reduce_prod", "std": "math.reduce_std",
               "var": "math.reduce_variance", "exp": "exp", "log": "math.log", "sqrt": "sqrt",
               "square": "square", "abs": "abs", "tanh": "tanh"}

# ndarray methods that are NumPy functions of the array (``a.max(1)`` is ``np.max(a, 1)``)
REDUCING_METHODS = ("mean", "sum", "max", "min", "prod", "std", "var")

# NumPy calls that turn a list of tensors into one array -> the tf.* that keeps the tape
LIST_TO_TENSOR = {"array": "stack", "asarray": "stack", "stack": "stack", "concatenate": "concat"}


def equivalent(function: str, tensor: str, positional: List, keywords: Dict[str, object],
               tf: str, ops: Optional[str]) -> Optional[str]:
    """``tf.reduce_mean(t, axis=1)`` (``ops.mean(t, axis=1)`` in keras.ops
    code) for ``np.mean(t, 1)`` whose tensor argument reads ``tensor`` and
    whose other arguments are ``positional`` (at most the axis) and
    ``keywords``; None when NumPy's call has arguments TensorFlow's has not."""
    if function not in NUMPY_TO_TF or set(keywords) - {"axis", "keepdims"} or len(positional) > 1:
        return None
    if positional:
        keywords = dict(keywords, axis=positional[0])
    arguments = "".join(f", {k}={source(v).strip()}" for k, v in keywords.items())
    return f"{ops}.{function}({tensor}{arguments})" if ops else f"{tf}.{NUMPY_TO_TF[function]}({tensor}{arguments})"


def cast(tensor: str, dtype: str, tf: str, ops: Optional[str]) -> str:
    """``tf.cast(t, tf.float32)`` (``ops.cast(t, "float32")``) for a dtype name."""
    return f'{ops}.cast({tensor}, "{dtype}")' if ops else f"{tf}.cast({tensor}, {tf}.{dtype})"


def reads_a_numpy_copy(expr, model) -> bool:
    """Does ``expr`` compute with a ``t.numpy()`` copy (written in it, or a
    name bound to an expression holding one)? NumPy calls on such a value
    are numpy-on-loss-path's to rewrite, with the conversion they follow:
    numpy-accumulator leaves them, so no call gets two findings."""
    for node in expr.pre_order():
        if _numpy_method(node):
            return True
        if node.type == syms.power or not is_name(node):
            continue
        value = model.assigned_value(node.value, node)
        if value is not None and any(_numpy_method(inner) for inner in value.pre_order()):
            return True
    return False


def _numpy_method(node) -> bool:
    """A ``.numpy`` trailer followed by ``()``."""
    following = node.next_sibling
    return node.type == syms.trailer and len(node.children) == 2 and is_name(node.children[1], "numpy") \
        and following is not None and following.type == syms.trailer and str(following).strip() == "()"


def constant_around(node, model):
    """The ``tf.constant(node)`` call that wraps ``node`` alone (no dtype),
    else None: once ``node`` computes in TensorFlow the wrapper must go, as
    ``tf.constant`` of a tensor raises in graph mode (fit, tf.function)."""
    trailer = node.parent
    call = trailer.parent if trailer is not None else None
    if trailer is None or trailer.type != syms.trailer or call is None or call.type != syms.power \
            or call.children[-1] is not trailer or str(trailer.children[0]) != "(":
        return None
    positional, keywords = split_arguments(trailer)
    if len(positional) != 1 or positional[0] is not node or keywords:
        return None
    return call if model.callee(call) == "tensorflow.constant" else None
