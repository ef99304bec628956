"""May an expression hold a tensor: the model's kind when it knows one,
else whether the value is computed from a tensor, through the names it reads
(their reaching bindings), the TensorFlow calls in it, the layers an
instance holds (``self.encoder(x)``, an attribute that is no method of the
class) and what the module's functions and methods it calls return. A
question for finding code that copies tensors out of TensorFlow
(numpy-accumulator's buffers): an over-approximation, never a proof that a
fix is safe.

    model.may_hold_a_tensor(expr, assumed=frozenset())

``assumed``: ids of binding values to count as tensors (a recipe's own
rewrite makes them tensors: a NumPy buffer that will be a TensorArray).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, FrozenSet, List, Tuple

from ._tree import not_an_attribute, syms, token
from .values import Kind, Value

if TYPE_CHECKING:
    from . import Model

# methods whose result is host data whatever the receiver: the value left TensorFlow
_TO_HOST_METHODS = ("numpy", "item", "tolist")
# builtins whose result is Python data
_TO_PYTHON = ("float", "int", "bool", "complex", "list", "str")


def _not_a_tensor(kind: Value) -> bool:
    """Does the model know ``kind`` is no tensor: NumPy or Python data, or a
    list or tuple of such?"""
    if kind.kind in (Kind.PYLIST, Kind.PYTUPLE):
        return kind.element is not None and _not_a_tensor(kind.element)
    return kind.is_known and not kind.is_tensor


def _calls_a_method(expr, methods) -> bool:
    for node in expr.pre_order():
        if node.type == syms.trailer and node.children[0].type == token.DOT \
                and node.children[1].value in methods:
            after = node.next_sibling
            if after is not None and after.type == syms.trailer and after.children[0].type == token.LPAR:
                return True
    return False


def _call_of(node):
    """The callee children of ``node`` when it is ``callee(...)`` (one call, last)."""
    if node.type != syms.power or len(node.children) < 2:
        return None
    last = node.children[-1]
    if last.type != syms.trailer or last.children[0].type != token.LPAR:
        return None
    return node.children[:-1]


class TensorSources:
    """Answers ``may_hold_a_tensor`` for one module's model, memoized per
    (node, assumed)."""

    def __init__(self, model: "Model"):
        self.model = model
        self.memo: Dict[Tuple[str, int, FrozenSet[int]], bool] = {}
        # questions being answered, innermost last; for each, the lowest
        # position of an unfinished question its answer leaned on
        self.position: Dict[Tuple[str, int, FrozenSet[int]], int] = {}
        self.lowest: List[int] = []

    def __call__(self, expr, assumed: FrozenSet[int] = frozenset()) -> bool:
        return self._memoized(("holds", id(expr), assumed), self._infer, expr, assumed)

    def _memoized(self, key, compute, expr, assumed) -> bool:
        """``compute(expr, assumed)``, memoized. A question that comes back to
        itself (a name bound from itself in a loop) answers no there: its
        other bindings decide; a no that leaned on such an unfinished answer
        is not kept (a yes always is: it found a tensor)."""
        if key in self.memo:
            return self.memo[key]
        if key in self.position:
            self.lowest[-1] = min(self.lowest[-1], self.position[key])
            return False
        depth = len(self.position)
        self.position[key] = depth
        self.lowest.append(depth + 1)
        try:
            found = compute(expr, assumed)
        finally:
            del self.position[key]
            lowest = self.lowest.pop()
        if found or lowest >= depth:
            self.memo[key] = found
        elif self.lowest:
            self.lowest[-1] = min(self.lowest[-1], lowest)
        return found

    def _infer(self, expr, assumed) -> bool:
        model = self.model
        callee = _call_of(expr)
        if callee is not None and len(callee) == 1 and callee[0].type == token.NAME \
                and callee[0].value in _TO_PYTHON and not model.reaching(callee[0].value, callee[0]):
            return False
        if callee is not None and (model.qualified_children(callee) or "").startswith("numpy."):
            return False
        if _calls_a_method(expr, _TO_HOST_METHODS):
            return False
        kind = model.kind_of(expr)
        if kind.is_tensor or not kind.is_known and model.likely_kind_of(expr).is_tensor:
            return True
        if self._reads(expr, assumed):
            return True
        if _not_a_tensor(kind):
            return False  # the model knows better than the data flow below (sess.run(...).ravel())
        for node in expr.pre_order():
            if node.type == token.NAME and not_an_attribute(node) and self._bound_to_a_tensor(node, assumed):
                return True
            callee = _call_of(node)
            if callee is not None and (self._held_callable(callee) or
                                       (model.qualified_children(callee) or "").startswith("tensorflow.")
                                       or any(self._returns_one(f) for f in model.functions_called(node))):
                return True
        return False

    def _returns_one(self, function) -> bool:
        """May a function or method of this module return a tensor (``def
        encode(self): return self.encoder(self.x)``)?"""
        scope = self.model.index.scopes.get(id(function))
        return scope is not None and any(self(value) for value in scope.returns)

    def _reads(self, expr, assumed) -> bool:
        """Does ``expr`` read the data (not ``.shape``/``.dtype``) of one of
        the ``assumed`` values, through names bound to it or to such a read?"""
        if not assumed:
            return False
        for node in expr.pre_order():
            if node.type == token.NAME and not_an_attribute(node) and not _describes(node) and any(
                    id(b.value) in assumed or b.how == "assign" and b.value is not None
                    and self._memoized(("reads", id(b.value), assumed), self._reads, b.value, assumed)
                    for b in self._bindings(node)):
                return True
        return False

    def _bindings(self, leaf):
        target = self.model.index.targets.get(id(leaf))
        return [target] if target is not None else self.model.reaching(leaf.value, leaf)

    def _bound_to_a_tensor(self, leaf, assumed) -> bool:
        """Is a reaching binding of the name ``leaf`` a tensor (its kind) or
        an assignment of a value that may hold one?"""
        for binding in self._bindings(leaf):
            if binding.how == "mutation":
                continue
            if binding.how == "assign" and binding.value is not None:
                if self(binding.value, assumed):
                    return True
            elif self.model.binding_kind(binding).is_tensor:
                return True
        return False

    def _held_callable(self, callee) -> bool:
        """``self.encoder`` called: an attribute of an instance of a class of
        this module that is no method of it and the model cannot type (a
        layer it holds), or of the ``self`` of a method pasted without its
        class (a module-level function whose first parameter is ``self``)."""
        if len(callee) != 2 or callee[1].type != syms.trailer or callee[1].children[0].type != token.DOT:
            return False
        attr = callee[1].children[1].value
        receiver = self.model.kind_of(callee[0])
        cls = receiver.origin
        if cls is not None and cls.type == syms.classdef:
            return attr not in self.model.methods(cls) and not any(
                self.model.binding_kind(b).is_known for b in self.model.attribute_bindings(cls, attr))
        return callee[0].type == token.NAME and callee[0].value == "self" and any(
            b.how == "param" and b.path == (0,) and self.model.method_class(b.statement) is None
            for b in self.model.reaching("self", callee[0]))


def _describes(leaf) -> bool:
    """Is ``leaf`` read for its ``.shape``/``.dtype``/``.ndim`` (a Python value)?"""
    after = leaf.next_sibling
    return after is not None and after.type == syms.trailer and after.children[0].type == token.DOT \
        and after.children[1].value in ("shape", "dtype", "ndim")
