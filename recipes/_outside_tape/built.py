"""outside-tape (e): a tensor computed from a trainable weight in a Keras
``build()`` and read by ``call()`` holds the weight's value at build time;
reported, with the way out (recipes/outside_tape.py)."""

from __future__ import annotations

import ast
from typing import Dict, List, Set

from migrate.recipe import SourceFacts, propose, walk
from recipes import _fissix as s
from recipes._model import Kind, model_of
from recipes._pyast import defines, keras_classes, on_self, statements

_SHAPE_ATTRIBUTES = {"shape", "dtype", "get_shape", "name", "trainable"}
_SHAPE_CALLS = {"shape", "ones_like", "zeros_like", "size", "rank", "shape_n", "len"}


def built(node, capture, filename) -> None:
    """``self.t = <op on self.w>`` in a Keras ``build``, read by ``call``:
    computed once, from the weights' values then."""
    function = s.enclosing(node, s.syms.funcdef)
    if function is None or function.children[1].value != "build" or len(node.children) != 3:
        return  # asked before the model is built: most files assign `self.x` outside build()
    model = model_of(node)
    cls = model.method_class(function)
    if cls is None or not model.keras_role(cls):
        return
    attr, value = node.children[0].children[1].children[1].value, node.children[2]
    plain = s.unparen(value)
    if _makes_variable(model, value) or plain.type == s.syms.power and len(plain.children) == 2 \
            or model.kind_of(value).kind in (Kind.MODEL, Kind.LAYER, Kind.OTHER):
        return  # the variable itself, an alias of an attribute, a layer built here
    weights = sorted({path for path in _self_paths(value, values_only=True)
                      if any(_makes_variable(model, b.value) for b in model.attribute_bindings(cls, path)
                             if b.value is not None)})
    call = model.methods(cls).get("call")
    if not weights or call is None or attr not in _self_paths(call):
        return
    names = ", ".join(f"`self.{w}`" for w in weights)
    propose(node, f"`self.{attr}` is computed from the weights {names} once, in build(): call() reads a "
                  "constant tensor holding their values at build time, so those weights get no gradient "
                  "through it; compute it in call() from the weights", fixable=False)



def _makes_variable(model, value) -> bool:
    """``self.add_weight(...)`` (trainable) or ``tf.Variable(...)``."""
    value = s.unparen(value)
    parts = s.call_parts(value)
    if parts and parts[0].rpartition(".")[2] in ("add_weight", "add_variable"):
        trainable = parts[2].get("trainable")
        return trainable is None or s.code(trainable) != "False"
    return model.kind_of(value).kind is Kind.VARIABLE



def _self_paths(node, values_only: bool = False) -> Set[str]:
    """The ``x`` of every ``self.x`` read in ``node``; ``values_only``: not
    those read for their shape or dtype only (``self.x.shape``,
    ``tf.ones_like(self.x)``)."""
    found = set()
    for leaf in node.leaves():
        trailer = leaf.next_sibling
        if not (s.is_name(leaf, "self") and trailer is not None and trailer.type == s.syms.trailer
                and trailer.children[0].type == s.token.DOT):
            continue
        if values_only and (_shape_only(trailer.next_sibling) or _in_shape_call(leaf.parent)):
            continue
        found.add(trailer.children[1].value)
    return found



def _shape_only(trailer) -> bool:
    return trailer is not None and trailer.type == s.syms.trailer and trailer.children[0].type == s.token.DOT \
        and trailer.children[1].value in _SHAPE_ATTRIBUTES



def _in_shape_call(power) -> bool:
    """Is ``power`` an argument of ``tf.shape(...)``, ``tf.ones_like(...)``...?"""
    node = power.parent
    while node is not None and node.type in (s.syms.arglist, s.syms.argument):
        node = node.parent
    if node is None or node.type != s.syms.trailer or node.children[0].type != s.token.LPAR:
        return False
    callee = node.prev_sibling
    name = callee.children[1].value if callee.type == s.syms.trailer and callee.children[0].type == s.token.DOT \
        else callee.value if callee.type == s.token.NAME else ""
    return name in _SHAPE_CALLS


def classes_building_tensors(facts: SourceFacts) -> List[ast.ClassDef]:
    """Precheck: the classes that may be Keras layers (``keras_classes``)
    whose ``build`` assigns ``self.x`` a value that reads another ``self.y``
    and is not what ``built`` leaves alone on its face (the attribute itself,
    ``f(...)`` or ``a[...]`` of a plain name, a trainable ``add_weight``),
    where a ``call`` of the class reads ``self.x``."""
    if not defines(facts, "build") or not defines(facts, "call"):
        return []
    keras = keras_classes(facts)
    methods: Dict[int, Dict[str, List[ast.AST]]] = {}
    for found in statements(facts, ast.FunctionDef, ast.AsyncFunctionDef):
        if found.cls is not None and found.cls.name in keras and found.node.name in ("build", "call"):
            methods.setdefault(id(found.cls), {}).setdefault(found.node.name, []).append(found.node)
    found_classes = []
    for cls in (found.node for found in statements(facts, ast.ClassDef)):
        named = methods.get(id(cls), {})
        read = {node.attr for call in named.get("call", ()) for node in walk(call) if on_self(node)}
        if any(isinstance(node, ast.Assign) and _self_target(node) and node.targets[0].attr in read
               and _may_build_from_weights(node.value)
               for build in named.get("build", ()) for node in walk(build)):
            found_classes.append(cls)
    return found_classes


def _self_target(node: ast.Assign) -> bool:
    return len(node.targets) == 1 and on_self(node.targets[0])


def _may_build_from_weights(value) -> bool:
    """Not ruled out on its face by ``built``: reads ``self.y``, and is not
    ``self.y`` itself, ``f(...)`` / ``a[...]`` of a name (a power of two
    children) or an ``add_weight``/``add_variable`` not given ``trainable=False``."""
    if isinstance(value, ast.Attribute) or isinstance(value, (ast.Call, ast.Subscript)) and isinstance(
            value.func if isinstance(value, ast.Call) else value.value, ast.Name):
        return False
    if isinstance(value, ast.Call) and (getattr(value.func, "attr", None) or getattr(value.func, "id", None)) \
            in ("add_weight", "add_variable") and not any(
                k.arg == "trainable" and isinstance(k.value, ast.Constant) and k.value.value is False
                for k in value.keywords):
        return False
    return any(on_self(node) for node in walk(value))
