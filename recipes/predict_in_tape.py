"""predict-in-tape: ``model.predict(x)`` where gradients are recorded.

What it does: a ``predict`` or ``predict_on_batch`` call on a Keras model
or layer (any spelling the semantic model resolves: ``model``,
``self.model``, a policy network, a parameter every call passes a model)
that runs in a gradient context (a tape body, ``train_step``, a Keras
``call``, a loss handed to ``compile``, a ``tf.function``, and the module's
functions these call) becomes a call of the model::

    with tf.GradientTape() as tape:
        error = model.predict(x, verbose=0) - y
    # becomes
        error = model(x, training=False) - y

``verbose=`` is dropped; the input stays the first positional argument
(``x=`` becomes positional).

Why this is a bug: ``predict`` runs its own loop and returns a NumPy array:
nothing the tape recorded connects it to the weights, so every gradient
through it is None ("No gradients provided for any variable"); under
``tf.function`` the call raises. Calling the model returns a tensor on the
tape; ``training=False`` keeps predict's inference mode (dropout off,
batch-norm statistics frozen).

Safety, decided from the semantic model's kinds and data flow:
- safe when the input is a tensor or host data (NumPy, Python lists) and
  every use of the result works the same on a tensor: arithmetic, a
  TensorFlow/Keras call, a model or layer call, ``.shape``/``.dtype``,
  indexing by integers and slices; through names bound to it too;
- unsafe when the receiver is a parameter that every call of its function
  in this module passes a model (calls from other modules are not seen),
  when a use relies on a NumPy array (``.tolist()``, ``.argmax()``,
  ``np.*`` on it, indexing by arrays or lists, item assignment, a call of
  an unknown function, a return to unknown callers), when ``batch_size=``
  is given (the whole input then runs as one batch), when the input's kind
  is unknown, or when the same model is also called directly in the same
  context (there ``predict`` may be a deliberate stop-gradient, e.g. a
  bootstrapped target: then ``tf.stop_gradient(model(x, training=False))``
  is what is meant);
- report only when the input is a dataset or a generator (a model cannot
  be called on it) or ``callbacks=``/``steps=`` are given.

CAVEATS:
- A receiver the model cannot prove to be a Keras model or layer (an
  attribute of an object built elsewhere, a loaded object of unknown type)
  is left alone.
- A model whose ``call`` cannot take the whole input at once (memory) needs
  the batching ``predict`` did.
"""

from __future__ import annotations

from typing import List, Optional

from migrate.recipe import Recipe, propose
from recipes import _fissix as s
from recipes._model import Kind, model_of
from recipes._model.uses import numpy_reliance
from recipes._pyast import gradient_calls

# `<receiver>.predict(...)`, `<receiver>.predict_on_batch(...)`, then anything
PATTERN = "power< any+ trailer< '.' ('predict' | 'predict_on_batch') > trailer< '(' [any] ')' > any* >"
_DROPPED = {"verbose"}
_KERAS = (Kind.MODEL, Kind.LAYER)
_REPORT_ONLY = {"callbacks": "its callbacks would no longer run", "steps": "`steps=` bounds predict's own loop",
                "workers": "predict's data loading is not a model call",
                "use_multiprocessing": "predict's data loading is not a model call",
                "max_queue_size": "predict's data loading is not a model call"}


def _predict_at(power) -> Optional[int]:
    """The index of the ``.predict`` trailer the pattern matched (the last one)."""
    for i in range(len(power.children) - 2, 0, -1):
        trailer, args = power.children[i], power.children[i + 1]
        if trailer.children[0].type == s.token.DOT and trailer.children[1].value in ("predict", "predict_on_batch") \
                and args.type == s.syms.trailer and args.children[0].type == s.token.LPAR:
            return i
    return None


