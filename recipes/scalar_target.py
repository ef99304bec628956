"""scalar-target: differentiate one model output, not all of them at once.

What it does: in ``tape.gradient(target, x)`` where ``x`` is watched (an
attribution or saliency computation, not a training step) and ``target`` is a
call of a Keras model ``model(...)`` on the watched input (directly, or
through a name bound to it in the tape), the target output is selected:
``model(...)[:, t]`` with ``t`` from ``--target-index`` (default 0).

Why this is a bug: ``tape.gradient`` of a non-scalar target does not return
None (the seed says it does): it differentiates the sum of every output, so
the gradient mixes all classes (and for a softmax the classes cancel: the sum
is constant and the gradient is ~0). Attributions then explain no class at
all and completeness fails against the class that was meant.

Example::

    with tf.GradientTape() as tape:
        tape.watch(x)
        pred = model(x)
    grads = tape.gradient(pred, x)
    # becomes (--target-index 0)
        pred = model(x)[:, 0]

Unsafe: which output is the target is the user's choice.

What counts as a model (the callee of the target call):
- a name or ``self.<attr>`` spelled like a model: ``model``, ``net``,
  ``classifier``, or ending in ``_model`` (``base_model``, ``self.model``);
- a name bound in scope (or ``self.<attr>`` assigned in the class) to
  ``Model(...)``, ``Sequential(...)`` (any prefix: ``tf.keras.Model``),
  ``load_model(...)``, ``clone_model(...)`` or a class of the same file that
  subclasses ``Model``/``Sequential``; one name may alias another
  (``m = model``).

CAVEATS:
- Summing the outputs is exactly right for an element-wise function
  (``tape.gradient(tf.exp(x), x)``) and for a vector of per-example losses,
  so any other callee is left alone, even a model under another name
  (``lstm(x)`` where ``lstm`` is a parameter) or a model built by a factory
  (``keras.applications.ResNet50()``).
- A name spelled like a model is trusted: ``net = tf.nn.relu`` is taken for
  a model.
- Left alone when ``output_gradients`` is passed (positionally or by name, or
  possibly through ``*args``/``**kwargs``): those weights already pick what
  is differentiated. Left alone when the target is named like a loss or the
  callee's name contains ``loss``.
- The model output is assumed to be ``(batch, outputs)``; a model with
  several outputs (a list) or a rank-1 output needs another selection.
"""

from __future__ import annotations

import re
from typing import List, Optional, Set

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, option, propose
from recipes import _fissix as s
from recipes._pyast import method_calls, tapes

_MODEL_LIKE = re.compile(r"^(model|net|classifier|\w+_model)$")
_MODEL_CLASSES = {"Model", "Sequential"}
_MODEL_FACTORIES = {"load_model", "clone_model"}
_ALIAS_DEPTH = 3


def _bases(classdef) -> List[str]:
    """Last components of the dotted base classes of a ``class`` statement."""
    kids = classdef.children
    if len(kids) < 4 or kids[2].type != token.LPAR or kids[3].type == token.RPAR:
        return []
    arguments = kids[3]
    items = [c for c in arguments.children if c.type != token.COMMA] \
        if arguments.type == s.syms.arglist else [arguments]
    names = (s.dotted_name(item) for item in items if s.keyword_arg(item) is None)
    return [name.split(".")[-1] for name in names if name]


def model_classes(tree) -> Set[str]:
    """Names of the classes of this file that subclass Model/Sequential (directly or not)."""
    bases = {node.children[1].value: set(_bases(node)) for node in s.nodes_of_type(tree, s.syms.classdef)}
    found: Set[str] = set()
    while True:
        more = {name for name, parents in bases.items() if parents & (_MODEL_CLASSES | found)} - found
        if not more:
            return found
        found |= more


def _builds_model(value, classes: Set[str]) -> bool:
    value = s.unparen(value)
    call = s.split_call(value) if value.type == s.syms.power else None
    if not call:
        return False
    last = call[0].split(".")[-1]
    return last in _MODEL_CLASSES or last in _MODEL_FACTORIES or last in classes


def _self_attribute_is_model(attr: str, at, classes: Set[str]) -> bool:
    """Is ``self.<attr>`` assigned a model anywhere in the class around ``at``?"""
    owner = s.enclosing(at, s.syms.classdef)
    if owner is None:
        return False
    for stmt in owner.pre_order():
        pair = s.simple_assignment(stmt) if stmt.type == s.syms.simple_stmt else None
        if pair and s.dotted_name(pair[0]) == f"self.{attr}" and _builds_model(pair[1], classes):
            return True
    return False


