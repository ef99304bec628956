"""Would a float value serve each read of an integer one the same way?
integer-source asks it of every read of an integer variable, weight or
watched constant before making it float: a read it cannot show safe is the
reason the fix is unsafe (or, for a watched constant, not offered)."""

from __future__ import annotations

from typing import Optional

from recipes import _fissix as s
from recipes._model.dtypes import dtype_of, is_floating
from recipes._model.sources import gradient_arguments

SOURCE_METHODS = {"gradient", "minimize", "jacobian"}
_ARITHMETIC = {"+", "-", "*", "/", "**"}
# tf.* ops that want integers (indices, shapes, counts) or give integer semantics
_WANT_INTEGERS = {"range", "one_hot", "gather", "gather_nd", "tile", "reshape", "fill", "zeros", "ones", "eye",
                  "while_loop", "slice", "sequence_mask", "split", "repeat", "roll", "random.normal",
                  "random.uniform", "floordiv", "floormod", "math.floordiv", "math.floormod", "math.mod",
                  "truncatediv", "truncatemod"}
# tf.* ops whose tensor arguments must share one dtype: each is a partner like an operand of `+`
_COMBINING = {"add", "subtract", "multiply", "divide", "truediv", "maximum", "minimum", "pow", "where",
              "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "math.add",
              "math.subtract", "math.multiply", "math.divide", "math.truediv", "math.maximum", "math.minimum",
              "math.pow", "math.equal", "math.not_equal", "math.less", "math.less_equal", "math.greater",
              "math.greater_equal"}
NOT_MINE = object()  # joins.context: a use the plain rules of context_of judge


def is_gradient_source(model, leaf) -> bool:
    """``leaf`` is (in) the sources of ``tape.gradient``/``minimize``/``var_list=``."""
    node = leaf
    while node.parent is not None and node.type not in (s.syms.simple_stmt, s.syms.suite):
        parent = node.parent
        if parent.type == s.syms.argument and parent.children[0].type == s.token.NAME \
                and parent.children[0].value == "var_list":
            return True
        if parent.type == s.syms.trailer and parent.children[0].type == s.token.LPAR:
            power = parent.parent
            index = s.index_of(power.children, parent)
            method = power.children[index - 1]
            if method.type == s.syms.trailer and method.children[0].type == s.token.DOT \
                    and method.children[1].value in SOURCE_METHODS:
                parts = gradient_arguments(power) if method.children[1].value == "gradient" else None
                positional, _ = s.split_arguments(parent)
                sources = parts[1] if parts else positional[1] if len(positional) > 1 else None
                return sources is not None and s.contains(sources, leaf)
        node = parent
    return False


def _is_gradient_operand(model, leaf) -> bool:
    """A source (``is_gradient_source``) or the target of ``x.gradient(target, ...)``."""
    if is_gradient_source(model, leaf):
        return True
    call = call_passing(leaf)
    if call is None or not any(s.code(c) == ".gradient" for c in call.children):
        return False
    parts = gradient_arguments(call)
    return parts is not None and parts[0] is leaf


def unsafe_read(model, leaf, joins=None) -> Optional[str]:
    """Why a float value would not serve this read as the integer one did;
    ``joins``: the integer constants converted with it (together.Together)."""
    if _is_gradient_operand(model, leaf) or in_tensorflow_call(model, leaf, joins) or _applied(leaf):
        return None
    parent = leaf.parent
    if parent.type in (s.syms.arith_expr, s.syms.term, s.syms.comparison):
        ops = {s.code(op) for op in parent.children[1::2]}
        others = [o for o in parent.children[::2] if s.code(o) != s.code(leaf)]  # itself: float too
        refused = next((o for o in others if not float_partner(model, o, joins)), None)
        if refused is not None and joins is not None and joins.refused:
            return f"`{s.shown(parent)}` (line {leaf.get_lineno()}) meets {joins.refused}"
        if refused is None and parent.type == s.syms.comparison:
            return None  # a truth value, whatever the operands' dtype
        if refused is None and ops <= _ARITHMETIC:
            return unsafe_read(model, parent, joins) if parent.parent.type in (s.syms.arith_expr, s.syms.term) \
                else context_of(model, parent, joins)
        return f"`{s.shown(parent)}` (line {leaf.get_lineno()}) may rely on the integer dtype"
    if parent.type == s.syms.power and parent.children[0] is leaf and len(parent.children) == 3 \
            and s.code(parent.children[1]) in (".numpy", ".assign", ".assign_add", ".assign_sub"):
        args = s.call_args(parent.children[2])
        if s.code(parent.children[1]) == ".numpy" or all(_never_an_integer_tensor(model, a) for a in args):
            return None
    return context_of(model, leaf, joins)


