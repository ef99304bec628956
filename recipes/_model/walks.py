"""What the model's two walks over values share (differentiation.py: what a
target is differentiated through; gradients.py: which values are gradients
of what), so that each is written once: a module function inlined at a call
(its ``Frame``, its arguments by parameter), the exception that ends a walk
over its budget, and a power node (``a.b(c)[d] ** e``) folded trailer by
trailer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from ._tree import syms, token

if TYPE_CHECKING:
    from . import Model


@dataclass(eq=False, repr=False)
class Frame:
    """A module function inlined at one call: its parameters' arguments."""

    function: object
    arguments: Dict[str, Tuple[object, Optional["Frame"]]]
    depth: int


class Exhausted(Exception):
    """A walk needed more steps than its budget: a partial answer would be
    wrong (a gradient with some of its sources), so none is given."""


def bound_arguments(model: "Model", function, positional, keywords, frame: Optional[Frame]):
    """The arguments of a call of ``function`` by parameter name, each with the
    frame it is evaluated in; None when a positional argument has no
    parameter of its own (``*args``) or the function has no scope."""
    scope = model.index.scopes.get(id(function))
    if scope is None:
        return None
    params = {b.path[0]: name for name, bindings in scope.by_name.items() for b in bindings
              if b.how == "param" and b.statement is function and len(b.path) == 1}
    arguments = {}
    for i, arg in enumerate(positional):
        if arg.type == syms.argument or i not in params:
            return None
        arguments[params[i]] = (arg, frame)
    for name, value in keywords.items():
        arguments[name] = (value, frame)
    return arguments


class PowerWalk:
    """Folds a power node left to right. A walk says what an operand is
    (``operand``), what an unknown form gives (``NOTHING``), how two values
    join, and what a call, an index and an attribute make of what precedes
    them (``before``: None while that is the bare head, not evaluated yet,
    so a method call can look at its receiver's name)."""

    NOTHING: object = None

    def power(self, node, frame):
        children = node.children
        if children[0].type == token.NAME and children[0].value == "await":
            return self.NOTHING
        if len(children) > 2 and children[-2].type == token.DOUBLESTAR:  # ``a.b ** 2``
            return self.join(self.chain(node, len(children) - 2, frame), self.operand(children[-1], frame))
        return self.chain(node, len(children), frame)

    def chain(self, node, end: int, frame):
        """The value of ``node.children[:end]``: a head and its trailers (the
        ``.name`` of a method call is part of its call)."""
        children = node.children
        before = None
        for i in range(1, end):
            trailer = children[i]
            if trailer.type != syms.trailer:
                return self.NOTHING
            opener = trailer.children[0].value
            if opener == "(":
                before = self.call(node, i, frame, before)
            elif opener == "[":
                before = self.index(node, i, frame, before)
            elif i + 1 >= end or children[i + 1].children[0].value != "(":
                before = self.attribute(node, i, frame, before)
        return before if before is not None else self.operand(children[0], frame)
