"""integer-source: gradients asked through an integer variable, weight or
watched tensor.

What it does:
- ``w = tf.Variable(5)`` (or ``dtype=tf.int32``) whose name is a source of
  ``tape.gradient``/``minimize`` becomes ``tf.Variable(5.0)`` (or
  ``dtype=tf.float32``);
- ``self.add_weight(..., dtype=tf.int32)`` (or ``"int64"``...) of a trainable
  weight becomes ``dtype=tf.float32``;
- ``tape.watch(i)`` of an integer tensor made by ``i = tf.constant(1)`` (an
  integer literal) becomes ``tf.constant(1.0)`` (or ``dtype=tf.float32``),
  together with every integer-literal constant it meets in arithmetic, a
  comparison or the variables of one ``tf.while_loop`` (UNSAFE);
- any other watched integer tensor, and an integer tensor given as a source
  of ``tape.gradient`` without a watch, are reported.

Why this is a bug: gradients are only defined for floating (and complex)
dtypes. A tape does not record operations on integer tensors, so
``tape.gradient`` returns None for an integer variable and the optimizer
says "No gradients provided for any variable"; a Python int literal
(``tf.Variable(3)``) makes an int32 variable.

Example::

    w = tf.Variable(5)
    ...
    grads = tape.gradient(loss, [w])    # [None]
    # becomes
    w = tf.Variable(5.0)

Safe when every read of the variable is one a float variable serves the
same way: a gradient source, arithmetic with Python numbers or floating
tensors, a ``tf.*`` math op or ``tf.cast``, printing. Anything else
(indexing with it, ``range(w)``, ``//``, ``%``, a function of the module or
an integer tensor operand) makes the fix unsafe, and the message names it.
For a layer's weight (``add_weight`` or ``self.w = tf.Variable(...)``) the
reads are those of ``self.<attr>`` in the class's methods. Arithmetic with
one of ``call``'s inputs (``inputs * self.w``) makes it report only: Keras
casts only floating inputs and TensorFlow's arithmetic wants one dtype, so
where the integer weight worked that input was integer, and a float weight
alone would fail there with a dtype mismatch.

CAVEATS:
- Only variables bound to a name or ``self.<attr>`` are followed; a variable
  built in a list or returned by a function is not seen.
- ``trainable=False`` integer variables (step counters) are never reported.
- A watched integer constant is made float only when every constant it
  meets is an integer literal the fix rewrites too, and no use of theirs
  (followed through names, ``tf.while_loop``'s ``cond``/``body`` and its
  results) needs an integer: an index, ``tf.range``, a shape, ``tf.gather``
  indices, an integer tensor it meets or is compared with; otherwise a
  report names that use. Unsafe: every value it meets becomes float (a
  printed or compared value reads 1.0, not 1).
- An integer tensor differentiated without a watch is only reported: making
  it float does not make the tape record it (unwatched-source's finding).
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Set, Union

from migrate.recipe import Recipe, SourceFacts, propose, walk
from recipes import _fissix as s
from recipes._model import Kind, model_of
from recipes._model.dtypes import dtype_named, dtype_of, is_floating, is_integer
from recipes._model.sources import gradient_arguments, gradient_of_tape, same_tensor
from recipes._pyast import code_text, keras_classes, statements, tapes

VARIABLE = "power< any* trailer< '.' 'Variable' > trailer< '(' any* ')' > >"
BARE_VARIABLE = "power< 'Variable' trailer< '(' any* ')' > >"
ADD_WEIGHT = "power< any* trailer< '.' 'add_weight' > trailer< '(' any* ')' > >"
WATCH = "power< tape=NAME trailer< '.' method='watch' > trailer< '(' any ')' > >"
GRADIENT = "power< tape=NAME trailer< '.' method='gradient' > trailer< '(' arglist ')' > any* >"
_SOURCE_METHODS = {"gradient", "minimize", "jacobian"}
_ARITHMETIC = {"+", "-", "*", "/", "**"}


def _tf_module(model, call) -> Optional[str]:
    """How this module spells tensorflow: the callee's module, else an alias of it."""
    callee = s.call_parts(call)
    if callee and "." in callee[0]:
        return callee[0].rsplit(".", 1)[0]
    return min(model.imports.aliases("tensorflow"), default=None)


