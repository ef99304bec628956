"""NumPy calls on tensors in a gradient context: a list of tensors joined by
``np.stack``/``np.concatenate``/``np.array`` (-> ``tf.stack``/``tf.concat``)
and NumPy reductions or conversions of a tensor (-> ``tf.reduce_*``...)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, List, Optional

from migrate.recipe import propose
from recipes._fissix import call_parts, contains, is_call, is_name, parse_expression, scope_nodes, source, syms
from recipes._numpy_accumulator.buffers import Analysis, _MODEL_WEIGHTS, _TENSOR_ATTRIBUTES, _dtype_name
from recipes._numpy_calls import LIST_TO_TENSOR, cast, constant_around, equivalent, reads_a_numpy_copy


def _list_conversions(analysis: Analysis) -> List:
    """``np.stack(lst, axis=k)`` / ``np.array(lst)`` / ``np.asarray(lst)`` /
    ``np.concatenate(lst, axis=k)`` of a list of tensors built in the
    function (appended to, a list display or comprehension): each copies the
    tensors into NumPy. Only in a gradient context (the model's):
    elsewhere (tests, evaluation) NumPy is what the code wants."""
    found = []
    for node, parts, function in analysis.numpy_calls():
        if function not in LIST_TO_TENSOR:
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
    # `layer(x)` of `for layer in self.blocks:` is a tensor when the model's
    # kinds say the loop gives layers; an attribute it cannot type is not one
    return bool(appended) and all(len(a) == 1 and analysis.is_tensor(a[0]) for a in appended)


def _list_conversion_fix(call, analysis: Analysis) -> Optional[Callable[[object], str]]:
    """How to write ``tf.stack(lst, axis=k)`` / ``tf.concat(lst, axis=k)`` for
    the NumPy call, or None when it has arguments TensorFlow's has not."""
    callee, positional, keywords = call_parts(call)
    function = analysis.imports.numpy_function(callee)
    extra = set(keywords) - {"axis"} if function in ("stack", "concatenate") else set(keywords)
    if extra or len(positional) > (2 if function in ("stack", "concatenate") else 1):
        return None
    ops = analysis.imports.keras_ops
    return partial(_joined, concatenate=function == "concatenate", p=ops or analysis.tf, keras=bool(ops))


def _joined(call, concatenate: bool, p: str, keras: bool) -> str:
    _, positional, keywords = call_parts(call)
    axis = keywords.get("axis", positional[1] if len(positional) > 1 else None)
    axis_text = source(axis).strip() if axis is not None else "0"
    items = source(positional[0]).strip()
    if concatenate:
        return f"{p}.{'concatenate' if keras else 'concat'}({items}, axis={axis_text})"
    return f"{p}.stack({items}" + (f", axis={axis_text})" if axis is not None else ")")


@dataclass(eq=False, repr=False)
class CallFix:
    """What the filter decided for one NumPy call: the finding's message,
    the node the fix replaces (the call, or a ``tf.constant(<call>)`` around
    it: of a tensor it raises in graph mode) and how the fix is written from
    the call as it stands when the modifier applies it (fixes inside it come
    first: a slot read, a NumPy join), or None: reported only."""

    call: object
    message: str
    target: object
    render: Optional[Callable[[object], str]]


def list_conversion_fixes(analysis: Analysis) -> List[CallFix]:
    """The decisions on every NumPy conversion of a list of tensors."""
    return _decide_calls(analysis, _list_conversions, _list_conversion_fix, lambda call: (
        f"`{source(call).strip()}` copies the tensors of the list into a NumPy array: "
        f"the tape stops there and gradients come back None (model.fit raises)",
        " (its arguments have no tf.stack/tf.concat equivalent)"))


def _decide_calls(analysis: Analysis, find, fix_of, explain) -> List[CallFix]:
    """A decision for each call ``find`` names: how ``fix_of(call)`` writes
    its fix, and the message ``explain`` gives, with its reason when there
    is no fix."""
    if not analysis.settled:
        analysis.settle_tensor_names()
    decided = []
    for call in find(analysis):
        render = fix_of(call, analysis)
        message, no_fix = explain(call)
        message += f"; use `{render(call)}`" if render else no_fix
        wrapper = constant_around(call, analysis.model)
        decided.append(CallFix(call, message, wrapper if wrapper is not None else call, render))
    return decided


def rewrite_calls(decided: List[CallFix]) -> bool:
    """Report each decision, then rewrite those to apply now, the innermost
    first (a call around another is written from the text the inner fix
    left); True when one was."""
    applied = [d for d in decided if propose(d.call, d.message, fixable=d.render is not None)]
    for decision in reversed(applied):  # found in pre-order: an outer call before the calls in it
        replacement = parse_expression(decision.render(decision.call))
        replacement.prefix = decision.target.prefix
        decision.target.replace(replacement)
    return bool(applied)


def _tensor_under_numpy(expr, analysis: Analysis):
    """The tensor expression under ``np.asarray(t)`` / ``np.array(t)`` (or
    ``expr`` itself when it is a tensor, or a NumPy join this recipe makes
    one); None when it is neither."""
    expr = _unwrapped(expr, analysis.imports)
    if expr.type == syms.atom and expr.children[0].value == "[":
        return None  # a list: _list_conversions
    text = source(expr)
    if any(f".{a}" in text for a in _TENSOR_ATTRIBUTES):
        return None  # shapes and dtypes are Python values
    tensor = id(expr) in analysis.filled or analysis.is_tensor(expr) or _model_call(expr, analysis.function)
    return expr if tensor else None


def _unwrapped(expr, imports):
    """``t`` of ``np.asarray(t)`` / ``np.array(t)``, else ``expr``."""
    parts = call_parts(expr)
    if parts and imports.numpy_function(parts[0]) in ("array", "asarray") and len(parts[1]) == 1 and not parts[2]:
        return parts[1][0]
    return expr


def _model_call(expr, function) -> bool:
    """``model(x)`` where the function also reads ``model.trainable_variables``
    (or ``trainable_weights``): a Keras model, so a tensor."""
    parts = call_parts(expr)
    if not parts or "." in parts[0]:
        return False
    text = source(function)
    return any(f"{parts[0]}.{weights}" in text for weights in _MODEL_WEIGHTS)


def _numpy_on_tensors(analysis: Analysis) -> List:
    """Outermost NumPy calls on a tensor in a gradient context; a buffer's
    creation (``np.copy(x)`` then written to) is the write's business, a
    call on a ``.numpy()`` copy numpy-on-loss-path's."""
    found = []
    creations = {id(buffer.creation) for buffer in analysis.buffers if analysis.writes(buffer)}
    for node, parts, function in analysis.numpy_calls():
        if id(node.parent) in creations or not parts[1] \
                or function in LIST_TO_TENSOR and _tensor_list(parts[1][0], analysis) \
                or _tensor_under_numpy(parts[1][0], analysis) is None \
                or reads_a_numpy_copy(parts[1][0], analysis.model) \
                or not analysis.model.in_gradient_context(node):
            continue
        if not any(contains(outer, node) for outer in found):
            found.append(node)
    return found


def _numpy_on_tensor_fix(call, analysis: Analysis) -> Optional[Callable[[object], str]]:
    """How to write the TensorFlow form of a NumPy call on a tensor, or None
    when it has none this recipe knows."""
    callee, positional, keywords = call_parts(call)
    function = analysis.imports.numpy_function(callee)
    tf, ops = analysis.tf, analysis.imports.keras_ops  # keras.ops names these functions like NumPy
    if function in ("array", "asarray"):
        dtype = keywords.get("dtype", positional[1] if len(positional) > 1 else None)
        name = _dtype_name(dtype) if dtype is not None else None
        if set(keywords) - {"dtype"} or len(positional) > 2 or name == "?":
            return None
        return partial(_converted, imports=analysis.imports, dtype=name, tf=tf, ops=ops)
    if equivalent(function, "", positional[1:], keywords, tf, ops) is None:
        return None
    return partial(_computed, imports=analysis.imports, function=function, tf=tf, ops=ops)


def _converted(call, imports, dtype: Optional[str], tf: str, ops: Optional[str]) -> str:
    tensor = source(_unwrapped(call_parts(call)[1][0], imports)).strip()
    return cast(tensor, dtype, tf, ops) if dtype else tensor


def _computed(call, imports, function: str, tf: str, ops: Optional[str]) -> str:
    _, positional, keywords = call_parts(call)
    return equivalent(function, source(_unwrapped(positional[0], imports)).strip(), positional[1:], keywords,
                      tf, ops)


def numpy_on_tensor_fixes(analysis: Analysis) -> List[CallFix]:
    """The decisions on every NumPy call computing on a tensor."""
    return _decide_calls(analysis, _numpy_on_tensors, _numpy_on_tensor_fix, lambda call: (
        f"`{source(call).strip()}` computes with NumPy on a tensor: the result is a "
        f"constant to the tape, so gradients come back None (model.fit raises)",
        f" (`{call_parts(call)[0]}` has no tf.* equivalent this recipe knows)"))
