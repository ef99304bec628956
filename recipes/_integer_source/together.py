"""Which integer-literal constants become float together when a watched
one does (``Together``), and why not when a use needs the integer."""

from __future__ import annotations

import re
from typing import List, Optional, Set

from recipes import _fissix as s
from recipes._model.dtypes import dtype_named, is_integer

from .reads import NOT_MINE, call_passing, context_of, float_partner, unsafe_read

_LITERAL_MAKERS = {"tensorflow.constant", "tensorflow.convert_to_tensor"}
_AUGMENTED = {"+=", "-=", "*=", "/="}
_TUPLES = (s.syms.testlist, s.syms.testlist_star_expr, s.syms.exprlist)  # `a, b` without brackets


def bindings_read(model, leaf):
    """The bindings a NAME read sees (a free name of a function: the
    enclosing scope's); None where the NAME binds instead of reading."""
    found = model.index.reads.get(id(leaf))
    return None if found is None else found or model.reaching(leaf.value, leaf)


def _integer_literal(node) -> bool:
    """``3``, ``-3``, ``[1, 2]``, ``((1, 2), (3, 4))``: Python ints only."""
    node = s.unparen(node)
    if node.type == s.syms.factor and node.children[0].value in "+-":
        node = node.children[1]
    if node.type == s.token.NUMBER:
        return re.fullmatch(r"\d[\d_]*", node.value) is not None
    elements = s.literal_elements(node)
    return bool(elements) and all(_integer_literal(e) for e in elements)


def _literal_constant(model, value) -> bool:
    """``tf.constant(<int literal>)`` (or ``convert_to_tensor``) whose dtype,
    if spelled, is an integer one: made float by its spelling alone."""
    if value is None or value.type != s.syms.power or value.children[-1].type != s.syms.trailer \
            or value.children[-1].children[0].type != s.token.LPAR or model.callee(value) not in _LITERAL_MAKERS:
        return False
    positional, keywords = s.split_arguments(value.children[-1])
    data = positional[0] if positional else keywords.get("value")
    dtype = positional[1] if len(positional) > 1 else keywords.get("dtype")
    return data is not None and _integer_literal(data) and "dtype_hint" not in keywords \
        and (dtype is None or is_integer(dtype_named(model, dtype)))