def _trainable(keywords) -> bool:
    flag = keywords.get("trainable")
    return flag is None or s.code(flag) != "False"


def _assigned_key(call) -> Optional[str]:
    """``w`` of ``w = tf.Variable(...)``, ``self.w`` of ``self.w = ...``."""
    stmt = call.parent
    if stmt is None or stmt.type != s.syms.expr_stmt or len(stmt.children) != 3 or stmt.children[2] is not call:
        return None
    target = stmt.children[0]
    if s.is_name(target):
        return target.value
    return s.code(target) if target.type == s.syms.power and s.dotted_name(target) else None


# ---------------------------------------------------------------- tf.Variable

def _integer_variable(node, capture, filename) -> bool:
    model = model_of(node)
    if model.callee(node) != "tensorflow.Variable":
        return False
    positional, keywords = s.split_arguments(node.children[-1])
    if not _trainable(keywords) or not is_integer(dtype_of(model, node)):
        return False
    key = _assigned_key(node)
    if key is None:
        return False
    if "." in key:
        owner = _keras_owner(model, node)
        if owner is None or not key.startswith("self."):
            return False
        capture["reasons"] = _attribute_reasons(model, owner, key[len("self."):])  # Keras differentiates it
        capture["blocked"] = _meets_call_input(model, owner, key[len("self."):])
    else:
        reads = [leaf for leaf in s.name_reads(s.scope_of(node), key)
                 if any(b.node is node.parent.children[0] for b in model.reaching(key, leaf))]
        if not any(_is_gradient_source(model, leaf) for leaf in reads):
            return False
        capture["reasons"] = [r for r in (_unsafe_read(model, leaf) for leaf in reads) if r]
    capture["positional"], capture["keywords"] = positional, keywords
    return True


def _is_gradient_source(model, leaf) -> bool:
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
                    and method.children[1].value in _SOURCE_METHODS:
                parts = gradient_arguments(power) if method.children[1].value == "gradient" else None
                positional, _ = s.split_arguments(parent)
                sources = parts[1] if parts else positional[1] if len(positional) > 1 else None
                return sources is not None and s.contains(sources, leaf)
        node = parent
    return False


def _is_gradient_operand(model, leaf) -> bool:
    """A source (``_is_gradient_source``) or the target of ``x.gradient(target, ...)``."""
    if _is_gradient_source(model, leaf):
        return True
    call = _call_passing(leaf)
    if call is None or not any(s.code(c) == ".gradient" for c in call.children):
        return False
    parts = gradient_arguments(call)
    return parts is not None and parts[0] is leaf


def _unsafe_read(model, leaf, joins=None) -> Optional[str]:
    """Why a float value would not serve this read as the integer one did;
    ``joins``: the integer constants converted with it (``_Together``)."""
    if _is_gradient_operand(model, leaf) or _in_tensorflow_call(model, leaf) or _applied(leaf):
        return None
    parent = leaf.parent
    if parent.type in (s.syms.arith_expr, s.syms.term, s.syms.comparison):
        ops = {s.code(op) for op in parent.children[1::2]}
        others = [o for o in parent.children[::2] if s.code(o) != s.code(leaf)]  # itself: float too
        refused = next((o for o in others if not _float_partner(model, o, joins)), None)
        if refused is not None and joins is not None and joins.refused:
            return f"`{s.shown(parent)}` (line {leaf.get_lineno()}) meets {joins.refused}"
        if refused is None and parent.type == s.syms.comparison:
            return None  # a truth value, whatever the operands' dtype
        if refused is None and ops <= _ARITHMETIC:
            return _unsafe_read(model, parent, joins) if parent.parent.type in (s.syms.arith_expr, s.syms.term) \
                else _context_of(model, parent, joins)
        return f"`{s.shown(parent)}` (line {leaf.get_lineno()}) may rely on the integer dtype"
    if parent.type == s.syms.power and parent.children[0] is leaf and len(parent.children) == 3 \
            and s.code(parent.children[1]) in (".numpy", ".assign", ".assign_add", ".assign_sub"):
        args = s.call_args(parent.children[2])
        if s.code(parent.children[1]) == ".numpy" or all(_never_an_integer_tensor(model, a) for a in args):
            return None
    return _context_of(model, leaf, joins)


