"""What a gradient can see: the statements that feed a target, whether each
runs where it is recorded (a tape body, a closure given to ``minimize``),
whether a computation reads the differentiated variables, and whether moving
a computation elsewhere would change what the program does (effects).

- ``Sources.of(model, expr)``: the variables ``tape.gradient(_, expr)`` or
  ``var_list=expr`` differentiates, as owners (``model`` of
  ``model.trainable_variables``: calling it, or a method of it, reads them)
  and values (``x``, ``self.w``: reading them reads them);
- ``feeders(model, expr)``: the assignments whose values reach ``expr``, in
  source order, followed through the names they read in turn;
- ``effects(model, expr)``: why evaluating ``expr`` again, or elsewhere, may
  do something else (random draws, printing, assignments, variables, calls
  of unknown functions); None when it computes from its inputs only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, List, Optional, Set

from ._tree import literal_elements, syms, token, unparen
from .flow import statement_of
from .values import Kind

if TYPE_CHECKING:
    from . import Model

_VARIABLE_LISTS = {"trainable_variables", "trainable_weights", "variables", "weights"}
_ASSIGNMENTS = ("assign", "augassign", "annassign")
_LIMIT = 64  # feeders followed per question
_EFFECT_PREFIXES = ("tensorflow.random.", "numpy.random.", "tensorflow.compat.v1.random.",
                    "keras.random.", "random.")
_EFFECT_CALLS = {"tensorflow.print", "tensorflow.Variable", "tensorflow.py_function",
                 "tensorflow.numpy_function", "print", "input", "open"}
_EFFECT_METHODS = {"assign", "assign_add", "assign_sub", "append", "extend", "update", "pop", "insert",
                   "write", "add_loss", "add_metric", "save", "fit", "compile", "apply_gradients",
                   "minimize", "update_state", "reset_states", "set_weights", "remove", "clear"}
_PURE_BUILTINS = {"len", "float", "int", "abs", "min", "max", "sum", "range", "list", "tuple", "zip",
                  "enumerate", "round", "bool", "dict", "sorted", "reversed", "isinstance"}
_FUNCTION_DEPTH = 2


@dataclass(eq=False, repr=False)
class Sources:
    owners: Set[str] = field(default_factory=set)
    values: Set[str] = field(default_factory=set)

    @classmethod
    def of(cls, model: "Model", expr, depth: int = 0) -> "Sources":
        found = cls()
        found._add(model, unparen(expr), depth)
        return found

    def _add(self, model: "Model", expr, depth: int) -> None:
        elements = literal_elements(expr)
        if elements is not None:
            for element in elements:
                self._add(model, unparen(element), depth)
            return
        if expr.type == syms.arith_expr:
            for operand in expr.children[::2]:
                self._add(model, unparen(operand), depth)
            return
        path = _path(expr)
        if path is None:
            return
        owner, _, last = path.rpartition(".")
        if last in _VARIABLE_LISTS and owner:
            self.owners.add(owner)
            return
        if expr.type == token.NAME and depth < 3:  # a name for a list of variables
            value = model.assigned_value(expr.value, expr)
            value = unparen(value) if value is not None else None
            if value is not None and _variable_list(value):
                self._add(model, value, depth + 1)
                return
        self.values.add(path)

    def __bool__(self) -> bool:
        return bool(self.owners or self.values)

    def mentioned_in(self, node) -> bool:
        """``read_by``, or an owner named at all (``loss_of(model, x)`` may
        run the model): where reading the sources rules a finding out."""
        if self.read_by(node):
            return True
        return any(part.type == token.NAME and part.value in self.owners and _is_read(part)
                   for part in node.pre_order())

    def read_by(self, node) -> bool:
        """Does evaluating ``node`` read a differentiated variable?"""
        for part in node.pre_order():
            if part.type == token.NAME and part.value in self.values and _is_read(part):
                return True
            if part.type != syms.power:
                continue
            for i in range(1, len(part.children) + 1):
                prefix = _path_of(part.children[:i])
                if prefix is None:
                    break
                if prefix in self.values:
                    return True
                called = i < len(part.children) and part.children[i].type == syms.trailer \
                    and part.children[i].children[0].type == token.LPAR
                if called and any(prefix == o or prefix.startswith(o + ".") for o in self.owners):
                    return True
        return False


def _variable_list(value) -> bool:
    """A display, ``m.trainable_variables``, or a sum of them."""
    if value.type == syms.arith_expr:
        return all(_variable_list(unparen(operand)) for operand in value.children[::2])
    return literal_elements(value) is not None or (_path(value) or "").rpartition(".")[2] in _VARIABLE_LISTS


def feeders(model: "Model", expr, stop=None) -> List:
    """The assignment statements whose values reach ``expr`` (through the
    names it reads, then the names those read...), in source order;
    ``stop(statement)`` True: do not follow that statement's own reads."""
    found, seen, pending = [], set(), [expr]
    while pending and len(found) < _LIMIT:
        node = pending.pop()
        for leaf in _reads(node):
            for binding in model.reaching(leaf.value, leaf):
                if binding.how not in _ASSIGNMENTS or binding.statement is None:
                    continue
                stmt = statement_of(binding.statement)
                if id(stmt) in seen:
                    continue
                seen.add(id(stmt))
                found.append(stmt)
                if stop is None or not stop(stmt):
                    pending.append(_value_side(stmt))
    return sorted(found, key=lambda stmt: stmt.get_lineno() or 0)