def float_partner(model, operand, joins) -> bool:
    """An operand a float value meets as the integer one did: a Python number,
    a floating tensor, or (``joins``) an integer constant converted with it."""
    operand = s.unparen(operand)
    return operand.type == s.token.NUMBER or is_floating(dtype_of(model, operand)) \
        or joins is not None and joins.accepts(operand)


def _never_an_integer_tensor(model, expr) -> bool:
    """A value a float variable accepts whenever the integer one did: a number,
    a floating tensor, arithmetic with a float literal (a float or an error)."""
    expr = s.unparen(expr)
    if expr.type == s.token.NUMBER or is_floating(dtype_of(model, expr)):
        return True
    return expr.type in (s.syms.arith_expr, s.syms.term) and any(
        leaf.type == s.token.NUMBER and ("." in leaf.value or "e" in leaf.value.lower())
        for leaf in expr.children[::2])


def _applied(leaf) -> bool:
    """``leaf`` is read in ``optimizer.apply_gradients(...)`` or ``tape.watch(...)``."""
    node = leaf.parent
    while node is not None and node.type not in (s.syms.simple_stmt, s.syms.suite):
        if node.type == s.syms.power and any(s.code(k) in (".apply_gradients", ".watch") for k in node.children):
            return True
        node = node.parent
    return False


def context_of(model, expr, joins=None) -> Optional[str]:
    """An arithmetic result is fine as an assignment's value, a tf.* argument
    or printed; with ``joins``, what a name bound to it or a loop does with it decides."""
    parent = expr.parent
    if joins is not None:
        handled = joins.context(expr)
        if handled is not NOT_MINE:
            return handled
    elif parent.type == s.syms.expr_stmt and parent.children[-1] is expr:
        return None
    if in_tensorflow_call(model, expr, joins):
        return None
    call = call_passing(expr)
    if call is not None:
        return f"`{s.shown(call)}` (line {expr.get_lineno()}) passes it to code that may rely on the integer dtype"
    shown = parent.parent if parent.type in (s.syms.trailer, s.syms.listmaker, s.syms.testlist_gexp) \
        else parent  # `table[i]`, not `[i]`; `[n, 2]`, not `n, 2`
    return f"`{s.shown(shown)}` (line {expr.get_lineno()}) may rely on the integer dtype"


def call_passing(expr):
    """The call ``expr`` is an argument of; None when it is not one."""
    parent = expr.parent
    if parent.type == s.syms.arglist:
        parent = parent.parent
    return parent.parent if parent.type == s.syms.trailer and parent.children[0].type == s.token.LPAR else None


def in_tensorflow_call(model, expr, joins=None) -> bool:
    """``expr`` is an argument of a ``tf.*`` op (not one that wants integers)
    or of print(); with ``joins``, every tensor an op combines it with
    becomes float too."""
    call = call_passing(expr)
    if call is None:
        return False
    callee = model.callee(call) or ""
    if model.kind_of(call.children[0]).what == "builtin:print":
        return True
    op = callee[len("tensorflow."):]
    if not callee.startswith("tensorflow.") or op in _WANT_INTEGERS:
        return False
    trailer = expr.parent.parent if expr.parent.type == s.syms.arglist else expr.parent  # `f(x) ** 2` ends in 2
    partners = [a for a in s.call_args(trailer) if a is not expr and a.type != s.syms.argument]
    return joins is None or op not in _COMBINING or all(float_partner(model, a, joins) for a in partners)