def _float_partner(model, operand, joins) -> bool:
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


def _context_of(model, expr, joins=None) -> Optional[str]:
    """An arithmetic result is fine as an assignment's value, a tf.* argument
    or printed; with ``joins``, what a name bound to it or a loop does with it decides."""
    parent = expr.parent
    if joins is not None:
        handled = joins.context(expr)
        if handled is not _NOT_MINE:
            return handled
    elif parent.type == s.syms.expr_stmt and parent.children[-1] is expr:
        return None
    if _in_tensorflow_call(model, expr):
        return None
    call = _call_passing(expr)
    if call is not None:
        return f"`{s.shown(call)}` (line {expr.get_lineno()}) passes it to code that may rely on the integer dtype"
    shown = parent.parent if parent.type in (s.syms.trailer, s.syms.listmaker, s.syms.testlist_gexp) \
        else parent  # `table[i]`, not `[i]`; `[n, 2]`, not `n, 2`
    return f"`{s.shown(shown)}` (line {expr.get_lineno()}) may rely on the integer dtype"


def _call_passing(expr):
    """The call ``expr`` is an argument of; None when it is not one."""
    parent = expr.parent
    if parent.type == s.syms.arglist:
        parent = parent.parent
    return parent.parent if parent.type == s.syms.trailer and parent.children[0].type == s.token.LPAR else None


def _in_tensorflow_call(model, expr) -> bool:
    """``expr`` is an argument of a ``tf.*`` op (not one that wants integers) or of print()."""
    call = _call_passing(expr)
    if call is None:
        return False
    callee = model.callee(call) or ""
    if model.kind_of(call.children[0]).what == "builtin:print":
        return True
    return callee.startswith("tensorflow.") and callee.rsplit(".", 1)[1] not in (
        "range", "one_hot", "gather", "tile", "reshape", "fill", "zeros", "ones", "while_loop")


def _float_variable(node, capture, filename) -> None:
    model = model_of(node)
    positional, keywords = capture["positional"], capture["keywords"]
    reasons = capture["reasons"]
    what = s.code(node.parent.children[0])
    problem = (f"`{what}` is an integer tf.Variable ({dtype_of(model, node)}) that gradients are asked for: "
               "a tape records no gradient through integers, so its gradient is None")
    safety, why = (None, "") if not reasons else ("unsafe", f"; unsafe: {reasons[0]}")
    module = _tf_module(model, node)
    if capture.get("blocked"):
        propose(node, f"{problem}: make it float, {capture['blocked']}", fixable=False)
    elif module is None:
        propose(node, f"{problem}: make it float", fixable=False)
    elif propose(node, f"{problem}: make it float{why}", safety=safety):
        _make_float(module, node, positional, keywords)


def _make_float(module: str, call, positional, keywords, dtype_at: Optional[int] = None) -> None:
    """``dtype_at``: the position of a positional dtype (``tf.constant(1, tf.int32)``)."""
    dtype = positional[dtype_at] if dtype_at is not None and len(positional) > dtype_at else keywords.get("dtype")
    if dtype is not None:
        s.replace_with(dtype, s.parse_expression(f"{module}.float32"))
        return
    first = s.unparen(positional[0]) if positional else None
    if first is not None and first.type == s.token.NUMBER and re.fullmatch(r"\d[\d_]*", first.value):
        first.value = f"{first.value}.0"
        first.changed()
        return
    trailer = call.children[-1]
    arglist = trailer.children[1] if len(trailer.children) == 3 else None
    text = f"{str(arglist).strip()}, dtype={module}.float32" if arglist is not None else f"dtype={module}.float32"
    s.replace_with(trailer, s.parse_expression(f"f({text})").children[1])


