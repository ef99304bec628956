"""unused-model-instance: a Keras model or layer built for nothing is removed.

What it does: an assignment ``name = Constructor(...)`` whose constructor is a
Keras ``Model``/``Layer`` subclass defined in the file (``class Seq(tf.keras.Model)``)
or a ``tf.keras`` / ``keras`` model or layer (``tf.keras.Sequential``,
``tf.keras.layers.Dense``, ``layers.LSTM`` after ``from tensorflow.keras import
layers``; any import spelling, ``tensorflow.compat.v2`` and the unbound
``tf``/``keras``/``layers`` of a pasted snippet included: the semantic
model's kinds, ``recipes._model``), and whose name is never read in its scope (the function, or the
whole file at module level), is deleted. A comment block directly above it
goes too when a blank line or the end of the block follows it (it described
the deleted line); a comment heading a group of statements stays.

Why this is a bug: it is not a gradient bug but noise that misleads: in seed
000, ``vae = Seq()`` builds a second model that is never called or trained,
so a reader looks for where its weights are used. Constructing it only costs
time and registers layer names.

Example (seed 000)::

    vae = Seq()          # removed: `vae` is never read
    model = Seq()
    model.compile(...)

Left alone: names that are read anywhere in scope (including ``global``
declarations and closures), names a dynamic reader can reach (``locals()``,
``vars()``, ``eval``/``exec`` in the scope; for module-level names also
``globals()`` and ``getattr``/``hasattr`` with that string or a computed
one), ``_``, class attributes, tuple or chained targets, names listed in
``__all__``, and instances of a class of the module whose construction
registers the instance somewhere (``REGISTRY.append(self)``,
``Cls.members.append(self)``, ``hub[key] = self``): the object is used
through what it registered with (``recipes/_model/construction.py``).

Safe only when building the object provably has no effect beyond itself:
Keras's own classes, or classes of the module whose ``__init__`` (its
bases' and the methods it calls, ``build`` among them) touches only
``self`` and builds Keras layers. Otherwise the removal is unsafe and the
message names the effect: printing or logging (output the user sees: we
count it as an effect), writing a global or a class attribute, a call the
model cannot see into, a ``Sequential`` given its input shape (it builds
weights when constructed, drawing from the random state the layers built
after it use). When a string after the instance names a layer as Keras
would auto-name one of its class (``get_layer("dense_1")`` after an unused
``Dense``), the removal would rename the later layers: an unsafe fix whose
message names every such lookup.

CAVEATS:
- A constructor whose arguments call something other than a Keras class
  (``Dense(3, kernel_initializer=make())``) may matter for its side
  effects: that removal is offered as unsafe. Nested Keras constructors
  (``Sequential([Dense(4)])``) do not count.
- Keras numbers auto-generated layer names per class (``dense``, ``dense_1``):
  removing an instance renames the later ones. A lookup by a generated name
  in this file makes the fix unsafe; checkpoints loaded by name are not seen.
- Under Keras 3 every unseeded initializer draws its seed from Python's
  ``random`` when the layer is constructed: removing an instance shifts the
  initial weights of the layers built after it in the same run (as another
  seed would), unless ``random.seed`` is called in between.
- A module-level name may be imported by another module, or read through
  ``globals()`` / ``getattr``; the recipe only sees this file.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Dict, List, Optional, Set, Tuple, Union

from fissix.pgen2 import token

from migrate.recipe import Recipe, SourceFacts, propose, walk
from recipes._model import Kind, model_of
from recipes._model.construction import EFFECT, REGISTERS, Effect, construction_effect
from recipes._pyast import assigned_names, dotted, import_table, keras_classes, may_name_keras_classes, statements
from recipes._fissix import (
    call_parts, enclosing, find_root, following_leaf, is_call,
    is_name, name_reads, nodes_of_type, per_tree, remove_statement, single_assignment,
    start, syms,
)

_NOT_LAYERS = ("Input",)


def _exported(root) -> Set[str]:
    names = set()
    for node in nodes_of_type(root, syms.expr_stmt):
        parts = single_assignment(node)
        if parts and is_name(parts[0], "__all__"):
            names |= {leaf.value.strip("'\"") for leaf in parts[1].leaves() if leaf.type == token.STRING}
    return names


# `name = Constructor(...)`, alone on its line: a Keras object is built and bound
PATTERN = "simple_stmt< expr=expr_stmt< target=NAME '=' power< any+ trailer< '(' any* ')' > > > any >"


def _builds_keras_object(call, model) -> bool:
    """Does ``call`` construct a Keras model or layer (the model's kinds): a
    Keras ``Model``/``Sequential``/``layers.*``/``models.*`` class under any
    import spelling (or a presumed alias), or a Keras subclass of the file?"""
    value = model.kind_of(call)
    if value.kind not in (Kind.MODEL, Kind.LAYER) or value.origin is None:
        return False
    if value.origin.type == syms.classdef:
        return True
    callee = model.callee(call) or ""
    return bool(re.match(_KERAS_CONSTRUCTOR, callee)) and callee.rpartition(".")[2] not in _NOT_LAYERS


# canonical names (recipes._model) of the Keras classes a constructor call builds (a pattern
# text: `re` compiles it at its first match, only for a file with a candidate assignment)
_KERAS_CONSTRUCTOR = r"keras\.(?:(?:Model|Sequential)$|(?:layers|models)\.[A-Z]\w*$)"


def _unused_instance(node, capture, filename):
    """(expr_stmt, statement, constructor, calls inside) when the statement
    binds a Keras object to a name nothing in its scope reads, not even a
    dynamic reader."""
    exported = per_tree(node, "unused-model-instance", _exported)
    model = model_of(node)
    target, expr = capture["target"], capture["expr"]
    if target.value == "_" or target.value in exported:
        return None
    value = expr.children[2]
    call = call_parts(value)
    if not call or not _builds_keras_object(value, model):
        return None
    scope = enclosing(node, syms.funcdef, syms.classdef)
    if scope is not None and scope.type == syms.classdef:
        return None
    scope = scope if scope is not None else find_root(node)
    if any(leaf is not target for leaf in name_reads(scope, target.value)) \
            or model.may_be_read_dynamically(target.value, target):
        return None
    effect = _construction_effect(value, model) or _builds_weights(value, model)
    if effect is not None and effect.kind == REGISTERS:
        return None  # the instance is reachable through what it registered with
    calls_inside = any(is_call(n) and not _builds_keras_object(n, model)
                       for n in value.children[-1].pre_order())
    return expr, node, call[0], calls_inside, effect


_SHAPED = ("input_shape", "input_dim", "batch_input_shape")


def _builds_weights(call, model) -> Optional[Effect]:
    """A ``Sequential`` given its input shape (an ``Input`` in its list, or a
    layer with ``input_shape=``) builds its weights when constructed: their
    initializers draw from the global random state, so removing it changes
    the initial weights of every layer built after it (as another seed
    would)."""
    if not (model.callee(call) or "").endswith(".Sequential"):
        return None
    for node in call.children[-1].pre_order():
        if is_call(node) and (model.callee(node) or "").rpartition(".")[2] in ("Input", "InputLayer"):
            return Effect(EFFECT, node, "it builds its weights when constructed (its initializers "
                                        "draw from the random state the layers built after it use)")
        if node.type == syms.argument and node.children[0].type == token.NAME \
                and node.children[0].value in _SHAPED:
            return Effect(EFFECT, node, "it builds its weights when constructed (its initializers "
                                        "draw from the random state the layers built after it use)")
    return None


def _construction_effect(call, model) -> Optional[Effect]:
    """What building a class of this module does beyond the instance
    (recipes._model.construction); Keras's own classes have none."""
    origin = model.kind_of(call).origin
    if origin is None or origin.type != syms.classdef:
        return None
    return construction_effect(model, origin)


def _generated_name_lookups(root, constructor: str, stmt) -> List:
    """The strings after ``stmt`` naming a layer as Keras numbers the
    constructor's class (``"dense_1"`` for ``Dense``): removing one instance
    renames every later auto-named one of that class."""
    strings = per_tree(root, "unused-model-instance: strings by word", _strings_by_word)
    found = strings.get(_snake_case(constructor.rpartition(".")[2]), ([], []))
    after = start(stmt)
    return [leaf for leaf in found[1][bisect.bisect_right(found[0], after):]
            if find_root(leaf) is root]  # not removed earlier in this pass


def _strings_by_word(root) -> Dict[str, Tuple[list, list]]:
    """The STRING leaves of the tree, in order, under each Keras layer name
    they spell as a whole word (``dense`` for ``"dense"`` and ``"dense_1"``),
    with their positions: built once per tree, so each lookup is a bisection."""
    index: Dict[str, Tuple[list, list]] = {}
    for leaf in sorted(nodes_of_type(root, token.STRING), key=start):
        for word in set(re.findall(r"\w+", leaf.value)):
            numbered = re.fullmatch(r"(.+)_\d+", word)
            for key in {word, numbered.group(1)} if numbered else {word}:
                positions, leaves = index.setdefault(key, ([], []))
                positions.append(start(leaf))
                leaves.append(leaf)
    return index


def _snake_case(name: str) -> str:
    """Keras's default layer name for a class (``Conv2D`` -> ``conv2d``)."""
    text = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", text).lower()


def _drop_describing_comments(stmt) -> None:
    """Drop the comment block directly above ``stmt`` when a blank line or the
    end of the block follows it: it described the removed line."""
    follower = following_leaf(stmt)
    ends_group = follower is None or follower.type in (token.DEDENT, token.ENDMARKER) \
        or follower.prefix.startswith("\n")
    if not ends_group:
        return
    holder = stmt.prev_sibling if stmt.prev_sibling is not None \
        and stmt.prev_sibling.type == token.INDENT else stmt
    lines = holder.prefix.split("\n")
    tail, body = lines[-1], lines[:-1]
    while body and body[-1].strip().startswith("#"):
        body.pop()
    holder.prefix = "\n".join(body + [tail]) if body else tail


def _modify(node, capture, filename) -> None:
    found = _unused_instance(node, capture, filename)
    if found is None:
        return
    expr, stmt, constructor, calls_inside, effect = found
    name = capture["target"].value
    message = f"`{name} = {constructor}(...)` builds a Keras object that is never used"
    if calls_inside:
        message += " (its arguments call code that may have side effects)"
    if effect is not None:
        message += f"; building it may matter beyond the object: {effect.why} (line {start(effect.node)[0]})"
    call = call_parts(expr.children[-1])
    lookups = [] if "name" in call[2] else _generated_name_lookups(find_root(node), constructor, stmt)
    if lookups:
        named = ", ".join(f"{leaf.value} (line {leaf.lineno})" for leaf in lookups)
        message += (f"; removing it renames the auto-named `{constructor}` objects built "
                    f"after it, and these lookups by name would change: {named}")
    unsafe = calls_inside or effect is not None or bool(lookups)
    if propose(expr, message, safety="unsafe" if unsafe else None):
        _drop_describing_comments(stmt)
        remove_statement(stmt)


def _may_hold_an_unused_instance(facts: SourceFacts) -> Union[bool, List[ast.AST]]:
    """Precheck: the functions that bind a name to a call that may build a
    Keras object and load it nowhere inside; True for such a name at module
    level (a load anywhere counts, so the whole file matters). A call may
    build one when its callee may resolve to a Keras constructor (``Names``:
    any import spelling, or a presumed alias), or whatever it calls when the
    file has a class that may derive from a Keras Model or Layer (the
    model's kinds follow its instances through returns and attributes).
    Only the statements are walked, and only the functions holding such a
    binding are walked whole."""
    if not may_name_keras_classes(facts):
        return []
    own_classes = bool(keras_classes(facts))
    qualified = import_table(facts).qualified
    built = [(statement.function, name) for statement in statements(facts, ast.Assign, ast.AnnAssign)
             if statement.cls is None and isinstance(statement.node.value, ast.Call)
             and (own_classes or any(re.match(_KERAS_CONSTRUCTOR, path) and path.rpartition(".")[2] not in _NOT_LAYERS
                                     for path in qualified(dotted(statement.node.value.func))))
             for name in assigned_names(statement.node) if name != "_"]
    loaded: Dict[int, Set[str]] = {}
    unused = []
    for scope, name in built:
        if id(scope) not in loaded:
            nodes = facts.nodes(ast.Name) if scope is None else walk(scope)
            loaded[id(scope)] = {node.id for node in nodes
                                 if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        if name not in loaded[id(scope)]:
            if scope is None:
                return True
            unused.append(scope)
    return list({id(scope): scope for scope in unused}.values())


RECIPE = Recipe(
    id="unused-model-instance",
    summary="remove a Keras model or layer that is built and never used",
    safety="safe",
    query=lambda q: q.select(PATTERN).modify(_modify),
    tokens=("keras", "layers"),  # `layers` alone: the presumed alias of a pasted snippet
    precheck=_may_hold_an_unused_instance,
    before_fails=None,
)