class Together:
    """What making an integer-literal constant float drags along: every
    integer-literal constant it meets (arithmetic, a comparison, the
    variables of one ``tf.while_loop``) becomes float too, and every name,
    loop parameter and loop result its values reach is followed. ``reason``
    names the first use that needs the integer (then there is no fix)."""

    def __init__(self, model, bindings):
        self.model = model
        self.constants: List = []  # the constant calls the fix makes float
        self.refused = ""  # why the last partner offered cannot become float
        self._floated: Set[int] = set()  # binding nodes that hold a float after the fix
        self._todo: List = []
        self._loops: Set[int] = set()
        self._returned: Set[int] = set()  # a while_loop body's results: the next loop variables
        unconverted = next((b for b in bindings if not self._convert(b)), None)
        self.reason = f"`{s.shown(unconverted.statement)}` (line {unconverted.line}) is not an integer literal " \
                      "constant the fix can rewrite" if unconverted is not None else None
        while self._todo and self.reason is None:
            self.reason = self._follow(*self._todo.pop())

    def accepts(self, operand) -> bool:
        """``operand`` holds a float after the fix (converted with it, or followed)."""
        bindings = bindings_read(self.model, operand) if operand.type == s.token.NAME else None
        if bindings and all(self._convert(b) for b in bindings):
            return True
        self.refused = f"`{s.shown(operand)}`, neither a float nor an integer literal constant"
        return False

    def context(self, expr):
        """What becomes of a float ``expr`` here; NOT_MINE: the plain rules decide."""
        parent = expr.parent
        if parent.type == s.syms.expr_stmt and parent.children[-1] is expr and len(parent.children) == 3:
            return self._bound(parent.children[0])
        if parent.type == s.syms.expr_stmt and parent.children[0] is expr and s.code(parent.children[1]) in _AUGMENTED:
            value = parent.children[2]
            if not float_partner(self.model, value, self):
                return f"`{s.shown(parent)}` (line {expr.get_lineno()}) meets {self.refused or 'an integer'}"
            return self._bound(expr)
        if id(expr) in self._returned:
            return None
        loop = self._loop_of(expr)
        return self._loop(loop) if loop is not None else NOT_MINE

    def _convert(self, binding) -> bool:
        """Make ``binding`` float: an integer-literal constant, or an alias
        (``same = x``) of values that all can be."""
        if id(binding.node) in self._floated:
            return True
        if binding.how != "assign" or binding.path:
            return False
        value = s.unparen(binding.value)
        if value.type == s.token.NAME:
            self._floated.add(id(binding.node))  # an alias cycle ends here
            bindings = bindings_read(self.model, value)
            if not bindings or not all(self._convert(b) for b in bindings):
                return False  # every refusal becomes the reason: no fix
            self._floated.discard(id(binding.node))
        elif _literal_constant(self.model, value):
            self.constants.append(value)
        else:
            return False
        return self._float(binding.name, binding.node) is None

    def _float(self, name: str, node) -> Optional[str]:
        if self.model.may_be_read_dynamically(name, node):
            return f"`{name}` (line {node.get_lineno()}) may be read where the model cannot see"
        if id(node) not in self._floated:
            self._floated.add(id(node))
            self._todo.append((name, node))
        return None

    def _follow(self, name: str, node) -> Optional[str]:
        """Why a read of the float binding ``node`` needs the integer; None: none does."""
        for leaf in s.name_reads(self.model.root, name):
            bindings = bindings_read(self.model, leaf)
            if not bindings or not any(b.node is node for b in bindings):
                continue
            if not all(self._convert(b) for b in bindings):
                return f"`{name}` (line {leaf.get_lineno()}) may also hold an integer made elsewhere"
            power = leaf.parent
            item = power is not None and power.type == s.syms.power and power.children[0] is leaf \
                and len(power.children) == 2 and s.code(power.children[1])[1:-1].isdigit()
            reason = unsafe_read(self.model, power if item else leaf, self)  # `out[0]` of a loop's results
            if reason:
                return reason
        return None

    def _bound(self, target) -> Optional[str]:
        targets = [target] if target.type == s.token.NAME else s.literal_elements(target) or (
            [c for c in target.children if c.type != s.token.COMMA] if target.type in _TUPLES else [])
        if not targets or any(t.type != s.token.NAME for t in targets):
            return f"`{s.shown(target)}` (line {target.get_lineno()}) stores it where the model cannot follow"
        return next(filter(None, (self._float(t.value, t) for t in targets)), None)

    def _loop_of(self, expr):
        """The ``tf.while_loop`` call whose ``loop_vars`` display holds ``expr``; else None."""
        display = expr.parent.parent if expr.parent.type in (s.syms.listmaker, s.syms.testlist_gexp) else expr.parent
        given = display.parent if display.parent.type == s.syms.argument else display  # `loop_vars=[...]` too
        call = call_passing(given) if s.literal_elements(display) else None
        trailer = given.parent.parent if given.parent.type == s.syms.arglist else given.parent
        if call is None or call.children[-1] is not trailer or self.model.callee(call) != "tensorflow.while_loop":
            return None
        positional, keywords = s.split_arguments(call.children[-1])
        return call if (positional[2] if len(positional) > 2 else keywords.get("loop_vars")) is display else None

    def _loop(self, call) -> Optional[str]:
        """Every variable of the loop becomes float: its parameters in ``cond``
        and ``body``, what ``body`` returns, and the loop's results."""
        if id(call) in self._loops:
            return None
        self._loops.add(id(call))
        positional, keywords = s.split_arguments(call.children[-1])
        named = dict(zip(("cond", "body", "loop_vars"), positional), **keywords)
        elements = s.literal_elements(named["loop_vars"])
        shown = f"`{s.shown(call)}` (line {call.get_lineno()})"
        for element in elements:
            if element.type != s.token.NAME or not float_partner(self.model, element, self):
                return f"{shown} also carries `{s.shown(element)}`, which cannot become float with it"
        for role in ("cond", "body"):
            function = self._function(named.get(role))
            params = _parameters(function) if function is not None else []
            if len(params) != len(elements):
                return f"{shown}: its {role} is not a function of this module taking the loop variables"
            reason = next(filter(None, (self._float(p.value, p) for p in params)), None)
            if reason:
                return reason
        results = _returned(self._function(named["body"]))
        if any(r is None or len(r) != len(elements) for r in results):
            return f"{shown}: its body does not return a display of the loop variables"
        self._returned.update(id(e) for r in results for e in r)
        return context_of(self.model, call, self)

    def _function(self, node):
        node = s.unparen(node) if node is not None else None
        if node is not None and node.type == s.syms.lambdef:
            return node
        bindings = bindings_read(self.model, node) if node is not None and node.type == s.token.NAME else None
        defs = {id(b.value): b.value for b in bindings or () if b.how == "def"}  # the funcdef, decorated or not
        return next(iter(defs.values())) if bindings and len(defs) == len(bindings) == 1 else None


def _parameters(function) -> List:
    """The parameter NAME leaves of a lambda or def (no defaults, no stars)."""
    params = function.children[1] if function.type == s.syms.lambdef else function.children[2].children[1]
    if params.type == s.token.NAME:
        return [params]
    if params.type != s.syms.varargslist and params.type != s.syms.typedargslist:
        return []
    return [c for c in params.children if c.type != s.token.COMMA] \
        if all(c.type in (s.token.NAME, s.token.COMMA) for c in params.children) else []


def _returned(function) -> List[Optional[List]]:
    """The elements of each value a lambda or def returns (None: not a display)."""
    if function.type == s.syms.lambdef:
        values = [function.children[-1]]
    else:
        values = [r.children[1] if len(r.children) > 1 else None for r in function.pre_order()
                  if r.type == s.syms.return_stmt and s.enclosing(r, s.syms.funcdef, s.syms.lambdef) is function]
    return [None if v is None else s.literal_elements(v) if v.type == s.syms.atom else
            [c for c in v.children if c.type != s.token.COMMA] if v.type in _TUPLES else None
            for v in values] or [None]