# ---------------------------------------------------------------- add_weight

def _keras_owner(model, node):
    """The Keras layer or model class whose method ``node`` is in; else None."""
    function = model.scope_of(node).node
    owner = model.method_class(function) if function.type == s.syms.funcdef else None
    return owner if owner is not None and model.keras_role(owner) else None


def _attribute_reasons(model, cls, attr: str) -> List[str]:
    """Why a float weight would not serve each read of ``self.<attr>`` in ``cls``'s methods."""
    reasons = []
    for function in model.methods(cls).values():
        for node in function.pre_order():
            kids = node.children if node.type == s.syms.power else ()
            if len(kids) < 2 or not s.is_name(kids[0], "self") or s.code(kids[1]) != f".{attr}":
                continue
            if node.parent.type == s.syms.expr_stmt and node.parent.children[0] is node:
                continue  # the binding itself
            reason = _unsafe_read(model, node) if len(kids) == 2 else \
                f"`{s.shown(node)}` (line {node.get_lineno()}) may rely on the integer dtype"
            if reason:
                reasons.append(reason)
    return reasons


def _meets_call_input(model, cls, attr: str) -> Optional[str]:
    """Why no dtype change alone is right: ``call`` does arithmetic between
    ``self.<attr>`` and one of its inputs. Keras casts only floating inputs,
    and TensorFlow's arithmetic wants one dtype, so wherever the integer
    weight worked that input was integer: a float weight would raise a dtype
    mismatch there; the input must become float too, the author's call."""
    call = model.methods(cls).get("call")
    if call is None:
        return None
    inputs = {leaf.value for leaf in s.name_leaves(call.children[2]) if leaf.value != "self"}
    for node in call.pre_order():
        kids = node.children if node.type == s.syms.power else ()
        if len(kids) != 2 or not s.is_name(kids[0], "self") or s.code(kids[1]) != f".{attr}" \
                or node.parent.type not in (s.syms.arith_expr, s.syms.term):
            continue
        met = [o for o in node.parent.children[::2] if o.type == s.token.NAME and o.value in inputs]
        if met:
            return (f"and `{met[0].value}` with it (`{s.shown(node.parent)}`, line {node.get_lineno()}): Keras "
                    "does not cast integer inputs, so the float weight would meet an integer tensor (a dtype "
                    "mismatch); no fix offered")
    return None


def _integer_weight(node, capture, filename) -> bool:
    model = model_of(node)
    if not s.is_name(node.children[0], "self") or len(node.children) != 3:
        return False
    owner = _keras_owner(model, node)
    _, keywords = s.split_arguments(node.children[-1])
    dtype = keywords.get("dtype")
    key = _assigned_key(node)
    if owner is None or dtype is None or not _trainable(keywords) or not is_integer(dtype_named(model, dtype)):
        return False
    capture["reasons"] = _attribute_reasons(model, owner, key[len("self."):]) \
        if key and key.startswith("self.") else ["the weight is not bound to an attribute of the layer"]
    capture["blocked"] = _meets_call_input(model, owner, key[len("self."):]) \
        if key and key.startswith("self.") else None
    return True


def _float_weight(node, capture, filename) -> None:
    model = model_of(node)
    dtype = s.split_arguments(node.children[-1])[1]["dtype"]
    reasons = capture["reasons"]
    why = f"; unsafe: {reasons[0]}" if reasons else ""
    if dtype.type == s.token.STRING:
        replacement = '"float32"'
    else:
        spelled = s.code(dtype)
        module = spelled.rsplit(".", 1)[0] if "." in spelled else _tf_module(model, node)
        replacement = f"{module}.float32" if module else None
    message = (f"a trainable weight of integer dtype ({dtype_named(model, dtype)}): a tape records no gradient "
               "through integers, so training gets None for it (\"No gradients provided\"): make it float")
    if capture["blocked"]:
        propose(node, f"{message}, {capture['blocked']}", fixable=False)
    elif replacement is None:
        propose(node, message, fixable=False)
    elif propose(node, message + why, safety="unsafe" if reasons else None):
        s.replace_with(dtype, s.parse_expression(replacement))