def _modify(node, capture, filename) -> None:
    model = model_of(node)
    at = _predict_at(node)
    context = model.gradient_context(node) if at is not None else None
    if context is None:
        return
    doubts = []
    if model.receiver_kind(node, at).kind not in _KERAS:
        if at != 1 or model.likely_kind_of(node.children[0]).kind not in _KERAS:
            return
        doubts.append(f"`{node.children[0].value}` is a Keras model at every call of its function here; "
                      "calls from other modules are not seen")
    receiver = "".join(str(c) for c in node.children[:at]).strip()
    method = node.children[at].children[1].value
    positional, keywords = s.split_arguments(node.children[at + 1])
    first = positional[0] if positional else keywords.get("x")
    if first is None or len(positional) > 1 or set(keywords) - {"x", "batch_size"} - _DROPPED - set(_REPORT_ONLY):
        return
    head = (f"`{receiver}.{method}(...)` {_where(context)} returns a NumPy array: the tape records nothing "
            f"through it, so gradients of `{receiver}`'s weights are None (under tf.function it raises)")
    blocker = next((why for key, why in _REPORT_ONLY.items() if key in keywords), None)
    kind = model.kind_of(first)
    if blocker is None and (kind.kind is Kind.DATASET or kind.what in ("iterator", "generator")):
        blocker = f"its input is a {kind.describe()}, which a model cannot be called on"
    if blocker is not None:
        propose(node, f"{head}; call `{receiver}(batch, training=False)` on each batch instead ({blocker})",
                fixable=False)
        return
    if not (kind.is_tensor or kind.is_host_data):
        doubts.append(f"`{s.shown(first)}` may not be an array or a tensor")
    if "batch_size" in keywords:
        doubts.append("the whole input then runs as one batch, not in batches of `batch_size`")
    reliance = numpy_reliance(model, node, at + 2)
    if reliance:
        doubts.append(reliance)
    if _called_directly(node, receiver, context):
        doubts.append(f"`{receiver}` is also called directly here: if `predict` was a deliberate "
                      f"stop-gradient, write `tf.stop_gradient({receiver}(x, training=False))`")
    message = f"{head}; `{receiver}({s.shown(first)}, training=False)` returns a tensor on the tape"
    if doubts:
        message += " (unsafe: " + "; ".join(doubts) + ")"
    if propose(node, message, safety="unsafe" if doubts else "safe"):
        _rewrite(node, at, first)


def _where(context) -> str:
    return {"tape": "inside the tape", "keras_call": "in `call`", "train_step": "in `train_step`",
            "compiled": "in a compiled loss", "tf_function": "in a tf.function"}.get(
        context.how, "in a function called where gradients are recorded")


def _called_directly(node, receiver: str, context) -> bool:
    """Is ``receiver(...)`` called, not through predict, in the same context?"""
    owner = context.owner.body if context.how == "tape" else context.owner
    for other in owner.pre_order():
        if other.type == s.syms.power and other is not node and len(other.children) > 1:
            for i, trailer in enumerate(other.children[1:], 1):
                if trailer.type == s.syms.trailer and trailer.children[0].type == s.token.LPAR \
                        and "".join(str(c) for c in other.children[:i]).strip() == receiver:
                    return True
    return False


def _may_predict_in_a_context(facts) -> List:
    """Precheck: the ``.predict(...)`` / ``.predict_on_batch(...)`` calls that
    may run in a gradient context (``_pyast.gradient_calls``)."""
    return [call for call in gradient_calls(facts)
            if getattr(call.func, "attr", None) in ("predict", "predict_on_batch")]


def _rewrite(node, at, first) -> None:
    text = s.source(first) + ", training=False"
    call = s.parse_expression(f"f({text})")
    node.children[at].remove()
    s.replace_with(node.children[at], call.children[1])


RECIPE = Recipe(
    id="predict-in-tape",
    summary="model.predict(x) in a gradient context -> model(x, training=False)",
    safety="safe",
    query=lambda q: q.select(PATTERN).modify(_modify),
    tokens=(".predict(", ".predict_on_batch("),
    precheck=_may_predict_in_a_context,
    before_fails="none-gradient",
)