def effects(model: "Model", expr, depth: int = 0) -> Optional[str]:
    """Why ``expr`` may not compute the same thing when run again or later
    (None: a pure computation from its inputs)."""
    for node in expr.pre_order():
        if node.type in (syms.lambdef,):
            continue
        if node.type != syms.power:
            continue
        for i, trailer in enumerate(node.children[1:], 1):
            if trailer.type != syms.trailer or trailer.children[0].type != token.LPAR:
                continue
            reason = _call_effect(model, node, i, depth)
            if reason:
                return reason
    return None


def _call_effect(model: "Model", power, at: int, depth: int) -> Optional[str]:
    callee = power.children[:at]
    shown = "".join(str(c) for c in callee).strip()
    path = model.qualified_children(callee)
    if path is not None:
        if path in _EFFECT_CALLS or path.startswith(_EFFECT_PREFIXES):
            return f"`{shown}(...)` draws random numbers or has effects"
        if path.startswith(("tensorflow.", "keras.", "numpy.", "math.")):
            return None
    last = callee[-1]
    method = last.children[1].value if last.type == syms.trailer and last.children[0].type == token.DOT else None
    if method in _EFFECT_METHODS:
        return f"`{shown}(...)` changes state"
    if at == 1 and callee[0].type == token.NAME and callee[0].value in _PURE_BUILTINS \
            and not model.reaching(callee[0].value, callee[0]):
        return None
    if model.receiver_kind(power, at).kind in (Kind.MODEL, Kind.LAYER):
        return None  # a forward pass
    value = model.receiver_kind(power, at)
    functions = model.functions_called(power) if at == 1 else []
    if not functions and value.origin is not None and value.origin.type == syms.classdef \
            and value.what == "instance":
        function = model.methods(value.origin).get("__call__")
        functions = [function] if function is not None else []
    if functions and depth < _FUNCTION_DEPTH:
        reasons = [_function_effect(model, function, depth + 1) for function in functions]
        return next((reason for reason in reasons if reason), None)
    return f"it calls `{shown}(...)`, which may have effects"


def _function_effect(model: "Model", function, depth: int) -> Optional[str]:
    """A function of this module is pure when its body only assigns locals
    and returns, from pure expressions."""
    body = function.children[-1]
    for stmt in (body.children if body.type == syms.suite else [body]):
        if stmt.type in (token.INDENT, token.DEDENT, token.NEWLINE):
            continue
        small = stmt.children[0] if stmt.type == syms.simple_stmt and len(stmt.children) == 2 else None
        if small is None or small.type not in (syms.expr_stmt, syms.return_stmt) \
                or small.type == syms.expr_stmt and _assigns_attribute(small):
            if small is not None and small.type == token.STRING:
                continue  # a docstring
            return f"`{function.children[1].value}` does more than compute a value"
        reason = effects(model, small, depth)
        if reason:
            return reason
    return None


def _assigns_attribute(expr_stmt) -> bool:
    targets = expr_stmt.children[:-1:2]
    return len(expr_stmt.children) != 3 or any(t.type != token.NAME for t in targets)


def _value_side(stmt):
    small = stmt.children[0] if stmt.type == syms.simple_stmt else stmt
    return small.children[-1] if small.type == syms.expr_stmt else small


def _reads(node):
    for leaf in node.leaves():
        if leaf.type == token.NAME and _is_read(leaf):
            yield leaf


def _is_read(leaf) -> bool:
    prev = leaf.prev_sibling
    if prev is not None and prev.type == token.DOT:
        return False
    parent = leaf.parent
    return not (parent is not None and parent.type == syms.argument and parent.children[0] is leaf
                and len(parent.children) == 3 and parent.children[1].type == token.EQUAL)


def _path(expr) -> Optional[str]:
    if expr.type == token.NAME:
        return expr.value
    if expr.type == syms.power:
        children = expr.children
        if children[-1].type == syms.trailer and children[-1].children[0].type == token.LPAR \
                and len(children[-1].children) == 2:
            children = children[:-1]  # model.trainable_variables() in TF 1 style
        return _path_of(children)
    return None


def _path_of(children) -> Optional[str]:
    if not children or children[0].type != token.NAME:
        return None
    parts = [children[0].value]
    for trailer in children[1:]:
        if trailer.type != syms.trailer or trailer.children[0].type != token.DOT:
            return None
        parts.append(trailer.children[1].value)
    return ".".join(parts)