# ---------------------------------------------------------------- integer tensors watched or differentiated

_NOT_MINE = object()  # _Together.context: a use the plain rules of _context_of judge
_LITERAL_MAKERS = {"tensorflow.constant", "tensorflow.convert_to_tensor"}
_AUGMENTED = {"+=", "-=", "*=", "/="}
_TUPLES = (s.syms.testlist, s.syms.testlist_star_expr, s.syms.exprlist)  # `a, b` without brackets


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
    if value is None or value.type != s.syms.power or model.callee(value) not in _LITERAL_MAKERS:
        return False
    positional, keywords = s.split_arguments(value.children[-1])
    data = positional[0] if positional else keywords.get("value")
    dtype = positional[1] if len(positional) > 1 else keywords.get("dtype")
    return data is not None and _integer_literal(data) and "dtype_hint" not in keywords \
        and (dtype is None or is_integer(dtype_named(model, dtype)))


class _Together:
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
        bindings = self.model.index.reads.get(id(operand)) if operand.type == s.token.NAME else None
        if bindings and all(self._convert(b) for b in bindings):
            return True
        self.refused = f"`{s.shown(operand)}`, neither a float nor an integer literal constant"
        return False

    def context(self, expr):
        """What becomes of a float ``expr`` here; _NOT_MINE: the plain rules decide."""
        parent = expr.parent
        if parent.type == s.syms.expr_stmt and parent.children[-1] is expr and len(parent.children) == 3:
            return self._bound(parent.children[0])
        if parent.type == s.syms.expr_stmt and parent.children[0] is expr and s.code(parent.children[1]) in _AUGMENTED:
            value = parent.children[2]
            if not _float_partner(self.model, value, self):
                return f"`{s.shown(parent)}` (line {expr.get_lineno()}) meets {self.refused or 'an integer'}"
            return self._bound(expr)
        if id(expr) in self._returned:
            return None
        loop = self._loop_of(expr)
        return self._loop(loop) if loop is not None else _NOT_MINE

    def _convert(self, binding) -> bool:
        if id(binding.node) in self._floated:
            return True
        if binding.how != "assign" or binding.path or not _literal_constant(self.model, binding.value):
            return False
        self.constants.append(binding.value)
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
            bindings = self.model.index.reads.get(id(leaf))
            if not bindings or not any(b.node is node for b in bindings):
                continue
            if not all(self._convert(b) for b in bindings):
                return f"`{name}` (line {leaf.get_lineno()}) may also hold an integer made elsewhere"
            power = leaf.parent
            item = power is not None and power.type == s.syms.power and power.children[0] is leaf \
                and len(power.children) == 2 and s.code(power.children[1])[1:-1].isdigit()
            reason = _unsafe_read(self.model, power if item else leaf, self)  # `out[0]` of a loop's results
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
        call = _call_passing(display) if s.literal_elements(display) else None
        if call is None or self.model.callee(call) != "tensorflow.while_loop":
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
            if element.type != s.token.NAME or not _float_partner(self.model, element, self):
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
        return _context_of(self.model, call, self)

    def _function(self, node):
        node = s.unparen(node) if node is not None else None
        if node is not None and node.type == s.syms.lambdef:
            return node
        bindings = self.model.index.reads.get(id(node)) if node is not None and node.type == s.token.NAME else None
        defs = {id(b.statement): b.statement for b in bindings or () if b.how == "def"}
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


