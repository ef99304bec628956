"""Does code rely on a value being a NumPy array? Asked before a value that
was an array (``model.predict(x)``) is made a tensor: every use, followed
through the names bound to it, must work the same on a tensor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ._tree import syms, token
from .values import Kind

if TYPE_CHECKING:
    from . import Model

_TENSOR_ATTRIBUTES = {"shape", "dtype", "ndim", "numpy"}  # a tensor has them too
_OPERATORS = (syms.arith_expr, syms.term, syms.factor, syms.comparison, syms.not_test,
              syms.and_test, syms.or_test)
_TENSOR_LIBRARIES = ("tensorflow.", "keras.")
_DEPTH = 4  # names bound to names bound to it...
_KERAS_TAKES_TENSORS = ("keras_call", "compiled", "train_step")  # Keras gets what they return


def numpy_reliance(model: "Model", power, end: int, depth: int = 0) -> Optional[str]:
    """Why the code relies on ``power.children[:end]`` (``end`` is
    ``len(power.children)`` for the whole node, or ``power`` may be a
    leaf) being a NumPy array; None when every use works on a tensor."""
    children = power.children if power.type == syms.power else [power]
    for i in range(end, len(children)):
        trailer = children[i]
        opener = trailer.children[0].value
        if opener == ".":
            attr = trailer.children[1].value
            return None if attr in _TENSOR_ATTRIBUTES else f"`.{attr}` is a NumPy array's"
        if opener == "[" and not _basic_index(model, trailer.children[1]):
            return "indexing by an array or a list has NumPy's semantics"
        if opener == "(":
            return "the result is called"
    return _use(model, power, depth)


def _use(model: "Model", expr, depth: int) -> Optional[str]:
    node, parent = expr, expr.parent
    # an operand: NumPy defers to the tensor's operators, so the whole
    # expression becomes a tensor too; its own use decides
    while parent is not None and (parent.type == syms.atom and parent.children[0].value == "("
                                  or parent.type in _OPERATORS
                                  or parent.type == syms.power and node is not parent.children[0]):
        node, parent = parent, parent.parent
    if parent is None:
        return "a use that may need an array"
    if parent.type in (syms.arglist, syms.argument, syms.trailer):
        return _argument(model, parent)
    if parent.type == syms.expr_stmt and node is parent.children[-1] and len(parent.children) == 3 \
            and parent.children[1].type == token.EQUAL:
        return _bound(model, parent.children[0], depth)
    if parent.type == syms.return_stmt:
        return _returned(model, parent, depth)
    return f"it is used in `{' '.join(str(parent).split())[:60]}`"


def _argument(model: "Model", parent) -> Optional[str]:
    trailer = parent
    while trailer is not None and trailer.type != syms.trailer:
        trailer = trailer.parent
    if trailer is None or trailer.children[0].type != token.LPAR:
        return "a use that may need an array"
    call = trailer.parent
    at = next(i for i, child in enumerate(call.children) if child is trailer)
    callee = call.children[:at]
    path = model.qualified_children(callee) or ""
    if path.startswith(_TENSOR_LIBRARIES):
        return None
    if model.receiver_kind(call, at).kind in (Kind.MODEL, Kind.LAYER):
        return None
    shown = "".join(str(c) for c in callee).strip()
    if path.startswith("numpy."):
        return f"`{shown}` computes with NumPy"
    return f"it is passed to `{shown}(...)`, which may expect an array"


def _returned(model: "Model", stmt, depth: int) -> Optional[str]:
    """A returned value is used where the module's function is called."""
    function = model.scope_of(stmt).node
    context = model.gradient_context(stmt)
    if context is not None and context.owner is function and context.how in _KERAS_TAKES_TENSORS:
        return None
    sites = model.call_sites(function) if function.type == syms.funcdef and depth < _DEPTH else None
    if not sites:
        return "it is returned to callers that may expect an array"
    for trailer, _ in sites:
        call = trailer.parent
        end = next(i for i, child in enumerate(call.children) if child is trailer) + 1
        reason = numpy_reliance(model, call, end, depth + 1)
        if reason:
            return f"its caller at line {call.get_lineno()}: {reason}"
    return None


def _bound(model: "Model", target, depth: int) -> Optional[str]:
    if target.type != token.NAME:
        return "its result is unpacked or stored, not bound to a name"
    if depth >= _DEPTH or model.may_be_read_dynamically(target.value, target):
        return f"`{target.value}` may be read where the model cannot see"
    scope = model.scope_of(target).node
    for leaf in scope.leaves():
        if leaf.type != token.NAME or leaf.value != target.value:
            continue
        bindings = model.index.reads.get(id(leaf))
        if not bindings or not any(b.node is target for b in bindings):
            continue
        holder = leaf.parent if leaf.parent is not None and leaf.parent.type == syms.power \
            and leaf.parent.children[0] is leaf else leaf
        reason = numpy_reliance(model, holder, 1, depth + 1)
        if reason:
            return f"`{target.value}` (line {leaf.get_lineno()}): {reason}"
    return None


def _basic_index(model: "Model", index) -> bool:
    """Integers, slices, ``None`` and ``...``: indexing a tensor the same way."""
    parts = [c for c in index.children if c.type != token.COMMA] if index.type == syms.subscriptlist else [index]
    for part in parts:
        pieces = [c for c in part.children if c.type != token.COLON] if part.type in (syms.subscript, syms.sliceop) \
            else [part]
        for piece in pieces:
            if piece.type == token.COLON:
                continue
            if piece.type == syms.sliceop:
                pieces.extend(c for c in piece.children if c.type != token.COLON)
            elif not _scalar(model, piece):
                return False
    return True


def _scalar(model: "Model", node) -> bool:
    if node.type == token.NUMBER or node.type == token.NAME and node.value == "None":
        return True
    if node.type == syms.factor and node.children[0].value == "-":
        return _scalar(model, node.children[1])
    if node.type == syms.atom and "".join(leaf.value for leaf in node.leaves()) == "...":
        return True
    return model.kind_of(node).kind is Kind.NUMBER
