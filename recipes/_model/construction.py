"""What building an instance of a class of the module does beyond the
instance itself: the fact unused-model-instance needs before it deletes a
``name = Cls(...)`` nobody reads.

Construction runs ``__init__`` (and ``build`` when ``__init__`` calls it) of
the class and of its bases defined in the module. It touches only the
instance when every statement there binds locals or ``self.<attr>``, and
every call is ``super().__init__``, a method of the instance (the class's
own methods are followed), a Keras or TensorFlow constructor or op, or a
builtin without effects. Anything else is an effect:

- ``registers``: the instance itself (bare ``self``) is stored or passed
  outside itself (``REGISTRY.append(self)``, ``Cls.members.append(self)``,
  ``hub[name] = self``): the object is reachable, so it is used;
- ``effect``: printing or logging (output the user sees), writing files, a
  ``global`` or class attribute changed, a call the model cannot see into
  (a module function, a method of another object), an unknown base class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Set

from ._tree import syms, token

REGISTERS, EFFECT = "registers", "effect"

# builtins that only compute a value
_PURE_BUILTINS = frozenset({
    "len", "range", "int", "float", "str", "bool", "list", "dict", "tuple", "set", "frozenset",
    "min", "max", "sum", "abs", "round", "isinstance", "issubclass", "zip", "enumerate", "sorted",
    "reversed", "any", "all", "map", "filter", "super", "getattr", "hasattr", "type", "divmod", "pow",
})
# TensorFlow / Keras calls with an effect outside the object being built
_OUTSIDE = ("print", ".io.", ".summary.", "set_seed", "set_random_seed", "clear_session", "save",
            ".gfile.", "logging", "write")
_LIBRARIES = ("tensorflow.", "keras.", "tf_keras.", "numpy.")


@dataclass(eq=False, repr=False)
class Effect:
    kind: str   # REGISTERS or EFFECT
    node: object  # the statement or call that has it
    why: str


def construction_effect(model, cls, seen: Optional[Set[int]] = None) -> Optional[Effect]:
    """The first effect of building an instance of the module class ``cls``
    beyond the instance (None: it touches only ``self``)."""
    seen = set() if seen is None else seen
    if id(cls) in seen:
        return None
    seen.add(id(cls))
    for base in model.bases(cls):
        if base is None or (isinstance(base, str) and not base.startswith(_LIBRARIES)
                            and base not in ("object", "builtins.object")):
            return Effect(EFFECT, cls, "a base class it cannot see into")
        if not isinstance(base, str):
            found = construction_effect(model, base, seen)
            if found is not None:
                return found
    methods = model.methods(cls)
    init = methods.get("__init__")
    if init is None:
        return None
    return _function_effect(model, cls, init, methods, seen)


def _function_effect(model, cls, function, methods, seen: Set[int]) -> Optional[Effect]:
    if id(function) in seen:
        return None
    seen.add(id(function))
    owner = _first_parameter(function)
    if owner is None:
        return Effect(EFFECT, function, "a constructor without `self`")
    local = _locals(function, owner)
    for node in function.children[-1].pre_order():
        if node.type in (syms.global_stmt, getattr(syms, "nonlocal_stmt", -1)):
            return Effect(EFFECT, node, "it declares a global")
        if node.type in (syms.expr_stmt, syms.annassign) or _is_augmented(node):
            found = _assignment_effect(node, owner, local, cls, model)
            if found is not None:
                return found
        if node.type == syms.power and _is_call(node):
            found = _call_effect(model, cls, node, owner, local, methods, seen)
            if found is not None:
                return found
    return None


def _is_augmented(node) -> bool:
    return node.type == syms.expr_stmt and len(node.children) == 3 and node.children[1].type != token.EQUAL


def _assignment_effect(stmt, owner, local, cls, model) -> Optional[Effect]:
    if stmt.type != syms.expr_stmt:
        return None
    children = stmt.children
    targets = [children[i] for i in range(0, len(children) - 2, 2)]
    value = children[-1]
    for target in targets:
        for piece in _target_pieces(target):
            root = piece if piece.type == token.NAME else piece.children[0]
            if root.type != token.NAME:
                return Effect(EFFECT, stmt, f"`{str(stmt).strip()}` writes outside the object")
            if piece.type == token.NAME:
                continue  # binding a local name (a `global` one is caught at its declaration)
            if root.value == owner and _self_attribute_target(piece, owner, cls, model):
                continue
            if root.value in local and root.value != owner and _bare_self(value, owner):
                continue  # a local container holding the instance stays local
            kind = REGISTERS if _bare_self(value, owner) else EFFECT
            return Effect(kind, stmt, f"`{str(stmt).strip()}` writes outside the object")
    return None


def _target_pieces(target) -> List:
    if target.type in (syms.testlist_star_expr, syms.exprlist, syms.testlist_gexp, syms.atom):
        return [p for c in target.children if c.type not in (token.COMMA, token.LPAR, token.RPAR,
                                                            token.LSQB, token.RSQB)
                for p in _target_pieces(c)]
    return [target]


def _self_attribute_target(piece, owner, cls, model) -> bool:
    """``self.attr = ...`` or ``self.attr[...] = ...`` with ``attr`` not a
    class attribute (a class attribute's object is shared by every instance)."""
    if piece.type != syms.power or len(piece.children) < 2:
        return False
    first = piece.children[1]
    if first.type != syms.trailer or first.children[0].type != token.DOT:
        return False
    attr = first.children[1].value
    if attr in ("__class__", "__dict__"):
        return False
    return len(piece.children) == 2 or not _class_attribute(model, cls, attr)


def _class_attribute(model, cls, attr: str) -> bool:
    return any(b.how in ("assign", "annassign", "augassign") and model.scope_of(b.node).node is cls
               for b in model.attribute_bindings(cls, attr))


def _call_effect(model, cls, call, owner, local, methods, seen) -> Optional[Effect]:
    head, trailers = call.children[0], call.children[1:]
    text = str(call).strip()
    registers = any(_bare_self(t, owner) for t in trailers if t.children[0].type == token.LPAR)
    if head.type == token.NAME and head.value == "super":
        return None
    if head.type == token.NAME and head.value == owner:
        if trailers[0].children[0].type != token.DOT:
            return Effect(EFFECT, call, f"`{text}` calls the object")
        attr = trailers[0].children[1].value
        if len(trailers) >= 2 and trailers[1].children[0].type == token.LPAR:
            method = methods.get(attr)  # self.method(...): follow the class's own method
            if method is not None:
                return _function_effect(model, cls, method, methods, seen)
            return None  # a Keras method of the instance (add_weight, add, build)
        if _class_attribute(model, cls, attr):
            return Effect(REGISTERS if registers else EFFECT, call,
                          f"`{text}` changes the class attribute `{attr}` shared by every instance")
        return None
    if head.type == token.NAME and head.value in local and head.value != owner:
        return None  # a method of a local value
    callee = model.callee(call) or ""
    if head.type == token.NAME and head.value == "print" and not callee.startswith(_LIBRARIES):
        return Effect(EFFECT, call, f"`{text}` prints")
    if registers:
        return Effect(REGISTERS, call, f"`{text}` hands the object to code outside it")
    made = model.kind_of(call).origin
    if made is not None and made.type == syms.classdef:  # another class of the module
        return construction_effect(model, made, seen)
    if callee.startswith(_LIBRARIES):
        if any(word in callee for word in _OUTSIDE):
            return Effect(EFFECT, call, f"`{text}` has an effect outside the object")
        return None
    if head.type == token.NAME and len(trailers) == 1 and (
            head.value in _PURE_BUILTINS or head.value.endswith(("Error", "Exception"))):
        return None  # a value, or an exception to raise (building it does nothing)
    return Effect(EFFECT, call, f"`{text}` runs code not seen to touch only the object")


def _is_call(power) -> bool:
    return any(t.type == syms.trailer and t.children[0].type == token.LPAR for t in power.children[1:])


def _bare_self(node, owner: str) -> bool:
    """Does ``node`` hold ``self`` itself (not only ``self.<attr>``)?"""
    for leaf in node.leaves():
        if leaf.type == token.NAME and leaf.value == owner:
            following = leaf.next_sibling
            if following is None or following.type != syms.trailer or following.children[0].type != token.DOT:
                return True
    return False


def _locals(function, owner: str) -> Set[str]:
    """Names ``function`` binds to new values (a call or a display, never an
    alias of an outside object), and ``self``. Parameters other than
    ``self`` are outside objects: changing one is an effect."""
    names, aliases = {owner}, set()
    for node in function.children[-1].pre_order():
        if node.type == syms.expr_stmt and len(node.children) >= 3 and node.children[1].type == token.EQUAL:
            value = node.children[-1]
            fresh = value.type == syms.atom or (value.type == syms.power and _is_call(value))
            for target in node.children[:-2:2]:
                bound = {p.value for p in _target_pieces(target) if p.type == token.NAME}
                (names if fresh else aliases).update(bound)
        elif node.type == syms.for_stmt:
            aliases |= {p.value for p in _target_pieces(node.children[1]) if p.type == token.NAME}
    return names - aliases | {owner}


def _first_parameter(function) -> Optional[str]:
    parameters = function.children[2].children[1:-1]
    if not parameters:
        return None
    first = parameters[0]
    if first.type == syms.typedargslist:
        first = first.children[0]
    if first.type == syms.tname:
        first = first.children[0]
    return first.value if first.type == token.NAME else None