def is_model(callee: str, at, classes: Set[str], depth: int = _ALIAS_DEPTH) -> bool:
    """Is the dotted ``callee`` called at node ``at`` a Keras model (see the docstring's rule)?"""
    parts = callee.split(".")
    if len(parts) == 2 and parts[0] == "self":
        return bool(_MODEL_LIKE.match(parts[1])) or _self_attribute_is_model(parts[1], at, classes)
    if len(parts) != 1:
        return False
    if _MODEL_LIKE.match(callee):
        return True
    stmt = s.enclosing_statement(at)
    value = s.reaching_value(callee, stmt) if stmt is not None else None
    if value is None:
        return False
    if _builds_model(value, classes):
        return True
    value = s.unparen(value)
    return depth > 0 and s.is_name(value) and is_model(value.value, stmt, classes, depth - 1)


def _model_call(node, watched: List[str], classes: Set[str]) -> bool:
    """Is ``node`` exactly ``model(args)`` with a watched expression in the args?"""
    node = s.unparen(node)
    call = s.split_call(node) if node.type == s.syms.power else None
    if not call or "loss" in call[0].lower() or not is_model(call[0], node, classes):
        return False
    return any(s.code(sub) in watched for arg in call[1] for sub in arg.pre_order())


def _target_value(target, gradient_call, watched, classes) -> Optional[object]:
    """The node to subscript: the call itself, or the value of the name it is bound to."""
    if _model_call(target, watched, classes):
        return s.unparen(target)
    if s.is_name(target) and "loss" not in target.value.lower():
        value = s.reaching_value(target.value, s.enclosing_statement(gradient_call))
        if value is not None and _model_call(value, watched, classes):
            return s.unparen(value)
    return None


def _weights_outputs(arguments) -> bool:
    """Does the gradient call pass (or possibly pass) ``output_gradients``?"""
    for arg in arguments[2:]:
        named = s.keyword_arg(arg)
        if named is None or named[0] == "output_gradients":
            return True
    return any(arg.type == s.syms.argument and arg.children[0].type in (token.STAR, token.DOUBLESTAR)
               for arg in arguments)


# `tape.gradient(target, sources, ...)`
PATTERN = "power< tape=NAME trailer< '.' 'gradient' > trailer< '(' arglist ')' > >"


def _facts(root) -> tuple:
    return model_classes(root), s.per_tree(root, "tapes", s.tapes_by_statement)


def _modify(call_node, capture, filename):
    classes, tapes = s.per_tree(call_node, "scalar-target", _facts)
    call = s.split_call(call_node)
    if not call or len(call[1]) < 2 or _weights_outputs(call[1]):
        return
    tape = tapes.get(id(s.binder(capture["tape"].value, call_node)))
    if tape is None:
        return
    watched = [s.code(e) for e in tape.watch_arguments()]
    sources = s.literal_elements(call[1][1]) or [call[1][1]]
    if not any(s.code(src) in watched for src in sources):
        return
    value = _target_value(call[1][0], call_node, watched, classes)
    if value is None:
        return
    index = int(option("target_index", 0))
    if propose(value, f"tape.gradient of the whole output of `{s.shown(value)}` differentiates the "
                      "sum of all its outputs (every class mixed), not one target; select the "
                      f"target output [:, {index}] (--target-index)", safety="unsafe"):
        value.append_child(s.parse_expression(f"x[:, {index}]").children[-1].clone())


def _may_differentiate_a_watched_input(facts: SourceFacts) -> bool:
    """Precheck: a ``with ...GradientTape() as tape:`` body calls
    ``tape.watch`` and the file calls ``tape.gradient`` with two arguments
    or more."""
    for stmt, tape in tapes(facts):
        if any(method_calls(stmt, tape, "watch")) and any(
                len(call.args) + len(call.keywords) >= 2
                for call in method_calls(facts.tree, tape, "gradient")):
            return True
    return False


RECIPE = Recipe(
    id="scalar-target",
    summary="tape.gradient(model(x), x) on a non-scalar output -> select the target output",
    safety="unsafe",
    query=lambda q: q.select(PATTERN).modify(_modify),
    tokens=(".gradient(",),
    precheck=_may_differentiate_a_watched_input,
    before_fails="completeness",
)
