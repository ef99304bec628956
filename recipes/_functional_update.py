"""assign-in-forward's unsafe fix, decided from the semantic model: the
functional update of ``V.assign(E)`` in a forward pass (a tape body or a
Keras ``call``).

    V.assign(E)       ->  new = E;      V.assign(new)
    V.assign_add(E)   ->  new = V + E;  V.assign(new)     (assign_sub: V - E)

and every later explicit read of ``V`` in the same block reads ``new``. It
is offered only when the model can see every later reader of the variable
in the body: explicit spellings of it (``v``, ``self.w``), each used where
a tensor does what the variable did; no call that may read it implicitly
(its owner, a function the fix cannot see into); no second write; no loop
around the assign in the body. ``plan`` answers an ``Update``: the fresh
name and the reads, or the reason it is not offered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Set, Tuple

from recipes._fissix import (COMPOUND, Leaf, contains, fill, fresh_name, index_of, insert_before, is_block,
                             not_an_attribute, scope_names, shown, split_arguments, statements, substitute, syms,
                             token)
from recipes._model import Kind
from recipes._model.differentiation import ASSIGNS, variable_list_owner
from recipes._model.flow import attribute_path

_LIBRARIES = ("tensorflow.", "keras.", "tf_keras.", "numpy.")
# TensorFlow / Keras functions that need the variable itself, not its value
_NEEDS_A_VARIABLE = frozenset({"assign", "assign_add", "assign_sub", "update", "update_add", "update_sub",
                               "set_value", "batch_set_value", "moving_average_update", "scatter_update",
                               "scatter_add", "scatter_sub", "scatter_nd_update", "scatter_nd_add",
                               "scatter_nd_sub", "is_variable_initialized", "variables_initializer"})
# builtins that call no code of the module (so read no variable) whatever they are given
_BUILTINS = frozenset({"print", "float", "int", "bool", "abs", "len", "range", "zip", "enumerate", "list", "tuple",
                       "dict", "set", "min", "max", "sum", "round", "str", "isinstance"})
# builtins that treat a tensor as they treat a variable
_VALUE_BUILTINS = frozenset({"print", "float", "int", "abs", "len"})
# what a read may be followed by: the same on a tensor as on a variable
_TENSOR_ATTRIBUTES = frozenset({"shape", "dtype", "get_shape", "numpy"})
_ASSIGN_KEYWORDS = frozenset({"value", "use_locking", "name", "read_value"})
_ATOMIC = (token.NAME, token.NUMBER, syms.power, syms.atom, syms.term, syms.factor)


@dataclass(eq=False, repr=False)
class Update:
    """The decision for one assign: ``name`` and ``reads`` ((node, k) as
    ``substitute`` takes them) when the fix is offered, else ``reason``."""

    name: Optional[str] = None
    reads: List[Tuple[object, int]] = field(default_factory=list)
    reason: Optional[str] = None


class _Refused(Exception):
    """Why the functional update is not offered (the message's words)."""


def plan(model, assign, body, taken: Dict[int, Set[str]]) -> Update:
    """Decide the functional update of ``assign`` (a call of
    ``V.assign*``) whose forward pass is ``body`` (a tape's suite or a
    ``call``'s); ``taken``: the names already given per scope."""
    try:
        path, reads = _decide(model, assign, body)
    except _Refused as refused:
        return Update(reason=str(refused))
    scope = model.scope_of(assign).node
    names = taken.setdefault(id(scope), scope_names(scope))
    return Update(name=fresh_name(path.rpartition(".")[2] + "_value", names), reads=reads)


def rewrite(assign, update: Update) -> None:
    """Bind the new value above the assign, store it, read it after."""
    receiver = attribute_path(assign.children[:-2])
    method = assign.children[-2].children[1]
    value = _value(assign)
    leaf = Leaf(token.NAME, update.name, prefix=value.prefix)
    value.replace(leaf)
    value.prefix = ""
    if method.value == "assign":
        new = fill(f"{update.name} = __value__\n", value=value)
    else:
        operator = "+" if method.value == "assign_add" else "-"
        operand = "__value__" if value.type in _ATOMIC else "(__value__)"
        new = fill(f"{update.name} = {receiver} {operator} {operand}\n", value=value)
        method.value = "assign"
    insert_before(assign.parent, new)
    for node, k in update.reads:
        substitute(node, k, update.name)


def _value(assign):
    positional, keywords = split_arguments(assign.children[-1])
    return positional[0] if positional else keywords["value"]


def _decide(model, assign, body) -> Tuple[str, List[Tuple[object, int]]]:
    receiver = assign.children[:-2]
    owner = variable_list_owner(model, receiver[0]) if len(receiver) == 1 else None
    if owner is not None:
        raise _Refused(f"the variable is one of `{owner}`'s weights, which calling `{owner}` reads implicitly; "
                       f"a functional call of `{owner}` is a redesign the author makes")
    path = attribute_path(receiver)
    positional, keywords = split_arguments(assign.children[-1])
    if path is None:
        raise _Refused("the variable is not spelled as a name or an attribute (`v`, `self.w`)")
    if len(positional) != (0 if "value" in keywords else 1) or set(keywords) - _ASSIGN_KEYWORDS:
        raise _Refused("the assign's arguments are not the value and its options")
    statement = assign.parent
    if statement.type != syms.simple_stmt or len(statement.children) != 2 or not is_block(statement.parent):
        raise _Refused("the assign is not a statement of its own")
    checker = _Later(model, path, assign, body)
    for node, inside in _later(statement, body):
        checker.check(node, inside)
    return path, checker.reads


def _later(statement, body) -> Iterator[Tuple[object, bool]]:
    """What runs after ``statement`` in ``body``, in order: (node, inside),
    inside when it is in the assign's own block (reached only through it)."""
    block, node, inside = statement.parent, statement, True
    while True:
        siblings = statements(block)
        for later in siblings[index_of(siblings, node) + 1:]:
            yield later, inside
        if block is body:
            return
        compound = block.parent
        if compound is not None and compound.type in (syms.for_stmt, syms.while_stmt):
            raise _Refused("the assign is inside a loop: the next round would read the old value through "
                           "the variable")
        if compound is None or compound.type not in COMPOUND or compound.type in (syms.funcdef, syms.classdef) \
                or compound.parent is None or not is_block(compound.parent):
            raise _Refused("the assign is not directly in the forward pass's body")
        for part in compound.children[compound.children.index(block) + 1:]:
            yield part, False
        block, node, inside = compound.parent, compound, False


class _Later:
    """Checks what follows the assign; collects the explicit reads."""

    def __init__(self, model, path: str, assign, body):
        self.model, self.path, self.assign, self.body = model, path, assign, body
        self.own = _own_variable(model, path, assign)
        self.head = path.partition(".")[0]
        self.parts = path.split(".")
        # bindings of the variable's spelling other than this assign: one after it binds or writes it again
        self.bindings = [b for b in model.scope_of(assign).by_name.get(path, ())
                         if b.node is not None and not (b.how == "mutation" and b.value is assign)]
        self.reads: List[Tuple[object, int]] = []

    def check(self, node, inside: bool) -> None:
        if any(contains(node, b.node) for b in self.bindings):
            raise _Refused(f"`{self.path}` is bound or written again after the assign")
        for sub in node.pre_order():
            if sub.type == token.NAME and sub.value == self.head and not_an_attribute(sub) \
                    and not _keyword_name(sub):
                self.spelled(sub, inside)
            elif sub.type == syms.power:
                self.calls(sub)

    # ------------------------------------------------------------ the variable's spellings

    def spelled(self, leaf, inside: bool) -> None:
        power = leaf.parent if leaf.parent is not None and leaf.parent.type == syms.power \
            and leaf.parent.children[0] is leaf else None
        length = len(self.parts)
        spelled = power is not None and len(power.children) >= length and all(
            _attribute(power.children[i]) == self.parts[i] for i in range(1, length))
        if length > 1 and not spelled:
            if power is None or _attribute(power.children[1]) is None:
                raise _Refused(f"`{self.head}` itself is used after the assign (what it is given may read "
                               "the variable)")
            return  # another attribute of the owner: `self.dims`
        if not inside:
            raise _Refused(f"`{self.path}` is read after the block of the assign, where the assign may not "
                           "have run")
        if _nested(leaf, self.body):
            raise _Refused(f"`{self.path}` is read in a function defined after the assign, which may run later")
        node, k = (power, length) if length > 1 else (power, 1) if power is not None else (leaf, 0)
        if k and k == len(node.children):
            k = 0
        if not any(b.how == "mutation" and b.value is self.assign
                   for b in self.model.reaching(self.path, leaf if length == 1 else node.children[length - 1])):
            raise _Refused(f"a later `{self.path}` is another binding")
        self.used_as_a_value(node, k)
        self.reads.append((node, k))

    def used_as_a_value(self, node, k: int) -> None:
        """A read the fix may replace by a tensor: followed by nothing, a
        subscript, an operator, or a tensor's attribute; passed only to
        TensorFlow, a layer or a builtin that takes a value."""
        if k:
            after = node.children[k]
            opener = after.children[0].value if after.type == syms.trailer else None
            if opener == "(" or opener == "." and _attribute(after) not in _TENSOR_ATTRIBUTES:
                raise _Refused(f"`{self.path}{shown(after)}` uses the variable itself")
            return
        call = _call_taking(node)
        if call is not None:
            power, at = call
            if not self.takes_a_value(power, at):
                raise _Refused(f"`{self.path}` is passed to `{shown(power)}`, which may need the variable itself")

    def takes_a_value(self, power, at: int) -> bool:
        callee = self.model.qualified_children(power.children[:at])
        if callee is not None and callee.startswith(_LIBRARIES):
            return callee.rpartition(".")[2] not in _NEEDS_A_VARIABLE
        head = power.children[0]
        if at == 1 and head.type == token.NAME and head.value in _VALUE_BUILTINS \
                and not self.model.reaching(head.value, head):
            return True
        return self.model.receiver_kind(power, at).kind in (Kind.LAYER, Kind.MODEL)

    # ------------------------------------------------------------ what calls after the assign may read

    def calls(self, power) -> None:
        children = power.children
        for at in range(1, len(children)):
            if children[at].type == syms.trailer and children[at].children[0].value == "(":
                self.call(power, at)

    def call(self, power, at: int) -> None:
        children, model = power.children, self.model
        earlier_call = any(c.type == syms.trailer and c.children[0].value == "(" for c in children[1:at])
        method = _attribute(children[at - 1]) if at > 1 else None
        if earlier_call:  # a method of a call's result: `tf.reduce_sum(x).numpy()`
            if method is not None and model.receiver_kind(power, at - 1).is_tensor:
                return
            raise _Refused(f"`{shown(power)}` is a call the fix cannot see into (it may read the variable)")
        callee = model.qualified_children(children[:at])
        if callee is not None and callee.startswith(_LIBRARIES):
            return
        head = children[0]
        if at == 1 and head.type == token.NAME and head.value in _BUILTINS and not model.reaching(head.value, head):
            return
        if method in ASSIGNS or method is not None and method in ("scatter_update", "scatter_add", "scatter_sub"):
            self.write(children[:at - 1], power)
            return
        if at == 2 and head.type == token.NAME and model.tape_named(head.value, power) is not None:
            return  # `tape.watch(x)`, `tape.gradient(...)`: a read of the variable there is checked as a read
        if method in _TENSOR_ATTRIBUTES and attribute_path(children[:at - 1]) == self.path:
            return  # `v.numpy()`: the read itself
        if model.receiver_kind(power, at).kind in (Kind.LAYER, Kind.MODEL):
            self.layer(children[:at], power)
            return
        if method is not None and model.receiver_kind(power, at - 1).is_tensor:
            return
        raise _Refused(f"`{shown(power)}` runs after the assign and may read the variable (the fix cannot "
                       "see into it)")

    def write(self, receiver, power) -> None:
        other = attribute_path(receiver)
        if other == self.path:
            raise _Refused(f"`{self.path}` is written again after the assign")
        if other is None or not self.own or not _own_variable(self.model, other, power):
            raise _Refused(f"`{shown(power)}` may write the same variable")

    def layer(self, callee, power) -> None:
        """A layer or model called after the assign reads its own weights:
        not the variable's owner, nor (unless the variable is provably made
        apart from every model) anything that may hold it, nor a layer of a
        class of this module (it may have been given the owner)."""
        name = attribute_path(callee)
        if name is None or self.path == name or self.path.startswith(name + "."):
            raise _Refused(f"calling `{shown(power)}` reads the variable implicitly (it holds it); a "
                           "functional call of it is a redesign the author makes")
        if not self.own:
            raise _Refused(f"`{shown(power)}` may read the variable (it may be one of its weights)")
        if not _library_instance(self.model, power, len(callee)):
            raise _Refused(f"`{shown(power)}` is a layer of this module, whose code may read `{self.path}`")


def _own_variable(model, path: str, at) -> bool:
    """Is ``path`` a variable made on its own: ``v = tf.Variable(...)``
    (every binding that reaches ``at``), or ``self.w`` that the class only
    binds to ``self.add_weight(...)``/``tf.Variable(...)``? (A weight taken
    from a model, a parameter or a sublayer's attribute may be read by any
    call of that model.)"""
    head, _, attribute = path.partition(".")
    if not attribute:
        bindings = [b for b in model.reaching(path, at) if b.how != "mutation"]
    elif "." in attribute or not _is_self(model, head, at):
        return False
    else:
        function = model.scope_of(at).node
        bindings = [b for b in model.attribute_bindings(model.method_class(function), attribute)
                    if b.how != "mutation"]
    return bool(bindings) and all(b.how == "assign" and b.value is not None and _makes_a_variable(model, b.value)
                                  for b in bindings)


def _makes_a_variable(model, value) -> bool:
    """``tf.Variable(...)`` or ``obj.add_weight(...)``: a new variable."""
    if value.type != syms.power or value.children[-1].type != syms.trailer \
            or value.children[-1].children[0].value != "(":
        return False
    callee = model.callee(value)
    if callee is not None:
        return callee.startswith(_LIBRARIES) and callee.rpartition(".")[2] == "Variable"
    return len(value.children) == 3 and _attribute(value.children[1]) in ("add_weight", "add_variable")


def _is_self(model, head: str, at) -> bool:
    function = model.scope_of(at).node
    if function.type != syms.funcdef or model.method_class(function) is None:
        return False
    bindings = model.reaching(head, at)
    return bool(bindings) and all(b.how == "param" and b.path == (0,) and b.statement is function
                                  for b in bindings)


def _library_instance(model, power, at: int) -> bool:
    """Is the layer called here made by a TensorFlow/Keras class?"""
    origin = model.receiver_kind(power, at).origin
    callee = model.callee(origin) if origin is not None and origin.type == syms.power else None
    return callee is not None and callee.startswith(_LIBRARIES)


def _attribute(node) -> Optional[str]:
    """``name`` of a ``.name`` trailer; else None."""
    if node.type == syms.trailer and node.children[0].type == token.DOT:
        return node.children[1].value
    return None


def _keyword_name(leaf) -> bool:
    parent = leaf.parent
    return parent is not None and parent.type == syms.argument and parent.children[0] is leaf \
        and len(parent.children) == 3 and parent.children[1].type == token.EQUAL


def _nested(node, body) -> bool:
    """Is ``node`` inside a lambda, def or class in ``body`` (code that runs
    when called, maybe later)?"""
    node = node.parent
    while node is not None and node is not body:
        if node.type in (syms.lambdef, syms.funcdef, syms.classdef):
            return True
        node = node.parent
    return False


def _call_taking(node) -> Optional[Tuple[object, int]]:
    """(power, index of its call trailer) when ``node`` is an argument of a call."""
    parent = node.parent
    if parent is not None and parent.type == syms.argument:
        if parent.children[-1] is not node:
            return None
        node, parent = parent, parent.parent
    if parent is not None and parent.type == syms.arglist:
        node, parent = parent, parent.parent
    if parent is None or parent.type != syms.trailer or parent.children[0].value != "(":
        return None
    power = parent.parent
    return (power, power.children.index(parent)) if power is not None and power.type == syms.power else None