def _integer_tensors(node, capture, filename) -> bool:
    """``tape.watch(i)`` of integer tensors, or ``tape.gradient(y, i)`` with
    integer tensor sources the tape does not watch; a watched one made from
    an integer literal gets the constants to make float with it, or why not."""
    model = model_of(node)
    if capture["method"].value == "watch":
        tape = model.tape_named(capture["tape"].value, capture["tape"])
        args = s.call_args(node.children[-1])
        if tape is None or len(args) != 1:
            return False
        candidates, watched = s.literal_elements(s.unparen(args[0])) or [args[0]], set()
    else:
        found = gradient_of_tape(model, node, capture["tape"])
        if found is None:
            return False
        candidates = [src for src in map(s.unparen, found[1][2]) if s.is_name(src)]
        watched = {same_tensor(model, s.unparen(a)) for a in found[0].watch_arguments()}
    capture["found"] = [a for a in candidates if same_tensor(model, a) not in watched
                        and model.kind_of(a).kind is Kind.TENSOR and is_integer(dtype_of(model, a))]
    capture["together"] = [_Together(model, model.index.reads.get(id(a)) or [])
                           if capture["method"].value == "watch" and a.type == s.token.NAME else None
                           for a in capture["found"]]
    return bool(capture["found"])


def _report_tensors(node, capture, filename) -> None:
    model = model_of(node)
    what = "watching it records nothing, gradients" if capture["method"].value == "watch" else "gradients"
    made = set()
    for expr, together in zip(capture["found"], capture["together"]):
        problem = (f"`{s.shown(expr)}` is an integer tensor ({dtype_of(model, expr)}): {what} are only defined "
                   "for floating dtypes, so the gradient with respect to it is None")
        module = _tf_module(model, together.constants[0]) if together and together.constants else None
        if together is None or module is None or together.reason:
            why = f"; no fix: {together.reason}" if together and together.reason else ""
            propose(expr, f"{problem}; make the value float (a float constant, or tf.cast before the tape) where "
                          f"the code that reads it allows, and compute from it in the tape{why}", fixable=False)
            continue
        listed = ", ".join(f"`{s.shown(c.parent)}` (line {c.get_lineno()})" for c in together.constants)
        if propose(expr, f"{problem}: make {listed} float; unsafe: the values it meets become float too (a "
                         "printed or compared value reads 1.0, not 1)", safety="unsafe"):
            for call in together.constants:
                if id(call) not in made:
                    made.add(id(call))
                    positional, keywords = s.split_arguments(call.children[-1])
                    _make_float(module, call, positional, keywords, dtype_at=1)


# an integer dtype as spelled: "int32", tf.int64, np.uint8, "int" (a string: dtype_named's integer names)
_INTEGER_DTYPE = re.compile(r"[\"']u?int\d*[\"']|\bu?int\d+\b")


def _may_differentiate_an_integer(facts: SourceFacts) -> Union[bool, List[ast.AST]]:
    """Precheck: a tape (a watch or a gradient, and the variables it
    differentiates), a variable named where minimize/var_list may take it;
    else the classes that may be Keras layers and build a ``Variable`` or an
    ``add_weight`` (an integer dtype spelled in the file)."""
    code = code_text(facts)
    if tapes(facts) or "Variable(" in code and ("minimize(" in code or "var_list" in code):
        return True
    wanted = ("Variable(",) + (("add_weight(",) if _INTEGER_DTYPE.search(facts.text) else ())
    if not any(token in code for token in wanted) or not keras_classes(facts):
        return []
    names = {token[:-1] for token in wanted}
    return [stmt.node for stmt in statements(facts, ast.ClassDef) if stmt.node.name in keras_classes(facts)
            and any(isinstance(call, ast.Call) and (getattr(call.func, "attr", None) or getattr(call.func, "id", None))
                    in names for call in walk(stmt.node))]


RECIPE = Recipe(
    id="integer-source",
    summary="tf.Variable(3) / add_weight(dtype=tf.int32) differentiated -> float; a watched tf.constant(1) -> "
            "1.0 (unsafe)",
    safety="safe",
    query=lambda q: (q.select(VARIABLE).filter(_integer_variable).modify(_float_variable)
                     .select(BARE_VARIABLE).filter(_integer_variable).modify(_float_variable)
                     .select(ADD_WEIGHT).filter(_integer_weight).modify(_float_weight)
                     .select(WATCH).filter(_integer_tensors).modify(_report_tensors)
                     .select(GRADIENT).filter(_integer_tensors).modify(_report_tensors)),
    tokens=("Variable(", "add_weight(", ".watch(", ".gradient("),
    precheck=_may_differentiate_an_integer,
    before_fails="none-gradient",
)
